import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { adjust, call, createItem, createLocation, createManufacturer, expectError, startApp, userWithKey, type TestApp } from './helpers.ts';

let t: TestApp;
let partner: string;
before(async () => {
  t = await startApp();
  partner = await createManufacturer(t, 'LOCP');
});
after(() => t.close());

const location = (id: string) => t.db.selectFrom('locations').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const binsOf = (itemId: string) => t.db.selectFrom('item_locations as b').innerJoin('locations as l', 'l.id', 'b.location_id')
  .select(['l.location_code', 'b.qty_on_hand']).where('b.item_id', '=', itemId).orderBy('l.location_code').execute();

describe('create, read, update', () => {
  test('create in MAIN: capacity 0 reads back null, code from parts, no warehouse_name; get has it', async () => {
    const answer = await call(t.app, 'POST', '/api/v1/locations', { key: t.adminKey, body: { zone: 'a', aisle: '01', rack: 'r2', capacity: 0 } });
    assert.equal(answer.status, 201);
    const created = answer.body.data;
    assert.equal(created.location_code, 'A-01-R2');
    assert.equal(created.capacity, null);
    assert.equal(created.location_type, 'storage');
    assert.equal('warehouse_name' in created, false);
    assert.equal('item_count' in created, false);
    const main = await t.db.selectFrom('warehouses').select('id').where('code', '=', 'MAIN').executeTakeFirstOrThrow();
    assert.equal((await location(created.id)).warehouse_id, main.id);
    const read = await call(t.app, 'GET', `/api/v1/locations/${created.id}`, { key: t.adminKey });
    assert.equal(read.body.data.warehouse_name, 'Main warehouse');
    expectError(await call(t.app, 'POST', '/api/v1/locations', { key: t.adminKey, body: { location_code: 'a-01-r2' } }), 409, 'conflict');
    expectError(await call(t.app, 'POST', '/api/v1/locations', { key: t.adminKey, body: {} }), 422, 'invalid_request');
    expectError(await call(t.app, 'POST', '/api/v1/locations', { key: t.adminKey, body: { location_code: 'X', capacity: -1 } }), 400, 'bad_request');
    expectError(await call(t.app, 'POST', '/api/v1/locations', { key: t.adminKey, body: { location_code: 'X', location_type: 'attic' } }), 400, 'bad_request');
  });

  test('update answers with warehouse_name; capacity 0 clears; empty string clears a part', async () => {
    const id = await createLocation(t, 'UPD-LOC', { zone: 'Z', capacity: 40 });
    const answer = await call(t.app, 'PATCH', `/api/v1/locations/${id}`, { key: t.adminKey, body: { zone: '', capacity: 0, location_type: 'staging' } });
    assert.equal(answer.status, 200);
    assert.equal(answer.body.data.warehouse_name, 'Main warehouse');
    const row = await location(id);
    assert.equal(row.zone, null);
    assert.equal(row.capacity, null);
    assert.equal(row.location_type, 'staging');
  });

  test('a partner-scoped key reads locations but cannot change them', async () => {
    const consignor = await userWithKey(t, 'consignor', { manufacturerId: partner });
    assert.equal((await call(t.app, 'GET', '/api/v1/locations', { key: consignor.key })).status, 200);
    expectError(await call(t.app, 'POST', '/api/v1/locations', { key: consignor.key, body: { location_code: 'PARTNER' } }), 403, 'forbidden');
  });
});

describe('retire and reactivate', () => {
  test('retire is refused while stock remains; once empty it retires with warehouse_name; reactivate brings it back', async () => {
    const id = await createLocation(t, 'RET-1');
    const item = await createItem(t, partner, 'RET-ITEM');
    await adjust(t, item, 2, id);
    expectError(await call(t.app, 'POST', `/api/v1/locations/${id}/retire`, { key: t.adminKey }), 422, 'location_not_empty');
    assert.equal((await location(id)).is_active, true);
    await adjust(t, item, -2, id);
    const retired = await call(t.app, 'POST', `/api/v1/locations/${id}/retire`, { key: t.adminKey });
    assert.equal(retired.status, 200);
    assert.equal(retired.body.data.is_active, false);
    assert.equal(retired.body.data.warehouse_name, 'Main warehouse');
    assert.equal((await location(id)).is_active, false);
    expectError(await call(t.app, 'POST', `/api/v1/locations/${id}/retire`, { key: t.adminKey }), 422, 'invalid_status');
    expectError(await adjust(t, item, 1, id), 422, 'invalid_request');
    const back = await call(t.app, 'POST', `/api/v1/locations/${id}/reactivate`, { key: t.adminKey });
    assert.equal(back.body.data.is_active, true);
    assert.equal(back.body.data.warehouse_name, 'Main warehouse');
    expectError(await call(t.app, 'POST', `/api/v1/locations/${id}/reactivate`, { key: t.adminKey }), 422, 'invalid_status');
  });
});

describe('list and stock', () => {
  test('list rows carry item_count and total_qty; a partner counts only its own stock', async () => {
    const id = await createLocation(t, 'CNT-1');
    const other = await createManufacturer(t, 'LOCQ');
    await adjust(t, await createItem(t, partner, 'CNT-A'), 5, id);
    await adjust(t, await createItem(t, partner, 'CNT-B'), 7, id);
    await adjust(t, await createItem(t, other, 'CNT-C'), 100, id);
    const row = (await call(t.app, 'GET', '/api/v1/locations?q=cnt', { key: t.adminKey })).body.data;
    assert.deepEqual(row.map((l: { location_code: string; item_count: number; total_qty: number }) => [l.location_code, l.item_count, l.total_qty]), [['CNT-1', 3, 112]]);
    assert.equal('warehouse_name' in row[0], false);
    const consignor = await userWithKey(t, 'consignor', { manufacturerId: partner });
    const scoped = (await call(t.app, 'GET', '/api/v1/locations?q=cnt', { key: consignor.key })).body.data[0];
    assert.deepEqual([scoped.item_count, scoped.total_qty], [2, 12]);

    const stock = await call(t.app, 'GET', `/api/v1/locations/${id}/stock`, { key: consignor.key });
    assert.deepEqual(stock.body.data.map((s: { item_number_display: string; qty_on_hand: number }) => [s.item_number_display, s.qty_on_hand]), [['CNT-A', 5], ['CNT-B', 7]]);
    assert.deepEqual(Object.keys(stock.body.data[0]).sort(), ['description', 'inventory_status', 'is_primary', 'item_id', 'item_number_display', 'manufacturer_name', 'qty_on_hand']);
    expectError(await call(t.app, 'GET', '/api/v1/locations/00000000-0000-4000-8000-000000000000/stock', { key: t.adminKey }), 404, 'not_found');

    // Paged: a later page sums its own locations' stock, and every page (one past the last too) carries the total.
    const second = await createLocation(t, 'CNT-2');
    await adjust(t, await createItem(t, partner, 'CNT-D'), 9, second);
    const pages = await Promise.all([1, 2, 3].map((n) => call(t.app, 'GET', `/api/v1/locations?q=cnt&per_page=1&page=${n}`, { key: t.adminKey })));
    assert.deepEqual(pages.map((p) => p.body.data.map((l: { location_code: string; item_count: number; total_qty: number }) => [l.location_code, l.item_count, l.total_qty])),
      [[['CNT-1', 3, 112]], [['CNT-2', 1, 9]], []]);
    assert.deepEqual(pages.map((p) => p.body.meta.total_count), [2, 2, 2]);
    expectError(await call(t.app, 'GET', '/api/v1/locations?location_type=attic', { key: t.adminKey }), 400, 'bad_request');
  });

  test('item_count counts an item once when both its available and its quarantined bin there hold stock', async () => {
    const id = await createLocation(t, 'QCNT-1');
    const other = await createManufacturer(t, 'LOCR');
    const both = await createItem(t, partner, 'QCNT-A');
    const onlyHeld = await createItem(t, partner, 'QCNT-B');
    const emptiedAvailable = await createItem(t, partner, 'QCNT-C');
    const othersBoth = await createItem(t, other, 'QCNT-D');
    // An item's two bins in one location (available, quarantined) in each combination with and without stock,
    // written directly: the list reads the bins, however their stock came there.
    const bin = (itemId: string, status: 'available' | 'quarantine', qty: number) =>
      ({ item_id: itemId, location_id: id, inventory_status: status, qty_on_hand: qty });
    await t.db.insertInto('item_locations').values([
      bin(both, 'available', 4), bin(both, 'quarantine', 2),
      bin(onlyHeld, 'quarantine', 3),
      bin(emptiedAvailable, 'available', 0), bin(emptiedAvailable, 'quarantine', 1),
      bin(othersBoth, 'available', 10), bin(othersBoth, 'quarantine', 5),
    ]).execute();
    const figures = async (key: string) => {
      const [row] = (await call(t.app, 'GET', '/api/v1/locations?q=qcnt', { key })).body.data;
      return [row.item_count, row.total_qty];
    };
    assert.deepEqual(await figures(t.adminKey), [4, 25]);
    const consignor = await userWithKey(t, 'consignor', { manufacturerId: partner });
    assert.deepEqual(await figures(consignor.key), [3, 10]);
  });
});

describe('relocate and move-all', () => {
  test('relocate moves part of one item as a transfer pair; on-hand stays', async () => {
    const from = await createLocation(t, 'REL-FROM');
    await createLocation(t, 'REL-TO');
    const item = await createItem(t, partner, 'REL-ITEM');
    await adjust(t, item, 10, from);
    const answer = await call(t.app, 'POST', `/api/v1/locations/${from}/relocate`, { key: t.adminKey, body: { item_id: item, qty: 4, to_location_code: 'rel-to' } });
    assert.equal(answer.status, 200);
    assert.equal(answer.body.data.to_location.location_code, 'REL-TO');
    assert.equal(answer.body.data.to_location.warehouse_name, 'Main warehouse');
    assert.deepEqual(answer.body.data.movements.map((m: { quantity: number; movement_type: string }) => [m.movement_type, m.quantity]), [['transfer', -4], ['transfer', 4]]);
    assert.deepEqual(await binsOf(item), [{ location_code: 'REL-FROM', qty_on_hand: 6 }, { location_code: 'REL-TO', qty_on_hand: 4 }]);
    const stored = await t.db.selectFrom('items').select('qty_on_hand').where('id', '=', item).executeTakeFirstOrThrow();
    assert.equal(stored.qty_on_hand, 10);
    // Both rows of the pair in the ledger, in order, their balance_after running through them; one history row each.
    const ledger = await t.db.selectFrom('inventory_movements').select(['quantity', 'balance_after']).where('item_id', '=', item).where('movement_type', '=', 'transfer').orderBy('seq').execute();
    assert.deepEqual(ledger, [{ quantity: -4, balance_after: 6 }, { quantity: 4, balance_after: 10 }]);
    const audit = await t.db.selectFrom('history').select(['before', 'after']).where('entity_id', '=', item).where('action', '=', 'transfer').execute();
    assert.deepEqual(audit.map((row) => [(row.before as { qty_on_hand: number }).qty_on_hand, (row.after as { qty_on_hand: number }).qty_on_hand]).sort(), [[10, 6], [6, 10]].sort());
    const events = await t.db.selectFrom('outbox_events').select('data').where('kind', '=', 'inventory.relocated').execute();
    assert.ok(events.some((e) => (e.data as { item_id: string }).item_id === item));
    // The answer's movements are the pair as the ledger shows it (made from the written rows, not read back).
    const shown = await call(t.app, 'GET', `/api/v1/inventory/movements?item=${item}&movement_type=transfer`, { key: t.adminKey });
    assert.deepEqual(answer.body.data.movements, [...shown.body.data].reverse());
  });

  test('an unknown destination is 422 unknown_location echoing the code; auto_create makes it and proceeds', async () => {
    const from = await createLocation(t, 'AUTO-FROM');
    const item = await createItem(t, partner, 'AUTO-ITEM');
    await adjust(t, item, 3, from);
    const refused = await call(t.app, 'POST', `/api/v1/locations/${from}/relocate`, { key: t.adminKey, body: { item_id: item, qty: 1, to_location_code: 'new-bin-9' } });
    expectError(refused, 422, 'unknown_location');
    assert.match(refused.body.error.message, /NEW-BIN-9/);
    assert.deepEqual(refused.body.error.details, { location_code: 'NEW-BIN-9' });
    assert.equal(await t.db.selectFrom('locations').select('id').where('location_code', '=', 'NEW-BIN-9').executeTakeFirst(), undefined);
    const made = await call(t.app, 'POST', `/api/v1/locations/${from}/relocate`, { key: t.adminKey, body: { item_id: item, qty: 1, to_location_code: 'new-bin-9', auto_create: true } });
    assert.equal(made.status, 200);
    assert.equal(made.body.data.to_location.location_type, 'storage');
    assert.deepEqual(await binsOf(item), [{ location_code: 'AUTO-FROM', qty_on_hand: 2 }, { location_code: 'NEW-BIN-9', qty_on_hand: 1 }]);
  });

  test('more than the bin holds, a retired destination, the same location: 4xx and nothing moves', async () => {
    const from = await createLocation(t, 'BAD-FROM');
    await createLocation(t, 'BAD-TO');
    const retired = await createLocation(t, 'BAD-RETIRED');
    await call(t.app, 'POST', `/api/v1/locations/${retired}/retire`, { key: t.adminKey });
    const item = await createItem(t, partner, 'BAD-ITEM');
    await adjust(t, item, 2, from);
    const relocate = (body: Record<string, unknown>) => call(t.app, 'POST', `/api/v1/locations/${from}/relocate`, { key: t.adminKey, body: { item_id: item, ...body } });
    expectError(await relocate({ qty: 3, to_location_code: 'BAD-TO' }), 422, 'insufficient_stock');
    expectError(await relocate({ qty: 1, to_location_code: 'BAD-RETIRED' }), 422, 'invalid_request');
    expectError(await relocate({ qty: 1, to_location_code: 'BAD-FROM' }), 422, 'invalid_request');
    expectError(await relocate({ qty: 0, to_location_code: 'BAD-TO' }), 400, 'bad_request');
    expectError(await relocate({ qty: 1.5, to_location_code: 'BAD-TO' }), 400, 'bad_request');
    assert.deepEqual(await binsOf(item), [{ location_code: 'BAD-FROM', qty_on_hand: 2 }]);
    assert.equal((await t.db.selectFrom('inventory_movements').select('id').where('item_id', '=', item).execute()).length, 1);
  });

  test('move-all moves every item’s available stock and answers with the destination', async () => {
    const from = await createLocation(t, 'ALL-FROM');
    const a = await createItem(t, partner, 'ALL-A');
    const b = await createItem(t, partner, 'ALL-B');
    await adjust(t, a, 5, from);
    await adjust(t, b, 8, from);
    const answer = await call(t.app, 'POST', `/api/v1/locations/${from}/move-all`, { key: t.adminKey, body: { to_location_code: 'ALL-TO', auto_create: true } });
    assert.equal(answer.status, 200);
    assert.equal(answer.body.data.location.location_code, 'ALL-TO');
    assert.equal(answer.body.data.location.warehouse_name, 'Main warehouse');
    assert.equal(answer.body.data.moved_items, 2);
    assert.equal(answer.body.data.moved_qty, 13);
    assert.equal(answer.body.data.movements.length, 4);
    assert.deepEqual(await binsOf(a), [{ location_code: 'ALL-FROM', qty_on_hand: 0 }, { location_code: 'ALL-TO', qty_on_hand: 5 }]);
    assert.deepEqual(await binsOf(b), [{ location_code: 'ALL-FROM', qty_on_hand: 0 }, { location_code: 'ALL-TO', qty_on_hand: 8 }]);
    assert.equal((await call(t.app, 'POST', `/api/v1/locations/${from}/retire`, { key: t.adminKey })).status, 200);
    expectError(await call(t.app, 'POST', `/api/v1/locations/${from}/move-all`, { key: t.adminKey, body: { to_location_code: 'NOPE' } }), 422, 'unknown_location');
  });
});
