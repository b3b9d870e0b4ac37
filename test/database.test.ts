// The database underneath: migrations (also two instances at once), first start, restarts, history and the outbox.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { ensureFirstAdmin } from '../src/bootstrap.ts';
import { connectPGlite, connectPostgres } from '../src/db/connect.ts';
import pg from 'pg';
import { sql } from 'kysely';
import { ADVISORY_LOCKS } from '../src/db/advisory-locks.ts';
import { listMigrations, migrate } from '../src/db/migrate.ts';
import { emit } from '../src/domain/events.ts';
import { recordHistory } from '../src/domain/history.ts';
import { sha256 } from '../src/domain/secrets.ts';
import { call, createEmptyServerDatabase, freshDatabase, onPostgres, startApp } from './helpers.ts';

const root = new URL('..', import.meta.url).pathname;
const tempDirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'wms-test-'));
  tempDirs.push(dir);
  return dir;
};
after(() => tempDirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

/** Runs a command of the project with node (the pinned one running this test) and collects its output. */
function run(
  args: string[],
  env: Record<string, string>,
  until?: RegExp,
): Promise<{ code: number | null; stdout: string; stderr: string; kill(): Promise<void> }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: root, env: { ...process.env, LOG_LEVEL: 'info', ...env } });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => {
      child.kill();
      reject(new Error(`timed out: ${args.join(' ')}\n${stdout}\n${stderr}`));
    }, 60_000);
    // Resolves once the process has exited: a restart on the same data directory must not race the old owner.
    const exited = new Promise<void>((done) => child.once('exit', () => done()));
    const kill = () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    };
    const result = (code: number | null) => ({ code, stdout, stderr, kill });
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
      if (until?.test(stdout)) {
        clearTimeout(timer);
        resolve(result(null));
      }
    });
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve(result(code));
    });
  });
}

describe('migrations', () => {
  test('two instances migrating one empty PostgreSQL database at once both succeed, each migration applied once', { skip: onPostgres ? false : 'needs TEST_DATABASE_URL' }, async () => {
    const empty = await createEmptyServerDatabase();
    // The test holds the migration lock until both instances wait on it, so that they really start together.
    const holder = new pg.Client({ connectionString: empty.url });
    await holder.connect();
    try {
      await holder.query('select pg_advisory_lock($1)', [ADVISORY_LOCKS.migrate]);
      const both = Promise.all([
        run(['src/cli.ts', 'migrate'], { DATABASE_URL: empty.url }),
        run(['src/cli.ts', 'migrate'], { DATABASE_URL: empty.url }),
      ]);
      for (let tries = 0, waiting = 0; waiting < 2; tries++) {
        if (tries > 300) throw new Error('the two instances never queued on the migration lock');
        await new Promise((resolve) => setTimeout(resolve, 100));
        const locks = await holder.query(`select count(*)::int as n from pg_locks where locktype = 'advisory' and not granted`);
        waiting = locks.rows[0].n;
      }
      await holder.query('select pg_advisory_unlock($1)', [ADVISORY_LOCKS.migrate]);
      const [a, b] = await both;
      assert.equal(a.code, 0, a.stderr);
      assert.equal(b.code, 0, b.stderr);
      const outputs = [a.stdout.trim(), b.stdout.trim()].sort();
      assert.deepEqual(outputs, [`applied ${listMigrations().map((m) => m.version).join(', ')}`, 'database is up to date']);
      const database = connectPostgres(empty.url, { poolSize: 1 });
      const versions = await database.db.selectFrom('schema_migrations').select('version').execute();
      assert.deepEqual(versions.map((v) => v.version).sort(), listMigrations().map((m) => m.version));
      await database.close();
    } finally {
      await holder.end();
      await empty.drop();
    }
  });

  test('a migration PostgreSQL aborts in a deadlock with a running request runs again and is applied once', { skip: onPostgres ? false : 'needs TEST_DATABASE_URL' }, async () => {
    const empty = await createEmptyServerDatabase();
    const database = connectPostgres(empty.url, { poolSize: 2 });
    const request = new pg.Client({ connectionString: empty.url });
    try {
      await sql.raw('create table counted (n int); create table written (n int); create sequence tries').execute(database.db);
      // The migration locks `counted`, then `written`; the request holds `written` and then asks for `counted`.
      const probe = { version: '9999_deadlock_probe', sql: `select nextval('tries');
        lock table counted in access exclusive mode; lock table written in access exclusive mode; create table probed (n int);` };
      await request.connect();
      // The waiter whose deadlock_timeout runs out first finds the cycle and is aborted. On a loaded machine the
      // migration's check could come after the request's (a CI run failed so), so the request's is set far longer
      // (a superuser's setting: other roles keep the default).
      await request.query(`set deadlock_timeout = '10s'`).catch(() => {});
      await request.query('begin');
      await request.query('lock table written in row exclusive mode');
      const migrating = migrate(database.db, [probe]);
      const waiting = async () => (await request.query(`select count(*)::int as n from pg_locks where not granted and relation = 'written'::regclass`)).rows[0].n > 0;
      while (!(await waiting())) await new Promise((resolve) => setTimeout(resolve, 20));
      // The migration waited first, so its deadlock check (after deadlock_timeout) finds the cycle and aborts it.
      await request.query('lock table counted in row exclusive mode');
      await request.query('commit');
      assert.deepEqual(await migrating, ['9999_deadlock_probe']);
      const { rows: [state] } = await sql<{ tries: string; probed: string | null; applied: number }>`select
        (select last_value::text from tries) as tries, to_regclass('probed')::text as probed,
        (select count(*)::int from schema_migrations where version = '9999_deadlock_probe') as applied`.execute(database.db);
      assert.deepEqual(state, { tries: '2', probed: 'probed', applied: 1 });
    } finally {
      await request.end();
      await database.close();
      await empty.drop();
    }
  });

  test('migrating an up-to-date database does nothing', async () => {
    const database = await freshDatabase();
    try {
      assert.deepEqual(await migrate(database.db), []);
    } finally {
      await database.close();
    }
  });
});

describe('first start', () => {
  test('with no users, creates admin with a generated key once', async () => {
    const database = await connectPGlite(null);
    try {
      await migrate(database.db);
      const first = await ensureFirstAdmin(database.db, null);
      assert.equal(first.created, true);
      assert.match(first.generatedKey!, /^jwc_[0-9A-Za-z]{32}$/);
      const stored = await database.db.selectFrom('api_keys').innerJoin('users', 'users.id', 'api_keys.user_id')
        .select(['users.name', 'users.role', 'api_keys.key_hash']).execute();
      assert.deepEqual(stored, [{ name: 'admin', role: 'system_admin', key_hash: sha256(first.generatedKey!) }]);
      assert.deepEqual(await ensureFirstAdmin(database.db, null), { created: false, generatedKey: null });
    } finally {
      await database.close();
    }
  });

  test('npm start on a bare data directory prints the key once, serves it, and keeps everything across a restart', async () => {
    const dataDir = tempDir();
    const env = { WMS_DATA_DIR: dataDir, PORT: '0', DATABASE_URL: '' };
    const listening = /Server listening at (http:\/\/[^"]+)/;
    const first = await run(['src/main.ts'], env, /database ready/);
    const baseUrl = listening.exec(first.stdout)![1]!;
    const key = /\b(jwc_[0-9A-Za-z]{32})\b/.exec(first.stdout)?.[1];
    assert.ok(key, 'the generated key is printed');
    assert.equal((await fetch(`${baseUrl}/healthz`)).status, 200);
    assert.equal((await fetch(`${baseUrl}/readyz`)).status, 200);
    const created = await fetch(`${baseUrl}/api/v1/manufacturers`, {
      method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ code: 'KEPT', name: 'Kept' }),
    });
    assert.equal(created.status, 201);
    await first.kill();

    const second = await run(['src/main.ts'], env, /database ready/);
    try {
      assert.equal(/jwc_[0-9A-Za-z]{32}/.test(second.stdout), false, 'no new key on a restart');
      const url = listening.exec(second.stdout)![1]!;
      const list = await fetch(`${url}/api/v1/manufacturers?q=KEPT`, { headers: { authorization: `Bearer ${key}` } });
      assert.equal(list.status, 200);
      assert.equal(((await list.json()) as { data: unknown[] }).data.length, 1);
    } finally {
      await second.kill();
    }
  });

  test('WMS_BOOTSTRAP_ADMIN_KEY becomes the admin’s key; create-admin-key prints another that works', async () => {
    const dataDir = tempDir();
    const bootstrapKey = `jwc_${'B'.repeat(32)}`;
    const migrated = await run(['src/cli.ts', 'migrate'], { WMS_DATA_DIR: dataDir, DATABASE_URL: '' });
    assert.equal(migrated.code, 0, migrated.stderr);
    const database = await connectPGlite(dataDir);
    try {
      assert.deepEqual(await ensureFirstAdmin(database.db, bootstrapKey), { created: true, generatedKey: null });
    } finally {
      await database.close();
    }
    const cli = await run(['src/cli.ts', 'create-admin-key'], { WMS_DATA_DIR: dataDir, DATABASE_URL: '' });
    assert.equal(cli.code, 0, cli.stderr);
    const printed = cli.stdout.trim();
    assert.match(printed, /^jwc_[0-9A-Za-z]{32}$/);
    const t = await startApp({ database: await connectPGlite(dataDir) });
    try {
      for (const key of [bootstrapKey, printed]) {
        const me = await call(t.app, 'GET', '/api/v1/me', { key });
        assert.equal(me.status, 200);
        assert.equal(me.body.data.user.name, 'admin');
        assert.equal(me.body.data.user.role, 'system_admin');
      }
    } finally {
      await t.close();
    }
  });

  test('a malformed WMS_BOOTSTRAP_ADMIN_KEY stops the start with a clear message', async () => {
    const result = await run(['src/main.ts'], { WMS_DATA_DIR: tempDir(), DATABASE_URL: '', WMS_BOOTSTRAP_ADMIN_KEY: 'secret' });
    assert.equal(result.code, 1);
    assert.match(result.stderr, /WMS_BOOTSTRAP_ADMIN_KEY must be jwc_/);
  });
});

describe('history and outbox', () => {
  test('rows written in a transaction exist exactly when it commits', async () => {
    const database = await freshDatabase();
    const { db } = database;
    try {
      const author = { userId: null, apiKeyId: null };
      const entityId = '3f2b7c8e-5d1a-4c9b-8e7f-6a5b4c3d2e1f';
      await assert.rejects(db.transaction().execute(async (tx) => {
        await recordHistory(tx, author, { entityType: 'probe', entityId, action: 'created', after: { n: 1 } });
        await emit(tx, 'cycle_count.completed', { n: 1 });
        throw new Error('roll back');
      }));
      assert.equal((await db.selectFrom('history').selectAll().where('entity_type', '=', 'probe').execute()).length, 0);
      assert.equal((await db.selectFrom('outbox_events').selectAll().execute()).length, 0);
      assert.equal((await db.selectFrom('event_inbox').selectAll().execute()).length, 0);

      const event = await db.transaction().execute(async (tx) => {
        await recordHistory(tx, author, { entityType: 'probe', entityId, action: 'created', before: null, after: { n: 2 } });
        return emit(tx, 'cycle_count.completed', { n: 2 }, null);
      });
      const history = await db.selectFrom('history').selectAll().where('entity_type', '=', 'probe').execute();
      assert.equal(history.length, 1);
      assert.deepEqual(history[0]!.after, { n: 2 });
      const events = await db.selectFrom('outbox_events').selectAll().execute();
      assert.equal(events.length, 1);
      assert.equal(events[0]!.id, event.id);
      assert.deepEqual(events[0]!.data, { n: 2 });
      // A warehouse event (no partner) waits in the warehouse's poll stream only.
      assert.deepEqual(await db.selectFrom('event_inbox').select(['tenant', 'event_seq', 'kind']).execute(), [{ tenant: 'warehouse', event_seq: events[0]!.seq, kind: 'cycle_count.completed' }]);
    } finally {
      await database.close();
    }
  });
});
