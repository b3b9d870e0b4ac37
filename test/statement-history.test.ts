// The consignor statement (opening + movements = closing, from the ledger; JSON, CSV, PDF; partner scope) and the
// audit history of a record (who, when, what changed; partner scope).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { parse } from 'csv-parse/sync';
import { sql } from 'kysely';
import { call, createItem, expectError, startApp, userWithKey, type TestApp } from './helpers.ts';
import { ok, packedBatch, post, releasedOrder, setUpFloor, stockedItem, type Floor } from './picking-kit.ts';

let t: TestApp;
let floor: Floor;
const keys = { consignor: '', otherConsignor: '', office: '', warehouse: '' };
const items = { a: '', b: '', idle: '' };
const today = new Date().toISOString().slice(0, 10);
const NOVEMBER = `from=2026-11-01&to=${today}`;

const statement = (query: string, key = t.adminKey, manufacturer = floor.partner, accept?: string) =>
  t.app.inject({ method: 'GET', url: `/api/v1/manufacturers/${manufacturer}/statement?${query}`, headers: { authorization: `Bearer ${key}`, ...(accept ? { accept } : {}) } });
const json = async (query: string, key?: string) => {
  const answer = await statement(query, key);
  assert.equal(answer.statusCode, 200, answer.body);
  return answer.json();
};
/** Backdates an item's movements so far (they are its oldest: the ledger's seq order stays its time order). */
const backdate = (itemId: string, at: string) => sql`update inventory_movements set performed_at = ${at}::timestamptz where item_id = ${itemId}`.execute(t.db);

before(async () => {
  t = await startApp();
  floor = await setUpFloor(t);
  keys.consignor = (await userWithKey(t, 'consignor', { manufacturerId: floor.partner })).key;
  keys.otherConsignor = (await userWithKey(t, 'consignor', { manufacturerId: floor.otherPartner })).key;
  keys.office = (await userWithKey(t, 'office')).key;
  keys.warehouse = (await userWithKey(t, 'warehouse')).key;
  items.a = await stockedItem(floor, 10);
  await backdate(items.a, '2026-10-15T10:00:00Z');
  items.b = await stockedItem(floor, 6);
  await backdate(items.b, '2026-09-01T08:00:00Z');
  items.idle = await createItem(t, floor.partner, 'IDLE-1');
  await stockedItem(floor, 9, floor.otherPartner);
  // In the period: a receipt of 5 (3 passed, 2 to quarantine), an adjustment of -1, a shipment of 4.
  const batch = (await ok(post(floor, '/receiving', { manufacturer_id: floor.partner, received_date: today }), 201)).batch.id;
  const line = (await ok(post(floor, `/receiving/${batch}/lines`, { item_id: items.a, qty_received: 5, new_location_id: floor.bin }), 201)).line.id;
  await ok(post(floor, `/receiving/${batch}/verify`));
  await ok(post(floor, `/receiving/${batch}/lines/${line}/inspection`, { qty_passed: 3, qty_failed: 2 }));
  await ok(post(floor, `/receiving/${batch}/post`));
  assert.equal((await call(t.app, 'POST', '/api/v1/inventory/adjustments', { key: t.adminKey, body: { item_id: items.a, quantity: -1, reason: 'crushed carton', location_id: floor.bin } })).status, 201);
  const shipped = await packedBatch(floor, await releasedOrder(floor, [{ item: items.a, qty: 4 }]));
  await ok(post(floor, `/pick-batches/${shipped.ID}/ship`));
});
after(() => t.close());

describe('consignor statement', () => {
  test('per item: opening, every movement of the period, closing; opening + movements = closing, and closing is on hand today', async () => {
    const { data, meta } = await json(NOVEMBER);
    assert.deepEqual([data.manufacturer.id, data.from, data.to, meta.total_count], [floor.partner, '2026-11-01', today, 2]);
    const [a, b] = data.items;
    assert.deepEqual([a.item_id, b.item_id], [items.a, items.b], 'the idle item (no stock, no movements) is not listed');
    assert.deepEqual([a.opening_on_hand, a.closing_on_hand, a.opening_quarantine, a.closing_quarantine], [10, 8, 0, 2]);
    assert.deepEqual(a.movements.map((m: any) => [m.movement_type, m.inventory_status, m.quantity]),
      [['receipt', 'available', 3], ['receipt', 'quarantine', 2], ['adjustment', 'available', -1], ['shipment', 'available', -4]]);
    assert.equal(a.movements[2].reason, 'crushed carton');
    assert.equal(a.movements[2].performed_by_name, 'admin');
    for (const item of data.items) {
      const moved = item.movements.filter((m: any) => m.inventory_status === 'available').reduce((n: number, m: any) => n + m.quantity, 0);
      assert.equal(item.opening_on_hand + moved, item.closing_on_hand, 'opening + movements = closing');
      const stored = await t.db.selectFrom('items').select('qty_on_hand').where('id', '=', item.item_id).executeTakeFirstOrThrow();
      assert.equal(item.closing_on_hand, stored.qty_on_hand);
    }
    const quarantined = await t.db.selectFrom('item_locations').select('qty_on_hand').where('item_id', '=', items.a).where('inventory_status', '=', 'quarantine').executeTakeFirstOrThrow();
    assert.equal(a.closing_quarantine, quarantined.qty_on_hand);
    assert.deepEqual([b.opening_on_hand, b.closing_on_hand, b.movements], [6, 6, []]);
    assert.deepEqual([data.totals.items, data.totals.opening_on_hand, data.totals.closing_on_hand, data.totals.closing_quarantine], [2, 16, 14, 2]);
    assert.deepEqual(data.totals.by_type.map((r: any) => [r.movement_type, r.inventory_status, r.quantity]),
      [['adjustment', 'available', -1], ['receipt', 'available', 3], ['receipt', 'quarantine', 2], ['shipment', 'available', -4]]);
  });

  test('an earlier period: the balances as they stood then', async () => {
    const { data } = await json('from=2026-10-01&to=2026-10-31');
    const [a, b] = data.items;
    assert.deepEqual([a.opening_on_hand, a.movements.map((m: any) => m.quantity), a.closing_on_hand], [0, [10], 10]);
    assert.deepEqual([b.opening_on_hand, b.closing_on_hand], [6, 6]);
  });

  test('paged by item; a page past the end still has the totals', async () => {
    const second = await json(`${NOVEMBER}&per_page=1&page=2`);
    assert.deepEqual([second.data.items.map((i: any) => i.item_id), second.meta.total_pages], [[items.b], 2]);
    const past = await json(`${NOVEMBER}&per_page=1&page=3`);
    assert.deepEqual([past.data.items, past.data.totals.items, past.data.totals.closing_on_hand, past.meta.total_count], [[], 2, 14, 2]);
  });

  test('as CSV: opening, movements and closing rows per item, with the running quarantine balance', async () => {
    const answer = await statement(NOVEMBER, t.adminKey, floor.partner, 'text/csv');
    assert.equal(answer.statusCode, 200);
    assert.match(String(answer.headers['content-disposition']), /^attachment; filename="statement-PICKP-2026-11-01-.*\.csv"$/);
    const rows = parse(answer.body, { columns: true }) as Record<string, string>[];
    assert.deepEqual(rows.filter((r) => r.item_number_display === 'PK-1').map((r) => [r.entry, r.quantity, r.balance_after, r.quarantine_balance]), [
      ['opening', '', '10', '0'], ['receipt', '3', '13', '0'], ['receipt', '2', '13', '2'], ['adjustment', '-1', '12', '2'],
      ['shipment', '-4', '8', '2'], ['closing', '', '8', '2'],
    ]);
  });

  test('as a PDF to file', async () => {
    const answer = await statement(NOVEMBER, keys.consignor, floor.partner, 'application/pdf');
    assert.equal(answer.statusCode, 200);
    assert.equal(answer.headers['content-type'], 'application/pdf');
    assert.equal(answer.rawPayload.subarray(0, 5).toString(), '%PDF-');
    assert.ok(answer.rawPayload.length > 1000);
  });

  test('a consignor reads its own partner\'s statement only; unscoped keys need history.view; bad input is 4xx', async () => {
    assert.equal((await statement(NOVEMBER, keys.consignor)).statusCode, 200);
    assert.equal((await statement(NOVEMBER, keys.office)).statusCode, 200);
    const refused = async (answer: Awaited<ReturnType<typeof statement>>, status: number, code: string) => {
      assert.equal(answer.statusCode, status, answer.body);
      assert.equal(answer.json().error.code, code);
    };
    await refused(await statement(NOVEMBER, keys.otherConsignor), 404, 'not_found');
    await refused(await statement(NOVEMBER, keys.consignor, floor.otherPartner), 404, 'not_found');
    await refused(await statement(NOVEMBER, keys.warehouse), 403, 'forbidden');
    await refused(await statement(NOVEMBER, t.adminKey, '6f1d3c0a-1b2c-4d5e-8f90-123456789abc'), 404, 'not_found');
    await refused(await statement('from=2026-11-05&to=2026-11-01'), 400, 'bad_request');
    await refused(await statement('from=2026-11-31'), 400, 'bad_request');
  });
});

describe('history', () => {
  const history = (query: string, key = t.adminKey) => call(t.app, 'GET', `/api/v1/history?${query}`, { key });

  test('a record\'s audit rows, newest first, with who and what changed, as stored', async () => {
    const orderId = await releasedOrder(floor, [{ item: items.b, qty: 1 }]);
    await ok(post(floor, `/orders/${orderId}/priority`, { priority: 'rush' }));
    const answer = await history(`entity_type=order&entity_id=${orderId}`);
    assert.equal(answer.status, 200);
    const stored = await t.db.selectFrom('history').select(['id', 'action']).where('entity_id', '=', orderId).orderBy('occurred_at', 'desc').orderBy('id', 'desc').execute();
    assert.deepEqual(answer.body.data.map((row: any) => [row.id, row.action]), stored.map((row) => [row.id, row.action]));
    assert.equal(answer.body.meta.total_count, stored.length);
    const priority = answer.body.data[0];
    assert.deepEqual(priority.changes.priority, { before: 'normal', after: 'rush' });
    assert.equal(priority.user.name, 'admin');
    assert.equal(priority.manufacturer_id, floor.partner);
  });

  test('partner scope: a consignor sees its partner\'s records, 404 for another\'s or a missing one; unscoped keys get an empty list', async () => {
    const rows = await history(`entity_type=item&entity_id=${items.a}`, keys.consignor);
    assert.equal(rows.status, 200);
    assert.ok(rows.body.data.length > 0 && rows.body.data.every((row: any) => row.manufacturer_id === floor.partner));
    expectError(await history(`entity_type=item&entity_id=${items.a}`, keys.otherConsignor), 404, 'not_found');
    const missing = 'entity_type=item&entity_id=6f1d3c0a-1b2c-4d5e-8f90-123456789abc';
    expectError(await history(missing, keys.consignor), 404, 'not_found');
    assert.deepEqual((await history(missing)).body.data, []);
  });

  test('the trails of users and keys are for administrators (403 for other history readers)', async () => {
    const admin = await t.db.selectFrom('users').select('id').where('name', '=', 'admin').executeTakeFirstOrThrow();
    expectError(await history(`entity_type=user&entity_id=${admin.id}`, keys.office), 403, 'forbidden');
    assert.equal((await history(`entity_type=user&entity_id=${admin.id}`)).status, 200);
  });

  test('history.view is needed; entity_type and entity_id are required and checked', async () => {
    expectError(await history(`entity_type=item&entity_id=${items.a}`, keys.warehouse), 403, 'forbidden');
    expectError(await history(`entity_type=item`), 400, 'bad_request');
    expectError(await history(`entity_type=Item;drop&entity_id=${items.a}`), 400, 'bad_request');
    expectError(await history('entity_type=item&entity_id=42'), 400, 'bad_request');
  });
});

