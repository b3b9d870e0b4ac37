// Environment -> one typed, validated object. Everything the service reads from the environment is read here.
import { join } from 'node:path';

export interface Config {
  host: string;
  port: number;
  /** postgres://... when set; otherwise the embedded PGlite under dataDir. */
  databaseUrl: string | null;
  /** postgres://... of a read replica for lag-tolerant reads (lists, search, reports, the event poll); null: the primary. */
  databaseReadUrl: string | null;
  /**
   * Where the key cache LISTENs for revocations: a direct connection to the primary. Null: the cache is off and every
   * request reads its key from the database (the default behind a transaction pooler, which cannot carry a LISTEN).
   */
  databaseListenUrl: string | null;
  /** 'transaction': a transaction-pooling PgBouncer sits between the service and PostgreSQL (WMS_DB_POOLER). */
  dbPooler: 'none' | 'transaction';
  /** Statements run as named prepared statements (off behind a transaction pooler that cannot keep them). */
  dbPreparedStatements: boolean;
  dataDir: string;
  /** Plaintext key given to the first admin on an empty database (WMS_BOOTSTRAP_ADMIN_KEY). */
  bootstrapAdminKey: string | null;
  /** Base of links the service hands out (invite_url). */
  publicUrl: string;
  redisUrl: string | null;
  rateLimitPerKey: number;
  rateLimitFailedPerAddress: number;
  rateLimitWindowMs: number;
  bodyLimitBytes: number;
  logLevel: string;
  dbPoolSize: number;
  /** How long opening a database connection, or waiting for a free one, may take before the request is 503. */
  dbConnectTimeoutMs: number;
  /** Server-side limit of one SQL statement (migrations have none). */
  dbStatementTimeoutMs: number;
  /** How long a stopping service waits for requests in flight before it exits anyway. */
  shutdownTimeoutMs: number;
  /** Memory for answers of the read cache (src/http/read-cache.ts), in bytes; 0 turns it off. */
  readCacheBytes: number;
  /** Days an event acknowledged by every stream that holds it is kept (src/db/partitions.ts). */
  eventRetentionDays: number;
  /** Proxies whose X-Forwarded-For is believed: a hop count or a list of addresses/CIDRs; false trusts none. */
  trustProxy: number | string | false;
  /** Where uploaded and generated document files are kept (the database holds only their metadata). */
  documentsDir: string;
  /** Largest document file accepted by an upload (413 above). */
  documentMaxBytes: number;
  /** Seals secrets kept in the database (WMS_SECRET_KEY, 32+ characters); null: a key kept in the database itself. */
  secretKey: string | null;
  /** The bearer token GET /metrics requires; unset, there is no /metrics. */
  metricsToken: string | null;
}

export class ConfigError extends Error {}

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) throw new ConfigError(`${name} must be an integer >= ${min}, got "${raw}"`);
  return value;
}

function text(env: NodeJS.ProcessEnv, name: string): string | null {
  const raw = env[name]?.trim();
  return raw ? raw : null;
}

function postgresUrl(env: NodeJS.ProcessEnv, name: string): string | null {
  const url = text(env, name);
  if (url && !/^postgres(ql)?:\/\//.test(url)) throw new ConfigError(`${name} must start with postgres:// or postgresql://`);
  return url;
}

function oneOf<T extends string>(env: NodeJS.ProcessEnv, name: string, values: readonly T[], fallback: T): T {
  const raw = text(env, name) ?? fallback;
  if (!values.includes(raw as T)) throw new ConfigError(`${name} must be one of ${values.join(', ')}, got "${raw}"`);
  return raw as T;
}

function flag(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = text(env, name);
  if (raw === null) return fallback;
  if (raw !== '0' && raw !== '1') throw new ConfigError(`${name} must be 0 or 1, got "${raw}"`);
  return raw === '1';
}

// Never "trust everyone": any client could then pick its own address and escape the per-address limit.
function trustedProxies(value: string | null): number | string | false {
  if (!value) return false;
  if (/^\d+$/.test(value)) return Number(value);
  if (!/^[0-9A-Fa-f:.\/]+(,\s*[0-9A-Fa-f:.\/]+)*$/.test(value)) {
    throw new ConfigError('WMS_TRUST_PROXY must be a hop count or a comma-separated list of proxy addresses or CIDRs');
  }
  return value;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const dataDir = text(env, 'WMS_DATA_DIR') ?? './data';
  const host = text(env, 'HOST') ?? '127.0.0.1';
  const port = integer(env, 'PORT', 8080, 0);
  const databaseUrl = postgresUrl(env, 'DATABASE_URL');
  const databaseReadUrl = postgresUrl(env, 'DATABASE_READ_URL');
  if (databaseReadUrl && !databaseUrl) throw new ConfigError('DATABASE_READ_URL needs DATABASE_URL (the primary every write goes to)');
  const dbPooler = oneOf(env, 'WMS_DB_POOLER', ['none', 'transaction'] as const, 'none');
  const databaseListenUrl = postgresUrl(env, 'DATABASE_LISTEN_URL') ?? (dbPooler === 'transaction' ? null : databaseUrl);
  const bootstrapAdminKey = text(env, 'WMS_BOOTSTRAP_ADMIN_KEY');
  if (bootstrapAdminKey && !/^jwc_[0-9A-Za-z]{27,}$/.test(bootstrapAdminKey)) {
    throw new ConfigError('WMS_BOOTSTRAP_ADMIN_KEY must be jwc_ followed by at least 27 base62 characters (160 bits)');
  }
  const secretKey = text(env, 'WMS_SECRET_KEY');
  if (secretKey && secretKey.length < 32) throw new ConfigError('WMS_SECRET_KEY must be at least 32 characters (use: openssl rand -base64 32)');
  return {
    host,
    port,
    databaseUrl,
    databaseReadUrl,
    databaseListenUrl,
    dbPooler,
    dbPreparedStatements: flag(env, 'WMS_DB_PREPARED_STATEMENTS', dbPooler !== 'transaction'),
    dataDir,
    bootstrapAdminKey,
    publicUrl: (text(env, 'WMS_PUBLIC_URL') ?? `http://${host.includes(':') ? `[${host}]` : host}:${port}`).replace(/\/+$/, ''),
    redisUrl: text(env, 'REDIS_URL'),
    rateLimitPerKey: integer(env, 'WMS_RATE_LIMIT_PER_KEY', 1200, 1),
    rateLimitFailedPerAddress: integer(env, 'WMS_RATE_LIMIT_FAILED_PER_ADDRESS', 20, 1),
    rateLimitWindowMs: integer(env, 'WMS_RATE_LIMIT_WINDOW_MS', 60_000, 1000),
    bodyLimitBytes: integer(env, 'WMS_BODY_LIMIT_BYTES', 1_048_576, 1024),
    logLevel: text(env, 'LOG_LEVEL') ?? 'info',
    dbPoolSize: integer(env, 'WMS_DB_POOL_SIZE', 10, 1),
    dbConnectTimeoutMs: integer(env, 'WMS_DB_CONNECT_TIMEOUT_MS', 5000, 100),
    dbStatementTimeoutMs: integer(env, 'WMS_DB_STATEMENT_TIMEOUT_MS', 30_000, 100),
    shutdownTimeoutMs: integer(env, 'WMS_SHUTDOWN_TIMEOUT_MS', 10_000, 0),
    readCacheBytes: integer(env, 'WMS_READ_CACHE_MB', 64, 0) * 1_048_576,
    eventRetentionDays: integer(env, 'WMS_EVENT_RETENTION_DAYS', 90, 1),
    trustProxy: trustedProxies(text(env, 'WMS_TRUST_PROXY')),
    documentsDir: text(env, 'WMS_DOCUMENTS_DIR') ?? join(dataDir, 'documents'),
    documentMaxBytes: integer(env, 'WMS_DOCUMENT_MAX_BYTES', 10 * 1_048_576, 1),
    secretKey,
    metricsToken: text(env, 'WMS_METRICS_TOKEN'),
  };
}
