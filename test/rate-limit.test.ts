import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { buildApp } from '../src/app.ts';
import { redisCounterStore, type RedisStoreOptions } from '../src/http/rate-limit.ts';
import { call, expectError, startApp, userWithKey, type TestApp } from './helpers.ts';

const redisUrl = process.env.REDIS_URL?.trim() || null;
const quiet = { warn() {}, info() {} } as unknown as RedisStoreOptions['log'];

async function until(condition: () => boolean, timeoutMs = 5000): Promise<void> {
  for (const started = Date.now(); !condition(); await new Promise((resolve) => setTimeout(resolve, 10))) {
    if (Date.now() - started > timeoutMs) throw new Error('condition not met in time');
  }
}
const PER_KEY = 20;
const limits = { WMS_RATE_LIMIT_PER_KEY: String(PER_KEY), WMS_RATE_LIMIT_FAILED_PER_ADDRESS: '3' };

describe('in memory', () => {
  let t: TestApp;
  // Users are made up front: making them spends the admin key's own allowance.
  let office: string, otherOffice: string, qc: string;
  before(async () => {
    t = await startApp({ env: limits });
    [office, otherOffice, qc] = [(await userWithKey(t, 'office')).key, (await userWithKey(t, 'office')).key, (await userWithKey(t, 'qc')).key];
  });
  after(() => t.close());

  test('a key over its per-minute limit gets 429 rate_limited with Retry-After; other keys go on', async () => {
    const key = office;
    for (let i = 0; i < PER_KEY; i++) assert.equal((await call(t.app, 'GET', '/api/v1/me', { key })).status, 200);
    const over = await call(t.app, 'GET', '/api/v1/me', { key });
    expectError(over, 429, 'rate_limited');
    const retryAfter = Number(over.headers['retry-after']);
    assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${over.headers['retry-after']}`);
    assert.equal((await call(t.app, 'GET', '/api/v1/me', { key: otherOffice })).status, 200);
  });

  test('an address with too many failed keys gets 429 for a while, whatever key it sends next', async () => {
    const bad = { key: `jwc_${'q'.repeat(32)}` };
    for (let i = 0; i < 3; i++) expectError(await call(t.app, 'GET', '/api/v1/me', bad), 401, 'unauthorized');
    const over = await call(t.app, 'GET', '/api/v1/me', bad);
    expectError(over, 429, 'rate_limited');
    assert.ok(Number(over.headers['retry-after']) >= 1);
    expectError(await call(t.app, 'GET', '/api/v1/me'), 429, 'rate_limited');
    expectError(await call(t.app, 'GET', '/api/v1/me', { key: qc }), 429, 'rate_limited');
    assert.equal((await call(t.app, 'GET', '/api/v1/me', { key: qc, remoteAddress: '10.9.8.7' })).status, 200, 'other addresses go on');
  });
});

describe('in Redis, shared by two instances', { skip: redisUrl ? false : 'REDIS_URL is not set' }, () => {
  let t: TestApp;
  before(async () => {
    t = await startApp({ env: limits });
  });
  after(() => t.close());

  test('requests to either instance count against one limit', async () => {
    const prefix = `wms:test:${randomBytes(4).toString('hex')}:`;
    const stores = [redisCounterStore(redisUrl!, { prefix, log: quiet }), redisCounterStore(redisUrl!, { prefix, log: quiet })];
    await until(() => stores.every((store) => store.health() === 'redis'));
    const apps = await Promise.all(stores.map((counters) => buildApp({ config: t.config, db: t.db, counters, logger: false })));
    try {
      const { key } = await userWithKey(t, 'office');
      const statuses: number[] = [];
      for (let i = 0; i <= PER_KEY; i++) statuses.push((await call(apps[i % 2]!, 'GET', '/api/v1/me', { key })).status);
      assert.deepEqual(statuses, [...Array(PER_KEY).fill(200), 429]);
      const fromSecond = await call(apps[1]!, 'GET', '/api/v1/me', { key });
      expectError(fromSecond, 429, 'rate_limited');
      assert.ok(Number(fromSecond.headers['retry-after']) >= 1);
    } finally {
      await Promise.all(apps.map((app) => app.close()));
      await Promise.all(stores.map((store) => store.close()));
    }
  });
});

describe('a REDIS_URL that cannot be used', () => {
  test('unreachable or malformed: one warning, counts in this instance’s memory, nothing thrown', async () => {
    for (const url of ['redis://127.0.0.1:1', 'not a url']) {
      const warnings: string[] = [];
      const log = { warn: (_: unknown, message: string) => void warnings.push(message), info() {} } as unknown as RedisStoreOptions['log'];
      const store = redisCounterStore(url, { log });
      try {
        const counts = [];
        for (let i = 0; i < 3; i++) counts.push((await store.hit('key:x', 60_000)).count);
        assert.deepEqual(counts, [1, 2, 3], `${url}: counted in memory`);
        assert.equal((await store.peek('key:x')).count, 3);
        assert.equal(store.health(), 'degraded');
        await new Promise((resolve) => setTimeout(resolve, 500));
        assert.equal(warnings.length, 1, `${url}: one warning for the outage, however many reconnects: ${warnings}`);
      } finally {
        await store.close();
      }
    }
  });
});
