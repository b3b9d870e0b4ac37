// The service behind PgBouncer in transaction pooling mode (Debian's pgbouncer, started by the test on a port of its
// own), with two server connections for the service's pool of ten: consecutive transactions of one client land on
// different sessions, so nothing may lean on a session (a named prepared statement, a session setting, a LISTEN).
// Prepared statements run named when the PgBouncer keeps them (1.21+, max_prepared_statements), unnamed otherwise.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { pgBouncerSkipped, printedAdminKey, queryOnce, request, startPgBouncer, startService, waitFor, type PgBouncer, type Service } from './fault-kit.ts';
import { createEmptyServerDatabase } from './helpers.ts';

const skip = pgBouncerSkipped();
const ORDERS = 12;
let database: { url: string; drop(): Promise<void> } | undefined;
let bouncer: PgBouncer | undefined;
let service: Service | undefined;
let key = '';

before(async () => {
  if (skip) return;
  database = await createEmptyServerDatabase();
  const direct = new URL(database.url);
  bouncer = await startPgBouncer(Number(direct.port || 5432), 2);
  service = await startService({
    DATABASE_URL: bouncer.url(direct.pathname.slice(1)),
    WMS_DB_POOLER: 'transaction',
    WMS_DB_PREPARED_STATEMENTS: bouncer.keepsPreparedStatements ? '1' : '0',
    // The key cache hears revocations on a direct connection: PgBouncer cannot carry a LISTEN.
    DATABASE_LISTEN_URL: database.url,
  });
  await waitFor(async () => (await request(service!, 'GET', '/readyz')).status === 200, 30_000, 'the service behind PgBouncer');
  key = printedAdminKey(service);
});
after(async () => {
  service?.child.kill('SIGKILL');
  await bouncer?.stop();
  await database?.drop();
});

const stored = <T extends pg.QueryResultRow>(text: string, values: unknown[] = []) => queryOnce<T>(database!.url, text, values);

const call = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}, as = key) =>
  request(service!, method, `/api/v1${path}`, { key: as, headers, ...(body === undefined ? {} : { body }) });
async function ok(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const answer = await call(method, path, body, headers);
  assert.ok(answer.status >= 200 && answer.status < 300, `${method} ${path}: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body?.data;
}

test('orders entered, released, picked, packed and shipped in parallel through PgBouncer: stock and statuses as the floor left them', { skip }, async () => {
  const partner = await ok('POST', '/manufacturers', { code: 'BNC', name: 'Bouncer partner' });
  const customer = await ok('POST', '/customers', { account_number: 'C-BNC', name: 'Bouncer customer', address_line_1: '1 Main St', city: 'Springfield', state: 'IL', zip_code: '62701' });
  const item = (await ok('POST', '/items', { manufacturer_id: partner.id, item_number_display: 'BNC-1', description: 'pooled' })).item;
  const bin = await ok('POST', '/locations', { location_code: 'BNC-BIN' });
  await ok('POST', '/inventory/adjustments', { item_id: item.id, quantity: 100, reason: 'stock', location_id: bin.id });

  const shipped = await Promise.all(Array.from({ length: ORDERS }, async () => {
    const { order } = await ok('POST', '/orders', { manufacturer_id: partner.id, customer_id: customer.id, lines: [{ item_id: item.id, qty_ordered: 2, unit_price: 1 }] });
    await ok('POST', `/orders/${order.id}/release`);
    const started = await ok('POST', '/pick-batches', { order_id: order.id });
    const session = await ok('GET', `/pick-batches/${started.ID}`);
    for (const line of session.Lines) await ok('POST', `/pick-batches/${session.ID}/lines/${line.PickBatchLineID}/pick`, { qty_picked: line.QtyToPick });
    await ok('POST', `/pick-batches/${session.ID}/complete`);
    for (const line of session.Lines) await ok('POST', `/pick-batches/${session.ID}/lines/${line.PickBatchLineID}/verify`);
    await ok('POST', `/pick-batches/${session.ID}/pack`);
    await ok('POST', `/pick-batches/${session.ID}/ship`, { tracking_number: `1Z${order.order_number}`, carrier: 'ups' });
    return order.id as string;
  }));

  const [stock] = await stored<{ qty_on_hand: number; qty_committed: number }>(
    'select qty_on_hand, qty_committed from items where id = $1', [item.id]);
  assert.deepEqual(stock, { qty_on_hand: 100 - 2 * ORDERS, qty_committed: 0 });
  const orders = await stored<{ status: string; order_number: string }>('select status, order_number from orders where id = any($1::uuid[])', [shipped]);
  assert.deepEqual(orders.map((order) => order.status), Array(ORDERS).fill('shipped'));
  assert.equal(new Set(orders.map((order) => order.order_number)).size, ORDERS, 'order numbers unique');
  const [{ shipments }] = await stored<{ shipments: number }>(
    `select count(*)::int as shipments from inventory_movements where item_id = $1 and movement_type = 'shipment'`, [item.id]);
  assert.equal(shipments, ORDERS);

  // Lists and search, the same statement shapes again and again on whichever server connection is free.
  for (let i = 0; i < 5; i++) {
    const [items, found, list] = await Promise.all([
      ok('GET', `/items?manufacturer=${partner.id}`), ok('GET', '/items/search?q=BNC-1'), call('GET', `/orders?manufacturer=${partner.id}&status=shipped`),
    ]);
    assert.equal(items.length, 1);
    assert.equal(found[0].Item.id, item.id);
    assert.equal(list.body.meta.total_count, ORDERS);
  }
});

test('an Idempotency-Key replay through PgBouncer answers the first result and writes once', { skip }, async () => {
  const headers = { 'idempotency-key': 'bouncer-replay-1' };
  const first = await call('POST', '/manufacturers', { code: 'BNC-IDEM', name: 'Replayed' }, headers);
  const again = await call('POST', '/manufacturers', { code: 'BNC-IDEM', name: 'Replayed' }, headers);
  assert.equal(first.status, 201);
  assert.equal(again.status, 201);
  assert.equal(again.body.data.id, first.body.data.id);
  assert.equal((await stored(`select 1 from manufacturers where code = 'BNC-IDEM'`)).length, 1);
});

test('a key revoked in the database stops at its next request: the key cache hears it on the direct connection', { skip }, async () => {
  const me = await ok('GET', '/me');
  const created = await ok('POST', '/api-keys', { user_id: me.user.id, name: 'short-lived', scopes: ['inventory.view'] });
  assert.equal((await call('GET', '/me', undefined, {}, created.key)).status, 200);
  // Not through the API, which would clear this instance's cache itself: only the NOTIFY tells the service.
  await stored('update api_keys set revoked_at = now() where id = $1', [created.id]);
  await waitFor(async () => (await call('GET', '/me', undefined, {}, created.key)).status === 401, 2000, 'the revoked key to be refused');
});
