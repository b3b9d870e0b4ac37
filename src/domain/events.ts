// Events for partners and integrators go into the outbox in the transaction of the change they report; delivery
// (polling and webhooks) reads the outbox afterwards, so a rolled-back change never announces itself.
import type { Transaction } from 'kysely';
import type { DB } from '../db/schema.ts';

export interface OutboxEvent {
  id: string;
  kind: string;
  occurred_at: Date;
  manufacturer_id: string | null;
  data: unknown;
}

export async function emit(
  tx: Transaction<DB>,
  kind: string,
  data: Record<string, unknown>,
  manufacturerId: string | null = null,
): Promise<OutboxEvent> {
  return tx
    .insertInto('outbox_events')
    .values({ kind, manufacturer_id: manufacturerId, data: JSON.stringify(data) })
    .returning(['id', 'kind', 'occurred_at', 'manufacturer_id', 'data'])
    .executeTakeFirstOrThrow();
}
