// Redis failing under the rate limiter: killed, and hung with SIGSTOP, under 10 concurrent clients. The Redis server is
// the test's own; so is the service process in the SIGTERM test.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { redisCounterStore, type CounterStore, type RedisStoreOptions } from '../src/http/rate-limit.ts';
import { faultTestsSkipped, percentile, printedAdminKey, request, startRedis, startService, waitFor, type RedisServer } from './fault-kit.ts';
import { call, createEmptyServerDatabase, expectError, startApp, type TestApp } from './helpers.ts';

const CLIENTS = 10;

describe('Redis failing under 10 concurrent clients', { skip: faultTestsSkipped() }, () => {
  let redis: RedisServer;
  let counters: CounterStore;
  let t: TestApp;
  let server: { url: string };
  const logged: string[] = [];
  const log = {
    warn: (_: unknown, message?: string) => void logged.push(`warn: ${message}`),
    info: (message: unknown) => void logged.push(`info: ${message}`),
  } as unknown as RedisStoreOptions['log'];

  before(async () => {
    redis = await startRedis();
    counters = redisCounterStore(redis.url, { log });
    t = await startApp({ counters, env: { WMS_RATE_LIMIT_PER_KEY: '1000000', WMS_RATE_LIMIT_FAILED_PER_ADDRESS: '3' } });
    await waitFor(() => counters.health() === 'redis', 5000, 'Redis to connect');
    server = { url: await t.app.listen({ host: '127.0.0.1', port: 0 }) };
  });
  after(async () => {
    await t?.close();
    await redis?.kill();
  });

  /** Ten clients reading /me over HTTP for `ms`; every answer's status and time. */
  async function load(ms: number) {
    const answers: { status: number; ms: number }[] = [];
    const until = Date.now() + ms;
    await Promise.all(Array.from({ length: CLIENTS }, async () => {
      while (Date.now() < until) answers.push(await request(server, 'GET', '/api/v1/me', { key: t.adminKey }));
    }));
    const failures = answers.filter((a) => a.status !== 200).map((a) => a.status);
    return { count: answers.length, failures, p99: percentile(answers.map((a) => a.ms), 99), max: Math.max(...answers.map((a) => a.ms)) };
  }

  test('killed: no request fails or waits, limits hold per instance, shared again once it is back, one warning', async () => {
    const before = await load(500);
    assert.deepEqual(before.failures, []);
    // On a loaded machine one command may have passed its 100 ms timeout: that is an outage of its own (warned, then
    // ended by the probe). Wait for it to end, so the warning counted below is the kill's.
    await waitFor(() => counters.health() === 'redis', 5000, 'the limiter to be on Redis before the kill');
    logged.length = 0;
    await redis.kill();
    const during = await load(2000);
    assert.deepEqual(during.failures, [], 'no answer but 200 while Redis is down');
    assert.ok(during.p99 < 1000, `p99 ${during.p99} ms`);
    assert.equal(counters.health(), 'degraded');
    const ready = await call(t.app, 'GET', '/readyz');
    assert.equal(ready.status, 200, 'Redis down is degraded, not unready');
    assert.equal(ready.body.data.redis, 'degraded');

    const bad = { key: `jwc_${'r'.repeat(32)}`, remoteAddress: '10.20.30.40' };
    for (let i = 0; i < 3; i++) expectError(await call(t.app, 'GET', '/api/v1/me', bad), 401, 'unauthorized');
    expectError(await call(t.app, 'GET', '/api/v1/me', bad), 429, 'rate_limited');

    await redis.start();
    await waitFor(() => counters.health() === 'redis', 5000, 'the limiter to use Redis again');
    assert.equal((await call(t.app, 'GET', '/readyz')).body.data.redis, 'redis');
    assert.deepEqual(logged.filter((line) => line.startsWith('warn')), ['warn: Redis unavailable: rate limits are counted per instance until it answers again']);
    assert.equal(logged.filter((line) => line.includes('answers again') && line.startsWith('info')).length, 1);
    console.log(`Redis killed: ${during.count} requests in 2 s, p99 ${during.p99.toFixed(1)} ms, slowest ${during.max.toFixed(1)} ms`);
  });

  test('hung (SIGSTOP): no request waits longer than the command timeout, back when it resumes', async () => {
    redis.freeze();
    try {
      const during = await load(2000);
      assert.deepEqual(during.failures, []);
      assert.ok(during.p99 < 1000, `p99 ${during.p99} ms`);
      assert.ok(during.max < 1000, `slowest ${during.max} ms`);
      assert.equal(counters.health(), 'degraded');
      console.log(`Redis hung: ${during.count} requests in 2 s, p99 ${during.p99.toFixed(1)} ms, slowest ${during.max.toFixed(1)} ms`);
    } finally {
      redis.thaw();
    }
    await waitFor(() => counters.health() === 'redis', 5000, 'the limiter to use Redis again');
  });

  test('SIGTERM while Redis hangs: the service exits at once, cleanly', async () => {
    const database = await createEmptyServerDatabase();
    const service = await startService({ DATABASE_URL: database.url, REDIS_URL: redis.url, WMS_SHUTDOWN_TIMEOUT_MS: '5000' });
    try {
      await waitFor(async () => (await request(service, 'GET', '/readyz')).status === 200, 30_000, 'the service');
      const key = printedAdminKey(service);
      // Five connections opened and accepted first (kept alive), so the requests below arrive on accepted sockets.
      await Promise.all(Array.from({ length: 5 }, () => request(service, 'GET', '/api/v1/me', { key })));
      redis.freeze();
      const requests = Array.from({ length: 5 }, () => request(service, 'GET', '/api/v1/me', { key }));
      // Long enough for the service to have read them on a loaded machine; short of the 100 ms Redis command timeout
      // plus the answer, so they are usually still waiting on the frozen Redis.
      await sleep(60);
      const signalled = Date.now();
      service.child.kill('SIGTERM');
      const exit = await service.exited;
      const tookMs = Date.now() - signalled;
      assert.equal(exit.code, 0, service.output().slice(-2000));
      assert.ok(tookMs < 2000, `exited ${tookMs} ms after SIGTERM`);
      for (const answer of await Promise.all(requests)) assert.ok([200, 503].includes(answer.status), `answered ${answer.status}`);
    } finally {
      redis.thaw();
      service.child.kill('SIGKILL');
      await database.drop();
    }
  });
});
