// PostgreSQL failing under the service, as an operator would see it: a restart and a 10 s stop under 10 concurrent
// writers, a service started before its database, and a stop while the database hangs. The cluster is the test's own.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import {
  createCluster, faultTestsSkipped, percentile, printedAdminKey, request, startService, waitFor, type Answer, type Cluster,
  type Service,
} from './fault-kit.ts';

const WRITERS = 10;

interface Write {
  key: string;
  item: string;
  answer: Answer;
  /** When the answer arrived (Date.now()). */
  at: number;
}

/**
 * Ten writers, each adding one unit at a time to its own item with an Idempotency-Key that names the write, until
 * `stop()`; a 503 is followed by a pause, as a client honouring Retry-After would (shortened for the test).
 */
function startWriters(service: Service, adminKey: string, items: string[], round: string, locationId: string) {
  const writes: Write[] = [];
  let running = true;
  const loops = items.map(async (item, writer) => {
    for (let n = 0; running; n++) {
      const key = `${round}-w${writer}-n${n}`;
      const answer = await request(service, 'POST', '/api/v1/inventory/adjustments', {
        key: adminKey, headers: { 'idempotency-key': key }, body: { item_id: item, quantity: 1, reason: key, location_id: locationId },
        timeoutMs: 20_000,
      });
      writes.push({ key, item, answer, at: Date.now() });
      if (answer.status !== 201) await sleep(200);
    }
  });
  return {
    writes,
    async stop() {
      running = false;
      await Promise.all(loops);
    },
  };
}

/** Movements written per reason (each write's key), read on a connection of the test's own. */
async function movementsByReason(url: string): Promise<Map<string, number>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ reason: string; n: number }>(`select reason, count(*)::int as n from inventory_movements group by reason`);
    return new Map(rows.map((row) => [row.reason, row.n]));
  } finally {
    await client.end();
  }
}

/** Sessions of the service's database left inside a transaction (a leaked request transaction would be one). */
async function openTransactions(url: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    // A statement running this instant (the webhook worker's lease poll), or a transaction between two of its
    // statements this instant (the list-count fold between its fold and its commit), is not a session left behind;
    // one running for seconds, or idle inside a transaction for seconds, is.
    const { rows } = await client.query(`select state, query from pg_stat_activity
      where datname = current_database() and pid <> pg_backend_pid() and xact_start is not null
        and now() - (case when state = 'active' then query_start else state_change end) > interval '5 seconds'`);
    return rows.map((row) => `${row.state}: ${row.query}`);
  } finally {
    await client.end();
  }
}

/** Sessions listening for changes of keys and users (the key cache's LISTEN connection). */
async function listeners(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query(`select count(*)::int as n from pg_stat_activity where query = 'listen "wms_auth_changed"'`);
    return rows[0].n;
  } finally {
    await client.end();
  }
}

/** Stock equals the ledger: on hand is the sum of the item's bins and its last movement's balance_after. */
async function stockMatchesLedger(url: string, items: string[]): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    for (const item of items) {
      const { rows } = await client.query(`
        select i.qty_on_hand,
          (select coalesce(sum(qty_on_hand), 0)::int from item_locations where item_id = i.id and inventory_status <> 'quarantine') as bins,
          (select balance_after from inventory_movements where item_id = i.id order by seq desc limit 1) as last_balance,
          (select count(*)::int from inventory_movements where item_id = i.id) as movements
        from items i where i.id = $1`, [item]);
      const row = rows[0];
      assert.equal(row.qty_on_hand, row.bins, 'on hand is the sum of the bins');
      assert.equal(row.qty_on_hand, row.last_balance, 'on hand is the last balance_after');
      assert.equal(row.qty_on_hand, row.movements, 'one unit per movement');
    }
  } finally {
    await client.end();
  }
}

/**
 * What every fault round must show: the process is alive; each answer is a 201 or a 503 with Retry-After in the
 * envelope; every 201 is stored once; a write without a 201 is stored only if it got a 503 (cut mid-commit); and
 * retrying each unanswered write with its key ends in a 201 with every write stored exactly once.
 */
async function checkRound(service: Service, cluster: Cluster, adminKey: string, items: string[], writes: Write[], locationId: string) {
  assert.ok(service.alive(), `the service is alive:\n${service.output().slice(-2000)}`);
  const unexpected = writes.filter((w) => w.answer.status !== 201 && w.answer.status !== 503);
  assert.deepEqual(unexpected.map((w) => `${w.answer.status} ${JSON.stringify(w.answer.body)}`), [], 'only 201 and 503 answers');
  const refused = writes.filter((w) => w.answer.status === 503);
  assert.ok(refused.length > 0, 'the fault was seen');
  for (const w of refused) {
    assert.equal(w.answer.body.error.code, 'unavailable');
    assert.ok(Number(w.answer.headers.get('retry-after')) >= 1, 'a 503 says when to retry');
  }

  const stored = await movementsByReason(cluster.url);
  for (const w of writes.filter((w) => w.answer.status === 201)) assert.equal(stored.get(w.key), 1, `${w.key} (201) is stored once`);
  const storedWithout201 = refused.filter((w) => stored.has(w.key));
  // Only a write in flight when the fault struck can have been cut mid-commit: one per writer at most.
  for (const item of items) {
    assert.ok(storedWithout201.filter((w) => w.item === item).length <= 1, `${item}: at most one write cut mid-commit`);
  }

  for (let i = 0; i < refused.length; i += WRITERS) {
    await Promise.all(refused.slice(i, i + WRITERS).map(async (w) => {
      const retry = await request(service, 'POST', '/api/v1/inventory/adjustments', {
        key: adminKey, headers: { 'idempotency-key': w.key }, body: { item_id: w.item, quantity: 1, reason: w.key, location_id: locationId },
      });
      assert.equal(retry.status, 201, `retry of ${w.key}: ${JSON.stringify(retry.body)}`);
    }));
  }
  const after = await movementsByReason(cluster.url);
  for (const w of writes) assert.equal(after.get(w.key), 1, `${w.key} is stored exactly once after the retries`);
  await stockMatchesLedger(cluster.url, items);
  assert.deepEqual(await openTransactions(cluster.url), [], 'no session was left inside a transaction');
  return { refused: refused.length, storedWithout201: storedWithout201.length, p99: percentile(refused.map((w) => w.answer.ms), 99) };
}

describe('PostgreSQL failing under 10 concurrent writers', { skip: faultTestsSkipped() }, () => {
  let cluster: Cluster;
  let service: Service;
  let adminKey: string;
  let locationId: string;
  const items: string[] = [];

  before(async () => {
    cluster = await createCluster();
    service = await startService({ DATABASE_URL: cluster.url, WMS_DB_CONNECT_TIMEOUT_MS: '2000' });
    await waitFor(async () => (await request(service, 'GET', '/readyz')).status === 200, 30_000, 'the service to be ready');
    adminKey = printedAdminKey(service);
    const partner = await request(service, 'POST', '/api/v1/manufacturers', { key: adminKey, body: { code: 'FAULT', name: 'Fault Inc.' } });
    locationId = (await request(service, 'POST', '/api/v1/locations', { key: adminKey, body: { location_code: 'F-01' } })).body.data.id;
    for (let i = 0; i < WRITERS; i++) {
      const item = await request(service, 'POST', '/api/v1/items', {
        key: adminKey, body: { manufacturer_id: partner.body.data.id, item_number_display: `F-${i}`, description: 'fault' },
      });
      items.push(item.body.data.item.id);
    }
  });

  after(async () => {
    service?.child.kill('SIGKILL');
    await cluster?.drop();
  });

  test('a restart: the process lives, only 503s meanwhile, back within a second, every write once after retries', async () => {
    const writers = startWriters(service, adminKey, items, 'restart', locationId);
    let back = 0;
    try {
      await sleep(1000);
      await cluster.restart();
      back = Date.now();
      await waitFor(() => recoveredAfter(writers.writes, back) < Infinity, 5000, 'a write after the restart');
      await sleep(500);
    } finally {
      await writers.stop();
    }
    const recoveryMs = recoveredAfter(writers.writes, back);
    const round = await checkRound(service, cluster, adminKey, items, writers.writes, locationId);
    assert.ok(recoveryMs < 1000, `writes succeed again ${recoveryMs} ms after the database is back`);
    await waitFor(async () => (await listeners(cluster.url)) === 1, 6000, 'the key cache to listen again');
    console.log(`restart: ${writers.writes.length} writes, ${round.refused} answered 503 (p99 ${Math.round(round.p99)} ms), ` +
      `${round.storedWithout201} stored though cut mid-commit, first 201 ${recoveryMs} ms after the database was back`);
  });

  test('a 10 s stop: 503 unavailable quickly, /readyz 503, /healthz 200; back by itself', async () => {
    const writers = startWriters(service, adminKey, items, 'stop', locationId);
    let back = 0;
    let during: Write[] = [];
    let second: Service | undefined;
    try {
      await sleep(500);
      await cluster.stop();
      const stoppedAt = Date.now();
      await sleep(1000);
      const ready = await request(service, 'GET', '/readyz');
      assert.equal(ready.status, 503);
      assert.equal(ready.body.error.code, 'unavailable');
      assert.equal((await request(service, 'GET', '/healthz')).status, 200);
      const read = await request(service, 'GET', '/api/v1/items?per_page=1', { key: adminKey });
      assert.equal(read.status, 503, 'reads are 503 too');
      second = await startService({ DATABASE_URL: cluster.url, WMS_DB_CONNECT_TIMEOUT_MS: '2000' });
      assert.equal((await request(second, 'GET', '/api/v1/me', { key: adminKey })).status, 503, 'started while the server is down: 503');
      assert.equal((await request(second, 'GET', '/readyz')).status, 503);
      await sleep(10_000 - (Date.now() - stoppedAt));
      during = writers.writes.filter((w) => w.answer.status !== 201);
    } finally {
      await cluster.start();
      back = Date.now();
      await waitFor(() => recoveredAfter(writers.writes, back) < Infinity, 5000, 'a write after the start').finally(() => writers.stop());
    }
    const recoveryMs = recoveredAfter(writers.writes, back);
    assert.equal((await request(service, 'GET', '/readyz')).status, 200);
    try {
      await waitFor(async () => (await request(second!, 'GET', '/readyz')).status === 200, 10_000, 'the service started during the stop');
      assert.equal((await request(second!, 'GET', '/api/v1/me', { key: adminKey })).status, 200);
      assert.ok(second!.alive());
    } finally {
      second?.child.kill('SIGKILL');
    }
    const round = await checkRound(service, cluster, adminKey, items, writers.writes, locationId);
    const slowest = Math.max(...during.map((w) => w.answer.ms));
    assert.ok(slowest < 3000, `every answer during the stop came within the connect timeout (slowest ${Math.round(slowest)} ms)`);
    assert.ok(recoveryMs < 1000, `writes succeed again ${recoveryMs} ms after the database is back`);
    console.log(`10 s stop: ${during.length} answers during it (slowest ${Math.round(slowest)} ms, p99 ${Math.round(round.p99)} ms), ` +
      `first 201 ${recoveryMs} ms after the start`);
  });

  test('a frozen server (SIGSTOP): every request ends in 503 within the statement timeout + 5 s, then recovers', async () => {
    const bounded = await startService({ DATABASE_URL: cluster.url, WMS_DB_STATEMENT_TIMEOUT_MS: '1000', WMS_DB_CONNECT_TIMEOUT_MS: '2000' });
    const writers = startWriters(bounded, adminKey, items, 'freeze', locationId);
    let frozenAt = 0;
    try {
      await waitFor(async () => (await request(bounded, 'GET', '/readyz')).status === 200, 15_000, 'ready');
      await sleep(300);
      cluster.freeze();
      frozenAt = Date.now();
      await sleep(8000);
    } finally {
      cluster.thaw();
      const back = Date.now();
      await waitFor(() => recoveredAfter(writers.writes, back) < Infinity, 10_000, 'a write after the thaw').finally(() => writers.stop());
    }
    try {
      const during = writers.writes.filter((w) => w.at >= frozenAt && w.answer.status !== 201);
      const slowest = Math.max(...during.map((w) => w.answer.ms));
      assert.ok(during.length >= WRITERS, 'every writer saw the freeze');
      assert.ok(slowest < 7500, `no request waited past the read timeout (1 s statement + 5 s): slowest ${Math.round(slowest)} ms`);
      await checkRound(bounded, cluster, adminKey, items, writers.writes, locationId);
      console.log(`frozen server: ${during.length} answers during 8 s, slowest ${Math.round(slowest)} ms`);
    } finally {
      bounded.child.kill('SIGKILL');
    }
  });

  test('a connection string that points nowhere: the service runs, answers 503 at once, and keeps trying', async () => {
    const nowhere = await startService({ DATABASE_URL: 'postgres://postgres@127.0.0.1:1/wms' });
    try {
      await sleep(1500);
      assert.ok(nowhere.alive(), 'no crash, no exit');
      const api = await request(nowhere, 'GET', '/api/v1/me', { key: adminKey });
      assert.equal(api.status, 503);
      assert.ok(api.ms < 1000, `answered in ${api.ms} ms`);
      assert.equal((await request(nowhere, 'GET', '/readyz')).status, 503);
      assert.match(nowhere.output(), /database unreachable at start/);
    } finally {
      nowhere.child.kill('SIGKILL');
      await nowhere.exited;
    }
  });

  test('started before its database exists: 503 and /readyz 503, then migrates and serves by itself', async () => {
    const url = cluster.url.replace(/\/wms$/, '/wms_late');
    const late = await startService({ DATABASE_URL: url, WMS_DB_CONNECT_TIMEOUT_MS: '2000' });
    try {
      assert.equal((await request(late, 'GET', '/healthz')).status, 200);
      const ready = await request(late, 'GET', '/readyz');
      assert.equal(ready.status, 503);
      const api = await request(late, 'GET', '/api/v1/me', { key: adminKey });
      assert.equal(api.status, 503);
      assert.equal(api.body.error.code, 'unavailable');
      assert.ok(Number(api.headers.get('retry-after')) >= 1);
      const client = new pg.Client({ connectionString: cluster.url });
      await client.connect();
      await client.query('create database wms_late');
      await client.end();
      await waitFor(async () => (await request(late, 'GET', '/readyz')).status === 200, 15_000, 'the late service to be ready');
      const key = printedAdminKey(late);
      assert.equal((await request(late, 'GET', '/api/v1/me', { key })).status, 200);
      assert.ok(late.alive());
    } finally {
      late.child.kill('SIGKILL');
      await late.exited;
    }
  });

  test('SIGTERM while the database hangs: requests in flight get the deadline, then the process exits', async () => {
    const stopping = await startService({ DATABASE_URL: cluster.url, WMS_SHUTDOWN_TIMEOUT_MS: '1500' });
    try {
      await waitFor(async () => (await request(stopping, 'GET', '/readyz')).status === 200, 15_000, 'ready');
      cluster.freeze();
      const inFlight = request(stopping, 'POST', '/api/v1/manufacturers', { key: adminKey, body: { code: 'HUNG', name: 'Hung' } });
      await sleep(300);
      const signalled = Date.now();
      stopping.child.kill('SIGTERM');
      const exit = await stopping.exited;
      const tookMs = Date.now() - signalled;
      assert.ok(tookMs >= 1400 && tookMs < 3000, `exited ${tookMs} ms after SIGTERM (deadline 1500 ms)`);
      assert.equal(exit.code, 1, 'a forced exit says so');
      assert.equal((await inFlight).status, 0, 'the hung request was cut off with the process');
      assert.match(stopping.output(), /shutdown deadline passed/);
    } finally {
      cluster.thaw();
      stopping.child.kill('SIGKILL');
    }
  });
});

/** When the first 201 arrived after `at`, in ms after it (Infinity while none has). */
function recoveredAfter(writes: Write[], at: number): number {
  return Math.min(...writes.filter((w) => w.answer.status === 201 && w.at >= at).map((w) => w.at - at));
}
