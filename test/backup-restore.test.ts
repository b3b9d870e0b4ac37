// Backups as docs/operations.md ("Backups") prescribes them. A `pg_dump -Fc` of a database the app has written to,
// restored with `pg_restore` into a new database, holds the same schema, rows, sequences and migration bookkeeping, and
// the service starts on it without migrating and serves the item. Point-in-time recovery, on a cluster of the test's
// own: a base backup (pg_basebackup) plus archived WAL, replayed up to a noted time, has what was written before that
// time and not what came after.
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import { promisify } from 'node:util';
import pg from 'pg';
import { connectPostgres } from '../src/db/connect.ts';
import { listMigrations, migrate } from '../src/db/migrate.ts';
import { freePort, queryOnce, request, startService, waitFor, type Service } from './fault-kit.ts';
import { adjust, call, createEmptyServerDatabase, createItem, createLocation, createManufacturer, onPostgres, startApp, type TestApp } from './helpers.ts';

const run = promisify(execFile);
const installed = (tool: string) => spawnSync('which', [tool]).status === 0;
const PG_VERSION = existsSync('/etc/postgresql') ? readdirSync('/etc/postgresql').sort().at(-1)! : '15';

const dumpSkip: string | false = !onPostgres
  ? 'backup and restore run in the PostgreSQL pass (TEST_DATABASE_URL): the embedded PGlite has no pg_dump'
  : !installed('pg_dump') || !installed('pg_restore')
    ? 'pg_dump and pg_restore are not installed (postgresql-client)'
    : false;

const pitrSkip: string | false = dumpSkip
  || (process.getuid?.() !== 0 && 'point-in-time recovery needs root to create a PostgreSQL cluster of its own')
  || (['pg_createcluster', 'pg_ctlcluster', 'pg_dropcluster', 'pg_basebackup', 'runuser'].find((tool) => !installed(tool))
    ? 'pg_createcluster, pg_basebackup and runuser are needed for point-in-time recovery (postgresql-common)'
    : false);

/** Every table's row count and a digest of its rows, every sequence's position, and the migrations recorded. */
async function contents(url: string) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const tables: Record<string, { rows: number; digest: string }> = {};
    const names = await client.query<{ name: string }>(
      `select format('%I.%I', schemaname, tablename) as name from pg_tables
        where schemaname not in ('pg_catalog', 'information_schema') order by 1`);
    for (const { name } of names.rows) {
      const { rows } = await client.query<{ rows: number; digest: string }>(
        `select count(*)::int as rows, md5(coalesce(string_agg(t::text, E'\\n' order by t::text), '')) as digest from ${name} t`);
      tables[name] = rows[0]!;
    }
    const sequences = (await client.query(
      `select schemaname, sequencename, last_value::text from pg_sequences where schemaname <> 'pg_catalog' order by 1, 2`)).rows;
    const migrations = (await client.query<{ version: string }>('select version from schema_migrations order by version')).rows.map((r) => r.version);
    return { tables, sequences, migrations };
  }
  finally {
    await client.end();
  }
}

/**
 * The schema as pg_dump prints it, without the per-run \restrict keys of newer minor versions, and without parentheses:
 * a trigger's WHEN (a OR b OR c), restored, prints with its ORs nested differently ((a OR b) OR c), the same condition.
 */
async function schemaOf(url: string): Promise<string> {
  const { stdout } = await run('pg_dump', ['--schema-only', '--dbname', url], { maxBuffer: 64 * 1024 * 1024 });
  return stdout.split('\n').filter((line) => !/^\\(un)?restrict /.test(line)).join('\n').replace(/[()]/g, '');
}

test('a pg_dump -Fc restored with pg_restore into a new database holds the same data, and the service serves it', { skip: dumpSkip }, async () => {
  const source = await createEmptyServerDatabase();
  const restored = await createEmptyServerDatabase();
  const dir = mkdtempSync(join(tmpdir(), 'wms-backup-'));
  let service: Service | undefined;
  let writer: TestApp | undefined;
  try {
    // The source: migrated, then written through the app: a partner, an item, stock in a bin, an order committing some.
    const db = connectPostgres(source.url, { poolSize: 4, statementTimeoutMs: 0 });
    await migrate(db.db);
    const t = writer = await startApp({ database: db });
    const partner = await createManufacturer(t, 'BAK');
    const item = await createItem(t, partner, 'BAK-100');
    const bin = await createLocation(t, 'BAK-A-01');
    assert.equal((await adjust(t, item, 12, bin)).status, 201);
    const customer = await call(t.app, 'POST', '/api/v1/customers', {
      key: t.adminKey, body: { account_number: 'C-BAK', name: 'Backup Hardware', address_line_1: '1 Main St', city: 'Springfield', state: 'IL', zip_code: '62701' },
    });
    assert.equal(customer.status, 201, JSON.stringify(customer.body));
    const order = await call(t.app, 'POST', '/api/v1/orders', {
      key: t.adminKey,
      body: { manufacturer_id: partner, customer_id: customer.body.data.id ?? customer.body.data.customer.id, lines: [{ item_id: item, qty_ordered: 3, unit_price: 9.5 }] },
    });
    assert.equal(order.status, 201, JSON.stringify(order.body));
    const adminKey = t.adminKey;
    writer = undefined;
    await t.close();

    const dump = join(dir, 'wms.dump');
    await run('pg_dump', ['--format=custom', '--file', dump, '--dbname', source.url]);
    await run('pg_restore', ['--exit-on-error', '--single-transaction', '--no-owner', '--dbname', restored.url, dump]);

    const before = await contents(source.url);
    const after = await contents(restored.url);
    assert.deepEqual(after, before);
    assert.deepEqual(after.migrations, listMigrations().map((m) => m.version), 'every migration recorded');
    for (const table of ['public.items', 'public.item_locations', 'public.inventory_movements', 'public.outbox_events', 'public.orders', 'public.api_keys']) {
      assert.ok(after.tables[table]!.rows > 0, `${table} has rows`);
    }
    assert.equal(await schemaOf(restored.url), await schemaOf(source.url), 'the same schema');
    const [stock] = await queryOnce<{ qty_on_hand: number; qty_committed: number; movements: number }>(restored.url,
      `select i.qty_on_hand, i.qty_committed, (select count(*)::int from inventory_movements m where m.item_id = i.id) as movements
         from items i where i.id = $1`, [item]);
    assert.deepEqual(stock, { qty_on_hand: 12, qty_committed: 3, movements: 1 });

    // The service on the restored database: nothing to migrate, the old key works, the item answers with its stock.
    service = await startService({ DATABASE_URL: restored.url, WMS_DATA_DIR: join(dir, 'data'), WMS_DOCUMENTS_DIR: join(dir, 'documents') });
    await waitFor(async () => (await request(service!, 'GET', '/readyz')).status === 200, 30_000, 'the service on the restored database');
    const answer = await request(service, 'GET', `/api/v1/items/${item}`, { key: adminKey });
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.equal(answer.body.data.item_number_display, 'BAK-100');
    assert.equal(answer.body.data.qty_on_hand, 12);
    assert.equal(answer.body.data.qty_committed, 3);

    // The log lines docs/operations.md ("Logs") shows: start-up applied no migration, and one line per request.
    const lines = () => service!.output().split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line));
    const isItemRequest = (line: { msg?: string; url?: string }) => line.msg === 'request' && line.url === `/api/v1/items/${item}`;
    // Written once the answer has gone out.
    await waitFor(() => lines().some(isItemRequest), 5000, 'the request log line');
    assert.deepEqual(lines().find((line) => line.msg === 'database ready')?.applied, [], 'nothing to migrate on a restored database');
    const logged = lines().find(isItemRequest);
    assert.deepEqual(Object.keys(logged).sort(), ['hostname', 'keyId', 'level', 'method', 'ms', 'msg', 'pid', 'reqId', 'status', 'time', 'url']);
    assert.equal(logged.level, 30);
    assert.equal(logged.status, 200);
    assert.equal(logged.reqId, answer.headers.get('x-request-id'));

    service.child.kill('SIGTERM');
    assert.deepEqual(await service.exited, { code: 0, signal: null }, 'a clean stop on SIGTERM');
  } finally {
    if (service?.alive()) service.child.kill('SIGKILL');
    await writer?.close().catch(() => {});
    await restored.drop();
    await source.drop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('point-in-time recovery: a base backup and archived WAL replayed to a noted time have what came before it, not after', { skip: pitrSkip }, async () => {
  const name = `wmspitr_${process.pid}_${randomBytes(3).toString('hex')}`;
  const port = await freePort();
  const work = mkdtempSync(join(tmpdir(), 'wms-pitr-'));
  const archive = join(work, 'archive');
  const base = join(work, 'base');
  mkdirSync(archive);
  // The server runs as postgres: it writes the archive, and pg_basebackup (as postgres) writes the base backup.
  await run('chown', ['-R', 'postgres:postgres', work]);
  const confDir = `/etc/postgresql/${PG_VERSION}/${name}/conf.d`;
  const dataDir = `/var/lib/postgresql/${PG_VERSION}/${name}`;
  const ctl = (action: 'start' | 'stop') => run('pg_ctlcluster', ['--skip-systemctl-redirect', PG_VERSION, name, action, ...(action === 'stop' ? ['-m', 'fast'] : [])]);
  const url = `postgres://postgres@127.0.0.1:${port}/wms`;
  try {
    await run('pg_createcluster', [PG_VERSION, name, '--port', String(port), '--start-conf', 'manual', '--', '--auth-host=trust', '--auth-local=trust']);
    writeFileSync(join(confDir, 'archiving.conf'), [
      'wal_level = replica',
      'archive_mode = on',
      `archive_command = 'test ! -f ${archive}/%f && cp %p ${archive}/%f'`,
      '',
    ].join('\n'));
    await ctl('start');
    await run('psql', ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', '-qc', 'create database wms']);

    const db = connectPostgres(url, { poolSize: 2, statementTimeoutMs: 0 });
    await migrate(db.db);
    const t = await startApp({ database: db });
    let appOpen = true;
    const closeApp = async () => {
      if (appOpen) await t.close();
      appOpen = false;
    };
    try {
      const partner = await createManufacturer(t, 'PITR');
      await run('runuser', ['-u', 'postgres', '--', 'pg_basebackup', '-h', '127.0.0.1', '-p', String(port), '-U', 'postgres',
        '-D', base, '-X', 'stream', '--checkpoint=fast']);
      await createItem(t, partner, 'PITR-A');
      await sleep(300);
      const [{ target }] = await queryOnce<{ target: string }>(url, 'select clock_timestamp()::text as target');
      await sleep(300);
      await createItem(t, partner, 'PITR-B');
      // The segment holding B's commit goes to the archive now rather than when it fills up.
      const [{ segment }] = await queryOnce<{ segment: string }>(url, 'select pg_walfile_name(pg_current_wal_lsn()) as segment');
      await queryOnce(url, 'select pg_switch_wal()');
      await waitFor(() => existsSync(join(archive, segment)), 15_000, `WAL segment ${segment} in the archive`);

      // The disaster: the data directory is lost. Restore: the base backup, the archive, a target time, recovery.signal.
      await closeApp();
      await ctl('stop');
      for (const entry of readdirSync(dataDir)) rmSync(join(dataDir, entry), { recursive: true, force: true });
      await run('cp', ['-a', `${base}/.`, dataDir]);
      writeFileSync(join(confDir, 'recovery.conf'), [
        `restore_command = 'cp ${archive}/%f %p'`,
        `recovery_target_time = '${target}'`,
        "recovery_target_action = 'promote'",
        '',
      ].join('\n'));
      writeFileSync(join(dataDir, 'recovery.signal'), '');
      await run('chown', ['-R', 'postgres:postgres', dataDir]);
      await ctl('start');
      await waitFor(async () => {
        try {
          return !(await queryOnce<{ recovering: boolean }>(url, 'select pg_is_in_recovery() as recovering'))[0]!.recovering;
        } catch {
          return false;
        }
      }, 20_000, 'recovery to end and the server to be promoted');

      const items = await queryOnce<{ item_number_display: string }>(url, 'select item_number_display from items order by 1');
      assert.deepEqual(items.map((i) => i.item_number_display), ['PITR-A'], 'A (before the target time) is back, B (after it) is not');
      assert.ok(!existsSync(join(dataDir, 'recovery.signal')), 'recovery.signal is removed once recovery ends');
    } finally {
      await closeApp().catch(() => {});
    }
  } finally {
    await run('pg_dropcluster', [PG_VERSION, name, '--stop']).catch(() => run('pg_dropcluster', [PG_VERSION, name]).catch(() => {}));
    rmSync(work, { recursive: true, force: true });
  }
});
