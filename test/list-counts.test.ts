// The order, item, pick-batch, receiving and exception lists' totals come from counts the database maintains (migrations
// 0017, 0034, 0038, 0040): whatever writes orders, items or batches — the API, a bulk load, a statement behind the app's back, a delete, a fold, many writers at once — every
// total equals count(*) over the rows the list's own conditions select. So do the location list's stock figures
// (0046) against the bins.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql, type Kysely } from 'kysely';
import type { DB } from '../src/db/schema.ts';
import { ADVISORY_LOCKS } from '../src/db/advisory-locks.ts';
import { countedTotalExpression, foldListCounts, itemsNotMovedTotalExpression, totalOf } from '../src/db/list-counts.ts';
import { adjust, call, createManufacturer, onPostgres, startApp, type TestApp } from './helpers.ts';
import { ok, packedBatch, post, releasedOrder, setUpFloor, startedBatch, stockedItem, type Floor } from './picking-kit.ts';

const ORDER_STATUSES = ['entered', 'released', 'partial', 'shipped', 'billed', 'closed', 'cancelled'];
const ITEM_STATUSES = ['active', 'inactive', 'discontinued'];
const BATCH_STATUSES = ['released', 'in_progress', 'completed', 'packed', 'shipped', 'cancelled'];
const RECEIVING_STATUSES = ['draft', 'verified', 'posted', 'voided'];
const EXCEPTION_STATUSES = ['open', 'reviewed', 'superseded'];
// An order's priorities in the bit order of migration 0032.
const PRIORITIES = ['normal', 'high', 'rush'];
// The list's stock filters, written out independently of item_stock_flags, in the bit order of migration 0017.
// The item list's movement windows (movement=30d ...), in days.
const MOVEMENT_DAYS = [30, 90, 180, 365];
const FILTER_SQL = [
  'qty_on_hand < 0', 'qty_available < 0', 'qty_on_hand = 0', 'reorder_level > 0 and qty_available < reorder_level', 'price_1 is null',
];
// The velocities (fast, slow, dead), in the bit order of migration 0043 (bits 32, 64, 128).
const VELOCITY_SQL = ['units_shipped_year >= 52', 'units_shipped_year between 1 and 51', 'units_shipped_year = 0'];

async function counted(db: Kysely<DB>, table: 'orders' | 'item_stock_state' | 'pick_batches' | 'receiving_batches' | 'pick_exceptions', where: string): Promise<number> {
  const { rows } = await sql<{ n: number }>`select count(*)::int as n from ${sql.table(table)} where ${sql.raw(where)}`.execute(db);
  return rows[0]!.n;
}

const inList = (values: string[]) => values.map((v) => `'${v}'`).join(', ');

/** Every total the lists can ask for, against count(*): each partner and all, each status, several at once, all. */
async function assertTotalsExact(db: Kysely<DB>, partners: string[]) {
  const statusSets = (all: string[]) => [[], ...all.map((s) => [s]), all.slice(0, 3)];
  for (const partner of [undefined, ...partners]) {
    const byPartner = partner ? `manufacturer_id = '${partner}'` : 'true';
    for (const statuses of statusSets(ORDER_STATUSES)) {
      for (let flags = 0; flags < 8; flags++) {
        const chosen = PRIORITIES.filter((_, bit) => flags & (1 << bit));
        const where = `${byPartner} and ${statuses.length ? `status in (${inList(statuses)})` : 'true'} and ${chosen.length ? `priority in (${inList(chosen)})` : 'true'}`;
        assert.equal(await totalOf(db, countedTotalExpression({ list: 'orders', manufacturerId: partner, statuses, anyFlags: flags })), await counted(db, 'orders', where), `orders where ${where}`);
      }
    }
    for (const statuses of statusSets(BATCH_STATUSES)) {
      const where = `${byPartner} and ${statuses.length ? `status in (${inList(statuses)})` : 'true'}`;
      assert.equal(await totalOf(db, countedTotalExpression({ list: 'pick_batches', manufacturerId: partner, statuses })), await counted(db, 'pick_batches', where), `pick batches where ${where}`);
    }
    for (const statuses of statusSets(RECEIVING_STATUSES)) {
      const where = `${byPartner} and ${statuses.length ? `status in (${inList(statuses)})` : 'true'}`;
      assert.equal(await totalOf(db, countedTotalExpression({ list: 'receiving', manufacturerId: partner, statuses })), await counted(db, 'receiving_batches', where), `receiving where ${where}`);
    }
    for (const statuses of statusSets(EXCEPTION_STATUSES)) {
      const where = `${byPartner} and ${statuses.length ? `status in (${inList(statuses)})` : 'true'}`;
      assert.equal(await totalOf(db, countedTotalExpression({ list: 'exceptions', manufacturerId: partner, statuses })), await counted(db, 'pick_exceptions', where), `exceptions where ${where}`);
    }
    for (const statuses of statusSets(ITEM_STATUSES)) {
      for (let flags = 0; flags < 32; flags++) {
        const chosen = FILTER_SQL.filter((_, bit) => flags & (1 << bit));
        const where = `${byPartner} and ${statuses.length ? `status in (${inList(statuses)})` : 'true'} and ${chosen.length ? `((${chosen.join(') or (')}))` : 'true'}`;
        assert.equal(await totalOf(db, countedTotalExpression({ list: 'items', manufacturerId: partner, statuses, anyFlags: flags })), await counted(db, 'item_stock_state', where), `items where ${where}`);
        if (flags !== 0 && flags !== 8) continue;
        for (const [bit, velocity] of VELOCITY_SQL.entries()) {
          const withVelocity = `${where} and ${velocity}`;
          const total = countedTotalExpression({ list: 'items', manufacturerId: partner, statuses, anyFlags: flags, allFlags: 32 << bit });
          assert.equal(await totalOf(db, total), await counted(db, 'item_stock_state', withVelocity), `items where ${withVelocity}`);
        }
      }
      if (!statuses.length) continue;
      for (const days of MOVEMENT_DAYS) {
        const where = `${byPartner} and status in (${inList(statuses)}) and (date_last_movement is null or date_last_movement < now() - interval '${days} days')`;
        assert.equal(await totalOf(db, itemsNotMovedTotalExpression({ manufacturerId: partner, statuses, days })), await counted(db, 'item_stock_state', where), `items where ${where}`);
      }
    }
  }
}

/**
 * The location list's kept figures (migration 0046) against the bins: for every location and partner, the bins with
 * stock and their units, summed over the kept rows, equal those counted from item_locations.
 */
async function assertLocationFiguresExact(db: Kysely<DB>) {
  const { rows } = await sql<{ location_id: string; manufacturer_id: string }>`
    select location_id, manufacturer_id, kept.bins as kept_bins, kept.qty as kept_qty, live.bins, live.qty from (
      select location_id, manufacturer_id, sum(bins)::int as bins, sum(qty)::int as qty from location_stock_counts
      group by 1, 2 having sum(bins) <> 0 or sum(qty) <> 0
    ) kept full join (
      select b.location_id, i.manufacturer_id, (count(*) filter (where b.qty_on_hand <> 0))::int as bins, sum(b.qty_on_hand)::int as qty
      from item_locations b join items i on i.id = b.item_id group by 1, 2
      having count(*) filter (where b.qty_on_hand <> 0) <> 0 or sum(b.qty_on_hand) <> 0
    ) live using (location_id, manufacturer_id)
    where (kept.bins, kept.qty) is distinct from (live.bins, live.qty)`.execute(db);
  assert.deepEqual(rows, [], 'every location and partner keeps the bins with stock and the units its bins hold');
}

const keysWithSeveralRows = async (db: Kysely<DB>) => (await sql<{ n: number }>`select count(*)::int as n from (
  select 1 from list_counts group by list, manufacturer_id, status, flags, moved_on having count(*) > 1
  union all
  select 1 from location_stock_counts group by location_id, manufacturer_id having count(*) > 1) k`.execute(db)).rows[0]!.n;

// One app for the file: the concurrent round runs after the first, on the same warehouse.
let t: TestApp;
let floor: Floor;
before(async () => {
  t = await startApp();
  floor = await setUpFloor(t);
});
after(() => t?.close());

describe('list totals maintained by the database', () => {
  test('orders entered, released and cancelled, batches started, packed, shipped and cancelled, and items created, stocked, repriced and retired through the API', async () => {
    const stocked = await stockedItem(floor, 10);
    const empty = await stockedItem(floor, 0);
    await stockedItem(floor, 3, floor.otherPartner);
    await call(t.app, 'PATCH', `/api/v1/items/${stocked}`, { key: t.adminKey, body: { reorder_level: 20 } });
    await call(t.app, 'PATCH', `/api/v1/items/${empty}`, { key: t.adminKey, body: { status: 'discontinued' } });
    await releasedOrder(floor, [{ item: stocked, qty: 4 }]);
    const entered = await call(t.app, 'POST', '/api/v1/orders', {
      key: t.adminKey, body: { manufacturer_id: floor.partner, customer_id: floor.customer, priority: 'high', lines: [{ item_id: stocked, qty_ordered: 3, unit_price: 1 }] },
    });
    assert.equal(entered.status, 201);
    const cancelled = await releasedOrder(floor, [{ item: stocked, qty: 1 }]);
    assert.equal((await call(t.app, 'POST', `/api/v1/orders/${cancelled}/cancel`, { key: t.adminKey, body: {} })).status, 200);
    const rushed = await releasedOrder(floor, [{ item: stocked, qty: 1 }]);
    assert.equal((await call(t.app, 'POST', `/api/v1/orders/${rushed}/priority`, { key: t.adminKey, body: { priority: 'rush' } })).status, 200);
    const picked = await stockedItem(floor, 10);
    await ok(post(floor, `/pick-batches/${(await packedBatch(floor, await releasedOrder(floor, [{ item: picked, qty: 1 }]))).ID}/ship`));
    // A fast mover (52 units or more shipped in the year) beside the slow one above.
    const fast = await stockedItem(floor, 60);
    await ok(post(floor, `/pick-batches/${(await packedBatch(floor, await releasedOrder(floor, [{ item: fast, qty: 55 }]))).ID}/ship`));
    await packedBatch(floor, await releasedOrder(floor, [{ item: picked, qty: 1 }]));
    await ok(post(floor, `/pick-batches/${(await startedBatch(floor, await releasedOrder(floor, [{ item: picked, qty: 1 }]))).ID}/cancel`));
    const shorted = await startedBatch(floor, await releasedOrder(floor, [{ item: picked, qty: 1 }]));
    await ok(post(floor, `/pick-batches/${shorted.ID}/lines/${shorted.Lines[0].PickBatchLineID}/short`, { qty_short: 1, reason: 'not in the bin' }));
    const receipts = await Promise.all([floor.partner, floor.partner, floor.otherPartner].map(async (manufacturer_id) =>
      (await ok(post(floor, '/receiving', { manufacturer_id }), 201)).batch.id as string));
    await ok(post(floor, `/receiving/${receipts[0]}/lines`, { item_id: picked, qty_received: 2 }), 201);
    await ok(post(floor, `/receiving/${receipts[0]}/verify`));
    assert.equal((await call(t.app, 'DELETE', `/api/v1/receiving/${receipts[1]}`, { key: t.adminKey })).status, 204);
    // Part of a bin relocated, and a bin emptied by relocation (its row deleted), for the location figures.
    const moved = await call(t.app, 'POST', `/api/v1/locations/${floor.bin}/relocate`, { key: t.adminKey, body: { item_id: stocked, qty: 2, to_location_code: 'CNT-TO', auto_create: true } });
    assert.equal(moved.status, 200, JSON.stringify(moved.body));
    assert.equal((await call(t.app, 'POST', `/api/v1/locations/${floor.bin}/relocate`, { key: t.adminKey, body: { item_id: fast, qty: 5, to_location_code: 'CNT-TO' } })).status, 200);
    await assertTotalsExact(t.db, [floor.partner, floor.otherPartner]);
    await assertLocationFiguresExact(t.db);

    // The lists answer with those totals.
    const open = await call(t.app, 'GET', '/api/v1/orders?status=open', { key: t.adminKey });
    assert.equal(open.body.meta.total_count, await counted(t.db, 'orders', `status in ('entered', 'released', 'partial')`));
    const openRush = await call(t.app, 'GET', '/api/v1/orders?status=open&priority=rush,high', { key: t.adminKey });
    assert.equal(openRush.body.meta.total_count, await counted(t.db, 'orders', `status in ('entered', 'released', 'partial') and priority in ('rush', 'high')`));
    assert.equal(openRush.body.meta.total_count, 2, 'the order entered high and the one set to rush');
    const below = await call(t.app, 'GET', `/api/v1/items?filter=below_reorder&filter=out_of_stock&manufacturer=${floor.partner}`, { key: t.adminKey });
    assert.equal(below.body.meta.total_count, await counted(t.db, 'item_stock_state',
      `manufacturer_id = '${floor.partner}' and status = 'active' and (qty_on_hand = 0 or (reorder_level > 0 and qty_available < reorder_level))`));
    assert.ok(below.body.meta.total_count >= 1, 'the repriced item is below its reorder level');
    for (const query of ['', 'status=shipped', `manufacturer=${floor.partner}&status=in_progress`, `manufacturer=${floor.otherPartner}`]) {
      const where = query.split('&').filter(Boolean).map((pair) => pair.replace('manufacturer', 'manufacturer_id').replace(/=(.*)/, " = '$1'")).join(' and ') || 'true';
      const batches = await call(t.app, 'GET', `/api/v1/pick-batches?${query}`, { key: t.adminKey });
      assert.equal(batches.body.meta.total_count, await counted(t.db, 'pick_batches', where), query);
    }
    assert.equal((await call(t.app, 'GET', '/api/v1/pick-batches?status=shipped', { key: t.adminKey })).body.meta.total_count, 2, 'the two orders shipped');
    for (const query of ['', 'status=open', 'status=reviewed']) {
      const exceptions = await call(t.app, 'GET', `/api/v1/exceptions?${query}`, { key: t.adminKey });
      assert.equal(exceptions.body.meta.total_count, await counted(t.db, 'pick_exceptions', query ? query.replace(/=(.*)/, " = '$1'") : 'true'), query);
    }
    assert.equal((await call(t.app, 'GET', '/api/v1/exceptions?status=open', { key: t.adminKey })).body.meta.total_count, 1, 'the short pick');
  });

  test('writes behind the app: a bulk load, a statement over many rows, deletes; a fold keeps every total and leaves a row per key', async () => {
    const partner = await createManufacturer(t, 'CNT');
    // Last movements spread over 500 days (beyond the 400 the day counts keep), some never; the first 48 every half
    // hour of the UTC day the 30-day window starts on, before and after its start whatever the time of the run, and two
    // 3 minutes either side of it.
    await sql`insert into items (manufacturer_id, item_number_display, item_number_normalized, description, qty_on_hand, reorder_level, price_1, date_last_movement)
      select ${partner}, 'CNT-' || n, 'CNT' || n, 'counted', n % 5 - 1, n % 3, case when n % 4 = 0 then null else 2 end,
        case when n <= 48 then date_trunc('day', (now() - interval '30 days') at time zone 'UTC') at time zone 'UTC'
               + (n - 1) * interval '30 minutes' + interval '7 minutes'
             when n in (61, 62) then now() - interval '30 days' + (n - 61.5) * interval '6 minutes'
             when n % 7 = 0 then null
             else now() - (n * 37 % 500) * interval '1 day' - (n % 24) * interval '1 hour' end
      from generate_series(1, 300) n`.execute(t.db);
    await sql`update items set date_last_movement = now() - (length(item_number_normalized) * 45) * interval '1 day'
      where manufacturer_id = ${partner} and item_number_normalized like 'CNT5%'`.execute(t.db);
    await sql`update items set qty_committed = qty_committed + 2, status = case when qty_on_hand > 2 then 'inactive' else status end
      where manufacturer_id = ${partner}`.execute(t.db);
    await sql`update items set qty_on_hand = qty_on_hand + 1 where manufacturer_id = ${partner} and item_number_normalized like 'CNT1%'`.execute(t.db);
    await sql`delete from items where manufacturer_id = ${partner} and item_number_normalized like 'CNT2%'`.execute(t.db);
    await sql`update orders set status = 'closed' where status = 'cancelled'`.execute(t.db);
    await sql`update orders set priority = case priority when 'normal' then 'rush' when 'rush' then 'high' else 'normal' end`.execute(t.db);
    await sql`update pick_batches set status = case status when 'in_progress' then 'completed' when 'packed' then 'in_progress' else status end`.execute(t.db);
    await sql`delete from pick_batch_lines where pick_batch_id in (select id from pick_batches where status = 'cancelled')`.execute(t.db);
    await sql`delete from pick_batches where status = 'cancelled'`.execute(t.db);
    await sql`insert into receiving_batches (manufacturer_id, batch_number, received_date, status)
      select ${partner}, 'RCNT' || n, current_date - n, (array['draft', 'verified', 'posted', 'voided'])[1 + n % 4] from generate_series(1, 40) n`.execute(t.db);
    await sql`update receiving_batches set status = 'posted' where status = 'verified'`.execute(t.db);
    await sql`delete from receiving_batches where status = 'voided' and manufacturer_id = ${partner}`.execute(t.db);
    await sql`insert into pick_exceptions (kind, status, manufacturer_id, item_id, qty_short, short_reason)
      select 'short_pick', (array['open', 'reviewed', 'superseded'])[1 + n % 3], ${partner}, (select id from items where manufacturer_id = ${partner} limit 1), 1, 'counted'
      from generate_series(1, 30) n`.execute(t.db);
    await sql`update pick_exceptions set status = 'reviewed' where status = 'open' and manufacturer_id = ${partner} and qty_short = 1`.execute(t.db);
    await sql`delete from pick_exceptions where status = 'superseded' and manufacturer_id = ${partner}`.execute(t.db);
    // Bins: loaded over four locations (some empty, some negative), raised, emptied, filled, moved, deleted.
    await sql`insert into locations (warehouse_id, location_code) select (select id from warehouses limit 1), 'CNT-LOC-' || n from generate_series(1, 4) n`.execute(t.db);
    await sql`insert into item_locations (item_id, location_id, qty_on_hand, inventory_status)
      select i.id, l.id, (ascii(right(i.item_number_normalized, 1)) + ascii(right(l.location_code, 1)) * 2) % 6 - 1, (array['available', 'quarantine'])[1 + (length(i.item_number_normalized) + ascii(right(l.location_code, 1))) % 2]
      from items i, locations l where i.manufacturer_id = ${partner} and l.location_code like 'CNT-LOC-%' and right(i.item_number_normalized, 1) in ('1', '3', '5')`.execute(t.db);
    await sql`update item_locations set qty_on_hand = qty_on_hand + 2 where item_id in (select id from items where item_number_normalized like 'CNT3%')`.execute(t.db);
    await sql`update item_locations set qty_on_hand = 0 where qty_on_hand = 3`.execute(t.db);
    await sql`update item_locations set qty_on_hand = 4 where qty_on_hand = 0 and item_id in (select id from items where item_number_normalized like 'CNT1%')`.execute(t.db);
    await sql`update item_locations set location_id = (select id from locations where location_code = 'CNT-LOC-4')
      where location_id = (select id from locations where location_code = 'CNT-LOC-3') and item_id in (select id from items where item_number_normalized like 'CNT5%')
        and not exists (select 1 from item_locations o where o.item_id = item_locations.item_id and o.inventory_status = item_locations.inventory_status
          and o.location_id = (select id from locations where location_code = 'CNT-LOC-4'))`.execute(t.db);
    await sql`delete from item_locations where qty_on_hand = 2 and location_id in (select id from locations where location_code like 'CNT-LOC-%')`.execute(t.db);
    await assertTotalsExact(t.db, [floor.partner, floor.otherPartner, partner]);
    await assertLocationFiguresExact(t.db);

    assert.ok(await keysWithSeveralRows(t.db) > 0, 'changes appended rows');
    // A day count left from when its day was within 400 days: the fold drops it, as no window reads it.
    await sql`insert into list_counts (list, manufacturer_id, status, moved_on, n)
      values ('items_moved', ${partner}, 'active', (now() - interval '401 days')::date, 3)`.execute(t.db);
    await foldListCounts(t.db);
    const aged = await sql<{ n: number }>`select count(*)::int as n from list_counts
      where list = 'items_moved' and moved_on <= (now() - interval '400 days')::date`.execute(t.db);
    assert.equal(aged.rows[0]!.n, 0, 'no day count older than 400 days');
    assert.equal(await keysWithSeveralRows(t.db), 0, 'a row per key after the fold');
    const unfolded = await sql<{ n: number }>`select count(*)::int as n from list_counts where not folded`.execute(t.db);
    assert.equal(unfolded.rows[0]!.n, 0, 'every row is marked folded, so the next fold looks at none of them');
    await assertTotalsExact(t.db, [floor.partner, floor.otherPartner, partner]);
    await assertLocationFiguresExact(t.db);
    const zero = await sql<{ n: number }>`select count(*)::int as n from list_counts where n = 0`.execute(t.db);
    assert.equal(zero.rows[0]!.n, 0, 'keys that sum to nothing are dropped');
    const emptyLocations = await sql<{ n: number }>`select count(*)::int as n from location_stock_counts where bins = 0 and qty = 0 or not folded`.execute(t.db);
    assert.equal(emptyLocations.rows[0]!.n, 0, 'the location figures are folded too, the empty ones dropped');
    // Counted again from the bins (docs/operations.md), a figure gone wrong is put right.
    await sql`update location_stock_counts set bins = bins + 5 where ctid = (select min(ctid) from location_stock_counts)`.execute(t.db);
    await assert.rejects(assertLocationFiguresExact(t.db));
    await sql`select recount_location_stock()`.execute(t.db);
    await assertLocationFiguresExact(t.db);
  });

  test('a TRUNCATE empties the list totals with it', async () => {
    await sql`truncate orders cascade`.execute(t.db);
    assert.equal(await totalOf(t.db, countedTotalExpression({ list: 'orders' })), 0);
    assert.ok(await totalOf(t.db, countedTotalExpression({ list: 'items' })) > 0, 'the items keep theirs');
    await assertTotalsExact(t.db, [floor.partner]);
  });

  test('a TRUNCATE of the bins empties the location figures with it', async () => {
    const { rows: [before] } = await sql<{ n: number }>`select count(*)::int as n from location_stock_counts`.execute(t.db);
    assert.ok(before!.n > 0, 'bins were counted');
    await sql`truncate item_locations`.execute(t.db);
    const { rows: [after] } = await sql<{ n: number }>`select count(*)::int as n from location_stock_counts`.execute(t.db);
    assert.equal(after!.n, 0);
    await assertLocationFiguresExact(t.db);
  });
});

describe('list totals under concurrent writers and folds (PostgreSQL)', { skip: onPostgres ? false : 'needs TEST_DATABASE_URL (PGlite runs one transaction at a time)' }, () => {
  test('one instance folds at a time: a fold that finds another under way skips the round', async () => {
    const item = await stockedItem(floor, 5);
    assert.equal((await adjust(t, item, 1, floor.bin)).status, 201);
    const unfolded = async () => (await sql<{ n: number }>`select count(*)::int as n from list_counts where not folded`.execute(t.db)).rows[0]!.n;
    let holding!: () => void;
    let release!: () => void;
    const held = new Promise<void>((resolve) => { holding = resolve; });
    const otherFold = t.db.transaction().execute(async (tx) => {
      await sql`select pg_advisory_xact_lock(${ADVISORY_LOCKS.foldListCounts})`.execute(tx);
      holding();
      await new Promise<void>((resolve) => { release = resolve; });
    });
    await held;
    const waiting = await unfolded();
    assert.ok(waiting > 0, 'the writes left rows to fold');
    await foldListCounts(t.db);
    assert.equal(await unfolded(), waiting, 'skipped while another fold holds the lock');
    release();
    await otherFold;
    await foldListCounts(t.db);
    assert.equal(await unfolded(), 0);
  });

  test('40 orders entered and released and 40 stock changes at once, with folds running meanwhile: every total exact', async () => {
    // Each item gets 5 orders of 1 and, for half of them, 5 adjustments of -1: 10 on hand keeps every order committable
    // whichever runs first (with 5, the adjustments could take the stock an order was about to commit: negative_stock).
    const items = await Promise.all(Array.from({ length: 8 }, () => stockedItem(floor, 10)));
    let folding = true;
    const folds = (async () => {
      let n = 0;
      while (folding) {
        await foldListCounts(t.db);
        n++;
      }
      return n;
    })();
    const orders = Array.from({ length: 40 }, (_, i) => (async () => {
      const entered = await call(t.app, 'POST', '/api/v1/orders', {
        key: t.adminKey, body: { manufacturer_id: floor.partner, customer_id: floor.customer, lines: [{ item_id: items[i % 8], qty_ordered: 1, unit_price: 1 }] },
      });
      assert.equal(entered.status, 201, JSON.stringify(entered.body));
      if (i % 2 === 0) assert.equal((await call(t.app, 'POST', `/api/v1/orders/${entered.body.data.order.id}/release`, { key: t.adminKey })).status, 200);
    })());
    const adjustments = Array.from({ length: 40 }, (_, i) => adjust(t, items[i % 8]!, i % 2 === 0 ? -1 : 1, floor.bin));
    const answers = await Promise.all([...orders, ...adjustments]);
    folding = false;
    assert.ok(await folds > 0, 'folds ran during the writes');
    for (const answer of answers) if (answer) assert.equal(answer.status, 201, JSON.stringify(answer.body));
    await assertTotalsExact(t.db, [floor.partner]);
    await assertLocationFiguresExact(t.db);
    assert.equal(await totalOf(t.db, countedTotalExpression({ list: 'orders', manufacturerId: floor.partner })), 40);
    await foldListCounts(t.db);
    assert.equal(await keysWithSeveralRows(t.db), 0);
    await assertTotalsExact(t.db, [floor.partner]);
    await assertLocationFiguresExact(t.db);
    // Each fold vacuums the table it left dead rows in (whether the server's autovacuum runs or not).
    const { rows: [stats] } = await sql<{ vacuums: number }>`
      select vacuum_count::int as vacuums from pg_stat_user_tables where relid = 'list_counts'::regclass`.execute(t.db);
    assert.ok(stats!.vacuums > 0, 'the folds vacuumed list_counts');
  });
});
