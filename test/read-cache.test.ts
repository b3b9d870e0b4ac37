// The read cache (src/http/read-cache.ts): repeated lists and searches come from memory only while no write has
// committed, whoever wrote; answers stay within the caller's partner; clock-relative filters, errors and the item read
// (made of its rows' kept text instead: test/items.test.ts) are not kept.
// The counting tests run on the embedded database, where only this file writes: on a server, every other test file's
// transactions move the snapshot too (transaction ids are server-wide), so there a list hit is only ever "eventually".
import assert from 'node:assert/strict';
import { after, before, describe, mock, test } from 'node:test';
import { sql } from 'kysely';
import pg from 'pg';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { connectPostgres } from '../src/db/connect.ts';
import { isNewerSnapshot } from '../src/http/read-cache.ts';
import { memoryCounterStore } from '../src/http/rate-limit.ts';
import {
  call, createItem, createManufacturer, expectError, freshDatabase, onPostgres, serverUrl, startApp, userWithKey, type TestApp,
} from './helpers.ts';

let t: TestApp;
let north: string;
let south: string;
let hinge: string;

before(async () => {
  t = await startApp({ database: await freshDatabase({ embedded: true }) });
  north = await createManufacturer(t, 'RCN');
  south = await createManufacturer(t, 'RCS');
  hinge = await createItem(t, north, 'RC-100', { description: 'Brass hinge' });
  await createItem(t, north, 'RC-200', { description: 'Steel hinge' });
  await createItem(t, south, 'RC-300', { description: 'Southern hinge' });
});
after(() => t.close());

const get = (url: string, key = t.adminKey) => call(t.app, 'GET', url, { key });
const stats = () => t.app.readCache.stats();

/** Runs `work` and returns how the cache's hit and miss counts moved. */
async function counted(work: () => Promise<unknown>) {
  const before = stats();
  await work();
  const now = stats();
  return { hits: now.hits - before.hits, misses: now.misses - before.misses };
}

describe('the read cache', () => {
  test('a repeated list is answered from memory, the same bytes, until a write commits', async () => {
    const url = '/api/v1/items?q=hinge&manufacturer=' + north;
    const first = await get(url);
    assert.equal(first.headers['x-read-cache'], 'miss');
    let again!: Awaited<ReturnType<typeof get>>;
    assert.deepEqual(await counted(async () => { again = await get(url); }), { hits: 1, misses: 0 });
    assert.deepEqual(again.body, first.body);
    assert.equal(again.headers['x-read-cache'], 'hit');
    // A write the app is never told about: only the database knows.
    await t.db.updateTable('items').set({ description: 'Brass hinge, polished' }).where('id', '=', hinge).execute();
    let after!: Awaited<ReturnType<typeof get>>;
    assert.deepEqual(await counted(async () => { after = await get(url); }), { hits: 0, misses: 1 });
    assert.equal(after.body.data.find((row: { id: string }) => row.id === hinge).description, 'Brass hinge, polished');
  });

  test('a search is cached and sees a new alias at once', async () => {
    const url = '/api/v1/items/search?q=XYZ-9';
    assert.deepEqual((await get(url)).body.data, []);
    assert.deepEqual(await counted(() => get(url)), { hits: 1, misses: 0 });
    assert.equal((await call(t.app, 'POST', `/api/v1/items/${hinge}/aliases`, { key: t.adminKey, body: { alias: 'XYZ-9' } })).status, 201);
    const hits = (await get(url)).body.data;
    assert.equal(hits.length, 1);
    assert.equal(hits[0].AliasValue, 'XYZ-9');
  });

  test('each partner scope has its own answer for the same URL', async () => {
    const url = '/api/v1/items?q=RC-';
    assert.equal((await get(url)).body.meta.total_count, 3, 'warehouse staff see every partner');
    const consignor = await userWithKey(t, 'consignor', { manufacturerId: south });
    const scoped = await get(url, consignor.key);
    assert.deepEqual(scoped.body.data.map((row: { item_number_display: string }) => row.item_number_display), ['RC-300']);
    assert.equal((await get(url)).body.meta.total_count, 3);
  });

  test('search and the order list keep each partner scope apart too', async () => {
    const consignor = await userWithKey(t, 'consignor', { manufacturerId: south });
    const search = '/api/v1/items/search?q=RC';
    const all = (await get(search)).body.data.map((hit: { Item: { item_number_display: string } }) => hit.Item.item_number_display);
    assert.ok(all.includes('RC-100') && all.includes('RC-300'), all.join());
    const scoped = (await get(search, consignor.key)).body.data.map((hit: { Item: { item_number_display: string } }) => hit.Item.item_number_display);
    assert.deepEqual(scoped, ['RC-300']);

    const customer = await call(t.app, 'POST', '/api/v1/customers', {
      key: t.adminKey, body: { account_number: 'RC-C1', name: 'Read Cache Hardware', address_line_1: '1 Main St', city: 'Springfield', state: 'IL', zip_code: '62701' },
    });
    assert.equal(customer.status, 201);
    const entered = await call(t.app, 'POST', '/api/v1/orders', {
      key: t.adminKey,
      body: { manufacturer_id: north, customer_id: customer.body.data.id, lines: [{ item_id: hinge, qty_ordered: 1, fulfillment_source: 'direct' }] },
    });
    assert.equal(entered.status, 201, JSON.stringify(entered.body));
    const open = '/api/v1/orders?status=open';
    assert.equal((await get(open)).body.meta.total_count, 1);
    assert.deepEqual(await counted(() => get(open)), { hits: 1, misses: 0 });
    assert.equal((await get(open, consignor.key)).body.meta.total_count, 0, 'another partner\'s order is not in its answer');
    assert.equal((await call(t.app, 'POST', `/api/v1/orders/${entered.body.data.order.id}/cancel`, { key: t.adminKey })).status, 200);
    assert.equal((await get(open)).body.meta.total_count, 0, 'the cancelled order left the open list at once');
  });

  test('a hit still authenticates, checks the permission and answers with the request\'s own headers', async () => {
    const url = '/api/v1/items?q=hinge';
    await get(url);
    const hit = await counted(async () => {
      const answer = await get(url);
      assert.ok(answer.headers['x-request-id'] && answer.headers['ratelimit-remaining'] !== undefined, JSON.stringify(answer.headers));
    });
    assert.deepEqual(hit, { hits: 1, misses: 0 });
    const noView = await userWithKey(t, 'office', { scopes: ['orders.view'] });
    expectError(await get(url, noView.key), 403, 'forbidden');
    const revoked = await userWithKey(t, 'office');
    assert.equal((await get(url, revoked.key)).status, 200);
    assert.equal((await call(t.app, 'DELETE', `/api/v1/api-keys/${revoked.keyId}`, { key: t.adminKey })).status, 204);
    expectError(await get(url, revoked.key), 401, 'unauthorized');
  });

  test('snapshots are ordered by what they see', () => {
    assert.equal(isNewerSnapshot('100:105:100,103', ''), true);
    assert.equal(isNewerSnapshot('100:106:', '100:105:100,103'), true, 'a greater xmax');
    assert.equal(isNewerSnapshot('100:105:100', '100:105:100,103'), true, 'the same xmax, fewer in progress');
    assert.equal(isNewerSnapshot('100:105:100,103', '100:105:100'), false);
    assert.equal(isNewerSnapshot('100:105:100', '100:105:100'), false, 'equal');
    assert.equal(isNewerSnapshot('99:104:', '100:105:'), false);
  });

  test('filters relative to the current time are never cached', async () => {
    for (const url of ['/api/v1/items?movement=30d', '/api/v1/items?velocity=dead', '/api/v1/orders?aged_hours=1']) {
      assert.equal((await get(url)).status, 200);
      assert.deepEqual(await counted(() => get(url)), { hits: 0, misses: 0 }, url);
    }
  });

  test('errors are not kept', async () => {
    expectError(await get('/api/v1/orders?status=lost'), 400, 'bad_request');
    // Counted after the first request: it may have read a newer snapshot and dropped older answers.
    const entries = stats().entries;
    assert.deepEqual(await counted(() => get('/api/v1/orders?status=lost')), { hits: 0, misses: 1 });
    assert.equal(stats().entries, entries);
  });

  test('answers made under an older snapshot are dropped; the memory budget evicts the oldest', async () => {
    const small = await startApp({ config: { readCacheBytes: 3_000 }, database: await freshDatabase({ embedded: true }) });
    try {
      const partner = await createManufacturer(small, 'RCB');
      for (let n = 1; n <= 3; n++) await createItem(small, partner, `RCB-${n}`, { description: 'x'.repeat(200) });
      const pages = ['/api/v1/items?q=RCB-1', '/api/v1/items?q=RCB-2', '/api/v1/items?q=RCB-3'];
      for (const url of pages) await call(small.app, 'GET', url, { key: small.adminKey });
      const { entries, bytes } = small.app.readCache.stats();
      assert.ok(entries === 2 && bytes <= 3_000, `two answers fit: ${entries} entries, ${bytes} bytes`);
      const moved = async (url: string) => {
        const before = small.app.readCache.stats();
        await call(small.app, 'GET', url, { key: small.adminKey });
        const now = small.app.readCache.stats();
        return now.hits > before.hits ? 'hit' : 'miss';
      };
      assert.equal(await moved(pages[2]!), 'hit', 'the newest answer is kept');
      assert.equal(await moved(pages[1]!), 'hit');
      assert.equal(await moved(pages[0]!), 'miss', 'the oldest was evicted');
      await createItem(small, partner, 'RCB-4');
      await call(small.app, 'GET', pages[2]!, { key: small.adminKey });
      assert.equal(small.app.readCache.stats().entries, 1, 'the write left only the answer made after it');
    } finally {
      await small.close();
    }
  });

  test('WMS_READ_CACHE_MB=0 turns it off; the setting is checked', async () => {
    assert.equal(loadConfig({ WMS_READ_CACHE_MB: '0' }).readCacheBytes, 0);
    assert.equal(loadConfig({}).readCacheBytes, 64 * 1_048_576);
    assert.throws(() => loadConfig({ WMS_READ_CACHE_MB: '-1' }), /WMS_READ_CACHE_MB/);
    const off = await startApp({ env: { WMS_READ_CACHE_MB: '0' }, database: await freshDatabase({ embedded: true }) });
    try {
      for (let n = 0; n < 2; n++) assert.equal((await call(off.app, 'GET', '/api/v1/items', { key: off.adminKey })).status, 200);
      assert.deepEqual(off.app.readCache.stats(), { hits: 0, misses: 0, bypassed: 0, entries: 0, bytes: 0 });
    } finally {
      await off.close();
    }
  });
});

describe('a route whose lookups seldom hit while writes move the snapshot skips the cache for a while', () => {
  test('under 5 hits in 100 lookups with the snapshot moving: 2 s without the cache for that route only', async () => {
    const own = await startApp({ database: await freshDatabase({ embedded: true }) });
    try {
      const partner = await createManufacturer(own, 'RCW');
      const answer = async (url: string) => {
        const reply = await call(own.app, 'GET', url, { key: own.adminKey });
        assert.equal(reply.status, 200, url);
        return reply.headers['x-read-cache'];
      };
      // A write the app is never told about: it moves the snapshot.
      const write = (n: number) => own.db.updateTable('manufacturers').set({ name: `Writer ${n}` }).where('id', '=', partner).execute();
      // 100 different item lists with nothing written (a cache warming up, an integrator paging): all misses, but
      // they hit once asked again, so the route keeps the cache.
      for (let n = 1; n <= 100; n++) assert.equal(await answer(`/api/v1/items?page=${n}`), 'miss');
      assert.equal(await answer('/api/v1/items?page=1'), 'hit');
      // Order lists asked twice each between writes: half the lookups hit, the route keeps the cache.
      for (let n = 1; n <= 50; n++) {
        await write(n);
        for (let again = 0; again < 2; again++) await answer(`/api/v1/orders?page=${n}`);
      }
      assert.equal(await answer('/api/v1/orders?page=50'), 'hit');
      // Item lists, each after a write: every lookup a round trip and a stored answer for nothing, until the round of
      // 100 (begun with the hit above) ends and the route skips the cache.
      let misses = 0;
      for (let n = 1; ; n++) {
        await write(100 + n);
        const seen = await answer(`/api/v1/items?page=${n}`);
        if (seen === 'bypass') break;
        assert.equal(seen, 'miss');
        assert.ok(++misses < 100, 'a round of misses under writes makes the route skip the cache');
      }
      const before = own.app.readCache.stats();
      assert.equal(await answer('/api/v1/items?page=1'), 'bypass', 'answered from the database, without a lookup');
      assert.equal(await answer('/api/v1/items?page=1'), 'bypass');
      const after = own.app.readCache.stats();
      assert.deepEqual([after.hits - before.hits, after.misses - before.misses, after.bypassed - before.bypassed], [0, 0, 2]);
      assert.equal(await answer('/api/v1/orders?page=50'), 'miss', 'the writes moved the snapshot');
      assert.equal(await answer('/api/v1/orders?page=50'), 'hit', 'other routes keep the cache');
      const now = Date.now();
      const later = mock.method(Date, 'now', () => now + 2_001);
      try {
        assert.equal(await answer('/api/v1/items?page=1'), 'miss', 'after 2 s the route looks again');
        assert.equal(await answer('/api/v1/items?page=1'), 'hit');
      } finally {
        later.mock.restore();
      }
    } finally {
      await own.close();
    }
  });
});

describe('what the cache keeps', () => {
  test('the item read is not cached: no X-Read-Cache, neither a hit nor a miss', async () => {
    for (let n = 0; n < 2; n++) {
      let answer!: Awaited<ReturnType<typeof get>>;
      assert.deepEqual(await counted(async () => { answer = await get(`/api/v1/items/${hinge}`); }), { hits: 0, misses: 0 });
      assert.equal(answer.status, 200);
      assert.equal(answer.headers['x-read-cache'], undefined);
    }
  });

  test('the budget evicts the least recently used; a moving snapshot drops every answer', async () => {
    const small = await startApp({ config: { readCacheBytes: 4_000 }, database: await freshDatabase({ embedded: true }) });
    try {
      const partner = await createManufacturer(small, 'RCL');
      for (let n = 1; n <= 3; n++) await createItem(small, partner, `RCL-${n}`, { description: 'x'.repeat(200) });
      const sizes = new Map<string, number>();
      const fetch = async (url: string) => {
        const before = small.app.readCache.stats().hits;
        const answer = await small.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${small.adminKey}` } });
        assert.equal(answer.statusCode, 200);
        // What the cache charges an entry: its key (scope and URL), its answer and a fixed overhead.
        sizes.set(url, `* ${url}`.length + answer.body.length + 100);
        return small.app.readCache.stats().hits > before ? 'hit' : 'miss';
      };
      const list = (n: number) => `/api/v1/items?q=RCL-${n + 1}`;
      await fetch(list(0));
      await fetch(list(1));
      assert.equal(await fetch(list(0)), 'hit', 'the first list is now the most recently used');
      await fetch(list(2));
      assert.equal(small.app.readCache.stats().entries, 2, `two list answers fit: ${[...sizes.values()]}`);
      assert.equal(small.app.readCache.stats().bytes, sizes.get(list(0))! + sizes.get(list(2))!);
      assert.equal(await fetch(list(0)), 'hit', 'kept: used more recently than the second');
      assert.equal(await fetch(list(1)), 'miss', 'the least recently used was evicted');
      // A write moves the snapshot: the next lookup drops every answer made under the old one.
      await createManufacturer(small, 'RCM');
      assert.equal(await fetch(list(0)), 'miss');
      assert.equal(small.app.readCache.stats().entries, 1);
      assert.equal(small.app.readCache.stats().bytes, sizes.get(list(0))!, 'the old answers are no longer charged');
    } finally {
      await small.close();
    }
  });
});

describe('the read cache against other connections (PostgreSQL)', { skip: !onPostgres && 'needs PostgreSQL' }, () => {
  let server: TestApp;
  let item: string;
  before(async () => {
    if (!onPostgres) return;
    server = await startApp();
    item = await createItem(server, await createManufacturer(server, 'RCP'), 'RCP-1', { description: 'Steel hinge' });
  });
  after(() => server?.close());

  const url = '/api/v1/items?q=RCP-1';
  const read = () => call(server.app, 'GET', url, { key: server.adminKey });

  /**
   * Reads until an answer comes from the cache: other test files' transactions on the server move the snapshot too,
   * and a round of lookups that seldom hit makes the route skip the cache for 2 s (then it is read again).
   */
  async function cachedRead() {
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      const hits = server.app.readCache.stats().hits;
      const answer = await read();
      if (server.app.readCache.stats().hits > hits) return answer;
      if (answer.headers['x-read-cache'] === 'bypass') await new Promise((resolve) => setTimeout(resolve, 200));
    }
    throw new Error('no answer came from the cache in 30 s of reads');
  }

  test('an answer cached while a write was in progress is not served once it commits', async () => {
    const other = new pg.Client({ connectionString: await databaseUrl(server) });
    await other.connect();
    try {
      await other.query('begin');
      await other.query(`update items set description = 'Steel hinge, boxed' where id = $1`, [item]);
      assert.equal((await cachedRead()).body.data[0].description, 'Steel hinge', 'nothing committed yet');
      await other.query('commit');
      assert.equal((await read()).body.data[0].description, 'Steel hinge, boxed');
    } finally {
      await other.end();
    }
  });

  test('a change made through another instance is seen by the next request, with no notification', async () => {
    const connection = connectPostgres(await databaseUrl(server), { poolSize: 2 });
    // No listener: the second instance hears nothing from the first, as over a lost LISTEN connection.
    const second = await buildApp({ config: server.config, db: connection.db, counters: memoryCounterStore(), logger: false });
    try {
      assert.equal((await cachedRead()).body.data[0].reorder_level, 0);
      const patched = await call(second, 'PATCH', `/api/v1/items/${item}`, { key: server.adminKey, body: { reorder_level: 7 } });
      assert.equal(patched.status, 200);
      assert.equal((await read()).body.data[0].reorder_level, 7);
    } finally {
      await second.close();
      await connection.close();
    }
  });
});

/** The URL of the app's own database: the server's URL with the current database's name. */
async function databaseUrl(app: TestApp): Promise<string> {
  const { rows } = await sql<{ name: string }>`select current_database() as name`.execute(app.db);
  const url = new URL(serverUrl!);
  url.pathname = `/${rows[0]!.name}`;
  return url.toString();
}
