// Outbound webhook subscriptions of a tenant (the warehouse, or one supply partner for its scoped keys), their signing
// secrets (sealed; shown on create and rotate only), a ping, and the delivery log with its retries. Deliveries are
// queued by emit() and sent by the workers (src/workers/webhook-delivery.ts).
import { sql, type Kysely, type Selectable, type SelectQueryBuilder } from 'kysely';
import type { Config } from '../../config.ts';
import type { DeliveryStatus } from '../../db/column-types.ts';
import type { DB, WebhookDeliveryAttemptsTable, WebhookSubscriptionsTable } from '../../db/schema.ts';
import { countedTotalExpression, totalOfPage } from '../../db/list-counts.ts';
import { secretKeyOf } from '../../db/secret-key.ts';
import { inTransaction } from '../../db/transaction.ts';
import { isoTimeOfJson } from '../../db/timestamps.ts';
import { forbidden, invalidRequest, invalidStatus, notFound } from '../../domain/errors.ts';
import { recordHistory } from '../../domain/history.ts';
import { randomBase62, sealSecret } from '../../domain/secrets.ts';
import { inPartnerScope, type Actor } from '../../http/auth.ts';
import { onePage, type Page } from '../../http/pagination.ts';
import { checkWebhookUrl } from './url-guard.ts';

type Row = Selectable<WebhookSubscriptionsTable>;

const shown = ({ secret_sealed: _sealed, created_by: _by, ...subscription }: Row) => subscription;
const newSecret = () => `whsec_${randomBase62(40)}`;

/** A subscription in the key's scope, locked when `tx` is a transaction that will change it; 404 otherwise. */
async function subscriptionOf(db: Kysely<DB>, actor: Actor, id: string, lock = false) {
  let query = inPartnerScope(db.selectFrom('webhook_subscriptions').selectAll().where('id', '=', id), actor, 'manufacturer_id');
  if (lock) query = query.forUpdate();
  const row = await query.executeTakeFirst();
  if (!row) throw notFound('webhook subscription');
  return row;
}

export async function listSubscriptions(db: Kysely<DB>, actor: Actor, page: Page) {
  const query = inPartnerScope(db.selectFrom('webhook_subscriptions'), actor, 'manufacturer_id');
  const [rows, total] = await Promise.all([
    query.selectAll().orderBy('created_at').orderBy('id').$call(onePage(page)).execute(),
    query.select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow(),
  ]);
  return { rows: rows.map(shown), total: total.count };
}

export async function readSubscription(db: Kysely<DB>, actor: Actor, id: string) {
  return shown(await subscriptionOf(db, actor, id));
}

export interface NewSubscriptionInput {
  url: string;
  description?: string | null;
  event_kinds: string[];
  is_active?: boolean;
  max_attempts?: number;
  manufacturer_id?: string | null;
}

/** A partner's key subscribes for its own partner only; a warehouse key for every event, or for one partner's. */
export async function createSubscription(db: Kysely<DB>, config: Config, actor: Actor, input: NewSubscriptionInput) {
  if (actor.manufacturerId && input.manufacturer_id && input.manufacturer_id !== actor.manufacturerId) {
    throw forbidden('a partner-scoped key subscribes to its own supply partner\'s events only');
  }
  const url = await checkWebhookUrl(input.url);
  const secret = newSecret();
  const key = await secretKeyOf(db, config);
  return inTransaction(db, async (tx) => {
    const manufacturerId = actor.manufacturerId ?? input.manufacturer_id ?? null;
    if (manufacturerId && !(await tx.selectFrom('manufacturers').select('id').where('id', '=', manufacturerId).executeTakeFirst())) {
      throw invalidRequest('manufacturer_id does not name a supply partner');
    }
    const row = await tx.insertInto('webhook_subscriptions').values({
      url: url.href, description: input.description?.trim() || null, event_kinds: kindsOf(input.event_kinds), is_active: input.is_active ?? true,
      max_attempts: input.max_attempts ?? 8, manufacturer_id: manufacturerId, secret_sealed: sealSecret(key, secret), created_by: actor.userId,
    }).returningAll().executeTakeFirstOrThrow();
    await recordHistory(tx, actor, { entityType: 'webhook_subscription', entityId: row.id, action: 'created', manufacturerId, after: shown(row) });
    return { ...shown(row), signing_secret: secret };
  });
}

/** ["*"] stands for every kind: nothing else beside it. */
const kindsOf = (kinds: string[]) => (kinds.includes('*') ? ['*'] : kinds);

export async function changeSubscription(db: Kysely<DB>, actor: Actor, id: string, input: Partial<Omit<NewSubscriptionInput, 'manufacturer_id'>>) {
  const url = input.url === undefined ? undefined : (await checkWebhookUrl(input.url)).href;
  return inTransaction(db, async (tx) => {
    const before = await subscriptionOf(tx, actor, id, true);
    const row = await tx.updateTable('webhook_subscriptions').set({
      ...(url === undefined ? {} : { url }),
      ...(input.description === undefined ? {} : { description: input.description?.trim() || null }),
      ...(input.event_kinds === undefined ? {} : { event_kinds: kindsOf(input.event_kinds) }),
      ...(input.is_active === undefined ? {} : { is_active: input.is_active }),
      ...(input.max_attempts === undefined ? {} : { max_attempts: input.max_attempts }),
      updated_at: new Date(),
    }).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
    await recordHistory(tx, actor, { entityType: 'webhook_subscription', entityId: id, action: 'changed', manufacturerId: row.manufacturer_id, before: shown(before), after: shown(row) });
    return shown(row);
  });
}

/** Gone with its delivery log; deliveries in flight finish or are dropped with it. */
export async function deleteSubscription(db: Kysely<DB>, actor: Actor, id: string) {
  await inTransaction(db, async (tx) => {
    const before = await subscriptionOf(tx, actor, id, true);
    // The deliveries go with the subscription (on delete cascade); their attempts have no key to follow them there.
    await tx.deleteFrom('webhook_delivery_attempts')
      .where('delivery_id', 'in', tx.selectFrom('webhook_deliveries').select('id').where('subscription_id', '=', id)).execute();
    await tx.deleteFrom('webhook_subscriptions').where('id', '=', id).execute();
    await recordHistory(tx, actor, { entityType: 'webhook_subscription', entityId: id, action: 'deleted', manufacturerId: before.manufacturer_id, before: shown(before) });
  });
}

/** A new secret at once: deliveries from now on are signed with it. */
export async function rotateSecret(db: Kysely<DB>, config: Config, actor: Actor, id: string) {
  const secret = newSecret();
  const key = await secretKeyOf(db, config);
  return inTransaction(db, async (tx) => {
    await subscriptionOf(tx, actor, id, true);
    const row = await tx.updateTable('webhook_subscriptions').set({ secret_sealed: sealSecret(key, secret), updated_at: new Date() })
      .where('id', '=', id).returningAll().executeTakeFirstOrThrow();
    await recordHistory(tx, actor, { entityType: 'webhook_subscription', entityId: id, action: 'secret_rotated', manufacturerId: row.manufacturer_id });
    return { ...shown(row), signing_secret: secret };
  });
}

/** A webhook.ping event for this subscription alone (not in any poll stream): the receiver sees a signed delivery. */
export async function pingSubscription(db: Kysely<DB>, actor: Actor, id: string) {
  return inTransaction(db, async (tx) => {
    const subscription = await subscriptionOf(tx, actor, id, true);
    if (!subscription.is_active) throw invalidStatus('the subscription is inactive: activate it first');
    const event = await tx.insertInto('outbox_events')
      .values({ kind: 'webhook.ping', manufacturer_id: subscription.manufacturer_id, data: JSON.stringify({ subscription_id: id, message: 'ping' }) })
      .returning(['id', 'seq', 'kind']).executeTakeFirstOrThrow();
    const delivery = await tx.insertInto('webhook_deliveries')
      .values({ subscription_id: id, event_seq: event.seq, event_id: event.id, event_kind: event.kind, order_id: null, leased_until: null, last_status_code: null, last_error: null, delivered_at: null })
      .returning('id').executeTakeFirstOrThrow();
    return deliveryOf(tx, id, delivery.id);
  });
}

type ChosenDeliveries = SelectQueryBuilder<DB & { d: DB['webhook_deliveries'] }, 'd', object>;

/**
 * The deliveries `choose` narrows webhook_deliveries d to, newest first, each with its attempts. The attempts are read
 * in an outer query over the chosen rows: in the query that takes a page's OFFSET, PostgreSQL reads the attempts of
 * every row it skips (page 200 of a million deliveries: 43 requests/s).
 */
function deliveries(db: Kysely<DB>, choose: (rows: ChosenDeliveries) => ChosenDeliveries) {
  const chosen = choose(db.selectFrom('webhook_deliveries as d')).select([
    'd.id', 'd.subscription_id', 'd.event_id', 'd.event_kind', 'd.status', 'd.attempts', 'd.last_status_code', 'd.last_error', 'd.delivered_at',
    'd.created_at', 'd.event_seq', sql<string | null>`case when d.status = 'pending' then d.next_attempt_at end`.as('next_attempt_at'),
  ]);
  return db.selectFrom(chosen.as('d')).selectAll('d').select((eb) => [
    eb.fn.coalesce(
      sql<unknown[]>`(select json_agg(a order by a.attempt) from (select attempt, attempted_at, duration_ms, status_code, error, response_body, outcome
        from webhook_delivery_attempts where delivery_id = d.id) a)`, sql<unknown[]>`'[]'::json`).as('attempt_log'),
  ]).orderBy('d.created_at', 'desc').orderBy('d.event_seq', 'desc');
}

type DeliveryRow = Awaited<ReturnType<ReturnType<typeof deliveries>['executeTakeFirstOrThrow']>>;
type AttemptRow = Omit<Selectable<WebhookDeliveryAttemptsTable>, 'delivery_id' | 'attempted_at'> & { attempted_at: string };
// The attempts arrive as JSON, their times as PostgreSQL writes them there; event_seq orders the log and is not shown.
const shownDelivery = ({ event_seq: _, ...row }: DeliveryRow) => ({
  ...row,
  attempt_log: (row.attempt_log as AttemptRow[]).map((attempt) => ({ ...attempt, attempted_at: isoTimeOfJson(attempt.attempted_at) })),
});

/**
 * The log newest first, with its exact total from the kept counts by subscription and status (migration 0037), carried
 * by the page's statement; a page past the last reads the total on its own.
 */
export async function listDeliveries(db: Kysely<DB>, actor: Actor, id: string, filter: { status?: DeliveryStatus }, page: Page) {
  await subscriptionOf(db, actor, id);
  const total = countedTotalExpression({ list: 'deliveries', manufacturerId: id, statuses: filter.status ? [filter.status] : [] });
  const rows = await deliveries(db, (rows) => {
    const ofSubscription = rows.where('d.subscription_id', '=', id);
    return (filter.status ? ofSubscription.where('d.status', '=', filter.status) : ofSubscription)
      .orderBy('d.created_at', 'desc').orderBy('d.event_seq', 'desc').$call(onePage(page));
  }).select(total.as('total_count')).execute();
  return {
    rows: rows.map(({ total_count: _, ...row }) => shownDelivery(row)),
    total: await totalOfPage(db, rows, page, total),
  };
}

/** A delivery of a subscription whose scope the caller has already checked. */
async function deliveryOf(db: Kysely<DB>, id: string, deliveryId: string) {
  const row = await deliveries(db, (rows) => rows.where('d.subscription_id', '=', id).where('d.id', '=', deliveryId)).executeTakeFirst();
  if (!row) throw notFound('delivery');
  return shownDelivery(row);
}

/** A failed or dead delivery goes out again (attempts start over); a pending or delivered one is 422. */
export async function retryDelivery(db: Kysely<DB>, actor: Actor, id: string, deliveryId: string) {
  return inTransaction(db, async (tx) => {
    await subscriptionOf(tx, actor, id);
    const row = await tx.selectFrom('webhook_deliveries').select('status').where('id', '=', deliveryId).where('subscription_id', '=', id).forUpdate().executeTakeFirst();
    if (!row) throw notFound('delivery');
    if (row.status !== 'failed' && row.status !== 'dead') throw invalidStatus(`the delivery is ${row.status}; only a failed or dead one is sent again`);
    await requeue(tx).where('id', '=', deliveryId).execute();
    return deliveryOf(tx, id, deliveryId);
  });
}

/** Every dead delivery of the subscription goes out again. */
export async function retryDead(db: Kysely<DB>, actor: Actor, id: string) {
  return inTransaction(db, async (tx) => {
    await subscriptionOf(tx, actor, id);
    const rows = await requeue(tx).where('subscription_id', '=', id).where('status', '=', 'dead').returning('id').execute();
    return { retried: rows.length };
  });
}

const requeue = (db: Kysely<DB>) =>
  db.updateTable('webhook_deliveries').set({ status: 'pending', attempts: 0, next_attempt_at: new Date(), leased_until: null, updated_at: new Date() });
