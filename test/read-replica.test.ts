// A read replica: a real hot standby (pg_basebackup of a primary of the test's own, standby.signal, another port) as
// DATABASE_READ_URL. Lists, search, reports and the event poll read the standby; single records, and every read of a
// request that writes, read the primary; a standby that is down sends reads back to the primary. Replay on the standby
// is paused to make the difference visible: what the primary has and the standby has not yet replayed.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import {
  createCluster, createStandby, faultTestsSkipped, printedAdminKey, queryOnce, request, startService, waitFor, type Cluster, type Service,
} from './fault-kit.ts';

const skip = faultTestsSkipped();
let primary: Cluster | undefined;
let standby: Cluster | undefined;
let service: Service | undefined;
let key = '';

before(async () => {
  if (skip) return;
  primary = await createCluster();
  standby = await createStandby(primary);
  // Without the read cache: a cached list would hide where a miss would have been read from.
  service = await startService({ DATABASE_URL: primary.url, DATABASE_READ_URL: standby.url, WMS_READ_CACHE_MB: '0' });
  await waitFor(async () => (await request(service!, 'GET', '/readyz')).status === 200, 30_000, 'the service');
  key = printedAdminKey(service);
});
after(async () => {
  service?.child.kill('SIGKILL');
  await standby?.drop();
  await primary?.drop();
});

const query = <T extends pg.QueryResultRow>(cluster: Cluster, text: string) => queryOnce<T>(cluster.url, text);

/**
 * Until the standby has replayed everything the primary has written so far. The insert position, not the write
 * position: the test's clusters run with synchronous_commit off, so a committed order's WAL may still sit in the
 * primary's buffers, past pg_current_wal_lsn(), and a wait on that position could end before the order replays.
 */
async function caughtUp(): Promise<void> {
  const [{ lsn }] = await query<{ lsn: string }>(primary!, 'select pg_current_wal_insert_lsn()::text as lsn');
  await waitFor(async () => (await query<{ done: boolean }>(standby!, `select pg_last_wal_replay_lsn() >= '${lsn}'::pg_lsn as done`))[0]!.done,
    10_000, 'the standby to replay');
}

const get = async (path: string) => {
  const answer = await request(service!, 'GET', `/api/v1${path}`, { key });
  assert.equal(answer.status, 200, `${path}: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body;
};
const post = async (path: string, body?: unknown) => {
  const answer = await request(service!, 'POST', `/api/v1${path}`, { key, ...(body === undefined ? {} : { body }) });
  assert.ok(answer.status === 200 || answer.status === 201, `${path}: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body.data;
};

// The lag-tolerant reads, each as the number of rows it finds now.
const totals = async (partnerId: string) => ({
  items: (await get(`/items?manufacturer=${partnerId}`)).meta.total_count,
  search: (await get('/items/search?q=ZEBRA-9')).data.length,
  orders: (await get(`/orders?manufacturer=${partnerId}`)).meta.total_count,
  events: (await get('/shipments/events?kind=order.created')).meta.total_count,
  stockReport: (await get(`/reports/stock-status?manufacturer=${partnerId}`)).meta.total_count,
});

test('with replay paused, lists, search, reports and the event poll answer what the standby has; records and writes use the primary', { skip }, async () => {
  const partner = await post('/manufacturers', { code: 'LAG', name: 'Replica partner' });
  const customer = await post('/customers', { account_number: 'C-LAG', name: 'Replica customer', address_line_1: '1 Main St', city: 'Springfield', state: 'IL', zip_code: '62701' });
  const first = (await post('/items', { manufacturer_id: partner.id, item_number_display: 'LAG-1', description: 'replicated first' })).item;
  const bin = await post('/locations', { location_code: 'LAG-BIN' });
  await post('/inventory/adjustments', { item_id: first.id, quantity: 50, reason: 'stock', location_id: bin.id });
  await caughtUp();
  const before = await totals(partner.id);
  assert.deepEqual(before, { items: 1, search: 0, orders: 0, events: 0, stockReport: 1 });

  await query(standby!, 'select pg_wal_replay_pause()');
  const second = (await post('/items', { manufacturer_id: partner.id, item_number_display: 'ZEBRA-9', description: 'only on the primary' })).item;
  assert.equal((await get(`/items/${second.id}`)).data.item_number_display, 'ZEBRA-9', 'a single record reads the primary');
  // Stock posting and order entry read the item they change: one the standby has not seen yet is found and has the stock
  // just posted, so those requests read the primary.
  await post('/inventory/adjustments', { item_id: second.id, quantity: 5, reason: 'stock', location_id: bin.id });
  const order = await post('/orders', {
    manufacturer_id: partner.id, customer_id: customer.id ?? customer.customer.id, lines: [{ item_id: second.id, qty_ordered: 1, unit_price: 1 }],
  });
  assert.equal((await get(`/orders/${order.order.id}`)).data.order.id, order.order.id);
  assert.deepEqual(await totals(partner.id), before, 'the lists answer from the paused standby');

  await query(standby!, 'select pg_wal_replay_resume()');
  await caughtUp();
  assert.deepEqual(await totals(partner.id), { items: 2, search: 1, orders: 1, events: 1, stockReport: 2 });
});

test('every read that goes to the standby answers 200 there; every other GET path answers without a server error', { skip }, async () => {
  const reports = ['order-fulfillment', 'receiving', 'movements', 'cycle-count-accuracy', 'exceptions', 'inventory-valuation', 'stock-status', 'velocity'];
  const onStandby = [
    '/items', '/items/search?q=LAG', '/orders', '/pick-batches', '/customers', '/receiving', '/exceptions', '/cycle-counts',
    '/locations', '/inventory/adjustments', '/inventory/movements', '/shipments/events', ...reports.map((name) => `/reports/${name}`),
  ];
  for (const path of onStandby) await get(path);
  const others = Object.entries((await request(service!, 'GET', '/openapi.json')).body.paths as Record<string, Record<string, unknown>>)
    .filter(([path, operations]) => 'get' in operations && !path.includes('{'))
    .map(([path]) => path);
  assert.ok(others.length >= 20, `GET paths without parameters: ${others.length}`);
  for (const path of others) {
    const answer = await request(service!, 'GET', path, { key });
    // Some need query parameters (400); none may fail for want of a writable server.
    assert.ok(answer.status < 500, `${path}: ${answer.status} ${JSON.stringify(answer.body)}`);
  }
  assert.doesNotMatch(service!.output(), /read replica gives no connection/, 'no read went to the primary instead');
});

test('a standby that is down: the reads go to the primary', { skip }, async () => {
  await standby!.stop();
  const partner = await post('/manufacturers', { code: 'DOWN', name: 'Standby down partner' });
  await post('/items', { manufacturer_id: partner.id, item_number_display: 'DOWN-1', description: 'written with the standby down' });
  assert.equal((await get(`/items?manufacturer=${partner.id}`)).meta.total_count, 1);
  assert.equal((await get('/items/search?q=DOWN-1')).data.length, 1);
  assert.match(service!.output(), /read replica gives no connection/, 'the switch is logged');
});
