// npm run wms -- <command>: operator commands against the configured database (DATABASE_URL or WMS_DATA_DIR).
import { createAdminKey } from './bootstrap.ts';
import { loadConfig } from './config.ts';
import { connect } from './db/connect.ts';
import { migrate } from './db/migrate.ts';

const USAGE = `usage: npm run wms -- <command>
  migrate            apply pending database migrations
  create-admin-key   print a new full-scope API key of the system administrator (shown once)`;

async function run(command: string | undefined): Promise<number> {
  if (command !== 'migrate' && command !== 'create-admin-key') {
    console.error(USAGE);
    return 2;
  }
  // Operator commands may run long (a migration on a large database): no statement timeout.
  const database = await connect(loadConfig(), { statementTimeoutMs: 0 });
  try {
    const applied = await migrate(database.db);
    if (command === 'migrate') {
      console.log(applied.length ? `applied ${applied.join(', ')}` : 'database is up to date');
    } else {
      console.log(await createAdminKey(database.db));
    }
    return 0;
  } finally {
    await database.close();
  }
}

run(process.argv[2]).then(
  (code) => process.exit(code),
  (error) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  },
);
