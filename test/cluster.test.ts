// The service as a cluster: two processes on one PostgreSQL database and one Redis of the test's own. Limits are shared,
// order and release numbers are unique across both, and when one is killed with SIGKILL mid-burst every event still
// arrives (twice only when the killed instance had sent it without recording it, and then with the same delivery and
// event id) and every write either instance acknowledged is stored.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { printedAdminKey, queryOnce, request, startRedis, startService, waitFor, type RedisServer, type Service } from './fault-kit.ts';
import { createEmptyServerDatabase, onPostgres } from './helpers.ts';

const EVENTS = 120;
const FAILED_PER_ADDRESS = 6;
// Short, so that the address the failed keys came from may call again in the next test, and long enough for seven
// requests to fresh instances on a slow, busy machine (1 s was not: a window ran out before the seventh, CI stop 28).
const WINDOW_MS = 3000;
const env = {
  WMS_ALLOW_PRIVATE_WEBHOOK_URLS: '1', WMS_SECRET_KEY: 'a-secret-key-shared-by-both-instances-0123',
  WMS_RATE_LIMIT_FAILED_PER_ADDRESS: String(FAILED_PER_ADDRESS), WMS_RATE_LIMIT_WINDOW_MS: String(WINDOW_MS),
};
let redis: RedisServer | undefined;
const arrivals: { eventId: string; deliveryId: string }[] = [];
let database: { url: string; drop(): Promise<void> } | undefined;
const services: Service[] = [];
const receiver = createServer((request, response) => {
  request.resume();
  request.on('end', () => {
    arrivals.push({ eventId: String(request.headers['x-service-event-id']), deliveryId: String(request.headers['x-service-delivery-id']) });
    // A short wait: each instance always has sends in flight, so the kill lands in the middle of some.
    setTimeout(() => response.writeHead(200).end(), 300);
  });
});

before(async () => {
  if (!onPostgres) return;
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  database = await createEmptyServerDatabase();
  redis = await startRedis();
  services.push(await startService({ ...env, DATABASE_URL: database.url, REDIS_URL: redis.url }));
  await waitFor(async () => (await request(services[0]!, 'GET', '/readyz')).status === 200, 30_000, 'the first instance');
  services.push(await startService({ ...env, DATABASE_URL: database.url, REDIS_URL: redis.url }));
  await waitFor(async () => (await request(services[1]!, 'GET', '/readyz')).status === 200, 30_000, 'the second instance');
});
after(async () => {
  for (const service of services) service.child.kill('SIGKILL');
  receiver.closeAllConnections();
  receiver.close();
  await database?.drop();
  await redis?.kill();
});

const stored = <T extends pg.QueryResultRow>(text: string, values: unknown[] = []) => queryOnce<T>(database!.url, text, values);

/** A POST that must succeed (200 or 201): its data. */
async function accepted(service: Service, key: string, path: string, body?: unknown) {
  const answer = await request(service, 'POST', `/api/v1${path}`, { key, ...(body === undefined ? {} : { body }) });
  assert.ok(answer.status === 200 || answer.status === 201, `${path}: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body.data;
}

const skip = !onPostgres && 'needs PostgreSQL (TEST_DATABASE_URL)';

test('one limit for both: failed keys from one address are counted across the instances', { skip }, async () => {
  const statuses: number[] = [];
  for (let i = 0; i <= FAILED_PER_ADDRESS; i++) {
    statuses.push((await request(services[i % 2]!, 'GET', '/api/v1/me', { key: `jwc_not-a-key-${i}` })).status);
  }
  // Before the check: the next tests call from the same address whatever this one found.
  await sleep(WINDOW_MS + 100);
  assert.deepEqual(statuses, [...Array(FAILED_PER_ADDRESS).fill(401), 429], 'the last refusal came from the instance that saw only half');
});

test('orders entered and released on both at once: order and release numbers unique, release numbers without gaps', { skip }, async () => {
  const [a, b] = services as [Service, Service];
  const key = printedAdminKey(a);
  const post = (service: Service, path: string, body?: unknown) => accepted(service, key, path, body);
  const partner = await post(a, '/manufacturers', { code: 'NUMS', name: 'Numbers partner' });
  const customer = await post(a, '/customers', { account_number: 'C-NUMS', name: 'Numbers customer', address_line_1: '1 Main St', city: 'Springfield', state: 'IL', zip_code: '62701' });
  const item = (await post(a, '/items', { manufacturer_id: partner.id, item_number_display: 'NUMS-1', description: 'numbered' })).item;
  const bin = await post(a, '/locations', { location_code: 'NUMS-BIN' });
  await post(a, '/inventory/adjustments', { item_id: item.id, quantity: 100, reason: 'stock', location_id: bin.id });
  const orders = await Promise.all(Array.from({ length: 20 }, (_, i) => post(i % 2 ? b : a, '/orders', {
    manufacturer_id: partner.id, customer_id: customer.id ?? customer.customer.id, lines: [{ item_id: item.id, qty_ordered: 1, unit_price: 1 }],
  })));
  const ids = orders.map((order) => order.order.id as string);
  await Promise.all(ids.map((id, i) => post(i % 2 ? a : b, `/orders/${id}/release`)));
  const rows = await stored<{ order_number: number; release_number: number }>(
    'select order_number::int, release_number from orders where id = any($1::uuid[])', [ids]);
  assert.equal(new Set(rows.map((row) => row.order_number)).size, 20, 'order numbers unique');
  assert.deepEqual(rows.map((row) => row.release_number).sort((x, y) => x - y), Array.from({ length: 20 }, (_, i) => i + 1));
});

test('a burst delivered by two instances, one killed mid-burst: every event arrives, duplicates only of the killed one\'s sends, no acknowledged write lost', { skip }, async () => {
  const [a, b] = services as [Service, Service];
  const key = printedAdminKey(a);
  const post = (path: string, body: unknown) => accepted(a, key, path, body);
  const port = (receiver.address() as { port: number }).port;
  const subscription = await post('/webhooks', { url: `http://127.0.0.1:${port}/in`, event_kinds: ['inventory.adjusted'] });
  const partner = await post('/manufacturers', { code: 'KILL', name: 'Kill test partner' });
  const item = (await post('/items', { manufacturer_id: partner.id, item_number_display: 'KILL-1', description: 'burst item' })).item;
  const bin = await post('/locations', { location_code: 'KILL-BIN' });
  // Writes to the instance that will be killed, until it is: each one it acknowledged must be stored.
  const acknowledged: string[] = [];
  const toKilled = (async () => {
    for (let n = 0; b.alive(); n++) {
      const answer = await request(b, 'POST', '/api/v1/inventory/adjustments', {
        key, body: { item_id: item.id, quantity: 1, reason: `to the killed one ${n}`, location_id: bin.id },
      }).catch(() => null);
      if (answer?.status === 201) acknowledged.push(`to the killed one ${n}`);
    }
  })();
  for (let i = 0; i < EVENTS; i++) {
    await post('/inventory/adjustments', { item_id: item.id, quantity: 1, reason: `burst ${i}`, location_id: bin.id });
    if (i === EVENTS / 2) {
      await waitFor(() => arrivals.length > 10, 10_000, 'deliveries to start');
      b.child.kill('SIGKILL');
      await b.exited;
    }
  }
  await toKilled;
  assert.ok(acknowledged.length > 0, 'the killed instance acknowledged writes before it died');
  const reasons = await stored<{ reason: string; n: number }>('select reason, count(*)::int as n from inventory_movements where item_id = $1 group by reason', [item.id]);
  const storedOnce = new Set(reasons.filter((row) => row.n === 1).map((row) => row.reason));
  for (const reason of [...acknowledged, ...Array.from({ length: EVENTS }, (_, i) => `burst ${i}`)]) assert.ok(storedOnce.has(reason), `${reason} is stored once`);
  // Every stored adjustment is an event to deliver: the burst's and the killed instance's.
  const events = reasons.reduce((sum, row) => sum + row.n, 0);
  // The killed instance's claims come back when their 60 s lease ends.
  const pending = async () => (await request(a, 'GET', `/api/v1/webhooks/${subscription.id}/deliveries?status=pending&per_page=1`, { key })).body.meta.total_count;
  await waitFor(async () => (await pending()) === 0, 90_000, 'every delivery to be delivered');
  const delivered = (await request(a, 'GET', `/api/v1/webhooks/${subscription.id}/deliveries?status=delivered&per_page=1`, { key })).body.meta.total_count;
  assert.equal(delivered, events);
  await sleep(100);
  const byEvent = new Map<string, Set<string>>();
  for (const arrival of arrivals) byEvent.set(arrival.eventId, (byEvent.get(arrival.eventId) ?? new Set()).add(arrival.deliveryId));
  assert.equal(byEvent.size, events, 'every event arrived');
  assert.ok([...byEvent.values()].every((ids) => ids.size === 1), 'an event that arrived twice came as the same delivery');
  const twice = arrivals.length - events;
  assert.ok(twice <= 32, `${twice} sent twice: at most what the killed instance had in flight`);
  console.log(`killed mid-burst: ${events} events (${acknowledged.length} acknowledged by the killed instance), ${arrivals.length} arrivals (${twice} repeated after the kill)`);
});
