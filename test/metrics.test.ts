// GET /metrics (src/http/metrics.ts): Prometheus text for the operator's scraper, behind WMS_METRICS_TOKEN.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { createMetrics } from '../src/http/metrics.ts';
import { startDeliveryWorker } from '../src/workers/webhook-delivery.ts';
import { call, createItem, createManufacturer, expectError, onPostgres, startApp, type TestApp } from './helpers.ts';

const TOKEN = 'metrics-token-for-tests-0123456789';
const scrape = async (t: TestApp, authorization?: string) =>
  t.app.inject({ method: 'GET', url: '/metrics', headers: authorization ? { authorization } : {} });

/** The value of one series (name with its labels as printed), or undefined. */
function valueOf(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('without WMS_METRICS_TOKEN', () => {
  let t: TestApp;
  before(async () => (t = await startApp()));
  after(() => t?.close());

  test('there is no /metrics (404 in the envelope)', async () => {
    const answer = await scrape(t, `Bearer ${TOKEN}`);
    assert.equal(answer.statusCode, 404);
    assert.equal(answer.json().error.code, 'not_found');
  });
});

describe('with WMS_METRICS_TOKEN', () => {
  let t: TestApp;
  const metrics = createMetrics();
  before(async () => {
    // The key's limit is low enough for the last test to reach it (the tests before it stay under).
    t = await startApp({ env: { WMS_METRICS_TOKEN: TOKEN, WMS_RATE_LIMIT_PER_KEY: '40' }, metrics });
  });
  after(() => t?.close());

  test('without the token, or with another, 401 unauthorized; an API key is not the token', async () => {
    for (const authorization of [undefined, `Bearer ${TOKEN}x`, `Bearer ${t.adminKey}`, TOKEN]) {
      const answer = await scrape(t, authorization);
      assert.equal(answer.statusCode, 401, String(authorization));
      assert.equal(answer.json().error.code, 'unauthorized');
    }
    assert.equal(await call(t.app, 'GET', '/metrics', { key: t.adminKey }).then((a) => a.status), 401);
  });

  test('request durations per route pattern and status, counted exactly', async () => {
    const partner = await createManufacturer(t, 'MET');
    const item = await createItem(t, partner, 'MET-1');
    const series = 'wms_http_request_duration_seconds_count{method="GET",route="/api/v1/items/:id",status="200"}';
    const before = valueOf((await scrape(t, `Bearer ${TOKEN}`)).body, series) ?? 0;
    for (let i = 0; i < 3; i++) assert.equal((await call(t.app, 'GET', `/api/v1/items/${item}`, { key: t.adminKey })).status, 200);
    expectError(await call(t.app, 'GET', '/api/v1/items/00000000-0000-4000-8000-000000000000', { key: t.adminKey }), 404, 'not_found');
    const answer = await scrape(t, `Bearer ${TOKEN}`);
    assert.equal(answer.statusCode, 200);
    assert.match(String(answer.headers['content-type']), /^text\/plain; version=0\.0\.4/);
    assert.equal(valueOf(answer.body, series), before + 3);
    assert.equal(valueOf(answer.body, 'wms_http_request_duration_seconds_count{method="GET",route="/api/v1/items/:id",status="404"}'), 1);
    assert.ok(!answer.body.includes(item), 'ids do not become series');
    assert.match(answer.body, /^wms_process_cpu_user_seconds_total /m);
  });

  test('the webhook backlog and the age of its oldest pending delivery, from the database', async () => {
    const { rows: [subscription] } = await sql<{ id: string }>`insert into webhook_subscriptions (url, event_kinds, secret_sealed, is_active)
      values ('https://receiver.example/hook', '{*}', 'sealed', false) returning id`.execute(t.db);
    const { rows: [event] } = await sql<{ id: string; seq: string }>`insert into outbox_events (kind, data)
      values ('webhook.ping', '{}') returning id, seq`.execute(t.db);
    await sql`insert into webhook_deliveries (subscription_id, event_seq, event_id, event_kind, created_at)
      values (${subscription!.id}, ${event!.seq}, ${event!.id}, 'webhook.ping', now() - interval '5 minutes')`.execute(t.db);
    const { rows: [pending] } = await sql<{ n: number }>`select count(*)::int as n from webhook_deliveries where status = 'pending'`.execute(t.db);
    const text = (await scrape(t, `Bearer ${TOKEN}`)).body;
    assert.equal(valueOf(text, 'wms_webhook_backlog'), pending!.n);
    const age = valueOf(text, 'wms_webhook_oldest_undelivered_seconds')!;
    assert.ok(age >= 300 && age < 400, String(age));
    if (onPostgres) {
      for (const state of ['in_use', 'idle', 'waiting']) assert.ok(valueOf(text, `wms_db_pool_connections{state="${state}"}`)! >= 0, state);
    }
  });

  test('delivery attempts by outcome, counted by the worker', async () => {
    process.env.WMS_ALLOW_PRIVATE_WEBHOOK_URLS = '1';
    const statuses = [200, 500, 404];
    const receiver = createServer((request, response) => {
      request.resume();
      // A body with NUL bytes, which PostgreSQL text cannot hold: the outcomes are written all the same.
      request.on('end', () => response.writeHead(Number(new URL(request.url!, 'http://x').searchParams.get('s'))).end('ok\u0000ok'));
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`;
    const worker = startDeliveryWorker(t.db, t.config, { warn: () => {} }, { timeoutMs: 300, metrics });
    try {
      const before = await metrics.deliveryAttempts.get();
      const count = (values: typeof before.values, outcome: string) => values.find((v) => v.labels.outcome === outcome)?.value ?? 0;
      for (const status of statuses) {
        const created = await call(t.app, 'POST', '/api/v1/webhooks', { key: t.adminKey, body: { url: `${base}?s=${status}`, event_kinds: ['*'], max_attempts: 1 } });
        assert.equal(created.status, 201, JSON.stringify(created.body));
        const ping = await call(t.app, 'POST', `/api/v1/webhooks/${created.body.data.id}/ping`, { key: t.adminKey });
        assert.ok(ping.status < 300, JSON.stringify(ping.body));
      }
      // 200 delivered; 500 with one attempt allowed is a dead letter; 404 fails for good.
      const deadline = Date.now() + 5000;
      let now = await metrics.deliveryAttempts.get();
      while (Date.now() < deadline && ['delivered', 'dead', 'failed'].some((o) => count(now.values, o) === count(before.values, o))) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        now = await metrics.deliveryAttempts.get();
      }
      for (const outcome of ['delivered', 'dead', 'failed']) assert.equal(count(now.values, outcome), count(before.values, outcome) + 1, outcome);
      const { rows } = await sql<{ response_body: string }>`select a.response_body from webhook_delivery_attempts a
        join webhook_deliveries d on d.id = a.delivery_id join webhook_subscriptions s on s.id = d.subscription_id
        where s.url like ${`${base}%`}`.execute(t.db);
      assert.deepEqual(rows.map((row) => row.response_body), ['okok', 'okok', 'okok']);
      const text = (await scrape(t, `Bearer ${TOKEN}`)).body;
      assert.equal(valueOf(text, 'wms_webhook_delivery_attempts_total{outcome="dead"}'), count(now.values, 'dead'));
    } finally {
      await worker.stop(2000);
      receiver.closeAllConnections();
      receiver.close();
      delete process.env.WMS_ALLOW_PRIVATE_WEBHOOK_URLS;
    }
  });

  test('rate-limit refusals are counted', async () => {
    const refused = async () => valueOf((await scrape(t, `Bearer ${TOKEN}`)).body, 'wms_rate_limit_refusals_total') ?? 0;
    const before = await refused();
    let answers: number[] = [];
    for (let i = 0; i < 45; i++) answers.push((await call(t.app, 'GET', '/api/v1/manufacturers', { key: t.adminKey })).status);
    answers = answers.filter((status) => status === 429);
    assert.ok(answers.length > 0, 'the key ran into its limit');
    assert.equal(await refused(), before + answers.length);
  });
});
