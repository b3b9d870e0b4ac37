// Events for partners and integrators go into the outbox in the transaction of the change they report; delivery
// (polling and webhooks) reads the outbox afterwards, so a rolled-back change never announces itself.
import { sql, type Transaction } from 'kysely';
import type { DB } from '../db/schema.ts';

export interface OutboxEvent {
  id: string;
  kind: string;
  occurred_at: Date;
  manufacturer_id: string | null;
  data: unknown;
}

/** Every kind of event the service writes; docs/events.md describes each one's data. */
export const EVENT_KINDS = [
  'order.created', 'order.released', 'order.priority_changed', 'order.cancelled', 'order.shipped', 'order.billed', 'order.closed',
  'order.direct_ship_notification_requested', 'order.direct_ship_notified', 'order.direct_shipped',
  'pick_batch.started', 'pick_batch.packed', 'pick_batch.shipped', 'shipment.tracking_updated',
  'exception.opened', 'exception.reviewed', 'receiving.posted', 'receiving.voided',
  'inventory.adjusted', 'inventory.relocated', 'cycle_count.completed',
] as const;
export type EventKind = (typeof EVENT_KINDS)[number];

/** The poll stream's tenant of keys without a partner scope: they see every event. */
export const WAREHOUSE_TENANT = 'warehouse';

/**
 * Writes the event and puts it in the poll stream's inbox of the warehouse and, when it belongs to a partner, of that
 * partner: one statement, in the caller's transaction.
 */
export async function emit(
  tx: Transaction<DB>,
  kind: EventKind,
  data: Record<string, unknown>,
  manufacturerId: string | null = null,
): Promise<OutboxEvent> {
  const written = await sql<OutboxEvent>`
    with event as (
      insert into outbox_events (kind, manufacturer_id, data) values (${kind}, ${manufacturerId}, ${JSON.stringify(data)})
      returning id, seq, kind, occurred_at, manufacturer_id, data
    ), inbox as (
      insert into event_inbox (tenant, event_seq, kind)
      select ${WAREHOUSE_TENANT}, seq, kind from event
      union all select manufacturer_id::text, seq, kind from event where manufacturer_id is not null
    )
    select id, kind, occurred_at, manufacturer_id, data from event`.execute(tx);
  return written.rows[0]!;
}
