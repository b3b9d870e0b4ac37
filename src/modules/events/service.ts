// The poll stream: what a tenant has not acknowledged yet, oldest first, and acknowledging it. A partner-scoped key's
// tenant is its partner (it sees that partner's events); a key without a scope is the warehouse's (every event).
import { sql, type Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { countedTotalExpression, totalOfPage } from '../../db/list-counts.ts';
import { inTransaction } from '../../db/transaction.ts';
import { invalidRequest } from '../../domain/errors.ts';
import { WAREHOUSE_TENANT, type EventKind } from '../../domain/events.ts';
import { inPartnerScope, type Actor } from '../../http/auth.ts';
import { onePage, type Page } from '../../http/pagination.ts';

const tenantOf = (actor: Actor) => actor.manufacturerId ?? WAREHOUSE_TENANT;

/**
 * The tenant's unacknowledged events, oldest first, with their exact total, in one statement: the page of the inbox
 * first (its index gives it in order), then its events, so the join never sees more than the page; the total is the
 * stream's kept count (list_counts), not a count of every event it holds. A page past the last has no row to carry the
 * total: read on its own.
 */
export async function pollEvents(db: Kysely<DB>, actor: Actor, filter: { kind?: EventKind }, page: Page) {
  let inbox = db.selectFrom('event_inbox as i').where('i.tenant', '=', tenantOf(actor));
  if (filter.kind) inbox = inbox.where('i.kind', '=', filter.kind);
  const total = countedTotalExpression({
    list: 'events', manufacturerId: sql<string>`event_stream_key(${tenantOf(actor)})`, statuses: filter.kind ? [filter.kind] : undefined,
  });
  const pageOfInbox = inbox.select('i.event_seq').orderBy('i.event_seq').$call(onePage(page));
  const rows = await db.selectFrom(pageOfInbox.as('p')).innerJoin('outbox_events as e', 'e.seq', 'p.event_seq')
    .select(['e.id', 'e.kind', 'e.occurred_at', 'e.manufacturer_id', 'e.data'])
    .select(sql<number>`${total}`.as('total_count'))
    .orderBy('p.event_seq').execute();
  return {
    rows: rows.map(({ total_count: _, ...row }) => ({ ...row, kind: row.kind as EventKind, data: row.data as Record<string, unknown> })),
    total: await totalOfPage(db, rows, page, total),
  };
}

/**
 * Takes the events out of the tenant's stream. Acknowledging an event twice changes nothing; an id that names no event
 * the tenant sees (another partner's looks the same as none) is 422 with the ids, and then nothing is acknowledged.
 */
export async function acknowledgeEvents(db: Kysely<DB>, actor: Actor, ids: string[]): Promise<void> {
  const wanted = [...new Set(ids)];
  await inTransaction(db, async (tx) => {
    const events = await inPartnerScope(tx.selectFrom('outbox_events').select(['id', 'seq']).where('id', '=', sql<string>`any(${wanted}::uuid[])`), actor, 'manufacturer_id')
      .execute();
    if (events.length !== wanted.length) {
      const found = new Set(events.map((event) => event.id));
      const unknown = wanted.filter((id) => !found.has(id));
      throw invalidRequest(`${unknown.length} id(s) name no event of this stream`, { ids: unknown });
    }
    await tx.deleteFrom('event_inbox').where('tenant', '=', tenantOf(actor))
      .where('event_seq', '=', sql<number>`any(${events.map((event) => event.seq)}::bigint[])`).execute();
  });
}
