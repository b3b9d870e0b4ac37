import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildApp } from '../src/app.ts';
import { connectPostgres } from '../src/db/connect.ts';
import { actorCache } from '../src/http/actor-cache.ts';
import type { Actor } from '../src/http/auth.ts';
import { memoryCounterStore } from '../src/http/rate-limit.ts';
import { call, expectError, insertKey, onPostgres, startApp, userWithKey, type TestApp } from './helpers.ts';

const actor = (name: string) => ({ userName: name }) as Actor;

/** Calls GET /me with the key until it answers `status`, for at most two seconds (a NOTIFY arrives after commit). */
async function eventually(app: TestApp['app'], key: string, status: number): Promise<number> {
  const deadline = Date.now() + 2000;
  for (;;) {
    const answer = await call(app, 'GET', '/api/v1/me', { key });
    if (answer.status === status || Date.now() > deadline) return answer.status;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('the actor cache', () => {
  test('keeps a loaded actor while listening, and loads again after a clear', async () => {
    const cache = actorCache({ ttlMs: 60_000, maxEntries: 10 });
    cache.setListening(true);
    let loads = 0;
    const load = async () => actor(`load ${++loads}`);
    assert.equal((await cache.lookup('k', load)).userName, 'load 1');
    assert.equal((await cache.lookup('k', load)).userName, 'load 1');
    cache.clear();
    assert.equal((await cache.lookup('k', load)).userName, 'load 2');
  });

  test('caches nothing while not listening, and forgets everything when the listener is lost', async () => {
    const cache = actorCache({ ttlMs: 60_000, maxEntries: 10 });
    let loads = 0;
    const load = async () => actor(`load ${++loads}`);
    await cache.lookup('k', load);
    await cache.lookup('k', load);
    assert.equal(loads, 2);
    cache.setListening(true);
    await cache.lookup('k', load);
    cache.setListening(false);
    await cache.lookup('k', load);
    assert.equal(loads, 4);
  });

  test('an actor loaded before a change is not kept after it', async () => {
    const cache = actorCache({ ttlMs: 60_000, maxEntries: 10 });
    cache.setListening(true);
    let release!: () => void;
    const slow = cache.lookup('k', () => new Promise<Actor>((resolve) => { release = () => resolve(actor('before the change')); }));
    cache.clear();
    release();
    assert.equal((await slow).userName, 'before the change');
    assert.equal((await cache.lookup('k', async () => actor('after the change'))).userName, 'after the change');
  });

  test('entries end after their time', async () => {
    const cache = actorCache({ ttlMs: 5, maxEntries: 10 });
    cache.setListening(true);
    let loads = 0;
    await cache.lookup('k', async () => actor(`load ${++loads}`));
    await new Promise((resolve) => setTimeout(resolve, 10));
    await cache.lookup('k', async () => actor(`load ${++loads}`));
    assert.equal(loads, 2);
  });
});

describe('cached keys in the service', () => {
  let t: TestApp;
  before(async () => {
    t = await startApp();
  });
  after(() => t.close());

  test('a key that expires while cached is refused from then on', async () => {
    const { userId } = await userWithKey(t, 'office');
    const { key } = await insertKey(t, userId, ['orders.view'], new Date(Date.now() + 300));
    assert.equal((await call(t.app, 'GET', '/api/v1/me', { key })).status, 200);
    await new Promise((resolve) => setTimeout(resolve, 350));
    expectError(await call(t.app, 'GET', '/api/v1/me', { key }), 401, 'unauthorized');
  });

  test('a change made outside the API (an operator in psql) reaches the cache through the NOTIFY', async () => {
    const { key, keyId } = await userWithKey(t, 'office');
    assert.equal((await call(t.app, 'GET', '/api/v1/me', { key })).status, 200);
    await t.db.updateTable('api_keys').set({ revoked_at: new Date() }).where('id', '=', keyId).execute();
    assert.equal(await eventually(t.app, key, 401), 401);
  });

  test('a changed user name reaches the actor', async () => {
    const { key, userId } = await userWithKey(t, 'office');
    await call(t.app, 'GET', '/api/v1/me', { key });
    assert.equal((await call(t.app, 'PATCH', `/api/v1/admin/users/${userId}`, { key: t.adminKey, body: { name: 'Renamed' } })).status, 200);
    assert.equal((await call(t.app, 'GET', '/api/v1/me', { key })).body.data.user.name, 'Renamed');
  });
});

describe('two instances on one PostgreSQL', { skip: !onPostgres && 'needs TEST_DATABASE_URL (PGlite is one process)' }, () => {
  let a: TestApp;
  let b: TestApp['app'];
  before(async () => {
    a = await startApp();
    // The second instance shares the first one's database through a pool of its own, as a second process would.
    const name = (await a.db.selectNoFrom((eb) => eb.fn<string>('current_database', []).as('name')).executeTakeFirstOrThrow()).name;
    const server = new URL(process.env.TEST_DATABASE_URL!);
    server.pathname = `/${name}`;
    const second = connectPostgres(server.toString(), { poolSize: 2 });
    b = await buildApp({ config: a.config, db: second.db, counters: memoryCounterStore(), listen: second.listen, logger: false });
    b.addHook('onClose', () => second.close());
    await b.ready();
  });
  after(async () => {
    await b.close();
    await a.close();
  });

  test('a key revoked through one instance is refused by the other', async () => {
    const { key, keyId } = await userWithKey(a, 'office');
    assert.equal((await call(b, 'GET', '/api/v1/me', { key })).status, 200);
    assert.equal((await call(a.app, 'DELETE', `/api/v1/api-keys/${keyId}`, { key: a.adminKey })).status, 204);
    assert.equal(await eventually(b, key, 401), 401);
  });

  test('a user deactivated through one instance is refused by the other', async () => {
    const { key, userId } = await userWithKey(a, 'warehouse');
    assert.equal((await call(b, 'GET', '/api/v1/me', { key })).status, 200);
    assert.equal((await call(a.app, 'POST', `/api/v1/admin/users/${userId}/deactivate`, { key: a.adminKey })).status, 204);
    assert.equal(await eventually(b, key, 401), 401);
  });
});
