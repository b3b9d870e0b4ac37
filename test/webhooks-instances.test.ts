// Two service processes on one PostgreSQL deliver one subscription's events; one is killed with SIGKILL mid-burst.
// Every event still arrives; an event arrives twice only when the killed instance had sent it without recording it,
// and then with the same delivery (and event) id.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { printedAdminKey, request, startService, waitFor, type Service } from './fault-kit.ts';
import { createEmptyServerDatabase, onPostgres } from './helpers.ts';

const EVENTS = 120;
const env = { WMS_ALLOW_PRIVATE_WEBHOOK_URLS: '1', WMS_SECRET_KEY: 'a-secret-key-shared-by-both-instances-0123' };
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
  services.push(await startService({ ...env, DATABASE_URL: database.url }));
  await waitFor(async () => (await request(services[0]!, 'GET', '/readyz')).status === 200, 30_000, 'the first instance');
  services.push(await startService({ ...env, DATABASE_URL: database.url }));
  await waitFor(async () => (await request(services[1]!, 'GET', '/readyz')).status === 200, 30_000, 'the second instance');
});
after(async () => {
  for (const service of services) service.child.kill('SIGKILL');
  receiver.closeAllConnections();
  receiver.close();
  await database?.drop();
});

test('a burst delivered by two instances, one killed mid-burst: every event arrives, duplicates only of the killed one\'s sends', { skip: !onPostgres && 'needs PostgreSQL (TEST_DATABASE_URL)' }, async () => {
  const [a, b] = services as [Service, Service];
  const key = printedAdminKey(a);
  const post = async (path: string, body: unknown) => {
    const answer = await request(a, 'POST', `/api/v1${path}`, { key, body });
    assert.ok(answer.status === 200 || answer.status === 201, `${path}: ${answer.status} ${JSON.stringify(answer.body)}`);
    return answer.body.data;
  };
  const port = (receiver.address() as { port: number }).port;
  const subscription = await post('/webhooks', { url: `http://127.0.0.1:${port}/in`, event_kinds: ['inventory.adjusted'] });
  const partner = await post('/manufacturers', { code: 'KILL', name: 'Kill test partner' });
  const item = (await post('/items', { manufacturer_id: partner.id, item_number_display: 'KILL-1', description: 'burst item' })).item;
  const bin = await post('/locations', { location_code: 'KILL-BIN' });
  for (let i = 0; i < EVENTS; i++) {
    await post('/inventory/adjustments', { item_id: item.id, quantity: 1, reason: `burst ${i}`, location_id: bin.id });
    if (i === EVENTS / 2) {
      await waitFor(() => arrivals.length > 10, 10_000, 'deliveries to start');
      b.child.kill('SIGKILL');
      await b.exited;
    }
  }
  // The killed instance's claims come back when their 60 s lease ends.
  const pending = async () => (await request(a, 'GET', `/api/v1/webhooks/${subscription.id}/deliveries?status=pending&per_page=1`, { key })).body.meta.total_count;
  await waitFor(async () => (await pending()) === 0, 90_000, 'every delivery to be delivered');
  const delivered = (await request(a, 'GET', `/api/v1/webhooks/${subscription.id}/deliveries?status=delivered&per_page=1`, { key })).body.meta.total_count;
  assert.equal(delivered, EVENTS);
  await sleep(100);
  const byEvent = new Map<string, Set<string>>();
  for (const arrival of arrivals) byEvent.set(arrival.eventId, (byEvent.get(arrival.eventId) ?? new Set()).add(arrival.deliveryId));
  assert.equal(byEvent.size, EVENTS, 'every event arrived');
  assert.ok([...byEvent.values()].every((ids) => ids.size === 1), 'an event that arrived twice came as the same delivery');
  const twice = arrivals.length - EVENTS;
  assert.ok(twice <= 32, `${twice} sent twice: at most what the killed instance had in flight`);
  console.log(`killed mid-burst: ${EVENTS} events, ${arrivals.length} arrivals (${twice} repeated after the kill)`);
});
