// Start: config -> database -> app -> listen, then migrations and the first admin as soon as the database answers;
// stops on SIGINT/SIGTERM within WMS_SHUTDOWN_TIMEOUT_MS.
import { setTimeout as sleep } from 'node:timers/promises';
import { pino, type Logger } from 'pino';
import { buildApp } from './app.ts';
import { ensureFirstAdmin } from './bootstrap.ts';
import { ConfigError, loadConfig, type Config } from './config.ts';
import { isDatabaseUnavailable } from './db/availability.ts';
import { connect, type Database } from './db/connect.ts';
import { foldListCounts } from './db/list-counts.ts';
import { migrate } from './db/migrate.ts';
import { maintainPartitions } from './db/partitions.ts';
import { advanceShippedYear } from './domain/shipped-year.ts';
import { pruneIdempotencyKeys } from './http/idempotency.ts';
import { createMetrics } from './http/metrics.ts';
import { memoryCounterStore, redisCounterStore } from './http/rate-limit.ts';
import { DELIVERY_LOG_DAYS, pruneDeliveryLog, startDeliveryWorker, type DeliveryWorker } from './workers/webhook-delivery.ts';

const RETRY_FIRST_MS = 250;
const RETRY_MAX_MS = 5000;

/** Migrations on a connection of their own, without the statement timeout of requests (a migration may take long). */
async function migrateDatabase(config: Config, database: Database): Promise<string[]> {
  if (database.kind === 'pglite') return migrate(database.db);
  const migrator = await connect(config, { poolSize: 1, statementTimeoutMs: 0, readUrl: null });
  try {
    return await migrate(migrator.db);
  } finally {
    await migrator.close();
  }
}

/**
 * Migrations and the first admin, retried with backoff while the database cannot be reached, so that a service started
 * before its database comes up by itself instead of crash-looping. Any other failure (a broken migration) ends it.
 */
async function prepareDatabase(config: Config, database: Database, log: Logger, stopped: () => boolean): Promise<boolean> {
  for (let attempt = 0; !stopped(); attempt++) {
    try {
      const applied = await migrateDatabase(config, database);
      const first = await ensureFirstAdmin(database.db, config.bootstrapAdminKey);
      log.info({ database: database.kind, applied }, 'database ready');
      if (first.generatedKey) {
        // The only time this key is shown: stdout, not the log, so it is not kept with log lines.
        process.stdout.write(`\nFirst start: created user "admin" (system_admin). Its API key, shown once:\n\n  ${first.generatedKey}\n\n`);
      } else if (first.created) {
        log.info('first start: created user "admin" owning WMS_BOOTSTRAP_ADMIN_KEY');
      }
      return true;
    } catch (error) {
      if (!isDatabaseUnavailable(error)) throw error;
      const waitMs = Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** attempt);
      log.warn({ err: error, retryInMs: waitMs }, 'database unreachable at start; requests get 503 until it answers');
      await sleep(waitMs);
    }
  }
  return false;
}

/** Hourly: expired idempotency keys and delivery log rows go, the coming months' partitions are made, old months dropped, the ledger analyzed once a day. */
function housekeeping(config: Config, database: Database, log: Logger): void {
  pruneIdempotencyKeys(database.db).catch((err) => log.warn({ err }, 'idempotency prune failed'));
  pruneDeliveryLog(database.db).catch((err) => log.warn({ err }, 'webhook delivery log prune failed'));
  maintainPartitions(database.db, { eventDays: config.eventRetentionDays, deliveryLogDays: DELIVERY_LOG_DAYS })
    .then((result) => {
      if (result.created.length || result.dropped.length || result.eventsDeleted || result.ledgerAnalyzed) log.info(result, 'monthly partitions maintained');
    })
    .catch((err) => log.warn({ err }, 'partition maintenance failed'));
}

// The shipped year moves on when the day turns (UTC); looked at this often, the item list reads velocity from the
// ledger for at most this long after midnight (domain/shipped-year.ts). The look is one row.
const ADVANCE_SHIPPED_YEAR_MS = 60_000;

// The list totals gain rows with every change (migration 0017); folded this often, a total reads a few rows per key.
const FOLD_LIST_COUNTS_MS = 2000;

/** Folds the list totals every FOLD_LIST_COUNTS_MS, one fold at a time, until stopped. */
function startFoldingListCounts(database: Database, log: Logger): () => void {
  let stopped = false;
  let timer: NodeJS.Timeout;
  const next = () => { if (!stopped) timer = setTimeout(fold, FOLD_LIST_COUNTS_MS).unref(); };
  const fold = () => void foldListCounts(database.db).catch((err) => log.warn({ err }, 'folding the list totals failed')).finally(next);
  next();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}

async function main() {
  const config = loadConfig();
  const log = pino({ level: config.logLevel });
  const database = await connect(config, {
    onReplicaDown: (err) => log.warn({ err }, 'the read replica gives no connection: lists, search, reports and the event poll read the primary for 5 s'),
  });
  const counters = config.redisUrl ? redisCounterStore(config.redisUrl, { log }) : memoryCounterStore();
  let ready = false;
  const metrics = config.metricsToken ? createMetrics() : undefined;
  const app = await buildApp({
    config, db: database.db, reads: database.reads, counters, listen: database.listen, ping: database.ping, loggerInstance: log, databaseReady: () => ready,
    metrics, poolStats: database.poolStats,
  });

  const pruner = setInterval(() => housekeeping(config, database, log), 3_600_000);
  pruner.unref();
  let yearMover: NodeJS.Timeout | undefined;
  let deliveries: DeliveryWorker | null = null;
  let stopFolding = () => {};

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal, deadlineMs: config.shutdownTimeoutMs }, 'stopping');
    // Requests in flight get until the deadline; a hung dependency must not keep the process alive past it. Once they
    // are done, only connections are left to close, and giving up on a frozen server's goodbye is a clean stop.
    let requestsDone = false;
    setTimeout(() => {
      log.error(requestsDone ? 'shutdown deadline passed while closing connections; exiting' : 'shutdown deadline passed with requests still open; exiting');
      process.exit(requestsDone ? 0 : 1);
    }, config.shutdownTimeoutMs);
    clearInterval(pruner);
    clearInterval(yearMover);
    stopFolding();
    // Webhook sends in flight finish, or are given back for another instance, within half the deadline.
    await Promise.all([app.close(), deliveries?.stop(config.shutdownTimeoutMs / 2)]);
    requestsDone = true;
    await counters.close();
    await database.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));

  await app.listen({ host: config.host, port: config.port });
  ready = await prepareDatabase(config, database, log, () => stopping);
  if (ready && !stopping) {
    housekeeping(config, database, log);
    const advanceYear = () => void advanceShippedYear(database.db).catch((err) => log.warn({ err }, 'moving the shipped year on failed'));
    advanceYear();
    yearMover = setInterval(advanceYear, ADVANCE_SHIPPED_YEAR_MS).unref();
    deliveries = startDeliveryWorker(database.db, config, log, { metrics });
    stopFolding = startFoldingListCounts(database, log);
  }
}

main().catch((error) => {
  console.error(error instanceof ConfigError ? `configuration error: ${error.message}` : error);
  process.exit(1);
});
