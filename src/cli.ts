// npm run wms -- <command>: operator commands against the configured database (DATABASE_URL or WMS_DATA_DIR).
import { createAdminKey } from './bootstrap.ts';
import { loadConfig } from './config.ts';
import { connect } from './db/connect.ts';
import { isMigrated, migrate } from './db/migrate.ts';
import { refuseWarehouseData, seedDemo, summaryText } from './demo/seed-demo.ts';
import { directoryStore } from './modules/documents/storage.ts';

const USAGE = `usage: npm run wms -- <command>
  migrate            apply pending database migrations
  create-admin-key   print a new full-scope API key of the system administrator (shown once)
  seed-demo          fill an empty database with a small demo warehouse and print an administrator key`;

const COMMANDS = ['migrate', 'create-admin-key', 'seed-demo'];

async function run(command: string | undefined): Promise<number> {
  if (!command || !COMMANDS.includes(command)) {
    console.error(USAGE);
    return 2;
  }
  const config = loadConfig();
  // Operator commands may run long (a migration on a large database): no statement timeout.
  const database = await connect(config, { statementTimeoutMs: 0 });
  try {
    // A database with data is refused before its migrations run too: "nothing was changed" must hold for an older schema.
    if (command === 'seed-demo' && await isMigrated(database.db)) await refuseWarehouseData(database.db);
    const applied = await migrate(database.db);
    if (command === 'migrate') {
      console.log(applied.length ? `applied ${applied.join(', ')}` : 'database is up to date');
    } else if (command === 'create-admin-key') {
      console.log(await createAdminKey(database.db));
    } else {
      // A database that holds data is refused (DatabaseNotEmpty): its message goes to stderr below, exit code 1.
      console.log(summaryText(await seedDemo(database.db, directoryStore(config.documentsDir)), config.publicUrl));
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
