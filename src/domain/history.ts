// The audit trail: who (user and key) did what to which record, with the record before and after.
import { sql, type RawBuilder, type Transaction } from 'kysely';
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
export function recordHistory(tx: Transaction<DB>, author: Author, entry: HistoryEntry): Promise<void> {
  return recordHistories(tx, author, [entry]);
}

/** Many audit rows in one statement (one JSON parameter, so the statement is the same for any number of rows). */
export async function recordHistories(tx: Transaction<DB>, author: Author, entries: HistoryEntry[]): Promise<void> {
  if (entries.length === 0) return;
  await historyInsert(author, entries).execute(tx);
}

/** The statement that writes audit rows, for a caller that runs it inside a statement of its own (a WITH clause). */
export function historyInsert(author: Author, entries: HistoryEntry[]): RawBuilder<unknown> {
  const rows = entries.map((entry) => ({
    user_id: author.userId,
    api_key_id: author.apiKeyId,
    entity_type: entry.entityType,
    entity_id: entry.entityId,
    action: entry.action,
    manufacturer_id: entry.manufacturerId ?? null,
    before: entry.before ?? null,
    after: entry.after ?? null,
  }));
  return sql`insert into history (user_id, api_key_id, entity_type, entity_id, action, manufacturer_id, before, after)
    select user_id, api_key_id, entity_type, entity_id, action, manufacturer_id, before, after
    from json_populate_recordset(null::history, ${JSON.stringify(rows)})`;
}
