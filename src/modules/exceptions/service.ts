// Pick exceptions and the order blocks they open: opened by the floor (short pick, mispick, quality flag) in the
// action's transaction, reviewed by the office, or marked as waiting for the supply partner.
import { sql, type Kysely, type Transaction } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { inTransaction } from '../../db/transaction.ts';
import { emit } from '../../domain/events.ts';
import { recordHistory } from '../../domain/history.ts';
import { inPartnerScope, type Actor } from '../../http/auth.ts';
import { invalidStatus, notFound } from '../../domain/errors.ts';
import { exceptionDetail, type ExceptionKind } from './queries.ts';
import { blockExceptionId } from '../orders/queries.ts';

const BLOCK_COLUMN = {
  short_pick: 'short_pick_exception_id',
  mispick: 'mispick_exception_id',
  quality: 'quality_exception_id',
} as const;

export interface NewException {
  kind: ExceptionKind;
  batch: { id: string; batch_number: string; order_id: string; manufacturer_id: string };
  line: { id: string; order_line_id: string; item_id: string };
  qtyShort?: number;
  shortReason?: string;
  flagReason?: string;
  actualItemId?: string;
  actualQty?: number;
}

/**
 * Opens an exception on a pick line and an open order block of the same kind. An exception still open on the same
 * line is superseded by the new one, and its block is cancelled: the newer finding is the one to review.
 */
export async function openException(tx: Transaction<DB>, actor: Actor, input: NewException) {
  const superseded = await tx.updateTable('pick_exceptions').set({ status: 'superseded', updated_at: new Date() })
    .where('pick_batch_line_id', '=', input.line.id).where('status', '=', 'open').returning('id').execute();
  if (superseded.length) {
    const ids = superseded.map((row) => row.id);
    await tx.updateTable('order_blocks').set({ status: 'cancelled', updated_at: new Date() })
      .where('status', '=', 'open')
      .where(sql<boolean>`${blockExceptionId()} = any(${ids}::uuid[])`)
      .execute();
  }
  const exception = await tx.insertInto('pick_exceptions').values({
    kind: input.kind,
    manufacturer_id: input.batch.manufacturer_id,
    item_id: input.line.item_id,
    order_id: input.batch.order_id,
    order_line_id: input.line.order_line_id,
    pick_batch_id: input.batch.id,
    pick_batch_line_id: input.line.id,
    qty_short: input.qtyShort ?? 0,
    short_reason: input.shortReason ?? null,
    flag_reason: input.flagReason ?? null,
    actual_item_id: input.actualItemId ?? null,
    actual_qty: input.actualQty ?? null,
    created_by: actor.userId,
    reviewed_at: null,
    reviewed_by: null,
  }).returningAll().executeTakeFirstOrThrow();
  const block = await tx.insertInto('order_blocks').values({
    order_id: input.batch.order_id,
    kind: input.kind,
    short_pick_exception_id: null,
    mispick_exception_id: null,
    quality_exception_id: null,
    [BLOCK_COLUMN[input.kind]]: exception.id,
    awaiting_supply_partner_at: null,
    awaiting_supply_partner_note: null,
    resolution_disposition: null,
    resolution_note: null,
    resolved_at: null,
  }).returning('id').executeTakeFirstOrThrow();
  await recordHistory(tx, actor, {
    entityType: `${input.kind}_exception`, entityId: exception.id, action: 'opened', manufacturerId: exception.manufacturer_id,
    after: { ...exception, order_block_id: block.id, superseded: superseded.map((row) => row.id) },
  });
  await emit(tx, 'exception.opened', {
    exception_id: exception.id, kind: exception.kind, order_id: exception.order_id, pick_batch_id: exception.pick_batch_id,
    batch_number: input.batch.batch_number, order_line_id: exception.order_line_id, item_id: exception.item_id,
    qty_short: exception.qty_short, short_reason: exception.short_reason, flag_reason: exception.flag_reason,
    actual_item_id: exception.actual_item_id, actual_qty: exception.actual_qty, order_block_id: block.id,
    superseded_exception_ids: superseded.map((row) => row.id),
  }, exception.manufacturer_id);
  return exception;
}

/** Locks an exception of the kind in the caller's scope; 404 otherwise (another kind's id included). */
async function lockException(tx: Transaction<DB>, actor: Actor, kind: ExceptionKind, id: string) {
  const exception = await inPartnerScope(tx.selectFrom('pick_exceptions').selectAll().where('id', '=', id).where('kind', '=', kind), actor, 'manufacturer_id')
    .forUpdate().executeTakeFirst();
  if (!exception) throw notFound('exception');
  return exception;
}

/** open -> reviewed: the exception's open block is resolved with the disposition and note. */
export async function reviewException(
  db: Kysely<DB>, actor: Actor, kind: ExceptionKind, id: string, input: { disposition: string; note?: string | null },
) {
  await inTransaction(db, async (tx) => {
    const exception = await lockException(tx, actor, kind, id);
    if (exception.status !== 'open') throw invalidStatus(`the exception is ${exception.status}; only an open one can be reviewed`);
    const now = new Date();
    await tx.updateTable('pick_exceptions').set({ status: 'reviewed', reviewed_at: now, reviewed_by: actor.userId, updated_at: now })
      .where('id', '=', id).execute();
    const disposition = input.disposition.trim();
    const note = input.note?.trim() || null;
    const blocks = await tx.updateTable('order_blocks')
      .set({ status: 'resolved', resolution_disposition: disposition, resolution_note: note, resolved_at: now, updated_at: now })
      .where(BLOCK_COLUMN[kind], '=', id).where('status', '=', 'open').returning('id').execute();
    await recordHistory(tx, actor, {
      entityType: `${kind}_exception`, entityId: id, action: 'reviewed', manufacturerId: exception.manufacturer_id,
      before: { status: exception.status }, after: { status: 'reviewed', disposition, note, resolved_block_ids: blocks.map((b) => b.id) },
    });
    await emit(tx, 'exception.reviewed', {
      exception_id: id, kind, order_id: exception.order_id, pick_batch_id: exception.pick_batch_id, item_id: exception.item_id,
      disposition, note, resolved_block_ids: blocks.map((b) => b.id),
    }, exception.manufacturer_id);
  });
  return exceptionDetail(db, actor, kind, id);
}

/** The office is waiting on the supply partner: stamped on the exception's open block; the exception stays open. */
export async function awaitSupplyPartner(db: Kysely<DB>, actor: Actor, kind: ExceptionKind, id: string, input: { note?: string | null }) {
  await inTransaction(db, async (tx) => {
    const exception = await lockException(tx, actor, kind, id);
    if (exception.status !== 'open') throw invalidStatus(`the exception is ${exception.status}; only an open one can wait for the supply partner`);
    const now = new Date();
    const note = input.note?.trim() || null;
    const blocks = await tx.updateTable('order_blocks').set({ awaiting_supply_partner_at: now, awaiting_supply_partner_note: note, updated_at: now })
      .where(BLOCK_COLUMN[kind], '=', id).where('status', '=', 'open').returning('id').execute();
    if (blocks.length === 0) throw invalidStatus('the exception has no open order block to hold');
    await recordHistory(tx, actor, {
      entityType: `${kind}_exception`, entityId: id, action: 'awaiting_supply_partner', manufacturerId: exception.manufacturer_id,
      after: { note, block_ids: blocks.map((b) => b.id) },
    });
  });
  return exceptionDetail(db, actor, kind, id);
}
