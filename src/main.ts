// Start: config -> database -> migrate -> first admin -> app -> listen; stops cleanly on SIGINT/SIGTERM.
import { buildApp } from './app.ts';
import { ensureFirstAdmin } from './bootstrap.ts';
import { ConfigError, loadConfig } from './config.ts';
import { connect } from './db/connect.ts';
import { migrate } from './db/migrate.ts';
import { pruneIdempotencyKeys } from './http/idempotency.ts';
import { memoryCounterStore, redisCounterStore } from './http/rate-limit.ts';

async function main() {
  const config = loadConfig();
  const database = await connect(config);
  const applied = await migrate(database.db);
  const counters = config.redisUrl ? redisCounterStore(config.redisUrl) : memoryCounterStore();
  const app = await buildApp({ config, db: database.db, counters, listen: database.listen });
  app.log.info({ database: database.kind, applied }, 'database ready');

  const first = await ensureFirstAdmin(database.db, config.bootstrapAdminKey);
  if (first.generatedKey) {
    // The only time this key is shown: stdout, not the log, so it is not kept with log lines.
    process.stdout.write(`\nFirst start: created user "admin" (system_admin). Its API key, shown once:\n\n  ${first.generatedKey}\n\n`);
  } else if (first.created) {
    app.log.info('first start: created user "admin" owning WMS_BOOTSTRAP_ADMIN_KEY');
  }

  const pruner = setInterval(() => pruneIdempotencyKeys(database.db).catch((err) => app.log.warn({ err }, 'idempotency prune failed')), 3_600_000);
  pruner.unref();

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.log.info({ signal }, 'stopping');
    clearInterval(pruner);
    await app.close();
    await counters.close();
    await database.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));

  await app.listen({ host: config.host, port: config.port });
}

main().catch((error) => {
  console.error(error instanceof ConfigError ? `configuration error: ${error.message}` : error);
  process.exit(1);
});
