// Outbound webhooks: subscriptions (secret once, sealed, partner scope, the URL guard), and delivery to a local
// receiver: signed (checked with Stripe's verifier of the same scheme), retried on 5xx/429/timeouts with backoff,
// dead-lettered after max_attempts, permanent on 3xx/4xx, 410 deactivating; the log, retry and retry-dead; two workers
// delivering each event once; a lease held by a dead worker.
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import Stripe from 'stripe';
import { emit } from '../src/domain/events.ts';
import { startDeliveryWorker, type DeliveryWorker } from '../src/workers/webhook-delivery.ts';
import { waitFor } from './fault-kit.ts';
import { adjust, call, createItem, createLocation, createManufacturer, expectError, onPostgres, startApp, userWithKey, type TestApp } from './helpers.ts';

interface Received {
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
}

let t: TestApp;
let partner: string;
let otherPartner: string;
let bin: string;
let receiver: Server;
let base: string;
const received: Received[] = [];
/** What the receiver answers per path: a status, or a function of how many times the path was hit. */
const answers: Record<string, number | ((hits: number) => number)> = {};
const worker: DeliveryWorker[] = [];
const stripe = new Stripe('sk_test_unused');
const silent = { warn: () => {}, error: () => {} };

const api = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, body?: unknown, key = t.adminKey) =>
  call(t.app, method, `/api/v1${url}`, { key, ...(body === undefined ? {} : { body }) });
const subscribe = async (path: string, extra: Record<string, unknown> = {}, key = t.adminKey) => {
  const created = await api('POST', '/webhooks', { url: `${base}${path}`, event_kinds: ['*'], ...extra }, key);
  assert.equal(created.status, 201, JSON.stringify(created.body));
  return created.body.data as { id: string; signing_secret: string; manufacturer_id: string | null };
};
const deliveriesOf = (subscriptionId: string) =>
  t.db.selectFrom('webhook_deliveries').select(['id', 'status', 'attempts', 'event_id', 'last_status_code']).where('subscription_id', '=', subscriptionId).orderBy('event_seq').execute();
const hitsOf = (path: string) => received.filter((r) => r.path === path);
const DELIVERY_STATUSES = ['pending', 'delivered', 'failed', 'dead'] as const;
/** The log's total (kept, migration 0037) on its first page and past its last, for each status and all, against count(*). */
async function assertLogTotals(subscriptionIds: string[]) {
  for (const id of subscriptionIds) {
    for (const status of [undefined, ...DELIVERY_STATUSES]) {
      let stored = t.db.selectFrom('webhook_deliveries').select((eb) => eb.fn.countAll<number>().as('n')).where('subscription_id', '=', id);
      if (status) stored = stored.where('status', '=', status);
      const expected = Number((await stored.executeTakeFirstOrThrow()).n);
      const filter = status ? `status=${status}&` : '';
      const pages = await Promise.all([1, expected + 1].map((page) => api('GET', `/webhooks/${id}/deliveries?${filter}per_page=1&page=${page}`)));
      assert.deepEqual(pages.map((answer) => answer.body.meta.total_count), [expected, expected], `${id} ${status ?? 'all'}`);
      assert.deepEqual(pages.map((answer) => answer.body.data.length), [Math.min(expected, 1), 0]);
    }
  }
}

const until = (check: () => Promise<boolean> | boolean, ms = 8000, what = 'the deliveries') => waitFor(check, ms, what);

/** An adjustment of a new item of the partner: one inventory.adjusted event; its id. */
async function anEvent(manufacturer = partner): Promise<string> {
  const item = await createItem(t, manufacturer, `WH-${Math.random().toString(36).slice(2, 10)}`);
  assert.equal((await adjust(t, item, 3, bin)).status, 201);
  const event = await t.db.selectFrom('outbox_events').select('id').where('kind', '=', 'inventory.adjusted').orderBy('seq', 'desc').executeTakeFirstOrThrow();
  return event.id;
}

before(async () => {
  process.env.WMS_ALLOW_PRIVATE_WEBHOOK_URLS = '1';
  t = await startApp();
  partner = await createManufacturer(t, 'WHP');
  otherPartner = await createManufacturer(t, 'WHQ');
  bin = await createLocation(t, 'WH-BIN');
  const hits: Record<string, number> = {};
  receiver = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk) => chunks.push(chunk));
    request.on('end', () => {
      const path = request.url ?? '/';
      received.push({ path, headers: request.headers, body: Buffer.concat(chunks).toString('utf8') });
      hits[path] = (hits[path] ?? 0) + 1;
      const answer = answers[path] ?? 200;
      const status = typeof answer === 'function' ? answer(hits[path]!) : answer;
      if (status === 0) return; // never answers: the worker's timeout
      if (status === 429) response.setHeader('retry-after', '1');
      if (status === 302) response.setHeader('location', 'http://169.254.169.254/');
      response.writeHead(status, { 'content-type': 'text/plain' });
      response.end(status === 500 ? 'x'.repeat(5000) : `answer ${status}`);
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(receiver.address() as { port: number }).port}`;
  worker.push(startDeliveryWorker(t.db, t.config, silent, { timeoutMs: 300 }));
});
after(async () => {
  await Promise.all(worker.map((w) => w.stop(2000)));
  receiver.closeAllConnections();
  await new Promise((resolve) => receiver.close(resolve));
  await t.close();
  delete process.env.WMS_ALLOW_PRIVATE_WEBHOOK_URLS;
});

describe('subscriptions', () => {
  test('the secret is shown on create and rotate only and stored sealed; patch changes what is sent; delete removes it', async () => {
    const created = await subscribe('/crud', { description: 'ERP', max_attempts: 3, event_kinds: ['order.shipped', 'pick_batch.shipped'] });
    assert.match(created.signing_secret, /^whsec_/);
    const stored = await t.db.selectFrom('webhook_subscriptions').select('secret_sealed').where('id', '=', created.id).executeTakeFirstOrThrow();
    assert.ok(stored.secret_sealed.startsWith('v1.') && !stored.secret_sealed.includes(created.signing_secret));
    const read = await api('GET', `/webhooks/${created.id}`);
    assert.equal(read.status, 200);
    assert.equal(read.body.data.signing_secret, undefined);
    assert.deepEqual([read.body.data.max_attempts, read.body.data.event_kinds, read.body.data.is_active], [3, ['order.shipped', 'pick_batch.shipped'], true]);
    const patched = await api('PATCH', `/webhooks/${created.id}`, { is_active: false, event_kinds: ['order.shipped', '*'] });
    assert.equal(patched.status, 200);
    assert.deepEqual([patched.body.data.is_active, patched.body.data.event_kinds, patched.body.data.description], [false, ['*'], 'ERP']);
    const rotated = await api('POST', `/webhooks/${created.id}/rotate-secret`);
    assert.equal(rotated.status, 200);
    assert.notEqual(rotated.body.data.signing_secret, created.signing_secret);
    assert.ok(!JSON.stringify((await api('GET', '/webhooks')).body).includes(rotated.body.data.signing_secret));
    assert.equal((await api('DELETE', `/webhooks/${created.id}`)).status, 204);
    expectError(await api('GET', `/webhooks/${created.id}`), 404, 'not_found');
    assert.equal((await t.db.selectFrom('history').select('action').where('entity_id', '=', created.id).execute()).length, 4);
  });

  test('a partner\'s key subscribes for its partner and sees only its own; office keys may not; bad fields are 400', async () => {
    const consignor = await userWithKey(t, 'consignor', { manufacturerId: partner });
    const other = await userWithKey(t, 'consignor', { manufacturerId: otherPartner });
    const own = await subscribe('/partner', {}, consignor.key);
    assert.equal(own.manufacturer_id, partner);
    expectError(await api('GET', `/webhooks/${own.id}`, undefined, other.key), 404, 'not_found');
    expectError(await api('DELETE', `/webhooks/${own.id}`, undefined, other.key), 404, 'not_found');
    assert.ok(!(await api('GET', '/webhooks', undefined, other.key)).body.data.some((s: { id: string }) => s.id === own.id));
    // The partner's list is paged and counts only its own subscriptions.
    const second = await subscribe('/partner-2', {}, consignor.key);
    const firstPage = await api('GET', '/webhooks?per_page=1', undefined, consignor.key);
    const nextPage = await api('GET', '/webhooks?per_page=1&page=2', undefined, consignor.key);
    assert.deepEqual([firstPage.body.data.map((s: { id: string }) => s.id), nextPage.body.data.map((s: { id: string }) => s.id)], [[own.id], [second.id]]);
    assert.deepEqual(nextPage.body.meta, { page: 2, per_page: 1, total_count: 2, total_pages: 2 });
    assert.equal((await api('DELETE', `/webhooks/${second.id}`, undefined, consignor.key)).status, 204);
    expectError(await api('POST', '/webhooks', { url: `${base}/x`, event_kinds: ['*'], manufacturer_id: otherPartner }, consignor.key), 403, 'forbidden');
    const office = await userWithKey(t, 'office');
    expectError(await api('GET', '/webhooks', undefined, office.key), 403, 'forbidden');
    for (const body of [
      { url: `${base}/x`, event_kinds: [] }, { url: `${base}/x`, event_kinds: ['order.exploded'] },
      { url: `${base}/x`, event_kinds: ['*'], max_attempts: 0 }, { url: `${base}/x`, event_kinds: ['*'], max_attempts: 21 }, { event_kinds: ['*'] },
    ]) expectError(await api('POST', '/webhooks', body), 400, 'bad_request');
    // A partner that does not exist is a bad reference in the body (422, as everywhere), not a missing route record.
    const before = await t.db.selectFrom('webhook_subscriptions').select('id').execute();
    expectError(await api('POST', '/webhooks', { url: `${base}/x`, event_kinds: ['*'], manufacturer_id: '00000000-0000-4000-8000-000000000000' }), 422, 'invalid_request');
    assert.deepEqual(await t.db.selectFrom('webhook_subscriptions').select('id').execute(), before);
    await api('DELETE', `/webhooks/${own.id}`, undefined, consignor.key);
  });

  test('the URL guard: http(s) only, no credentials, no loopback, private, link-local or metadata address (422 invalid_webhook_url)', async () => {
    delete process.env.WMS_ALLOW_PRIVATE_WEBHOOK_URLS;
    try {
      for (const url of [
        'ftp://93.184.216.34/x', 'https://user:pw@93.184.216.34/x', 'http://127.0.0.1:8080/x', 'http://10.1.2.3/x', 'http://172.20.0.1/x',
        'http://192.168.1.1/x', 'http://169.254.169.254/latest/meta-data', 'http://[::1]/x', 'http://[::ffff:127.0.0.1]/x', 'http://[fd00:ec2::254]/x',
        'http://0.0.0.0/x', 'http://localhost/x', 'not a url',
      ]) expectError(await api('POST', '/webhooks', { url, event_kinds: ['*'] }), 422, 'invalid_webhook_url');
      const publicAddress = await api('POST', '/webhooks', { url: 'https://93.184.216.34/hook', event_kinds: ['*'], is_active: false });
      assert.equal(publicAddress.status, 201, JSON.stringify(publicAddress.body));
      expectError(await api('PATCH', `/webhooks/${publicAddress.body.data.id}`, { url: 'http://127.0.0.1/x' }), 422, 'invalid_webhook_url');
      await api('DELETE', `/webhooks/${publicAddress.body.data.id}`);
    } finally {
      process.env.WMS_ALLOW_PRIVATE_WEBHOOK_URLS = '1';
    }
  });
});

describe('delivery', () => {
  test('each event is POSTed signed with its id, kind and delivery id; Stripe\'s verifier accepts the signature', async () => {
    const sub = await subscribe('/ok');
    const eventId = await anEvent();
    await until(() => hitsOf('/ok').some((hit) => hit.headers['x-service-event-id'] === eventId));
    const hit = hitsOf('/ok').find((h) => h.headers['x-service-event-id'] === eventId)!;
    const event = stripe.webhooks.constructEvent(hit.body, hit.headers['x-service-signature'] as string, sub.signing_secret) as unknown as { id: string; kind: string; data: { item_id: string } };
    assert.equal(event.id, eventId);
    assert.equal(event.kind, 'inventory.adjusted');
    assert.equal(hit.headers['x-service-event-kind'], 'inventory.adjusted');
    assert.throws(() => stripe.webhooks.constructEvent(hit.body, hit.headers['x-service-signature'] as string, 'whsec_wrong'));
    // The body is the event as the poll shows it, its time written the same way (ISO, UTC, milliseconds).
    let polled: unknown;
    for (let page = 1; polled === undefined; page++) {
      const answer = (await api('GET', `/shipments/events?kind=inventory.adjusted&per_page=100&page=${page}`)).body;
      polled = answer.data.find((e: { id: string }) => e.id === eventId);
      if (page >= answer.meta.total_pages) break;
    }
    assert.deepEqual(JSON.parse(hit.body), polled);
    assert.match(JSON.parse(hit.body).occurred_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const rows = await deliveriesOf(sub.id);
    const row = rows.find((r) => r.event_id === eventId)!;
    assert.equal(hit.headers['x-service-delivery-id'], row.id);
    await until(async () => (await deliveriesOf(sub.id)).find((r) => r.event_id === eventId)!.status === 'delivered', 3000, 'the delivered mark');
    await api('DELETE', `/webhooks/${sub.id}`);
  });

  test('5xx, 429 and timeouts are retried; after max_attempts the delivery is dead; retry-dead and retry send it again', async () => {
    answers['/flaky'] = (hits) => (hits === 1 ? 503 : hits === 2 ? 429 : 200);
    const flaky = await subscribe('/flaky', { event_kinds: ['inventory.adjusted'] });
    answers['/down'] = 500;
    const down = await subscribe('/down', { event_kinds: ['inventory.adjusted'], max_attempts: 2 });
    answers['/silent'] = 0;
    const silentSub = await subscribe('/silent', { event_kinds: ['inventory.adjusted'], max_attempts: 1 });
    await anEvent();
    await until(async () => (await deliveriesOf(flaky.id))[0]?.status === 'delivered', 12_000, 'the flaky delivery');
    assert.equal((await deliveriesOf(flaky.id))[0]!.attempts, 3);
    await until(async () => (await deliveriesOf(down.id))[0]?.status === 'dead', 12_000, 'the dead letter');
    await until(async () => (await deliveriesOf(silentSub.id))[0]?.status === 'dead', 5000, 'the timed-out delivery');
    assert.equal(hitsOf('/down').length, 2);

    const log = await api('GET', `/webhooks/${down.id}/deliveries?status=dead`);
    assert.equal(log.status, 200);
    assert.equal(log.body.meta.total_count, 1);
    const dead = log.body.data[0];
    assert.deepEqual(dead.attempt_log.map((a: { status_code: number; outcome: string }) => [a.status_code, a.outcome]), [[500, 'retry'], [500, 'dead']]);
    assert.equal(dead.attempt_log[0].response_body.length, 1024, 'the first KiB of the answer is kept');
    const silentLog = (await api('GET', `/webhooks/${silentSub.id}/deliveries`)).body.data[0];
    assert.match(silentLog.attempt_log[0].error, /no answer within/);

    answers['/down'] = 200;
    assert.deepEqual((await api('POST', `/webhooks/${down.id}/deliveries/retry-dead`)).body.data, { retried: 1 });
    await until(async () => (await deliveriesOf(down.id))[0]?.status === 'delivered', 5000, 'the resent dead letter');
    answers['/silent'] = 200;
    const retried = await api('POST', `/webhooks/${silentSub.id}/deliveries/${silentLog.id}/retry`);
    assert.equal(retried.status, 200);
    await until(async () => (await deliveriesOf(silentSub.id))[0]?.status === 'delivered', 5000, 'the retried delivery');
    expectError(await api('POST', `/webhooks/${silentSub.id}/deliveries/${silentLog.id}/retry`), 422, 'invalid_status');
    const subs = [flaky, down, silentSub].map((sub) => sub.id);
    await assertLogTotals(subs);
    // Writes behind the app: a statement over many rows, a delete.
    await anEvent();
    // Every delivery of the round settled (the worker writes no outcome after this), then rewritten behind its back.
    await until(async () => (await Promise.all(subs.map(deliveriesOf))).flat().every((row) => row.status !== 'pending'), 8000, 'the second round');
    await sql`update webhook_deliveries set status = case status when 'delivered' then 'failed' else 'dead' end where subscription_id = any(${subs}::uuid[])`.execute(t.db);
    await sql`delete from webhook_deliveries where subscription_id = ${silentSub.id} and status = 'failed'`.execute(t.db);
    await assertLogTotals(subs);
    for (const sub of subs) await api('DELETE', `/webhooks/${sub}`);
    // The subscriptions' deliveries went with them (on delete cascade), and their kept counts to nothing.
    const kept = await sql<{ n: number }>`select coalesce(sum(n), 0)::int as n from list_counts where list = 'deliveries' and manufacturer_id = any(${subs}::uuid[])`.execute(t.db);
    assert.equal(kept.rows[0]!.n, 0);
  });

  test('3xx and other 4xx fail at once without retry; 410 also turns the subscription off', async () => {
    answers['/moved'] = 302;
    answers['/refused'] = 400;
    answers['/gone'] = 410;
    const subs = await Promise.all(['/moved', '/refused', '/gone'].map((path) => subscribe(path, { event_kinds: ['inventory.adjusted'] })));
    await anEvent();
    for (const sub of subs) await until(async () => (await deliveriesOf(sub.id))[0]?.status === 'failed', 5000, 'the permanent failure');
    assert.deepEqual(await Promise.all(subs.map(async (sub) => (await deliveriesOf(sub.id))[0]!.attempts)), [1, 1, 1]);
    assert.equal(received.filter((r) => r.path === '/moved').length, 1, 'the redirect is not followed');
    const states = await t.db.selectFrom('webhook_subscriptions').select(['id', 'is_active']).where('id', 'in', subs.map((s) => s.id)).execute();
    assert.deepEqual(subs.map((s) => states.find((row) => row.id === s.id)!.is_active), [true, true, false]);
    for (const sub of subs) await api('DELETE', `/webhooks/${sub.id}`);
  });

  test('a partner\'s subscription receives its partner\'s events only; ping reaches only the pinged subscription', async () => {
    const consignor = await userWithKey(t, 'consignor', { manufacturerId: partner });
    const own = await subscribe('/own', { event_kinds: ['inventory.adjusted'] }, consignor.key);
    const theirs = await anEvent(otherPartner);
    const mine = await anEvent(partner);
    await until(() => hitsOf('/own').some((h) => h.headers['x-service-event-id'] === mine));
    assert.ok(!hitsOf('/own').some((h) => h.headers['x-service-event-id'] === theirs));
    const ping = await api('POST', `/webhooks/${own.id}/ping`, undefined, consignor.key);
    assert.equal(ping.status, 200, JSON.stringify(ping.body));
    assert.equal(ping.body.data.event_kind, 'webhook.ping');
    await until(() => hitsOf('/own').some((h) => h.headers['x-service-event-kind'] === 'webhook.ping'));
    assert.equal(received.filter((r) => r.headers['x-service-event-kind'] === 'webhook.ping').length, 1);
    const inbox = await t.db.selectFrom('event_inbox').select('kind').where('kind', '=', 'webhook.ping').execute();
    assert.equal(inbox.length, 0, 'a ping is not in any poll stream');
    await api('DELETE', `/webhooks/${own.id}`, undefined, consignor.key);
  });

  test('a delivery leased by a worker that died waits for its lease, then goes out once', async () => {
    const sub = await subscribe('/leased', { event_kinds: ['inventory.adjusted'], is_active: false });
    await anEvent();
    // Inactive when the event was written: no delivery. Made by hand as a dead worker would leave it: claimed, leased.
    assert.equal((await deliveriesOf(sub.id)).length, 0);
    const event = await t.db.selectFrom('outbox_events').select(['id', 'seq', 'kind']).orderBy('seq', 'desc').executeTakeFirstOrThrow();
    await t.db.insertInto('webhook_deliveries').values({
      subscription_id: sub.id, event_seq: event.seq, event_id: event.id, event_kind: event.kind, order_id: null, attempts: 1,
      leased_until: new Date(Date.now() + 60_000), last_status_code: null, last_error: null, delivered_at: null,
    }).execute();
    await api('PATCH', `/webhooks/${sub.id}`, { is_active: true });
    await sleep(600);
    assert.equal(hitsOf('/leased').length, 0, 'not sent while leased');
    await t.db.updateTable('webhook_deliveries').set({ leased_until: new Date(Date.now() - 1000) }).where('subscription_id', '=', sub.id).execute();
    await until(async () => (await deliveriesOf(sub.id))[0]?.status === 'delivered');
    assert.equal(hitsOf('/leased').length, 1);
    assert.equal((await deliveriesOf(sub.id))[0]!.attempts, 2);
    await api('DELETE', `/webhooks/${sub.id}`);
  });

  test('a backlog larger than one claim refreshes the queue\'s statistics, so the next claims are planned for its size', { skip: !onPostgres && 'needs PostgreSQL: PGlite keeps no table statistics' }, async () => {
    const lastAnalyzed = async () => (await sql<{ at: string | null }>`select max(last_analyze)::text as at from pg_stat_user_tables
      where relname like 'webhook_deliveries_%' and relname <> 'webhook_deliveries_default'`.execute(t.db)).rows[0]!.at;
    const before = await lastAnalyzed();
    const sub = await subscribe('/burst', { event_kinds: ['inventory.adjusted'] });
    // 40 events in one commit: 40 deliveries due at once, more than the 32 one claim takes.
    await t.db.transaction().execute(async (tx) => {
      for (let i = 0; i < 40; i++) await emit(tx, 'inventory.adjusted', { item_id: null, n: i });
    });
    await until(async () => (await deliveriesOf(sub.id)).filter((r) => r.status === 'delivered').length === 40, 15_000);
    await until(async () => { const at = await lastAnalyzed(); return at !== null && at !== before; }, 5000, 'the analyze');
    await api('DELETE', `/webhooks/${sub.id}`);
  });

  test('an idle worker probes for due deliveries and claims only after a probe finds one', async () => {
    // This test's worker alone, with every statement it runs recorded: the suite's worker is stopped until the end.
    await Promise.all(worker.splice(0).map((w) => w.stop(2000)));
    const steps: string[] = [];
    const kinds = new Map<unknown, 'probe' | 'claim'>();
    const text = (node: { kind: string; sqlFragments?: readonly string[] }) => node.kind === 'RawNode' ? node.sqlFragments!.join('') : '';
    const spied = t.db.withPlugin({
      transformQuery: ({ node, queryId }) => {
        const kind = /select exists \(select 1 from webhook_deliveries/.test(text(node)) ? 'probe' : /with due as/.test(text(node)) ? 'claim' : null;
        if (kind) kinds.set(queryId, kind);
        return node;
      },
      transformResult: async ({ result, queryId }) => {
        const kind = kinds.get(queryId);
        if (kind === 'probe') steps.push((result.rows[0] as { due: boolean }).due ? 'probe: due' : 'probe: none');
        if (kind === 'claim') steps.push(`claim: ${result.rows.length}`);
        return result;
      },
    });
    const spy = startDeliveryWorker(spied, t.config, silent, { timeoutMs: 300 });
    try {
      await until(() => steps.filter((step) => step === 'probe: none').length >= 3, 5000, 'three idle polls');
      const sub = await subscribe('/idle', { event_kinds: ['inventory.adjusted'] });
      await anEvent();
      await until(async () => (await deliveriesOf(sub.id)).every((r) => r.status === 'delivered') && hitsOf('/idle').length === 1);
      // Each claim comes first (the worker starts by claiming) or after a claim that found work or a probe that did.
      steps.forEach((step, i) => {
        if (step.startsWith('claim') && i > 0) assert.notEqual(steps[i - 1], 'probe: none', steps.join(', '));
        if (step.startsWith('probe')) assert.ok(i > 0 && ['claim: 0', 'probe: none'].includes(steps[i - 1]!), steps.join(', '));
      });
      assert.ok(steps.includes('probe: due') && steps.includes('claim: 1'), steps.join(', '));
      await api('DELETE', `/webhooks/${sub.id}`);
    } finally {
      await spy.stop(2000);
      worker.push(startDeliveryWorker(t.db, t.config, silent, { timeoutMs: 300 }));
    }
  });

  test('two workers on one database deliver each of 40 events exactly once', { skip: !onPostgres && 'needs PostgreSQL: PGlite has one connection' }, async () => {
    worker.push(startDeliveryWorker(t.db, t.config, silent, { timeoutMs: 300 }));
    const sub = await subscribe('/twice', { event_kinds: ['inventory.adjusted'] });
    const ids = [];
    for (let i = 0; i < 40; i++) ids.push(await anEvent());
    await until(async () => (await deliveriesOf(sub.id)).every((r) => r.status === 'delivered') && hitsOf('/twice').length >= 40, 15_000);
    await sleep(300);
    const counts = new Map<string, number>();
    for (const hit of hitsOf('/twice')) counts.set(hit.headers['x-service-event-id'] as string, (counts.get(hit.headers['x-service-event-id'] as string) ?? 0) + 1);
    assert.deepEqual([...counts.keys()].sort(), [...ids].sort());
    assert.ok([...counts.values()].every((n) => n === 1), 'no event twice');
    await assertLogTotals([sub.id]);
    await api('DELETE', `/webhooks/${sub.id}`);
  });
});
