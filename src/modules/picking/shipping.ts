// After the pick: staging, parcels and their tracking, and shipping (stock leaves through domain/stock.ts), including
// the will-call pickup of a packed order.
import { sql, type Kysely, type Selectable, type Transaction } from 'kysely';
import { jsonArrayFrom } from 'kysely/helpers/postgres';
import type { Carrier } from '../../db/column-types.ts';
import type { DB, PickBatchParcelsTable } from '../../db/schema.ts';
import { inTransaction } from '../../db/transaction.ts';
import { recordAndEmit, recordAndEmitAnswering } from '../../domain/events.ts';
import { recordHistory, type Author } from '../../domain/history.ts';
import { shipStock } from '../../domain/stock.ts';
import type { Actor } from '../../http/auth.ts';
import { ApiError, invalidRequest, invalidStatus, notFound } from '../../domain/errors.ts';
import { followWarehouseShipment, lockOrderForShipping, readOrderDetail, shippableOrder } from '../orders/service.ts';
import { lockBatch, sessionQuery, WAREHOUSE_SHIPPED, type BatchRow, type SessionRow } from './queries.ts';
import { serializeSession } from './serialize.ts';
import { batchEvent, batchWrite, requireBatchStatus } from './service.ts';

export interface Tracking {
  tracking_number: string;
  carrier: Carrier;
}

// Parcels are labelled once the batch is picked, and until it leaves.
const LABELLING = ['completed', 'packed'] as const;

/** The primary box (lowest live ParcelSeq) is the batch's tracking; no parcel, no tracking. */
async function refreshPrimaryTracking(tx: Transaction<DB>, batchId: string) {
  const { rows: [batch] } = await sql<{ tracking_number: string | null; carrier: Carrier | null }>`
    update pick_batches b set (tracking_number, tracking_carrier, tracking_captured_at) = (
      select p.tracking_number, p.carrier, p.captured_at from pick_batch_parcels p where p.pick_batch_id = b.id order by p.parcel_seq limit 1
    ), updated_at = now()
    where b.id = ${batchId} returning b.tracking_number, b.tracking_carrier as carrier`.execute(tx);
  return batch?.tracking_number ? { tracking_number: batch.tracking_number, carrier: batch.carrier } : undefined;
}

/** Records a tracking change and announces the batch's tracking (its primary box) after it; returns that primary. */
async function trackingChanged(tx: Transaction<DB>, actor: Author, batch: BatchRow, action: string, after: Record<string, unknown>) {
  const primary = await refreshPrimaryTracking(tx, batch.id);
  await announceTracking(tx, actor, batch, action, after, primary);
  return primary;
}

async function announceTracking(tx: Transaction<DB>, actor: Author, batch: BatchRow, action: string, after: Record<string, unknown>, primary?: { tracking_number: string; carrier: Carrier | null }) {
  await recordAndEmit(tx, actor, { entityType: 'pick_batch', entityId: batch.id, action, manufacturerId: batch.manufacturer_id, after }, 'shipment.tracking_updated', {
    pick_batch_id: batch.id, batch_number: batch.batch_number, order_id: batch.order_id,
    tracking_number: primary?.tracking_number ?? null, carrier: primary?.carrier ?? null,
  });
}

/** A new box with its label: ParcelSeq counts up per batch and is never given out again. */
async function insertParcel(tx: Transaction<DB>, actor: Author, batch: BatchRow, tracking: Tracking) {
  return tx.with('seq', (db) => db.updateTable('pick_batches').set((eb) => ({ last_parcel_seq: eb('last_parcel_seq', '+', 1) }))
    .where('id', '=', batch.id).returning('last_parcel_seq'))
    .insertInto('pick_batch_parcels')
    .columns(['pick_batch_id', 'parcel_seq', 'tracking_number', 'carrier', 'captured_by'])
    .expression((eb) => eb.selectFrom('seq').select((s) => [
      s.val(batch.id).as('pick_batch_id'), 'last_parcel_seq', s.val(tracking.tracking_number.trim()).as('tracking_number'),
      s.val(tracking.carrier).as('carrier'), s.val(actor.userId).as('captured_by'),
    ]))
    .returningAll().executeTakeFirstOrThrow();
}

/**
 * The primary box's label on a locked batch, in one statement: the lowest live parcel takes it, or a first parcel is
 * made (with the batch's next ParcelSeq). Either way that parcel is the primary box, so the batch's tracking is its.
 */
async function capturePrimary(tx: Transaction<DB>, actor: Author, batch: BatchRow, tracking: Tracking) {
  const number = tracking.tracking_number.trim();
  const { rows: [parcel] } = await sql<Selectable<PickBatchParcelsTable>>`
    with primary_box as (
      select id from pick_batch_parcels where pick_batch_id = ${batch.id} order by parcel_seq limit 1
    ), batch as (
      update pick_batches set last_parcel_seq = last_parcel_seq + case when exists (select 1 from primary_box) then 0 else 1 end,
        tracking_number = ${number}, tracking_carrier = ${tracking.carrier}, tracking_captured_at = now(), updated_at = now()
      where id = ${batch.id} returning last_parcel_seq
    ), relabelled as (
      update pick_batch_parcels p set tracking_number = ${number}, carrier = ${tracking.carrier}, captured_at = now(), captured_by = ${actor.userId}
      from primary_box where p.id = primary_box.id returning p.*
    ), added as (
      insert into pick_batch_parcels (pick_batch_id, parcel_seq, tracking_number, carrier, captured_by)
      select ${batch.id}, last_parcel_seq, ${number}, ${tracking.carrier}, ${actor.userId} from batch where not exists (select 1 from primary_box)
      returning *
    )
    select * from relabelled union all select * from added`.execute(tx);
  return parcel!;
}

export function addParcel(db: Kysely<DB>, actor: Actor, batchId: string, tracking: Tracking) {
  return batchWrite(db, actor, batchId, async (tx, batch) => {
    requireBatchStatus(batch, LABELLING, 'add a parcel to');
    const parcel = await insertParcel(tx, actor, batch, tracking);
    await trackingChanged(tx, actor, batch, 'parcel_added', { parcel_id: parcel.id, parcel_seq: parcel.parcel_seq, tracking_number: parcel.tracking_number, carrier: parcel.carrier });
  });
}

export function removeParcel(db: Kysely<DB>, actor: Actor, batchId: string, parcelId: string) {
  return batchWrite(db, actor, batchId, async (tx, batch) => {
    requireBatchStatus(batch, LABELLING, 'remove a parcel from');
    const parcel = await tx.deleteFrom('pick_batch_parcels').where('id', '=', parcelId).where('pick_batch_id', '=', batch.id).returningAll().executeTakeFirst();
    if (!parcel) throw notFound('parcel');
    await trackingChanged(tx, actor, batch, 'parcel_removed', { parcel_id: parcel.id, parcel_seq: parcel.parcel_seq, tracking_number: parcel.tracking_number });
  });
}

/** The primary box's label captured on a locked batch, recorded and announced; returns the batch's tracking after it. */
export async function captureTracking(tx: Transaction<DB>, actor: Author, batch: BatchRow, tracking: Tracking): Promise<Tracking> {
  const parcel = await capturePrimary(tx, actor, batch, tracking);
  const primary = { tracking_number: parcel.tracking_number, carrier: parcel.carrier };
  await announceTracking(tx, actor, batch, 'tracking_captured', { parcel_id: parcel.id, parcel_seq: parcel.parcel_seq, ...primary }, primary);
  return primary;
}

/**
 * A carrier reported a label for the batch: a box with that tracking number is added unless the batch has one (the
 * first box becomes the primary). Returns whether anything changed.
 */
export async function recordCarrierTracking(tx: Transaction<DB>, author: Author, batch: BatchRow, tracking: Tracking, source: Record<string, unknown>) {
  const known = await tx.selectFrom('pick_batch_parcels').select('id').where('pick_batch_id', '=', batch.id)
    .where('tracking_number', '=', tracking.tracking_number.trim()).executeTakeFirst();
  if (known) return false;
  const parcel = await insertParcel(tx, author, batch, tracking);
  await trackingChanged(tx, author, batch, 'parcel_added', { parcel_id: parcel.id, parcel_seq: parcel.parcel_seq, tracking_number: parcel.tracking_number, carrier: parcel.carrier, ...source });
  return true;
}

export function setTracking(db: Kysely<DB>, actor: Actor, batchId: string, tracking: Tracking) {
  return batchWrite(db, actor, batchId, async (tx, batch) => {
    requireBatchStatus(batch, LABELLING, 'set the tracking of');
    await captureTracking(tx, actor, batch, tracking);
  });
}

/** The dock cannot read or trust the label: the office is asked to look (stamped once, kept). */
export function flagTracking(db: Kysely<DB>, actor: Actor, batchId: string) {
  return batchWrite(db, actor, batchId, async (tx, batch) => {
    requireBatchStatus(batch, ['in_progress', 'completed', 'packed', 'shipped'], 'flag the tracking of');
    if (batch.tracking_flagged_for_office_at) return;
    await tx.updateTable('pick_batches').set({ tracking_flagged_for_office_at: new Date(), updated_at: new Date() }).where('id', '=', batch.id).execute();
    await recordHistory(tx, actor, { entityType: 'pick_batch', entityId: batch.id, action: 'tracking_flagged', manufacturerId: batch.manufacturer_id });
  });
}

/** A packed batch waits at a staging or shipping location, or (slot null) is handed over directly. */
export function stageBatch(db: Kysely<DB>, actor: Actor, batchId: string, slot: string | null) {
  return batchWrite(db, actor, batchId, async (tx, batch) => {
    requireBatchStatus(batch, ['packed'], 'stage');
    let code: string | null = null;
    let type: 'staging' | 'shipping' | null = null;
    if (slot !== null) {
      const location = await tx.selectFrom('locations').select(['location_code', 'location_type', 'is_active'])
        .where('location_code', '=', slot.trim().toUpperCase()).executeTakeFirst();
      if (!location || !location.is_active || (location.location_type !== 'staging' && location.location_type !== 'shipping')) {
        throw invalidRequest(`${slot} is not an active staging or shipping location`, { slot });
      }
      code = location.location_code;
      type = location.location_type;
    }
    await tx.updateTable('pick_batches').set({ staged_slot: code, staged_loc_type: type, staged_at: new Date(), updated_at: new Date() }).where('id', '=', batch.id).execute();
    await recordHistory(tx, actor, { entityType: 'pick_batch', entityId: batch.id, action: 'staged', manufacturerId: batch.manufacturer_id, after: { staged_slot: code, staged_loc_type: type } });
  });
}

/**
 * Ships a packed batch in the caller's transaction (the order and the batch are locked): every picked unit leaves the
 * bin it was picked from, the order lines count them shipped, and the order moves to shipped or partial. A fixed number
 * of statements, however many lines. Returns the batch's session as shipped.
 */
async function shipLockedBatch(tx: Transaction<DB>, actor: Actor, batch: BatchRow, tracking?: Tracking): Promise<SessionRow> {
  requireBatchStatus(batch, ['packed'], 'ship');
  const order = await shippableOrder(tx, batch.order_id);
  let primary = batch.tracking_number === null ? undefined : { tracking_number: batch.tracking_number, carrier: batch.tracking_carrier };
  if (tracking) primary = await captureTracking(tx, actor, batch, tracking);
  const batchLines = await linesWithBins(tx, batch.id);
  const lines = batchLines.filter((line) => line.qty_picked > 0);
  const unitsOf = (quantity: 'qty_to_pick' | 'qty_picked') => batchLines.reduce((units, line) => units + line[quantity], 0);
  await shipStock(tx, actor, takesToShip(lines).map((take) => ({ ...take, reason: `pick batch ${batch.batch_number}`, pickBatchId: batch.id })));
  // Every line of the batch, shipped in full, in part or not at all (short, set aside), counts what the warehouse still
  // owes; the batch is shipped with its lines' figures (the order-fulfillment report sums them); both recorded and
  // announced in one statement. It answers with the session as the statement began, its tracking and parcels captured
  // above: shipping changes nothing else a session shows but the status, and what follows changes only the order.
  const [session] = await recordAndEmitAnswering(tx, actor, {
    entityType: 'pick_batch', entityId: batch.id, action: 'shipped', manufacturerId: batch.manufacturer_id,
    before: { status: batch.status }, after: { status: 'shipped', lines: lines.map((line) => ({ order_line_id: line.order_line_id, qty_shipped: line.qty_picked })) },
  }, 'pick_batch.shipped', {
    ...batchEvent({ ...batch, status: 'shipped' }, order.order_number), tracking_number: primary?.tracking_number ?? null, carrier: primary?.carrier ?? null,
    lines: lines.map((line) => ({ order_line_id: line.order_line_id, item_id: line.item_id, qty_shipped: line.qty_picked })),
  }, {
    writes: sql`shipped_lines as (
      update order_lines set qty_shipped = qty_shipped + s.picked, qty_committed = greatest(0, qty_committed - s.picked),
        qty_backordered = greatest(0, qty_warehouse - (${WAREHOUSE_SHIPPED} + s.picked)), updated_at = now()
      from unnest(${batchLines.map((line) => line.order_line_id)}::uuid[], ${batchLines.map((line) => line.qty_picked)}::int[]) as s(order_line_id, picked)
      where order_lines.id = s.order_line_id
    ), shipped_batch as (
      update pick_batches set status = 'shipped', shipped_at = now(), shipped_by = ${actor.userId}, updated_at = now(),
        shipped_lines = ${batchLines.length}, shipped_lines_in_full = ${batchLines.filter((line) => line.qty_picked === line.qty_to_pick).length},
        shipped_units_to_pick = ${unitsOf('qty_to_pick')}, shipped_units_picked = ${unitsOf('qty_picked')}
      where id = ${batch.id}
    )`,
    answer: sessionQuery(actor, batch.id),
  });
  await followWarehouseShipment(tx, actor, order);
  return { ...session!, status: 'shipped' };
}

/** The batch's lines, each with its item's number and the bins stock may ship from, fullest first. */
function linesWithBins(tx: Transaction<DB>, batchId: string) {
  return tx.selectFrom('pick_batch_lines as l').innerJoin('items as i', 'i.id', 'l.item_id')
    .select((eb) => ['l.order_line_id', 'l.item_id', 'l.location_id', 'l.qty_to_pick', 'l.qty_picked', 'i.item_number_display',
      jsonArrayFrom(eb.selectFrom('item_locations as b').innerJoin('locations as loc', 'loc.id', 'b.location_id')
        .select(['b.location_id', 'b.qty_on_hand'])
        .whereRef('b.item_id', '=', 'l.item_id').where('b.inventory_status', '=', 'available').where('b.qty_on_hand', '>', 0)
        .where('loc.is_active', '=', true).where('loc.location_type', '<>', 'quarantine')
        .orderBy('b.qty_on_hand', 'desc')).as('bins')])
    .where('l.pick_batch_id', '=', batchId).execute();
}

/**
 * Where each line's picked units leave from: the bin it was picked from first, then the item's other available bins,
 * fullest first (stock may have been relocated since the batch started). An order names an item once, so each line has
 * its item's bins to itself. Not enough in all of them: 422.
 */
function takesToShip(lines: Awaited<ReturnType<typeof linesWithBins>>) {
  const takes: { itemId: string; locationId: string; quantity: number }[] = [];
  for (const line of lines) {
    // The picked bin first; sort is stable, so the others stay fullest first.
    const bins = [...line.bins].sort((a, b) => Number(b.location_id === line.location_id) - Number(a.location_id === line.location_id));
    let left = line.qty_picked;
    for (const bin of bins) {
      if (left === 0) break;
      const quantity = Math.min(left, bin.qty_on_hand);
      takes.push({ itemId: line.item_id, locationId: bin.location_id, quantity });
      left -= quantity;
    }
    if (left > 0) {
      const held = line.qty_picked - left;
      throw new ApiError(422, 'insufficient_stock', `${line.item_number_display}: ${line.qty_picked} picked but the bins hold ${held}; ` +
        'count or adjust the stock, or cancel the batch', { details: { item_id: line.item_id } });
    }
  }
  return takes;
}

/** Ship: tracking, when given, is captured as the primary box first; without it the batch ships with what it has. */
export function shipBatch(db: Kysely<DB>, actor: Actor, batchId: string, input: { tracking_number?: string; carrier?: Carrier }) {
  if ((input.tracking_number === undefined) !== (input.carrier === undefined)) throw invalidRequest('send tracking_number and carrier together, or neither');
  const tracking = input.tracking_number && input.carrier ? { tracking_number: input.tracking_number, carrier: input.carrier } : undefined;
  return inTransaction(db, async (tx) => serializeSession(await shipLockedBatch(tx, actor, await lockBatch(tx, actor, batchId), tracking)));
}

/**
 * Will-call: the customer collects a packed order at the dock. Its packed batches ship, and who collected it is
 * recorded. Only for orders shipped by will call (ship-via mode will_call, or freight terms WILL CALL).
 */
export async function pickUpOrder(db: Kysely<DB>, actor: Actor, orderId: string, input: { picked_up_by_name: string; notes?: string | null }) {
  return inTransaction(db, async (tx) => {
    const order = await lockOrderForShipping(tx, orderId, actor);
    const willCall = await tx.selectFrom('orders as o').leftJoin('ship_via as sv', 'sv.id', 'o.ship_via_id')
      .select(sql<boolean>`coalesce(sv.mode = 'will_call', false) or upper(trim(coalesce(o.freight_terms, ''))) in ('WILL CALL', 'WILL-CALL', 'WILLCALL')`.as('yes'))
      .where('o.id', '=', orderId).executeTakeFirstOrThrow();
    if (!willCall.yes) throw invalidStatus('only a will-call order is picked up (ship via WILL-CALL or freight terms WILL CALL)');
    const packed = await tx.selectFrom('pick_batches').select('id').where('order_id', '=', orderId).where('status', '=', 'packed').orderBy('created_at').execute();
    if (packed.length === 0) throw invalidStatus(`the order has no packed batch to hand over (it is ${order.status})`);
    // The items of all the batches, locked in id order up front: shipping them batch by batch cannot deadlock.
    await tx.selectFrom('items').select('id').forUpdate()
      .where('id', 'in', tx.selectFrom('pick_batch_lines').select('item_id').where('pick_batch_id', 'in', packed.map((b) => b.id)))
      .orderBy('id').execute();
    for (const { id } of packed) await shipLockedBatch(tx, actor, await lockBatch(tx, actor, id));
    const name = input.picked_up_by_name.trim();
    const notes = input.notes?.trim() || null;
    await tx.updateTable('orders').set({
      picked_up_at: new Date(), picked_up_by_user_id: actor.userId, picked_up_by_name: name, picked_up_notes: notes, updated_by: actor.userId, updated_at: new Date(),
    }).where('id', '=', orderId).execute();
    await recordHistory(tx, actor, { entityType: 'order', entityId: orderId, action: 'picked_up', manufacturerId: order.manufacturer_id, after: { picked_up_by_name: name, notes, batch_ids: packed.map((b) => b.id) } });
    return readOrderDetail(tx, actor, orderId);
  });
}
