// The one way a service opens a transaction: a serialization failure or deadlock is retried once, never a bare 500.
import type { Kysely, Transaction } from 'kysely';
import type { DB } from './schema.ts';

const RETRYABLE = new Set(['40001', '40P01']);

export async function inTransaction<T>(db: Kysely<DB>, work: (tx: Transaction<DB>) => Promise<T>): Promise<T> {
  try {
    return await db.transaction().execute(work);
  } catch (error) {
    if (!RETRYABLE.has((error as { code?: string }).code ?? '')) throw error;
    return db.transaction().execute(work);
  }
}

/**
 * A read-only transaction at repeatable read: every statement of `read` sees the database as of one moment, whatever
 * commits meanwhile (a report's rows and totals; a list whose filter reads a kept state before its page).
 */
export function inReadSnapshot<T>(db: Kysely<DB>, read: (tx: Transaction<DB>) => Promise<T>): Promise<T> {
  return db.transaction().setIsolationLevel('repeatable read').setAccessMode('read only').execute(read);
}
