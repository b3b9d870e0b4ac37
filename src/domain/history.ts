// The audit trail: who (user and key) did what to which record, with the record before and after.
import type { Transaction } from 'kysely';
import type { DB } from '../db/schema.ts';

export interface Author {
  userId: string | null;
  apiKeyId: string | null;
}

export interface HistoryEntry {
  entityType: string;
  entityId: string;
  action: string;
  manufacturerId?: string | null;
  before?: unknown;
  after?: unknown;
}

/** Takes the writer's transaction, so the audit row exists exactly when the change does. */
export async function recordHistory(tx: Transaction<DB>, author: Author, entry: HistoryEntry): Promise<void> {
  await tx
    .insertInto('history')
    .values({
      user_id: author.userId,
      api_key_id: author.apiKeyId,
      entity_type: entry.entityType,
      entity_id: entry.entityId,
      action: entry.action,
      manufacturer_id: entry.manufacturerId ?? null,
      before: entry.before === undefined ? null : JSON.stringify(entry.before),
      after: entry.after === undefined ? null : JSON.stringify(entry.after),
    })
    .execute();
}
