// Reports: each figure is computed here, in JavaScript, from the rows the activity below stored, and compared with what
// the report computed in SQL; CSV carries the same rows; partner-scoped keys cannot see reports; bad input is 4xx.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { parse } from 'csv-parse/sync';
import { sql } from 'kysely';
import { connectPGlite } from '../src/db/connect.ts';
import { listMigrations, migrate } from '../src/db/migrate.ts';
import { call, createItem, createLocation, expectError, startApp, userWithKey, type TestApp } from './helpers.ts';
import { ok, packedBatch, post, releasedOrder, setUpFloor, startedBatch, stockedItem, type Floor } from './picking-kit.ts';

let t: TestApp;
let floor: Floor;
let consignor: string;
let warehouseKey: string;
const items: Record<string, string> = {};
const today = new Date().toISOString().slice(0, 10);

const report = (name: string, query = '', headers: Record<string, string> = {}, key = t.adminKey) =>
  call(t.app, 'GET', `/api/v1/reports/${name}${query ? `?${query}` : ''}`, { key, headers });
const csvOf = async (name: string, query = '') => {
  const answer = await t.app.inject({ method: 'GET', url: `/api/v1/reports/${name}?${query}`, headers: { authorization: `Bearer ${t.adminKey}`, accept: 'text/csv' } });
  assert.equal(answer.statusCode, 200, answer.body);
  assert.match(String(answer.headers['content-type']), /^text\/csv/);
  return parse(answer.body, { columns: true }) as Record<string, string>[];
};
/** A JSON value as the CSV cell writes it. */
const cell = (value: unknown) => (value === null || value === undefined ? '' : String(value));

before(async () => {
  t = await startApp();
  floor = await setUpFloor(t);
  consignor = (await userWithKey(t, 'consignor', { manufacturerId: floor.partner })).key;
  warehouseKey = (await userWithKey(t, 'warehouse')).key;
  items.fast = await stockedItem(floor, 40);
  items.slow = await stockedItem(floor, 10);
  items.dead = await stockedItem(floor, 6);
  items.empty = await createItem(t, floor.partner, 'PK-EMPTY');
  items.other = await stockedItem(floor, 7, floor.otherPartner);
  // Average costs are a fixture here (receiving sets them; the receiving report below checks that path).
  // `other` keeps no cost: it is valued at 0 and counted in items_without_cost.
  for (const [name, cost] of [['fast', 2.5], ['slow', 10], ['dead', 1.25]] as const) {
    await t.db.updateTable('items').set({ average_cost: cost }).where('id', '=', items[name]!).execute();
  }
  await t.db.updateTable('items').set({ reorder_level: 12 }).where('id', '=', items.slow!).execute();
  await t.db.updateTable('items').set({ reorder_level: 5 }).where('id', '=', items.empty!).execute();

  // Ships: 20 of fast over two orders, 1 of slow; a third order is short-picked (an exception) and left open.
  for (const lines of [[{ item: items.fast!, qty: 12 }, { item: items.slow!, qty: 1 }], [{ item: items.fast!, qty: 8 }]]) {
    const batch = await packedBatch(floor, await releasedOrder(floor, lines));
    await ok(post(floor, `/pick-batches/${batch.ID}/ship`));
  }
  const shortOrder = await releasedOrder(floor, [{ item: items.slow!, qty: 3 }]);
  const shortBatch = await startedBatch(floor, shortOrder);
  const shortLine = `/pick-batches/${shortBatch.ID}/lines/${shortBatch.Lines[0].PickBatchLineID}`;
  await ok(post(floor, `${shortLine}/pick`, { qty_picked: 1 }));
  await ok(post(floor, `${shortLine}/short`, { qty_short: 2, reason: 'bin empty' }));

  // A count with one variance (dead: 6 counted as 5) and one exact line.
  const counted = await ok(post(floor, '/cycle-counts', { num_items: 50 }), 201);
  const lines = (await call(t.app, 'GET', `/api/v1/cycle-counts/${counted.batch.id}`, { key: t.adminKey })).body.data.lines as { id: string; item_id: string; system_qty: number }[];
  await ok(post(floor, `/cycle-counts/${counted.batch.id}/start`));
  for (const line of lines) {
    const countedQty = line.item_id === items.dead ? line.system_qty - 1 : line.system_qty;
    assert.equal((await post(floor, `/cycle-counts/${counted.batch.id}/counts`, { line_id: line.id, counted_qty: countedQty })).status, 204);
  }
});
after(() => t.close());

describe('access and bad input', () => {
  test('history.view is needed (403 without it); a partner-scoped key gets 404 on every report', async () => {
    expectError(await report('inventory-valuation', '', {}, warehouseKey), 403, 'forbidden');
    for (const name of ['inventory-valuation', 'stock-status', 'order-fulfillment', 'receiving', 'movements', 'cycle-count-accuracy', 'exceptions', 'velocity']) {
      expectError(await report(name, '', {}, consignor), 404, 'not_found');
      assert.equal((await report(name)).status, 200, name);
    }
    // Whatever it sends: its parameters are not checked first, so that a 400 does not tell it the report exists.
    for (const [name, query] of [['movements', 'from=2026-05-02&to=2026-05-01'], ['stock-status', 'bogus=1'], ['velocity', 'bucket=warm']]) {
      expectError(await report(name!, query, {}, consignor), 404, 'not_found');
    }
  });

  test('from after to and malformed dates are 400, an unknown manufacturer 422, an unknown parameter 400', async () => {
    expectError(await report('movements', 'from=2026-05-02&to=2026-05-01'), 400, 'bad_request');
    for (const query of ['from=2026-13-01', 'to=yesterday', 'from=2026-02-30', 'from=0000-01-01&to=0001-01-02']) {
      for (const name of ['movements', 'receiving']) expectError(await report(name, query), 400, 'bad_request');
    }
    expectError(await report('movements', 'manufacturer=9b2f5c1e-7d7a-4a53-9d0e-1f6f0f3b9a11'), 422, 'invalid_request');
    expectError(await report('inventory-valuation', 'from=2026-01-01'), 400, 'bad_request');
    expectError(await report('velocity', 'bucket=warm'), 400, 'bad_request');
  });

  test('a period that ends on the last day a date can name (9999-12-31) is read to its end, on every dated read', async () => {
    // Its end is the first instant of year 10000 (found by a black-box run: PGlite refused it as written).
    const { body } = await report('movements', `from=${today}&to=9999-12-31`);
    assert.equal(body.meta.to, '9999-12-31');
    assert.equal(body.data.length, (await report('movements', `from=${today}`)).body.data.length);
    for (const url of ['/api/v1/inventory/movements?to=9999-12-31', '/api/v1/inventory/adjustments?to=9999-12-31',
      `/api/v1/reports/order-fulfillment?from=${today}&to=9999-12-31`, `/api/v1/reports/velocity?from=${today}&to=9999-12-31`,
      `/api/v1/manufacturers/${floor.partner}/statement?from=${today}&to=9999-12-31`]) {
      assert.equal((await call(t.app, 'GET', url, { key: t.adminKey })).status, 200, url);
    }
    assert.ok((await call(t.app, 'GET', '/api/v1/inventory/movements?to=9999-12-31', { key: t.adminKey })).body.data.length > 0);
  });

  test('the period defaults to the 30 days ending today', async () => {
    const { meta } = (await report('movements')).body;
    assert.equal(meta.to, today);
    assert.equal((Date.parse(meta.to) - Date.parse(meta.from)) / 86_400_000, 29);
  });
});

describe('stock reports', () => {
  test('inventory valuation: every item with stock at qty × average cost, by partner and item; totals; CSV of the same rows', async () => {
    const stored = await t.db.selectFrom('items as i').innerJoin('manufacturers as m', 'm.id', 'i.manufacturer_id')
      .select(['i.id', 'i.qty_on_hand', 'i.average_cost', 'm.code']).where('i.qty_on_hand', '<>', 0).execute();
    const value = (row: (typeof stored)[number]) => Math.round(row.qty_on_hand * Number(row.average_cost) * 100) / 100;
    const answer = (await report('inventory-valuation')).body;
    assert.deepEqual(answer.data.map((r: any) => [r.item_id, r.qty_on_hand, r.value]).sort(), stored.map((r) => [r.id, r.qty_on_hand, value(r)]).sort());
    assert.deepEqual(answer.meta.totals, {
      items: stored.length, qty_on_hand: stored.reduce((n, r) => n + r.qty_on_hand, 0),
      value: Math.round(stored.reduce((n, r) => n + value(r), 0) * 100) / 100, items_without_cost: stored.filter((r) => r.average_cost === null).length,
    });
    assert.equal(answer.meta.totals.items_without_cost, 1);
    assert.equal(answer.meta.total_count, stored.length);
    assert.deepEqual(answer.data.map((r: any) => r.manufacturer_code), [...answer.data.map((r: any) => r.manufacturer_code)].sort());

    const byPartner = (await report('inventory-valuation', 'group_by=manufacturer')).body.data;
    assert.deepEqual(byPartner.map((r: any) => [r.manufacturer_code, r.items, r.qty_on_hand]), ['PICKP', 'PICKQ'].map((code) => {
      const of = stored.filter((r) => r.code === code);
      return [code, of.length, of.reduce((n, r) => n + r.qty_on_hand, 0)];
    }));
    const scoped = (await report('inventory-valuation', `manufacturer=${floor.otherPartner}`)).body;
    assert.deepEqual(scoped.data.map((r: any) => r.item_id), [items.other]);

    const csv = await csvOf('inventory-valuation');
    assert.deepEqual(Object.keys(csv[0]!), ['manufacturer_id', 'manufacturer_code', 'manufacturer_name', 'item_id', 'item_number_display', 'description', 'qty_on_hand', 'average_cost', 'value']);
    assert.deepEqual(csv.map((row) => Object.values(row)), answer.data.map((row: any) => Object.values(row).map(cell)));
  });

  test('stock status: a row per bin (one for an item without bins), reorder flags, totals, and the below_reorder filter', async () => {
    const stored = await t.db.selectFrom('items').select(['id', 'qty_on_hand', 'qty_committed', 'qty_available', 'reorder_level']).execute();
    const bins = await t.db.selectFrom('item_locations').select(['item_id', 'qty_on_hand', 'inventory_status']).execute();
    const answer = (await report('stock-status', 'per_page=100')).body;
    assert.equal(answer.meta.total_count, stored.reduce((n, item) => n + Math.max(1, bins.filter((b) => b.item_id === item.id).length), 0));
    const below = stored.filter((i) => i.reorder_level > 0 && i.qty_available < i.reorder_level);
    assert.deepEqual(answer.meta.totals, {
      items: stored.length, bins: bins.length, qty_on_hand: stored.reduce((n, i) => n + i.qty_on_hand, 0),
      qty_committed: stored.reduce((n, i) => n + i.qty_committed, 0), qty_available: stored.reduce((n, i) => n + i.qty_available, 0),
      qty_quarantined: 0, items_below_reorder: below.length,
    });
    const empty = answer.data.find((row: any) => row.item_id === items.empty);
    assert.deepEqual([empty.location_id, empty.bin_qty, empty.below_reorder], [null, 0, true]);
    const filtered = (await report('stock-status', 'below_reorder=1')).body.data;
    assert.deepEqual([...new Set(filtered.map((row: any) => row.item_id))].sort(), below.map((i) => i.id).sort());
    assert.ok(below.some((i) => i.id === items.slow), 'slow: 9 on hand, 2 committed to the short order, reorder level 12');
    // Pages of two, one after another, are the whole report in its order: by item number, then location code.
    const paged: any[] = [];
    for (let page = 1; page <= Math.ceil(answer.meta.total_count / 2); page++) paged.push(...(await report('stock-status', `per_page=2&page=${page}`)).body.data);
    assert.deepEqual(paged, answer.data);
    const numbers = new Map((await t.db.selectFrom('items').select(['id', 'item_number_normalized']).execute()).map((i) => [i.id, i.item_number_normalized]));
    const keys = answer.data.map((row: any) => [numbers.get(row.item_id)!, row.item_id, row.location_code ?? '\u{10FFFF}'].join('\u0000'));
    assert.deepEqual(keys, [...keys].sort());
  });

  test('stock status: pages of any size split an item\'s bins without repeating or skipping one', async () => {
    // An item with four bins, two of them the same location (available, then quarantine): empty bins kept, a fixture.
    const item = await createItem(t, floor.partner, 'PK-SPREAD');
    const [first, second] = [await createLocation(t, 'SPREAD-A'), await createLocation(t, 'SPREAD-B')];
    await t.db.insertInto('item_locations').values([
      { item_id: item, location_id: second, inventory_status: 'quarantine' }, { item_id: item, location_id: floor.bin },
      { item_id: item, location_id: second }, { item_id: item, location_id: first },
    ]).execute();
    const whole = (await report('stock-status', 'per_page=100')).body;
    assert.ok(whole.meta.total_count < 100, 'the whole report fits one page');
    assert.deepEqual(whole.data.filter((row: any) => row.item_id === item).map((row: any) => [row.location_code, row.inventory_status]),
      [['A-01-02', 'available'], ['SPREAD-A', 'available'], ['SPREAD-B', 'available'], ['SPREAD-B', 'quarantine']]);
    for (const size of [1, 3, 4]) {
      const paged: any[] = [];
      for (let page = 1; page <= Math.ceil(whole.meta.total_count / size); page++) {
        const answer = (await report('stock-status', `per_page=${size}&page=${page}`)).body;
        assert.equal(answer.meta.total_count, whole.meta.total_count);
        paged.push(...answer.data);
      }
      assert.deepEqual(paged, whole.data, `pages of ${size}`);
    }
    assert.deepEqual((await report('stock-status', `per_page=3&page=${Math.ceil(whole.meta.total_count / 3) + 1}`)).body.data, [], 'past the end');
  });

  test('velocity: units shipped ranked into fast (80% of units) and slow; stock that did not ship is dead', async () => {
    const answer = (await report('velocity')).body;
    const bucketOf = Object.fromEntries(answer.data.map((row: any) => [row.item_id, [row.bucket, row.units_shipped]]));
    assert.deepEqual(bucketOf[items.fast!], ['fast', 20]);
    assert.deepEqual(bucketOf[items.slow!], ['slow', 1]);
    assert.deepEqual(bucketOf[items.dead!], ['dead', 0]);
    assert.equal(bucketOf[items.empty!], undefined, 'no stock and no shipments: not listed');
    assert.deepEqual(answer.meta.totals.fast, { items: 1, units_shipped: 20, qty_on_hand: 20, value_on_hand: 50 });
    assert.equal(answer.data.find((row: any) => row.item_id === items.fast).days_of_supply, Math.round((20 / (20 / 30)) * 10) / 10);
    assert.deepEqual((await report('velocity', 'bucket=dead')).body.data.map((row: any) => row.bucket), ['dead', 'dead', 'dead'].slice(0, answer.meta.totals.dead.items));
    const lastMonth = (await report('velocity', 'from=2020-01-01&to=2020-01-31')).body;
    assert.equal(lastMonth.meta.totals.fast.items, 0, 'nothing shipped then: everything with stock is dead');
  });
});

describe('activity reports', () => {
  test('order fulfillment: orders entered, released and shipped, units and fill rate, release-to-ship time', async () => {
    const answer = (await report('order-fulfillment')).body;
    assert.equal(answer.data.length, 1);
    const row = answer.data[0];
    const orders = await t.db.selectFrom('orders').select(['released_at', 'shipped_at']).execute();
    const batchLines = await t.db.selectFrom('pick_batch_lines as l').innerJoin('pick_batches as b', 'b.id', 'l.pick_batch_id')
      .select(['l.qty_to_pick', 'l.qty_picked']).where('b.status', '=', 'shipped').execute();
    assert.deepEqual([row.manufacturer_id, row.orders_entered, row.orders_released, row.orders_shipped, row.batches_shipped],
      [floor.partner, orders.length, orders.filter((o) => o.released_at).length, orders.filter((o) => o.shipped_at).length, 2]);
    assert.deepEqual([row.lines_shipped, row.units_requested, row.units_shipped], [batchLines.length,
      batchLines.reduce((n, l) => n + l.qty_to_pick, 0), batchLines.reduce((n, l) => n + l.qty_picked, 0)]);
    assert.equal(row.fill_rate, 1);
    const hours = orders.filter((o) => o.shipped_at).map((o) => (new Date(o.shipped_at!).getTime() - new Date(o.released_at!).getTime()) / 3_600_000);
    assert.equal(row.avg_hours_release_to_ship, Math.round((hours.reduce((a, b) => a + b, 0) / hours.length) * 100) / 100);
    assert.deepEqual(answer.meta.totals.orders_shipped, 2);
    assert.equal((await report('order-fulfillment', 'from=2020-01-01&to=2020-12-31')).body.meta.total_count, 0);
  });

  test('order fulfillment: an order counts as entered, released and shipped each in the period of its own date', async () => {
    const figures = async (query: string) => {
      const { totals } = (await report('order-fulfillment', query)).body.meta;
      return [totals.orders_entered, totals.orders_released, totals.orders_shipped, totals.batches_shipped, totals.lines_shipped, totals.units_shipped];
    };
    const shipped = await t.db.selectFrom('pick_batches as b').innerJoin('orders as o', 'o.id', 'b.order_id')
      .select(['b.id as batch_id', 'o.id as order_id', 'o.created_at', 'o.released_at', 'o.shipped_at', 'b.shipped_at as batch_shipped_at'])
      .where('b.status', '=', 'shipped').orderBy('b.created_at').executeTakeFirstOrThrow();
    const lines = await t.db.selectFrom('pick_batch_lines').select(['qty_picked']).where('pick_batch_id', '=', shipped.batch_id).execute();
    const units = lines.reduce((n, line) => n + line.qty_picked, 0);
    const now = await figures('');
    try {
      // Entered in March 2020, released in April, shipped (the order and its batch) in May.
      await t.db.updateTable('orders').set({ created_at: '2020-03-10T12:00:00Z', released_at: '2020-04-10T12:00:00Z', shipped_at: '2020-05-10T12:00:00Z' })
        .where('id', '=', shipped.order_id).execute();
      await t.db.updateTable('pick_batches').set({ shipped_at: '2020-05-10T12:00:00Z' }).where('id', '=', shipped.batch_id).execute();
      assert.deepEqual(await figures('from=2020-03-01&to=2020-03-31'), [1, 0, 0, 0, 0, 0]);
      assert.deepEqual(await figures('from=2020-04-01&to=2020-04-30'), [0, 1, 0, 0, 0, 0]);
      assert.deepEqual(await figures('from=2020-05-01&to=2020-05-31'), [0, 0, 1, 1, lines.length, units]);
      assert.deepEqual(await figures('from=2020-03-01&to=2020-05-31'), [1, 1, 1, 1, lines.length, units]);
      assert.deepEqual(await figures(''), [now[0]! - 1, now[1]! - 1, now[2]! - 1, now[3]! - 1, now[4]! - lines.length, now[5]! - units]);
    } finally {
      await t.db.updateTable('orders').set({ created_at: shipped.created_at, released_at: shipped.released_at, shipped_at: shipped.shipped_at })
        .where('id', '=', shipped.order_id).execute();
      await t.db.updateTable('pick_batches').set({ shipped_at: shipped.batch_shipped_at }).where('id', '=', shipped.batch_id).execute();
    }
    assert.deepEqual(await figures(''), now);
  });

  test('movements: by day, type and status, as the ledger holds them; CSV of the same rows', async () => {
    const ledger = await t.db.selectFrom('inventory_movements').select(['movement_type', 'inventory_status', 'quantity']).execute();
    const answer = (await report('movements')).body;
    const expected = new Map<string, { movements: number; units_in: number; units_out: number; net: number }>();
    for (const row of ledger) {
      const key = `${today} ${row.movement_type} ${row.inventory_status}`;
      const group = expected.get(key) ?? { movements: 0, units_in: 0, units_out: 0, net: 0 };
      group.movements++;
      group.units_in += Math.max(row.quantity, 0);
      group.units_out += Math.max(-row.quantity, 0);
      group.net += row.quantity;
      expected.set(key, group);
    }
    assert.deepEqual(new Map(answer.data.map(({ day, movement_type, inventory_status, ...sums }: any) => [`${day} ${movement_type} ${inventory_status}`, sums])), expected);
    assert.equal(answer.meta.totals.movements, ledger.length);
    const shipments = (await report('movements', `movement_type=shipment&manufacturer=${floor.partner}`)).body.data;
    assert.deepEqual(shipments.map((row: any) => [row.movement_type, row.units_out]), [['shipment', 21]]);
    assert.deepEqual((await csvOf('movements')).map((row) => Object.values(row)), answer.data.map((row: any) => Object.values(row).map(cell)));
  });

  test('cycle-count accuracy: lines counted, variances in units and value, accuracy', async () => {
    const lines = await t.db.selectFrom('cycle_count_lines as l').innerJoin('items as i', 'i.id', 'l.item_id')
      .select(['l.variance', 'i.average_cost', 'i.manufacturer_id']).where('l.counted_qty', 'is not', null).execute();
    const answer = (await report('cycle-count-accuracy')).body;
    const ours = lines.filter((l) => l.manufacturer_id === floor.partner);
    const row = answer.data.find((r: any) => r.manufacturer_id === floor.partner);
    assert.deepEqual([row.lines_counted, row.lines_with_variance, row.variance_units, row.net_variance_units, row.variance_value],
      [ours.length, 1, 1, -1, 1.25]);
    assert.equal(row.accuracy_pct, Math.round(((ours.length - 1) / ours.length) * 10_000) / 100);
    assert.equal(answer.meta.totals.lines_counted, lines.length);
  });

  test('exceptions: by kind and status with time to review; reviewing one moves it', async () => {
    let answer = (await report('exceptions')).body;
    assert.deepEqual(answer.data.map((r: any) => [r.kind, r.status, r.exceptions, r.units_short, r.reviewed]), [['short_pick', 'open', 1, 2, 0]]);
    const exception = await t.db.selectFrom('pick_exceptions').select('id').executeTakeFirstOrThrow();
    await ok(post(floor, `/exceptions/${exception.id}/review`, { disposition: 'backorder', note: 'restock due' }));
    answer = (await report('exceptions')).body;
    const stored = await t.db.selectFrom('pick_exceptions').select(['created_at', 'reviewed_at']).executeTakeFirstOrThrow();
    const hours = Math.round(((new Date(stored.reviewed_at!).getTime() - new Date(stored.created_at).getTime()) / 3_600_000) * 100) / 100;
    assert.deepEqual(answer.data.map((r: any) => [r.kind, r.status, r.reviewed, r.avg_hours_to_review]), [['short_pick', 'reviewed', 1, hours]]);
    assert.deepEqual(answer.meta.totals, { exceptions: 1, units_short: 2, reviewed: 1, avg_hours_to_review: hours, median_hours_to_review: hours });
  });

  test('receiving: posted batches\' units received, passed, waived and failed; open batches counted apart', async () => {
    const item = items.slow!;
    const batch = (await ok(post(floor, '/receiving', { manufacturer_id: floor.partner, received_date: today }), 201)).batch.id;
    const inspected = (await ok(post(floor, `/receiving/${batch}/lines`, { item_id: item, qty_received: 10, new_location_id: floor.bin }), 201)).line.id;
    const waived = (await ok(post(floor, `/receiving/${batch}/lines`, { item_id: items.dead, qty_received: 4, new_location_id: floor.bin }), 201)).line.id;
    await ok(post(floor, `/receiving/${batch}/verify`));
    await ok(post(floor, `/receiving/${batch}/lines/${inspected}/inspection`, { qty_passed: 7, qty_failed: 3 }));
    await ok(post(floor, `/receiving/${batch}/lines/${waived}/waive`));
    await ok(post(floor, `/receiving/${batch}/post`));
    await ok(post(floor, '/receiving', { manufacturer_id: floor.partner, received_date: today }), 201);
    const row = (await report('receiving')).body.data[0];
    assert.deepEqual([row.batches, row.batches_open, row.batches_posted, row.lines_posted, row.units_received, row.units_passed, row.units_waived, row.units_failed, row.pass_rate],
      [2, 1, 1, 2, 14, 11, 4, 3, 0.7857]);
    const quarantined = (await report('stock-status')).body.meta.totals.qty_quarantined;
    assert.equal(quarantined, 3);
  });

  test('order fulfillment: a short ship counts what its lines were to pick against what they picked (fill rate and line fill rate)', async () => {
    // Two lines: 4 of which 3 picked and 1 short, 2 picked in full. Shipped, then moved to June 2021 to stand alone.
    const [partly, whole] = [await stockedItem(floor, 10), await stockedItem(floor, 10)];
    const orderId = await releasedOrder(floor, [{ item: partly, qty: 4 }, { item: whole, qty: 2 }]);
    const batch = await startedBatch(floor, orderId);
    const lineOf = (id: string) => `/pick-batches/${batch.ID}/lines/${batch.Lines.find((l: { ItemID: string }) => l.ItemID === id).PickBatchLineID}`;
    await ok(post(floor, `${lineOf(partly)}/pick`, { qty_picked: 3 }));
    await ok(post(floor, `${lineOf(partly)}/short`, { qty_short: 1, reason: 'one missing' }));
    await ok(post(floor, `${lineOf(whole)}/pick`, { qty_picked: 2 }));
    await ok(post(floor, `/pick-batches/${batch.ID}/complete`));
    for (const item of [partly, whole]) await ok(post(floor, `${lineOf(item)}/verify`));
    await ok(post(floor, `/pick-batches/${batch.ID}/pack`));
    const exception = await t.db.selectFrom('pick_exceptions').select('id').where('pick_batch_id', '=', batch.ID).executeTakeFirstOrThrow();
    await ok(post(floor, `/exceptions/${exception.id}/review`, { disposition: 'backorder' }));
    await ok(post(floor, `/pick-batches/${batch.ID}/ship`));
    await t.db.updateTable('orders').set({ created_at: '2021-06-01T12:00:00Z', released_at: '2021-06-02T12:00:00Z' }).where('id', '=', orderId).execute();
    await t.db.updateTable('pick_batches').set({ shipped_at: '2021-06-03T12:00:00Z' }).where('id', '=', batch.ID).execute();
    const row = (await report('order-fulfillment', 'from=2021-06-01&to=2021-06-30')).body.data[0];
    assert.deepEqual([row.orders_entered, row.orders_released, row.orders_shipped, row.batches_shipped], [1, 1, 0, 1], 'the order is partial, not shipped');
    assert.deepEqual([row.lines_shipped, row.units_requested, row.units_shipped, row.fill_rate, row.line_fill_rate], [2, 6, 5, 0.8333, 0.5]);
  });
});

test('migrations 0033 and 0036 give the batches shipped before them their lines\' figures; a shipped batch without them is refused', async () => {
  const database = await connectPGlite(null);
  try {
    const { db } = database;
    // The migrations before 0033; then batches as the service shipped them.
    const [earlier, later] = [listMigrations().filter((m) => m.version < '0033'), listMigrations().filter((m) => m.version >= '0033')];
    await migrate(db, earlier);
    await sql`insert into manufacturers (code, name) values ('OLD', 'Old partner')`.execute(db);
    await sql`insert into customers (account_number, name) values ('C1', 'Old customer')`.execute(db);
    await sql`insert into items (manufacturer_id, item_number_display, item_number_normalized, description)
      select m.id, 'OLD-' || n, 'OLD' || n, 'Old part ' || n from manufacturers m, generate_series(1, 3) n`.execute(db);
    await sql`insert into orders (manufacturer_id, customer_id) select m.id, c.id from manufacturers m, customers c, generate_series(1, 3)`.execute(db);
    await sql`insert into order_lines (order_id, item_id, line_number, item_number_display, item_description, qty_ordered, qty_warehouse, fulfillment_source, unit_price, extended_price, unit_of_measure)
      select o.id, i.id, row_number() over (partition by o.id order by i.item_number_normalized), i.item_number_display, i.description, 5, 5, 'warehouse', 1, 5, 'EA'
      from orders o, items i`.execute(db);
    // Batch 1 shipped with every line in full, batch 2 shipped with 3 of 5 picked on one line and nothing on another,
    // batch 3 still in progress.
    await sql`insert into pick_batches (order_id, manufacturer_id, batch_number, status, shipped_at)
      select o.id, o.manufacturer_id, 'PB00000' || row_number() over (order by o.id), 'in_progress', null from orders o`.execute(db);
    await sql`insert into pick_batch_lines (pick_batch_id, order_line_id, item_id, qty_to_pick, qty_picked)
      select b.id, l.id, l.item_id, 5, case when b.batch_number = 'PB000002' then (array[5, 3, 0])[l.line_number] else 5 end
      from pick_batches b join order_lines l on l.order_id = b.order_id`.execute(db);
    await sql`update pick_batches set status = 'shipped', shipped_at = now() where batch_number in ('PB000001', 'PB000002')`.execute(db);

    const figures = async () => (await db.selectFrom('pick_batches')
      .select(['batch_number', 'shipped_lines', 'shipped_lines_in_full', 'shipped_units_to_pick', 'shipped_units_picked']).orderBy('batch_number').execute())
      .map((b) => [b.batch_number, b.shipped_lines, b.shipped_lines_in_full, b.shipped_units_to_pick, b.shipped_units_picked]);
    const [upTo0035, from0036] = [later.filter((m) => m.version < '0036'), later.filter((m) => m.version >= '0036')];
    assert.deepEqual(await migrate(db, upTo0035), upTo0035.map((m) => m.version));
    assert.deepEqual(await figures(), [['PB000001', 3, 3, 15, 15], ['PB000002', 3, 1, 15, 8], ['PB000003', null, null, null, null]]);
    // Batch 3 shipped outside the API before 0036: 0036 gives it its figures before it requires them.
    await sql`update pick_batches set status = 'shipped', shipped_at = now() where batch_number = 'PB000003'`.execute(db);
    assert.deepEqual(await migrate(db), from0036.map((m) => m.version));
    assert.deepEqual((await figures())[2], ['PB000003', 3, 3, 15, 15]);
    await assert.rejects(sql`update pick_batches set shipped_lines = null where batch_number = 'PB000003'`.execute(db), /pick_batches_shipped_figures/);
  } finally {
    await database.close();
  }
});
