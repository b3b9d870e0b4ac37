// Applies the numbered SQL files of migrations/ that the database has not seen, in order, in one transaction held
// under an advisory lock: instances starting together queue on the lock and the later ones find nothing to do.
import { readdirSync, readFileSync } from 'node:fs';
import { sql, type Kysely } from 'kysely';
import { ADVISORY_LOCKS } from './advisory-locks.ts';
import type { DB } from './schema.ts';

const MIGRATIONS_DIR = new URL('./migrations/', import.meta.url);

export interface Migration {
  version: string;
  sql: string;
}

export function listMigrations(): Migration[] {
  return readdirSync(MIGRATIONS_DIR)
    .filter((name) => /^\d{4}_[a-z0-9_]+\.sql$/.test(name))
    .sort()
    .map((name) => ({ version: name.replace(/\.sql$/, ''), sql: readFileSync(new URL(name, MIGRATIONS_DIR), 'utf8') }));
}

/** Whether the migrations have run here at least once (the business tables exist). */
export async function isMigrated(db: Kysely<DB>): Promise<boolean> {
  const { rows } = await sql<{ found: string | null }>`select to_regclass('schema_migrations')::text as found`.execute(db);
  return rows[0]!.found !== null;
}

// A migration that locks a table requests of instances still running are writing can deadlock with one of them (it
// holds list_counts, say, and waits for the table, while the request holds the table and waits for list_counts).
// PostgreSQL then aborts one side; when that is the migration, the whole batch runs again.
const DEADLOCK = '40P01';
const MIGRATION_TRIES = 5;

/** Applies the pending migrations (all of migrations/ unless given); returns the versions it applied. */
export async function migrate(db: Kysely<DB>, migrations = listMigrations()): Promise<string[]> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await migrateOnce(db, migrations);
    } catch (error) {
      if ((error as { code?: string }).code !== DEADLOCK || attempt === MIGRATION_TRIES) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100 * attempt));
    }
  }
}

function migrateOnce(db: Kysely<DB>, migrations: Migration[]): Promise<string[]> {
  return db.transaction().execute(async (tx) => {
    await sql`select pg_advisory_xact_lock(${ADVISORY_LOCKS.migrate})`.execute(tx);
    // A migration may take long; behind a pooler the role's statement timeout would otherwise apply (docs/operations.md).
    await sql`set local statement_timeout = 0`.execute(tx);
    await sql`create table if not exists schema_migrations (
      version text primary key,
      applied_at timestamptz not null default now()
    )`.execute(tx);
    const applied = new Set((await tx.selectFrom('schema_migrations').select('version').execute()).map((r) => r.version));
    const pending = migrations.filter((m) => !applied.has(m.version));
    for (const migration of pending) {
      await sql.raw(migration.sql).execute(tx);
      await tx.insertInto('schema_migrations').values({ version: migration.version }).execute();
    }
    return pending.map((m) => m.version);
  });
}
