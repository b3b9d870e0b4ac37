// The year of shipments kept per item (migration 0043, src/domain/shipped-year.ts): each shipment adds its units to
// the item's day and sum, the item list's velocity and its totals read them, and when the day turns the year moves
// on, taking the days that left it off their items, also while the warehouse ships. Until it has, the list reads the
// ledger.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { advanceShippedYear, shippedYearIsCurrent } from '../src/domain/shipped-year.ts';
import { adjust, call, onPostgres, startApp, type TestApp } from './helpers.ts';
import { ok, packedBatch, post, releasedOrder, setUpFloor, stockedItem, type Floor } from './picking-kit.ts';

let t: TestApp;
let floor: Floor;
before(async () => {
  t = await startApp();
  floor = await setUpFloor(t);
});
after(() => t?.close());

/** Every item whose kept sum (on items or its stock state) or day differs from its shipments in the ledger in the year. */
async function keptApartFromLedger(): Promise<string[]> {
  const { rows } = await sql<{ item: string }>`
    with ledger_days as (
      -- The ledger's shipments of the kept year, by item and by the UTC day of their rows.
      select item_id, (performed_at at time zone 'UTC')::date as day, -sum(quantity)::int units from inventory_movements
      where movement_type = 'shipment' and performed_at >= (select starts_on from shipped_year)::timestamp at time zone 'UTC'
      group by 1, 2)
    select i.item_number_display || ': ' || i.units_shipped_year || ' / ' || s.units_shipped_year || ' / ' || coalesce(l.units, 0) as item
    from items i join item_stock_state s on s.item_id = i.id
    left join (select item_id, sum(units)::int units from ledger_days group by item_id) l on l.item_id = i.id
    where (i.units_shipped_year, s.units_shipped_year) is distinct from (coalesce(l.units, 0), coalesce(l.units, 0))
    union all
    select coalesce(k.item_id, l.item_id)::text || ' on ' || coalesce(k.day, l.day)::text || ': ' || coalesce(k.units, 0) || ' / ' || coalesce(l.units, 0)
    from item_shipped_days k full join ledger_days l on l.item_id = k.item_id and l.day = k.day
    where k.units is distinct from l.units`.execute(t.db);
  return rows.map((row) => row.item);
}

const daysOf = async (itemId: string) => (await sql<{ day: string; units: number }>`
  select (day - (select starts_on from shipped_year))::int as day, units from item_shipped_days where item_id = ${itemId} order by day`.execute(t.db)).rows;

/** The partner's items in a velocity bucket, and the list's total, checked against count(*) over the stock state. */
async function bucket(velocity: 'fast' | 'slow' | 'dead', itemIds: string[]) {
  const answer = await call(t.app, 'GET', `/api/v1/items?velocity=${velocity}&manufacturer=${floor.partner}&per_page=100`, { key: t.adminKey });
  assert.equal(answer.status, 200);
  const condition = { fast: sql`s.units_shipped_year >= 52`, slow: sql`s.units_shipped_year between 1 and 51`, dead: sql`s.units_shipped_year = 0` }[velocity];
  const { rows: [counted] } = await sql<{ n: number }>`select count(*)::int as n from item_stock_state s
    where s.manufacturer_id = ${floor.partner} and s.status = 'active' and ${condition}`.execute(t.db);
  // Read from the kept sums, the total is theirs; read from the ledger (the year not yet moved on), the ledger's.
  if (await shippedYearIsCurrent(t.db)) assert.equal(answer.body.meta.total_count, counted!.n, velocity);
  assert.equal(answer.body.meta.total_count, answer.body.data.length, velocity);
  const listed = new Set(answer.body.data.map((item: { id: string }) => item.id));
  return itemIds.filter((id) => listed.has(id));
}

/** Ships a released order of `qty` units of the item. */
async function ship(itemId: string, qty: number) {
  const batch = await packedBatch(floor, await releasedOrder(floor, [{ item: itemId, qty }]));
  await ok(post(floor, `/pick-batches/${batch.ID}/ship`));
}

test('each shipment adds its units to the item\'s day and year; the velocity list and its total follow; other movements add nothing', async () => {
  // The app moved the year on at its start (test/helpers.ts, as the service does).
  assert.equal(await shippedYearIsCurrent(t.db), true);
  const item = await stockedItem(floor, 100);
  assert.deepEqual(await bucket('dead', [item]), [item]);
  await ship(item, 30);
  assert.deepEqual(await daysOf(item), [{ day: 364, units: 30 }]);
  assert.deepEqual(await bucket('slow', [item]), [item]);
  await ship(item, 25);
  // The same day's row, added to.
  assert.deepEqual(await daysOf(item), [{ day: 364, units: 55 }]);
  assert.deepEqual([await bucket('fast', [item]), await bucket('slow', [item]), await bucket('dead', [item])], [[item], [], []]);
  assert.equal((await adjust(t, item, -5, floor.bin)).status, 201);
  assert.deepEqual(await daysOf(item), [{ day: 364, units: 55 }]);
  assert.deepEqual(await keptApartFromLedger(), []);
});

/**
 * The kept sums as they stand when the day has turned and the year not yet moved on: the item shipped `units` on a
 * day `daysBefore` the current year's first day (in the ledger too), and the year still begins on that day.
 */
async function shippedBeforeTheYear(itemId: string, units: number, daysBefore: number) {
  await sql`insert into inventory_movements (item_id, manufacturer_id, movement_type, quantity, balance_after, reference_id, performed_at)
    values (${itemId}, ${floor.partner}, 'shipment', ${-units}, 0, ${itemId}, (shipped_year_start() - ${daysBefore}::int)::timestamp at time zone 'UTC' + interval '12 hours')`.execute(t.db);
  await sql`insert into item_shipped_days (item_id, day, units) values (${itemId}, shipped_year_start() - ${daysBefore}::int, ${units})`.execute(t.db);
  await sql`update items set units_shipped_year = units_shipped_year + ${units} where id = ${itemId}`.execute(t.db);
  await sql`update shipped_year set starts_on = least(starts_on, shipped_year_start() - ${daysBefore}::int)`.execute(t.db);
}

test('when the day turns, the list reads the ledger until the year moves on; moving on takes the days that left off their items, once', async () => {
  const item = await stockedItem(floor, 10);
  await ship(item, 3);
  await shippedBeforeTheYear(item, 60, 1);
  assert.equal(await shippedYearIsCurrent(t.db), false);
  // Kept, the item holds 63 units (fast); the ledger's year holds 3.
  assert.deepEqual([await bucket('fast', [item]), await bucket('slow', [item])], [[], [item]]);
  assert.equal(await advanceShippedYear(t.db), 1);
  assert.equal(await shippedYearIsCurrent(t.db), true);
  assert.deepEqual(await daysOf(item), [{ day: 364, units: 3 }]);
  assert.deepEqual(await keptApartFromLedger(), []);
  assert.deepEqual([await bucket('fast', [item]), await bucket('slow', [item])], [[], [item]]);
  assert.equal(await advanceShippedYear(t.db), 0);
  assert.deepEqual(await daysOf(item), [{ day: 364, units: 3 }]);
});

test('moving on while the warehouse ships and other instances move on too: every unit counted once', { skip: onPostgres ? false : 'PGlite runs one transaction at a time' }, async () => {
  const items = [await stockedItem(floor, 20), await stockedItem(floor, 20), await stockedItem(floor, 20)];
  const batches = [];
  for (const item of items) batches.push((await packedBatch(floor, await releasedOrder(floor, [{ item, qty: 4 }]))).ID as string);
  for (const [n, item] of items.entries()) await shippedBeforeTheYear(item, 10 + n, 2);
  const [moved] = await Promise.all([
    Promise.all(Array.from({ length: 4 }, () => advanceShippedYear(t.db))),
    ...batches.map((batch) => ok(post(floor, `/pick-batches/${batch}/ship`))),
  ]);
  // One instance moved the year on; those that met it under way, or after, had nothing left to do.
  assert.deepEqual(moved.filter((n) => n > 0), [3]);
  assert.equal(await shippedYearIsCurrent(t.db), true);
  for (const item of items) assert.deepEqual(await daysOf(item), [{ day: 364, units: 4 }]);
  assert.deepEqual(await keptApartFromLedger(), []);
});
