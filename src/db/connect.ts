// Opens the database: a pg Pool when DATABASE_URL is set, otherwise the embedded PGlite under the data directory.
import { createHash } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { setTimeout as sleep } from 'node:timers/promises';
import { Kysely, PostgresDialect, sql, type PostgresPool } from 'kysely';
import pg from 'pg';
import { isConnectionBroken, isDatabaseUnavailable, READ_TIMEOUT_MESSAGE } from './availability.ts';
import { lockDataDir } from './data-dir-lock.ts';
import { PGliteDialect } from './pglite-driver.ts';
import { withRequestTransactions } from './request-transaction.ts';
import { isoTimestamp, TIMESTAMPTZ } from './timestamps.ts';
import type { Config } from '../config.ts';
import type { DB } from './schema.ts';

/** Connections of the request pool: open, idle, and requests waiting for one. */
export interface PoolStats {
  total: number;
  idle: number;
  waiting: number;
}

export interface Database {
  db: Kysely<DB>;
  /**
   * Lag-tolerant reads (lists, search, reports, the event poll): the read replica of DATABASE_READ_URL, falling back to
   * the primary while the replica cannot be reached; without a replica the same as `db`.
   */
  reads: Kysely<DB>;
  kind: 'postgres' | 'pglite';
  /** Hears NOTIFYs on a channel; returns the function that stops listening. Absent when there is nowhere to LISTEN. */
  listen?(channel: string, handlers: ListenHandlers): Promise<() => Promise<void>>;
  /** Whether the database answers `select 1` within the time, on a connection outside the request pool. */
  ping(timeoutMs: number): Promise<boolean>;
  /** The request pool's connections, for /metrics (PostgreSQL only). */
  poolStats?(): PoolStats;
  close(): Promise<void>;
}

export interface ListenHandlers {
  notified(): void;
  /** true once notifications arrive, false when they may be missed (the listening connection is gone). */
  listening(on: boolean): void;
}

// int8 (counts, sequences) and numeric (money) arrive as strings by default; quantities fit a JS number exactly,
// and money leaves as a JSON number. Dates stay 'YYYY-MM-DD' strings so no local time zone shifts them; timestamps
// arrive as the API's ISO text (db/timestamps.ts).
const INT8 = 20;
const NUMERIC = 1700;
const DATE = 1082;
const toNumber = (value: string) => Number(value);
const asIs = (value: string) => value;
const PARSERS: Record<number, (value: string) => unknown> = {
  [INT8]: toNumber, [NUMERIC]: toNumber, [DATE]: asIs, [TIMESTAMPTZ]: isoTimestamp,
};

export interface PostgresOptions {
  poolSize?: number;
  /** How long opening a connection (or waiting for a free one in the pool) may take. */
  connectTimeoutMs?: number;
  /** Server-side limit of one statement; 0 for none (migrations). */
  statementTimeoutMs?: number;
  /** A read replica (hot standby) for `Database.reads`. */
  readUrl?: string | null;
  /** Where to LISTEN (a direct connection to the primary); null: nowhere. Default: the primary's url. */
  listenUrl?: string | null;
  /** 'transaction': a transaction-pooling PgBouncer is in between (no session settings at connect). */
  pooler?: 'none' | 'transaction';
  /** Named prepared statements (default true). */
  preparedStatements?: boolean;
  /** Told when the replica fails to give a connection and reads go to the primary for a while. */
  onReplicaDown?: (error: unknown) => void;
}

// A frozen server never answers, so statement_timeout (which the server enforces) cannot fire: the client gives up this
// much later and throws the connection away.
const READ_TIMEOUT_MARGIN_MS = 5000;
// A session left idle inside a transaction (its client vanished without closing the socket) gives up its locks.
const IDLE_IN_TRANSACTION_MS = 60_000;
// TCP keepalive probes start after this much silence, so a server lost to a network partition is noticed.
const KEEPALIVE_AFTER_MS = 10_000;

export function connectPostgres(url: string, options: PostgresOptions = {}): Database {
  const { preparedStatements = true, statementTimeoutMs = DEFAULT_STATEMENT_TIMEOUT_MS } = options;
  const readTimeoutMs = statementTimeoutMs ? statementTimeoutMs + READ_TIMEOUT_MARGIN_MS : 0;
  const primaryPool = openPool(url, options);
  const primary = withPreparedStatements(primaryPool, preparedStatements, readTimeoutMs);
  const db = new Kysely<DB>({ dialect: withRequestTransactions(new PostgresDialect({ pool: primary })) });
  // No request transactions on the replica: a request that writes reads on the primary, where its own writes are.
  const reads = options.readUrl
    ? new Kysely<DB>({ dialect: new PostgresDialect({ pool: preferReplica(openPool(options.readUrl, options), preparedStatements, readTimeoutMs, primary, options.onReplicaDown) }) })
    : db;
  const { connectTimeoutMs = DEFAULT_CONNECT_TIMEOUT_MS, listenUrl = url } = options;
  return {
    db,
    reads,
    kind: 'postgres',
    ...(listenUrl ? { listen: (channel, handlers) => listenOnServer(listenUrl, connectTimeoutMs, channel, handlers) } : {}),
    ping: (timeoutMs) => pingServer(url, timeoutMs),
    poolStats: () => ({ total: primaryPool.totalCount, idle: primaryPool.idleCount, waiting: primaryPool.waitingCount }),
    close: async () => {
      await Promise.all([db.destroy(), reads === db ? null : reads.destroy()]);
    },
  };
}

const DEFAULT_CONNECT_TIMEOUT_MS = 5000;
const DEFAULT_STATEMENT_TIMEOUT_MS = 30_000;

function openPool(url: string, options: PostgresOptions): pg.Pool {
  const { poolSize = 10, connectTimeoutMs = DEFAULT_CONNECT_TIMEOUT_MS, statementTimeoutMs = DEFAULT_STATEMENT_TIMEOUT_MS, pooler = 'none' } = options;
  const pool = new pg.Pool({
    connectionString: url,
    max: poolSize,
    connectionTimeoutMillis: connectTimeoutMs,
    // Session settings ride on the startup message, which PgBouncer refuses (and could not keep: the next transaction
    // may run on another server connection). Behind it they are the role's (docs/operations.md), and the client-side
    // read timeout (answerOf) still bounds every query.
    ...(pooler === 'transaction' ? {} : { statement_timeout: statementTimeoutMs, idle_in_transaction_session_timeout: IDLE_IN_TRANSACTION_MS }),
    keepAlive: true,
    keepAliveInitialDelayMillis: KEEPALIVE_AFTER_MS,
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        PARSERS[oid] ?? pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
  });
  // An idle client losing its server must not crash the process; the next checkout reconnects.
  pool.on('error', () => {});
  return pool;
}

// After the replica failed to give a connection, reads go to the primary this long before the replica is tried again,
// so that a replica that is down costs one failed connect per interval, not one per request.
const REPLICA_RETRY_MS = 5000;

/**
 * Connections from the replica, or from the primary while the replica cannot be reached. A replica whose pool is full
 * is busy, not gone: its requests wait and time out there (503) rather than pile onto the pool the writes use.
 */
function preferReplica(
  replicaPool: pg.Pool, named: boolean, readTimeoutMs: number, primary: PostgresPool, onDown?: (error: unknown) => void,
): PostgresPool {
  const replica = withPreparedStatements(replicaPool, named, readTimeoutMs);
  let replicaDownUntil = 0;
  return {
    async connect() {
      if (Date.now() >= replicaDownUntil) {
        try {
          return await replica.connect();
        } catch (error) {
          if (!isDatabaseUnavailable(error) || replicaPool.totalCount >= (replicaPool.options.max ?? 10)) throw error;
          replicaDownUntil = Date.now() + REPLICA_RETRY_MS;
          onDown?.(error);
        }
      }
      return primary.connect();
    },
    // The primary's pool is ended by the Kysely that owns it.
    end: () => replica.end(),
  };
}

/**
 * A readiness probe on a connection of its own: a pool busy with requests must not make a healthy instance look down,
 * and a frozen server must not hold a pooled connection for every probe.
 */
async function pingServer(url: string, timeoutMs: number): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: timeoutMs, query_timeout: timeoutMs });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch {
    return false;
  } finally {
    // Not awaited: a frozen server would not acknowledge the goodbye.
    void client.end().catch(() => {});
  }
}

// Giving up the LISTEN connection on shutdown waits this long at most for the server to acknowledge.
const UNLISTEN_WAIT_MS = 1000;

const RELISTEN_FIRST_MS = 250;
const RELISTEN_MAX_MS = 5000;

/**
 * A connection of its own that LISTENs, reconnecting after a loss with a backoff that doubles up to 5 s;
 * `listening(false)` until it hears again.
 */
async function listenOnServer(url: string, connectTimeoutMs: number, channel: string, handlers: ListenHandlers): Promise<() => Promise<void>> {
  let client: pg.Client | null = null;
  let retry: NodeJS.Timeout | undefined;
  let stopped = false;
  let failures = 0;

  const lost = (which: pg.Client) => {
    if (client !== which) return;
    client = null;
    handlers.listening(false);
    which.end().catch(() => {});
    if (!stopped) retry = setTimeout(open, Math.min(RELISTEN_MAX_MS, RELISTEN_FIRST_MS * 2 ** failures++));
  };

  async function open(): Promise<void> {
    const candidate = new pg.Client({
      connectionString: url, connectionTimeoutMillis: connectTimeoutMs, keepAlive: true, keepAliveInitialDelayMillis: KEEPALIVE_AFTER_MS,
    });
    candidate.on('notification', () => handlers.notified());
    candidate.on('error', () => lost(candidate));
    candidate.on('end', () => lost(candidate));
    try {
      client = candidate;
      await candidate.connect();
      await candidate.query(`listen ${pg.escapeIdentifier(channel)}`);
      if (client === candidate) {
        failures = 0;
        handlers.listening(true);
      }
    } catch {
      lost(candidate);
    }
  }

  await open();
  return async () => {
    stopped = true;
    clearTimeout(retry);
    const last = client;
    client = null;
    handlers.listening(false);
    if (last) await Promise.race([last.end().catch(() => {}), sleep(UNLISTEN_WAIT_MS)]);
  };
}

// Text matching (LIKE, trigram %) is planned anew for each pattern: a plan cached for any value would not know that
// `like '%x%'` finds twenty rows and would read the whole catalogue instead. So is a statement marked PLANNED_EACH_TIME.
const PLANNED_PER_VALUE = /\b(i?like)\b|\s%\s|\/\* planned each time \*\//i;

/**
 * Written into a statement whose plan must follow the tables' size as it is now: one over a queue that is empty for
 * hours and then holds thousands of rows. A plan kept per connection would keep what the planner chose for the empty
 * table (a sequential scan inside a nested loop) until the statistics change, which on a server without autovacuum is
 * never.
 */
export const PLANNED_EACH_TIME = sql.raw('/* planned each time */');

// A statement without parameters is named too: the list pages write their closed-set values in as literals
// (db/literals.ts) so that their plans are kept. Scripts of several statements (migrations), transaction control and
// DDL are sent as text. Nothing checks that every such statement's literals come from a closed set (partition
// housekeeping writes month names in, a new one each month), so at most this many of them get a name per pool;
// later ones are sent as text, planned each time as before.
const ONE_STATEMENT = /^\s*(select|with|insert|update|delete)\b[^;]*$/i;
const MAX_NAMED_WITHOUT_PARAMETERS = 1000;

/**
 * Statements run as named prepared statements, so each connection parses and plans a query shape once instead of on
 * every request (measured: the key lookup runs twice as fast); text matching excepted (above). The shapes are the
 * queries the code builds, with closed sets of literals: a bounded set. With `named` false (a transaction pooler that
 * cannot keep them across server connections) they stay parameterized, as unnamed statements parsed anew each time.
 */
function withPreparedStatements(pool: pg.Pool, named: boolean, readTimeoutMs: number): PostgresPool {
  const names = new Map<string, string>();
  let namedWithoutParameters = 0;
  const nameOf = (text: string) => {
    let name = names.get(text);
    if (!name) names.set(text, (name = `wms_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`));
    return name;
  };
  const isNamed = (text: string, values: unknown[] | undefined) => {
    if (!named || PLANNED_PER_VALUE.test(text)) return false;
    if (values?.length || names.has(text)) return true;
    if (namedWithoutParameters >= MAX_NAMED_WITHOUT_PARAMETERS || !ONE_STATEMENT.test(text)) return false;
    namedWithoutParameters++;
    return true;
  };
  return {
    async connect() {
      const client = await pool.connect();
      // The pool listens for errors only on idle clients: a checked-out one whose server goes away would otherwise
      // emit an unhandled 'error' and end the process. Such a client, or one whose query failed without an answer of
      // the server, is destroyed on release instead of going back to the pool, and refuses further queries at once:
      // after a read timeout the stuck query still holds it, and a rollback queued behind would wait out its own.
      let broken: Error | undefined;
      const onError = (error: Error) => (broken ??= error);
      client.on('error', onError);
      const noteFailure = (error: unknown) => {
        if (isConnectionBroken(error)) broken ??= error as Error;
        throw error;
      };
      const ask = (config: QueryRequest) => answerOf(client, config, readTimeoutMs).catch(noteFailure);
      return {
        query: ((text: unknown, values?: unknown[]) => {
          if (broken) return Promise.reject(broken);
          if (typeof text !== 'string') return ask(text as pg.QueryConfig);
          const name = isNamed(text, values) ? nameOf(text) : undefined;
          // One statement (a parameterized one cannot be more) answers rows as arrays; scripts keep the driver's rows.
          return name || values?.length || ONE_STATEMENT.test(text)
            ? ask({ name, text, values, rowMode: 'array' }).then(withRowObjects)
            : ask({ text, values });
        }) as never,
        release: () => {
          client.off('error', onError);
          client.release(broken);
        },
      };
    },
    end: () => pool.end(),
  };
}

type QueryRequest = pg.QueryConfig & { rowMode?: 'array' };

/**
 * One query's answer, or after `readTimeoutMs` (0: none) a read timeout error; the connection is then thrown
 * away on release, since its query is still in flight. pg has both built in (`query_timeout`, and a promise when no
 * callback is given), but every answer it gives that way stays reachable past two young-generation collections, so
 * V8 moves its rows to the old generation. Measured on a loop of 10 connections reading the item page (`--trace-gc-nvp`):
 * 170-280 MB moved in 8 s through pg's promise or its query_timeout, 7 MB with this callback; in the service that was
 * 30 KB moved per item page, 14-22 ms scavenges and a full collection every 9 s under a list load.
 */
function answerOf(client: pg.PoolClient, config: QueryRequest, readTimeoutMs: number): Promise<pg.QueryResult> {
  return new Promise((resolve, reject) => {
    const timer = readTimeoutMs ? setTimeout(() => reject(new Error(READ_TIMEOUT_MESSAGE)), readTimeoutMs) : undefined;
    client.query(config, (error: Error | null, result: pg.QueryResult) => {
      clearTimeout(timer);
      if (error) reject(error);
      else resolve(result);
    });
  });
}

// Rows arrive as arrays and become objects here, each made by a function written once per column list: an object
// literal with fixed keys. The driver's own rows are copies of an object built key by key, which V8 keeps in
// dictionary mode: slower to make (its parseRow was 7% of the order list's CPU), to read and to spread. A/B without the
// read cache: open orders +7-15%, below_reorder +5-16%, the item read +12%. The column lists are the code's
// statements' (a bounded set, as the statement names); past a cap, or for a column named __proto__ (which a literal
// would take as the prototype), rows are built key by key as the driver does. A name repeated keeps its last value,
// as with the driver.
const MAX_ROW_SHAPES = 1000;
const rowShapes = new Map<string, RowShape>();
type RowShape = (values: unknown[]) => Record<string, unknown>;

function rowShapeOf(fields: readonly { name: string }[]): RowShape {
  const names = fields.map((field) => field.name);
  const key = names.join('\0');
  let shape = rowShapes.get(key);
  if (shape) return shape;
  if (rowShapes.size >= MAX_ROW_SHAPES || names.includes('__proto__')) return (values) => Object.fromEntries(names.map((name, i) => [name, values[i]]));
  // The keys are written as JSON string literals: any column name is a valid key, and nothing else enters the code.
  shape = new Function('v', `return { ${names.map((name, i) => `${JSON.stringify(name)}: v[${i}]`).join(', ')} };`) as RowShape;
  rowShapes.set(key, shape);
  return shape;
}

function withRowObjects(result: pg.QueryResult<unknown[]>): pg.QueryResult {
  if (result.rows.length === 0) return result as unknown as pg.QueryResult;
  const shape = rowShapeOf(result.fields);
  const rows = result.rows as unknown[];
  for (let i = 0; i < rows.length; i++) rows[i] = shape(rows[i] as unknown[]);
  return result as unknown as pg.QueryResult;
}

/** dataDir null keeps the database in memory (tests). */
export async function connectPGlite(dataDir: string | null): Promise<Database> {
  if (dataDir) mkdirSync(dataDir, { recursive: true });
  const unlock = dataDir ? lockDataDir(dataDir) : () => {};
  const pglite = await PGlite.create(dataDir ?? undefined, {
    extensions: { pg_trgm },
    parsers: PARSERS,
  }).catch((error: unknown) => {
    unlock();
    throw error;
  });
  const db = new Kysely<DB>({ dialect: withRequestTransactions(new PGliteDialect(pglite)) });
  return {
    db,
    reads: db,
    kind: 'pglite',
    // One process owns the data directory, so every change is this process's own: nothing can be missed.
    ping: async () => {
      await sql`select 1`.execute(db);
      return true;
    },
    listen: async (channel, handlers) => {
      const unlisten = await pglite.listen(channel, () => handlers.notified());
      handlers.listening(true);
      return async () => {
        handlers.listening(false);
        await unlisten();
      };
    },
    close: async () => {
      await db.destroy();
      await pglite.close();
      unlock();
    },
  };
}

export function connect(config: Config, overrides: PostgresOptions = {}): Promise<Database> {
  return config.databaseUrl
    ? Promise.resolve(connectPostgres(config.databaseUrl, {
      poolSize: config.dbPoolSize,
      connectTimeoutMs: config.dbConnectTimeoutMs,
      statementTimeoutMs: config.dbStatementTimeoutMs,
      readUrl: config.databaseReadUrl,
      listenUrl: config.databaseListenUrl,
      pooler: config.dbPooler,
      preparedStatements: config.dbPreparedStatements,
      ...overrides,
    }))
    : connectPGlite(config.dataDir);
}
