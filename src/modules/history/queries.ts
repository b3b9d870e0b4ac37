// The audit trail as a reader sees it: one record's rows, newest first, with who did each and what changed.
import { isDeepStrictEqual } from 'node:util';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { forbidden, notFound } from '../../domain/errors.ts';
import { canAdminister, hasPermission, inPartnerScope, type Actor } from '../../http/auth.ts';
import { onePage, type Page } from '../../http/pagination.ts';

type Values = Record<string, unknown> | null;

const asObject = (value: unknown): Values => (value && typeof value === 'object' && !Array.isArray(value) ? value as Record<string, unknown> : null);

/** The top-level fields whose values differ between before and after. */
export function changesBetween(before: unknown, after: unknown): Record<string, { before: unknown; after: unknown }> {
  const from = asObject(before) ?? {};
  const to = asObject(after) ?? {};
  const changes: Record<string, { before: unknown; after: unknown }> = {};
  for (const field of new Set([...Object.keys(from), ...Object.keys(to)])) {
    if (!isDeepStrictEqual(from[field], to[field])) changes[field] = { before: from[field] ?? null, after: to[field] ?? null };
  }
  return changes;
}

// The trails of users, keys and webhook endpoints are read by who administers them, not by every history reader.
const GATES: Record<string, { may: (actor: Actor) => boolean; who: string }> = {
  user: { may: canAdminister, who: 'administrators' },
  api_key: { may: canAdminister, who: 'administrators' },
  carrier_webhook: { may: canAdminister, who: 'administrators' },
  webhook_subscription: { may: (actor) => hasPermission(actor, 'webhooks.manage'), who: 'keys with webhooks.manage' },
};

/**
 * A record's audit rows. A partner-scoped key sees the rows of its partner only, and a record with none of those is
 * 404 for it, whether the record is missing or another partner's.
 */
export async function historyOf(db: Kysely<DB>, actor: Actor, entityType: string, entityId: string, page: Page) {
  const gate = GATES[entityType];
  if (gate && !gate.may(actor)) throw forbidden(`the history of ${entityType.replace(/_/g, ' ')} records is for ${gate.who}`);
  const query = inPartnerScope(db.selectFrom('history as h').where('h.entity_type', '=', entityType).where('h.entity_id', '=', entityId), actor, 'h.manufacturer_id');
  const [rows, total] = await Promise.all([
    query.leftJoin('users as u', 'u.id', 'h.user_id')
      .select(['h.id', 'h.occurred_at', 'h.entity_type', 'h.entity_id', 'h.action', 'h.manufacturer_id', 'h.user_id', 'u.name as user_name', 'h.api_key_id', 'h.before', 'h.after'])
      .orderBy('h.occurred_at', 'desc').orderBy('h.id', 'desc').$call(onePage(page)).execute(),
    query.select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow(),
  ]);
  const count = Number(total.count);
  if (count === 0 && actor.manufacturerId) throw notFound(entityType.replace(/_/g, ' '));
  return {
    total: count,
    rows: rows.map(({ user_id, user_name, ...row }) => ({
      ...row,
      user: user_id ? { id: user_id, name: user_name ?? '' } : null,
      changes: changesBetween(row.before, row.after),
    })),
  };
}
