// Inbound carrier webhooks: the system admin registers one per carrier feed (a token for its URL and a signing secret,
// both shown once); the carrier posts signed messages about labels it made, and each adds the parcel to its batch.
import type { Kysely } from 'kysely';
import type { Config } from '../../config.ts';
import type { Carrier } from '../../db/column-types.ts';
import type { DB } from '../../db/schema.ts';
import { secretKeyOf } from '../../db/secret-key.ts';
import { inTransaction } from '../../db/transaction.ts';
import { badRequest, gone, invalidRequest, notFound, unauthorized } from '../../domain/errors.ts';
import { recordHistory } from '../../domain/history.ts';
import { checkSignature, keyPrefix, openSecret, randomBase62, sealSecret, sha256 } from '../../domain/secrets.ts';
import type { Actor } from '../../http/auth.ts';
import { onePage, type Page } from '../../http/pagination.ts';
import { validatorCompiler } from '../../http/validation.ts';
import { lockBatch } from '../picking/queries.ts';
import { recordCarrierTracking } from '../picking/shipping.ts';
import { batchToTrack, untrackable } from '../shipments/tracking-import.ts';
import { CarrierMessage } from './schemas.ts';

/** Signatures older or newer than this are refused (spec: drift above 5 minutes). */
const DRIFT_SECONDS = 5 * 60;
const PATH = '/webhooks/carrier/';

type Row = { id: string; name: string; carrier: Carrier; token_prefix: string; created_by: string | null; created_at: string };
const shown = (row: Row) => ({ ...row, url_path: `${PATH}${row.token_prefix}...` });

export async function listCarrierWebhooks(db: Kysely<DB>, page: Page) {
  const query = db.selectFrom('carrier_webhooks').where('deleted_at', 'is', null);
  const [rows, total] = await Promise.all([
    query.select(['id', 'name', 'carrier', 'token_prefix', 'created_by', 'created_at']).orderBy('created_at').orderBy('id').$call(onePage(page)).execute(),
    query.select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow(),
  ]);
  return { rows: rows.map(shown), total: total.count };
}

export async function createCarrierWebhook(db: Kysely<DB>, config: Config, actor: Actor, input: { name: string; carrier: Carrier }) {
  const token = `cwh_${randomBase62(32)}`;
  const secret = `cws_${randomBase62(40)}`;
  const key = await secretKeyOf(db, config);
  return inTransaction(db, async (tx) => {
    const row = await tx.insertInto('carrier_webhooks').values({
      name: input.name.trim(), carrier: input.carrier, token_hash: sha256(token), token_prefix: keyPrefix(token),
      secret_sealed: sealSecret(key, secret), created_by: actor.userId, deleted_at: null,
    }).returning(['id', 'name', 'carrier', 'token_prefix', 'created_by', 'created_at']).executeTakeFirstOrThrow();
    await recordHistory(tx, actor, { entityType: 'carrier_webhook', entityId: row.id, action: 'created', after: { name: row.name, carrier: row.carrier } });
    return { ...shown(row), url_path: `${PATH}${token}`, token, secret };
  });
}

/** Deleted, its token answers 410 from then on (it is kept for that). */
export async function deleteCarrierWebhook(db: Kysely<DB>, actor: Actor, id: string) {
  await inTransaction(db, async (tx) => {
    const row = await tx.updateTable('carrier_webhooks').set({ deleted_at: new Date() }).where('id', '=', id).where('deleted_at', 'is', null)
      .returning(['id', 'name']).executeTakeFirst();
    if (!row) throw notFound('carrier webhook');
    await recordHistory(tx, actor, { entityType: 'carrier_webhook', entityId: id, action: 'deleted', before: { name: row.name } });
  });
}

const validMessage = validatorCompiler({ schema: CarrierMessage, httpPart: 'body', method: 'POST', url: PATH }) as unknown as
  ((data: unknown) => boolean) & { errors?: { instancePath: string; message?: string }[] | null };

/**
 * A carrier's message: the token picks the webhook (unknown or deleted: 410), Carrier-Signature must be valid and
 * fresh over the raw body (401), then the body is read (400) and the batch found (422). The event id is recorded with
 * the change in one transaction, so the same message twice changes nothing the second time.
 */
export async function receiveCarrierMessage(db: Kysely<DB>, config: Config, token: string, signature: string | undefined, rawBody: string) {
  const webhook = await db.selectFrom('carrier_webhooks').select(['id', 'name', 'carrier', 'secret_sealed', 'created_by', 'deleted_at'])
    .where('token_hash', '=', sha256(token)).executeTakeFirst();
  if (!webhook || webhook.deleted_at) throw gone('this carrier webhook does not exist (any more)');
  const secret = openSecret(await secretKeyOf(db, config), webhook.secret_sealed);
  // A secret sealed under another key (WMS_SECRET_KEY changed) cannot verify anything: the webhook must be made again.
  const check = secret === null ? 'mismatch' : checkSignature(signature, rawBody, secret, Math.floor(Date.now() / 1000), DRIFT_SECONDS);
  if (check !== 'valid') {
    throw unauthorized(check === 'malformed' ? 'Carrier-Signature missing or malformed: expected t=<unix>,v1=<hex>'
      : check === 'stale' ? 'Carrier-Signature timestamp is more than 5 minutes from now' : 'Carrier-Signature does not match');
  }
  let message: unknown;
  try {
    message = JSON.parse(rawBody);
  } catch {
    throw badRequest('malformed JSON body');
  }
  if (!validMessage(message)) {
    const first = validMessage.errors?.[0];
    throw badRequest(`body${first?.instancePath ?? ''} ${first?.message ?? 'is invalid'}`);
  }
  const body = message as { event_id: string; tracking_number: string; batch_number?: string; order_number?: number; status?: string };
  if (!body.batch_number && !body.order_number) throw invalidRequest('name the batch: batch_number or order_number');
  // The change is the webhook's creator's, as the webhook's own history row says.
  const author = { userId: webhook.created_by, apiKeyId: null };
  return inTransaction(db, async (tx) => {
    const first = await tx.insertInto('carrier_webhook_events')
      .values({ carrier_webhook_id: webhook.id, event_id: body.event_id, pick_batch_id: null, tracking_number: body.tracking_number.trim() })
      .onConflict((oc) => oc.columns(['carrier_webhook_id', 'event_id']).doNothing()).returning('event_id').executeTakeFirst();
    if (!first) {
      const seen = await tx.selectFrom('carrier_webhook_events as e').leftJoin('pick_batches as b', 'b.id', 'e.pick_batch_id')
        .select(['e.pick_batch_id', 'b.batch_number']).where('e.carrier_webhook_id', '=', webhook.id).where('e.event_id', '=', body.event_id).executeTakeFirstOrThrow();
      return { duplicate: true, pick_batch_id: seen.pick_batch_id, batch_number: seen.batch_number, changed: false };
    }
    const found = await batchToTrack(tx, { batchNumber: body.batch_number?.trim().toUpperCase() ?? null, orderNumber: body.order_number ?? null });
    if (typeof found === 'string') throw invalidRequest(found, { event_id: body.event_id });
    const batch = await lockBatch(tx, { manufacturerId: null }, found.id);
    const refusal = untrackable(batch);
    if (refusal) throw invalidRequest(refusal);
    const changed = await recordCarrierTracking(tx, author, batch, { tracking_number: body.tracking_number, carrier: webhook.carrier },
      { carrier_webhook_id: webhook.id, carrier_event_id: body.event_id, carrier_status: body.status ?? null });
    await tx.updateTable('carrier_webhook_events').set({ pick_batch_id: batch.id })
      .where('carrier_webhook_id', '=', webhook.id).where('event_id', '=', body.event_id).execute();
    return { duplicate: false, pick_batch_id: batch.id, batch_number: batch.batch_number, changed };
  });
}
