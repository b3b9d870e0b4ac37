// Test harness: a fresh database per app (a new PGlite, or a database cloned from a migrated template on the server
// named by TEST_DATABASE_URL), the real app with response-shape checking on, and the first admin's key.
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql, type Kysely } from 'kysely';
import pg from 'pg';
import { buildApp } from '../src/app.ts';
import { ensureFirstAdmin } from '../src/bootstrap.ts';
import { loadConfig, type Config } from '../src/config.ts';
import { connectPGlite, connectPostgres, type Database } from '../src/db/connect.ts';
import { listMigrations, migrate } from '../src/db/migrate.ts';
import type { DB } from '../src/db/schema.ts';
import { generateApiKey, keyPrefix, sha256 } from '../src/domain/secrets.ts';
import { advanceShippedYear } from '../src/domain/shipped-year.ts';
import type { Metrics } from '../src/http/metrics.ts';
import { memoryCounterStore, type CounterStore } from '../src/http/rate-limit.ts';
import type { App } from '../src/http/types.ts';

export const serverUrl = process.env.TEST_DATABASE_URL?.trim() || null;
export const onPostgres = serverUrl !== null;

function withDatabase(url: string, name: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${name}`;
  return parsed.toString();
}

async function adminClient(): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: serverUrl! });
  await client.connect();
  return client;
}

/** Name prefix of every database this run creates, so .ci/run can drop them all afterwards. */
function runPrefix(): string {
  return new URL(serverUrl!).pathname.slice(1) || 'postgres';
}

let templateName: Promise<string> | null = null;

/** A migrated template database, made once per schema version and shared by every test file of the run. */
function template(): Promise<string> {
  templateName ??= (async () => {
    const hash = createHash('sha256').update(listMigrations().map((m) => m.sql).join('\n')).digest('hex').slice(0, 10);
    const name = `${runPrefix()}_tpl_${hash}`;
    const client = await adminClient();
    try {
      await client.query('select pg_advisory_lock(4711003)');
      const exists = await client.query('select 1 from pg_database where datname = $1', [name]);
      if (exists.rowCount === 0) {
        await client.query(`create database "${name}"`);
        const database = connectPostgres(withDatabase(serverUrl!, name), { poolSize: 1, statementTimeoutMs: 0 });
        await migrate(database.db);
        await database.close();
      }
    } finally {
      await client.query('select pg_advisory_unlock(4711003)');
      await client.end();
    }
    return name;
  })();
  return templateName;
}

/** An empty, unmigrated database (for the migration tests). Returns its URL and a drop function. */
export async function createEmptyServerDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `${runPrefix()}_t_${randomBytes(6).toString('hex')}`;
  const client = await adminClient();
  await client.query(`create database "${name}"`);
  await client.end();
  return {
    url: withDatabase(serverUrl!, name),
    drop: async () => {
      const c = await adminClient();
      await c.query(`drop database if exists "${name}" with (force)`);
      await c.end();
    },
  };
}

/**
 * A migrated database of its own: cloned from the template on the server, or a new in-memory PGlite. `timeZone` sets
 * the TimeZone every session of it starts with (PGlite has one session). `embedded` takes PGlite even when a server is
 * set: no other test file's transactions reach it (a server's transaction ids are shared by all its databases).
 * `statementTimeoutMs` bounds each statement on the server (PostgreSQL only; the service's default otherwise).
 */
export async function freshDatabase(options: { timeZone?: string; embedded?: boolean; statementTimeoutMs?: number } = {}): Promise<Database> {
  if (!serverUrl || options.embedded) {
    const database = await connectPGlite(null);
    await migrate(database.db);
    if (options.timeZone) await sql`set time zone ${sql.lit(options.timeZone)}`.execute(database.db);
    return database;
  }
  const tpl = await template();
  const name = `${runPrefix()}_t_${randomBytes(6).toString('hex')}`;
  const client = await adminClient();
  await client.query(`create database "${name}" template "${tpl}"`);
  if (options.timeZone) await client.query(`alter database "${name}" set timezone to ${pg.escapeLiteral(options.timeZone)}`);
  await client.end();
  const database = connectPostgres(withDatabase(serverUrl, name), { poolSize: 10, statementTimeoutMs: options.statementTimeoutMs });
  return {
    ...database,
    close: async () => {
      await database.close();
      const c = await adminClient();
      await c.query(`drop database if exists "${name}" with (force)`);
      await c.end();
    },
  };
}

export interface TestApp {
  app: App;
  db: Kysely<DB>;
  adminKey: string;
  config: Config;
  close(): Promise<void>;
}

export interface TestAppOptions {
  env?: Record<string, string>;
  /** Settings the environment cannot express (a read cache of a few kilobytes). */
  config?: Partial<Config>;
  counters?: CounterStore;
  database?: Database;
  /** Called before the app is ready, to add test-only routes. */
  beforeReady?: (app: App) => void;
  logStream?: { write(line: string): void };
  /** The process's metrics, to share with a delivery worker the test starts. */
  metrics?: Metrics;
}

export async function startApp(options: TestAppOptions = {}): Promise<TestApp> {
  // Documents (packing lists among them) go to a directory of this app's own, removed when it closes.
  const documentsDir = mkdtempSync(join(tmpdir(), 'wms-documents-'));
  const config = { ...loadConfig({ WMS_PUBLIC_URL: 'http://wms.test', WMS_DOCUMENTS_DIR: documentsDir, ...options.env }), ...options.config };
  const database = options.database ?? (await freshDatabase());
  const adminKey = generateApiKey();
  await ensureFirstAdmin(database.db, adminKey);
  // As the service does at its start: a template migrated on an earlier day holds the year of that day.
  await advanceShippedYear(database.db);
  const counters = options.counters ?? memoryCounterStore();
  const app = await buildApp({
    config,
    db: database.db,
    counters,
    listen: database.listen,
    poolStats: database.poolStats,
    metrics: options.metrics,
    checkResponses: true,
    logger: options.logStream ? { level: 'info', stream: options.logStream } : false,
  });
  options.beforeReady?.(app);
  await app.ready();
  return {
    app,
    db: database.db,
    adminKey,
    config,
    close: async () => {
      await app.close();
      await counters.close();
      await database.close();
      rmSync(documentsDir, { recursive: true, force: true });
    },
  };
}

export interface Answer {
  status: number;
  body: any;
  headers: Record<string, string | number | string[] | undefined>;
}

export async function call(
  app: App,
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE',
  url: string,
  options: { key?: string | null; body?: unknown; headers?: Record<string, string>; remoteAddress?: string } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key) headers.authorization = `Bearer ${options.key}`;
  const response = await app.inject({
    method,
    url,
    headers,
    ...(options.remoteAddress ? { remoteAddress: options.remoteAddress } : {}),
    ...(options.body !== undefined ? { payload: options.body as object } : {}),
  });
  const text = response.body;
  return { status: response.statusCode, body: text ? JSON.parse(text) : null, headers: response.headers };
}

/** Asserts an error answer: status, the envelope and its code. */
export function expectError(answer: Answer, status: number, code: string): void {
  if (answer.status !== status || answer.body?.error?.code !== code || typeof answer.body.error.message !== 'string') {
    throw new Error(`expected ${status} ${code}, got ${answer.status} ${JSON.stringify(answer.body)}`);
  }
}

export async function createManufacturer(t: TestApp, code: string): Promise<string> {
  const answer = await call(t.app, 'POST', '/api/v1/manufacturers', { key: t.adminKey, body: { code, name: `${code} Inc.` } });
  if (answer.status !== 201) throw new Error(`manufacturer ${code}: ${JSON.stringify(answer.body)}`);
  return answer.body.data.id;
}

let userSeq = 0;

/** A user of the role (consignors get a password set through their invite) and a key with the given scopes. */
export async function userWithKey(
  t: TestApp,
  role: string,
  options: { manufacturerId?: string; scopes?: string[] } = {},
): Promise<{ userId: string; key: string; keyId: string }> {
  const email = `user${++userSeq}-${randomBytes(3).toString('hex')}@example.com`;
  const body: Record<string, unknown> = { name: `${role} ${userSeq}`, email, role };
  if (options.manufacturerId) body.manufacturer_id = options.manufacturerId;
  if (role !== 'consignor') body.password = 'correct horse battery staple';
  const user = await call(t.app, 'POST', '/api/v1/admin/users', { key: t.adminKey, body });
  if (user.status !== 201) throw new Error(`user ${role}: ${JSON.stringify(user.body)}`);
  const me = await call(t.app, 'GET', '/api/v1/admin/roles', { key: t.adminKey });
  const rolePermissions: string[] = me.body.data.find((r: { role: string }) => r.role === role).permissions;
  const scopes = options.scopes ?? rolePermissions;
  if (scopes.length === 0) {
    // A role without permissions (partner_portal) still gets a key, inserted directly: the API refuses empty scopes.
    return { userId: user.body.data.id, ...(await insertKey(t, user.body.data.id, ['orders.view'])) };
  }
  const key = await call(t.app, 'POST', '/api/v1/api-keys', { key: t.adminKey, body: { user_id: user.body.data.id, name: 'test', scopes } });
  if (key.status !== 201) throw new Error(`key for ${role}: ${JSON.stringify(key.body)}`);
  return { userId: user.body.data.id, key: key.body.data.key, keyId: key.body.data.id };
}

/** A key written straight into the database, for states the API will not create (expired, foreign scopes). */
export async function insertKey(t: TestApp, userId: string, scopes: string[], expiresAt: Date | null = null) {
  const key = generateApiKey();
  const row = await t.db
    .insertInto('api_keys')
    .values({ user_id: userId, name: 'direct', key_hash: sha256(key), key_prefix: keyPrefix(key), scopes, expires_at: expiresAt, revoked_at: null, created_by: null })
    .returning('id')
    .executeTakeFirstOrThrow();
  return { key, keyId: row.id };
}

export async function createItem(t: TestApp, manufacturerId: string, number: string, extra: Record<string, unknown> = {}): Promise<string> {
  const answer = await call(t.app, 'POST', '/api/v1/items', {
    key: t.adminKey, body: { manufacturer_id: manufacturerId, item_number_display: number, description: `Item ${number}`, ...extra },
  });
  if (answer.status !== 201) throw new Error(`item ${number}: ${JSON.stringify(answer.body)}`);
  return answer.body.data.item.id;
}

/** A customer with a billing address, as order entry needs. */
export async function createCustomer(app: TestApp, account: string, extra: Record<string, unknown> = {}): Promise<string> {
  const answer = await call(app.app, 'POST', '/api/v1/customers', {
    key: app.adminKey, body: { account_number: account, name: `${account} Hardware`, address_line_1: '1 Main St', city: 'Springfield', state: 'IL', zip_code: '62701', ...extra },
  });
  if (answer.status !== 201) throw new Error(`customer ${account}: ${JSON.stringify(answer.body)}`);
  return answer.body.data.id ?? answer.body.data.customer.id;
}

export async function createLocation(t: TestApp, code: string, extra: Record<string, unknown> = {}): Promise<string> {
  const answer = await call(t.app, 'POST', '/api/v1/locations', { key: t.adminKey, body: { location_code: code, ...extra } });
  if (answer.status !== 201) throw new Error(`location ${code}: ${JSON.stringify(answer.body)}`);
  return answer.body.data.id;
}

export async function adjust(t: TestApp, itemId: string, quantity: number, locationId?: string, key = t.adminKey) {
  return call(t.app, 'POST', '/api/v1/inventory/adjustments', {
    key, body: { item_id: itemId, quantity, reason: 'test', ...(locationId ? { location_id: locationId } : {}) },
  });
}

/** `db` with a count of the statements it has run: `count()` since the last `reset()`. */
export function countingStatements(db: Kysely<DB>) {
  let statements = 0;
  const counted = db.withPlugin({
    transformQuery: (args) => args.node,
    transformResult: async (args) => {
      statements++;
      return args.result;
    },
  });
  return { db: counted, count: () => statements, reset: () => void (statements = 0) };
}
