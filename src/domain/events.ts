// Events for partners and integrators go into the outbox in the transaction of the change they report; delivery
// (polling and webhooks) reads the outbox afterwards, so a rolled-back change never announces itself.
import { sql, type RawBuilder, type Transaction } from 'kysely';
import { historyInsert, type Author, type HistoryEntry } from './history.ts';
import type { DB } from '../db/schema.ts';

export interface OutboxEvent {
  id: string;
  kind: string;
  occurred_at: string;
  manufacturer_id: string | null;
  data: unknown;
}

/** Every kind of event the service writes; docs/events.md describes each one's data. */
export const EVENT_KINDS = [
  'order.created', 'order.released', 'order.priority_changed', 'order.cancelled', 'order.shipped', 'order.billed', 'order.closed',
  'order.direct_ship_notification_requested', 'order.direct_ship_notified', 'order.direct_shipped',
  'pick_batch.started', 'pick_batch.packed', 'pick_batch.shipped', 'shipment.tracking_updated',
  'exception.opened', 'exception.reviewed', 'receiving.posted', 'receiving.voided',
  'inventory.adjusted', 'inventory.relocated', 'cycle_count.completed', 'webhook.ping',
] as const;
export type EventKind = (typeof EVENT_KINDS)[number];

/** The poll stream's tenant of keys without a partner scope: they see every event. */
export const WAREHOUSE_TENANT = 'warehouse';

/** The event statement's answer unless the caller asks for another: the event as written. */
const EVENT = sql<OutboxEvent>`select id, kind, occurred_at, manufacturer_id, data from event`;

/**
 * Writes the event, puts it in the poll stream's inbox of the warehouse and, when it belongs to a partner, of that
 * partner, and queues a delivery for every active webhook subscription of those tenants that names its kind: one
 * statement, in the caller's transaction, so no event is delivered that did not happen and none is missed.
 */
export async function emit(tx: Transaction<DB>, kind: EventKind, data: Record<string, unknown>, manufacturerId: string | null = null): Promise<OutboxEvent> {
  return (await writeEvent(tx, kind, data, manufacturerId, null, EVENT))[0]!;
}

/**
 * The audit row of a change and the event announcing it, in one statement: one round trip instead of two on the
 * busiest paths (the floor's). The event belongs to the history entry's partner. `more` writes other rows in the same
 * statement: more audit entries, written before or after the change's own, and `writes`, WITH clauses (`name as
 * (insert ...)`, comma separated) of the change itself. They all see the database as the statement began, so none may
 * depend on another's effect (a clause may read another's RETURNING by its name).
 */
export async function recordAndEmit(
  tx: Transaction<DB>, author: Author, entry: HistoryEntry, kind: EventKind, data: Record<string, unknown>, more: AlsoWritten = {},
): Promise<OutboxEvent> {
  return (await recordAndEmitAnswering(tx, author, entry, kind, data, { ...more, answer: EVENT }))[0]!;
}

/** What recordAndEmit writes besides the change's own audit row and event. */
interface AlsoWritten {
  before?: HistoryEntry[];
  after?: HistoryEntry[];
  writes?: RawBuilder<unknown>;
}

/**
 * recordAndEmit whose statement answers with the rows of `answer`, a select over the names of `writes`, instead of
 * the event: what the writes made comes back without a read of its own (order entry's order and lines).
 */
export function recordAndEmitAnswering<Row>(
  tx: Transaction<DB>, author: Author, entry: HistoryEntry, kind: EventKind, data: Record<string, unknown>,
  more: AlsoWritten & { answer: RawBuilder<Row> },
): Promise<Row[]> {
  const history = sql`also as (${historyInsert(author, [...(more.before ?? []), entry, ...(more.after ?? [])])})`;
  return writeEvent(tx, kind, data, entry.manufacturerId ?? null, more.writes ? sql`${more.writes}, ${history}` : history, more.answer);
}

async function writeEvent<Row>(
  tx: Transaction<DB>, kind: EventKind, data: Record<string, unknown>, manufacturerId: string | null, writes: RawBuilder<unknown> | null,
  answer: RawBuilder<Row>,
): Promise<Row[]> {
  const written = await sql<Row>`
    with ${writes ? sql`${writes}, ` : sql``}event as (
      insert into outbox_events (kind, manufacturer_id, data) values (${kind}, ${manufacturerId}, ${JSON.stringify(data)})
      returning id, seq, kind, occurred_at, manufacturer_id, data
    ), inbox as (
      insert into event_inbox (tenant, event_seq, kind)
      select ${WAREHOUSE_TENANT}, seq, kind from event
      union all select manufacturer_id::text, seq, kind from event where manufacturer_id is not null
    ), deliveries as (
      insert into webhook_deliveries (subscription_id, event_seq, event_id, event_kind, order_id)
      select s.id, e.seq, e.id, e.kind, (e.data ->> 'order_id')::uuid from event e
      join webhook_subscriptions s on s.is_active and (s.manufacturer_id is null or s.manufacturer_id = e.manufacturer_id)
        and (s.event_kinds @> array['*'] or s.event_kinds @> array[e.kind])
    )
    ${answer}`.execute(tx);
  return written.rows;
}
