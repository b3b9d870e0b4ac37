// item_stock_state (migration 0009) stays equal to items through every path that writes items: adjustments, order
// commitments and cancels, receiving, item changes, discontinue/reactivate, direct SQL, and parallel adjustments on
// PostgreSQL. Stock updates of items are HOT (no index of items covers a stock column), and every write of an item writes
// its mirror row anew (migration 0031: the stock lists take their rows' versions from it).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { adjust, call, createItem, onPostgres, type TestApp } from './helpers.ts';
import { api, startReceiving, verifiedBatch } from './receiving-kit.ts';

let t: TestApp;
let partner: string;
let other: string;
let binA: string;
let binB: string;
let customer: string;
before(async () => {
  ({ t, partner, other, binA, binB } = await startReceiving());
  const created = await call(t.app, 'POST', '/api/v1/customers', {
    key: t.adminKey, body: { account_number: 'C-STATE', name: 'State Hardware', address_line_1: '1 Main St', city: 'Springfield', state: 'IL', zip_code: '62701' },
  });
  customer = created.body.data.id ?? created.body.data.customer.id;
});
after(() => t.close());

/** Rows where items and item_stock_state differ (either side missing included), as text. */
async function differences(): Promise<string[]> {
  const { rows } = await sql<{ row: string }>`
    select coalesce(i.item_number_display, s.item_id::text) as row from items i full join item_stock_state s on s.item_id = i.id
    where (i.id, i.manufacturer_id, i.status, i.item_number_normalized, i.qty_on_hand, i.qty_available, i.reorder_level,
           i.price_1, i.date_last_movement)
      is distinct from (s.item_id, s.manufacturer_id, s.status, s.item_number_normalized, s.qty_on_hand, s.qty_available,
           s.reorder_level, s.price_1, s.date_last_movement)`.execute(t.db);
  return rows.map((r) => r.row);
}

/**
 * The rows of `table` updated so far in this transaction, and how many of them HOT (no index written). The session's
 * counters may still hold earlier transactions' counts: compare before and after.
 */
async function updatesOf(tx: TestApp['db'], table: string): Promise<{ updated: number; hot: number }> {
  const { rows: [counts] } = await sql<{ updated: number; hot: number }>`select
    pg_stat_get_xact_tuples_updated(${table}::regclass)::int as updated,
    pg_stat_get_xact_tuples_hot_updated(${table}::regclass)::int as hot`.execute(tx);
  return counts!;
}

async function assertMirrored(what: string) {
  assert.deepEqual(await differences(), [], what);
}

test('created items, adjustments and relocations', async () => {
  const a = await createItem(t, partner, 'MIR-1');
  const b = await createItem(t, partner, 'MIR-2');
  assert.equal((await call(t.app, 'PATCH', `/api/v1/items/${b}`, { key: t.adminKey, body: { reorder_level: 5 } })).status, 200);
  await assertMirrored('after create');
  assert.equal((await adjust(t, a, 10, binA)).status, 201);
  assert.equal((await adjust(t, a, -3, binA)).status, 201);
  await assertMirrored('after adjustments');
  const moved = await call(t.app, 'POST', `/api/v1/locations/${binA}/relocate`, { key: t.adminKey, body: { item_id: a, qty: 2, to_location_code: 'R-B-01' } });
  assert.equal(moved.status, 200, JSON.stringify(moved.body));
  await assertMirrored('after a relocation');
});

test('order commitments and a cancel', async () => {
  const a = await createItem(t, partner, 'MIR-ORD-1');
  const b = await createItem(t, partner, 'MIR-ORD-2');
  await adjust(t, a, 20, binA);
  await adjust(t, b, 1, binA);
  const entered = await call(t.app, 'POST', '/api/v1/orders', {
    key: t.adminKey,
    body: { manufacturer_id: partner, customer_id: customer, lines: [{ item_id: a, qty_ordered: 4 }, { item_id: b, qty_ordered: 3, acknowledge_negative: true }] },
  });
  assert.equal(entered.status, 201, JSON.stringify(entered.body));
  const stored = await t.db.selectFrom('item_stock_state').select(['qty_available']).where('item_id', 'in', [a, b]).orderBy('qty_available').execute();
  assert.deepEqual(stored.map((r) => r.qty_available), [-2, 16]);
  await assertMirrored('after an order commits stock');
  const cancelled = await call(t.app, 'POST', `/api/v1/orders/${entered.body.data.order.id}/cancel`, { key: t.adminKey });
  assert.equal(cancelled.status, 200, JSON.stringify(cancelled.body));
  await assertMirrored('after the order is cancelled');
});

test('a receiving post, with units to quarantine', async () => {
  const a = await createItem(t, partner, 'MIR-RCV-1');
  const b = await createItem(t, partner, 'MIR-RCV-2');
  const { batchId } = await verifiedBatch([
    { body: { item_id: a, qty_received: 10, new_location_id: binA }, inspect: { qty_passed: 7, qty_failed: 3 } },
    { body: { item_id: b, qty_received: 2, new_location_id: binB }, inspect: 'pass' },
  ]);
  const posted = await api('POST', `/receiving/${batchId}/post`);
  assert.equal(posted.status, 200, JSON.stringify(posted.body));
  await assertMirrored('after a receiving post');
  const voided = await api('POST', `/receiving/${batchId}/void`, { reason: 'wrong batch' });
  assert.equal(voided.status, 200, JSON.stringify(voided.body));
  await assertMirrored('after its void');
});

test('item changes, discontinue and reactivate', async () => {
  const a = await createItem(t, partner, 'MIR-ST-1');
  const successor = await createItem(t, partner, 'MIR-ST-2');
  assert.equal((await call(t.app, 'PATCH', `/api/v1/items/${a}`, { key: t.adminKey, body: { description: 'Changed', reorder_level: 9 } })).status, 200);
  await assertMirrored('after an update');
  assert.equal((await call(t.app, 'POST', `/api/v1/items/${a}/discontinue`, { key: t.adminKey, body: { superseded_by: successor } })).status, 200);
  assert.equal((await t.db.selectFrom('item_stock_state').select('status').where('item_id', '=', a).executeTakeFirstOrThrow()).status, 'discontinued');
  await assertMirrored('after discontinue');
  assert.equal((await call(t.app, 'POST', `/api/v1/items/${a}/reactivate`, { key: t.adminKey, body: {} })).status, 200);
  await assertMirrored('after reactivate');
});

test('direct SQL: every mirrored column, a no-op update, an item number change and a delete', async () => {
  const a = await createItem(t, partner, 'MIR-SQL-1');
  const b = await createItem(t, partner, 'MIR-SQL-2');
  await sql`update items set qty_on_hand = 7, qty_committed = 9, reorder_level = 3, price_1 = 12.5,
    date_last_movement = now() - interval '3 days', status = 'inactive' where id = ${a}`.execute(t.db);
  await assertMirrored('after a direct update');
  await sql`update items set price_1 = null, manufacturer_id = ${other}, item_number_display = 'MIR-SQL-9',
    item_number_normalized = 'MIRSQL9' where id = ${a}`.execute(t.db);
  await sql`update items set qty_committed = qty_committed where id = ${b}`.execute(t.db);
  await sql`update items set description = 'not mirrored' where id = ${b}`.execute(t.db);
  await assertMirrored('after partner, number and price changes');
  // One column at a time: each must fire the trigger by itself (a fully quarantined receipt stamps only the date).
  for (const change of [
    sql`update items set date_last_movement = now() where id = ${a}`,
    sql`update items set manufacturer_id = ${partner} where id = ${a}`,
    sql`update items set item_number_normalized = 'MIRSQL8' where id = ${a}`,
    sql`update items set qty_committed = qty_committed + 1 where id = ${a}`,
  ]) {
    await change.execute(t.db);
    await assertMirrored(`after ${change.compile(t.db).sql}`);
  }
  await sql`delete from items where id = ${b}`.execute(t.db);
  assert.equal((await t.db.selectFrom('item_stock_state').select('item_id').where('item_id', '=', b).execute()).length, 0);
  await assertMirrored('after a delete');
});

test('every write of an item writes its mirror row anew, a HOT update when no mirrored value changed', async () => {
  // The stock lists take a row's version for its kept text from the mirror row (migration 0031): a description change
  // must give it a new version too.
  const a = await createItem(t, partner, 'MIR-NOOP');
  const version = async (tx: typeof t.db) => (await sql<{ v: string }>`select concat_ws(':', xmin, ctid) as v
    from item_stock_state where item_id = ${a}`.execute(tx)).rows[0]!.v;
  await t.db.transaction().execute(async (tx) => {
    const start = await updatesOf(tx, 'item_stock_state');
    const seen = [await version(tx)];
    await sql`update items set description = 'touched' where id = ${a}`.execute(tx);
    seen.push(await version(tx));
    await sql`update items set description = 'touched again' where id = ${a}`.execute(tx);
    seen.push(await version(tx));
    assert.equal(new Set(seen).size, 3, `a new mirror row version at each write: ${seen.join(', ')}`);
    const end = await updatesOf(tx, 'item_stock_state');
    assert.deepEqual([end.updated - start.updated, end.hot - start.hot], [2, 2]);
  });
  await assertMirrored('after the updates');
});

test('a stock update of items is HOT: it writes no index of items', async () => {
  const a = await createItem(t, partner, 'MIR-HOT-1');
  await adjust(t, a, 5, binA);
  const [start, end] = await t.db.transaction().execute(async (tx) => {
    const start = await updatesOf(tx, 'items');
    await sql`update items set qty_committed = qty_committed + 1, updated_at = now() where id = ${a}`.execute(tx);
    await sql`update items set qty_on_hand = qty_on_hand + 1, date_last_movement = now(), updated_at = now() where id = ${a}`.execute(tx);
    return [start, await updatesOf(tx, 'items')];
  });
  assert.deepEqual([end.updated - start.updated, end.hot - start.hot], [2, 2]);
  await sql`update items set qty_on_hand = qty_on_hand - 1 where id = ${a}`.execute(t.db);
  await assertMirrored('after the HOT updates');
});

test('50 parallel adjustments of a few items leave the mirror equal', { skip: onPostgres ? false : 'PGlite runs one transaction at a time' }, async () => {
  const ids = [await createItem(t, partner, 'MIR-PAR-1'), await createItem(t, partner, 'MIR-PAR-2'), await createItem(t, partner, 'MIR-PAR-3')];
  for (const id of ids) await adjust(t, id, 100, binA);
  const answers = await Promise.all(Array.from({ length: 50 }, (_, n) => adjust(t, ids[n % 3]!, n % 2 ? -1 : 2, binA)));
  assert.deepEqual(answers.filter((a) => a.status !== 201).map((a) => a.body), []);
  await assertMirrored('after parallel adjustments');
  const state = await t.db.selectFrom('item_stock_state').select(['item_id', 'qty_on_hand']).where('item_id', 'in', ids).execute();
  const expected = new Map(ids.map((id, k) => [id, 100 + Array.from({ length: 50 }, (_, n) => n).filter((n) => n % 3 === k).reduce((sum, n) => sum + (n % 2 ? -1 : 2), 0)]));
  for (const row of state) assert.equal(row.qty_on_hand, expected.get(row.item_id));
});
