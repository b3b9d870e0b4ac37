// Picking: starting a batch for a released order, the picker's line actions (pick, short, mispick, quality flag), pack
// verification, completing and cancelling. Stock does not move while picking; it moves when the batch ships.
import { sql, type Kysely, type RawBuilder, type Transaction } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { inTransaction } from '../../db/transaction.ts';
import { isoTimeOfJson } from '../../db/timestamps.ts';
import { recordAndEmit } from '../../domain/events.ts';
import { recordHistory } from '../../domain/history.ts';
import { inPartnerScope, type Actor } from '../../http/auth.ts';
import { conflict, invalidRequest, invalidStatus, notFound } from '../../domain/errors.ts';
import type { Page } from '../../http/pagination.ts';
import { openException } from '../exceptions/service.ts';
import {
  LIVE_BATCH, lineOf, listSessions, lockBatch, sessionLineQuery, sessionOf, sessionQuery, WAREHOUSE_SHIPPED, writtenSessionQuery, type BatchFilter, type BatchLineRow,
  type BatchRow, type SessionLineRow, type SessionRow,
} from './queries.ts';
import { serializeLine, serializeSession, type PickSessionResponse } from './serialize.ts';
import { blockExceptionId } from '../orders/queries.ts';

export function requireBatchStatus(batch: BatchRow, allowed: readonly string[], action: string) {
  if (!allowed.includes(batch.status)) throw invalidStatus(`cannot ${action} a batch that is ${batch.status}`);
}

export async function readSession(db: Kysely<DB> | Transaction<DB>, actor: Actor, id: string) {
  return serializeSession(await sessionOf(db, actor, id));
}

export async function listBatches(db: Kysely<DB>, actor: Actor, filter: BatchFilter, page: Page) {
  const { rows, total } = await listSessions(db, actor, filter, page);
  return { rows: rows.map((row) => serializeSession(row)), total };
}

export function batchEvent(batch: { id: string; batch_number: string; order_id: string; status: string }, orderNumber: number) {
  return { pick_batch_id: batch.id, batch_number: batch.batch_number, order_id: batch.order_id, order_number: orderNumber, status: batch.status };
}

/**
 * A batch for a released or partial order, with a line for each warehouse line that still has units no live batch
 * holds: a second batch picks only what the first did not take.
 */
export async function startBatch(db: Kysely<DB>, actor: Actor, orderId: string) {
  return inTransaction(db, async (tx) => {
    const order = await inPartnerScope(tx.selectFrom('orders').selectAll().where('id', '=', orderId), actor, 'orders.manufacturer_id')
      .forUpdate().executeTakeFirst();
    if (!order) throw notFound('order');
    if (order.status !== 'released' && order.status !== 'partial') {
      throw invalidStatus(`only a released or partially shipped order can be picked; this one is ${order.status}`);
    }
    // Each line's bin: its item's primary available bin, else its fullest available bin, else the location the order
    // line names (its item's warehouse location) if that code exists.
    const open = await tx.selectFrom('order_lines as ol')
      .leftJoinLateral((eb) => eb.selectFrom('item_locations as b').innerJoin('locations as loc', 'loc.id', 'b.location_id')
        .select(['b.location_id', 'loc.location_code'])
        .whereRef('b.item_id', '=', 'ol.item_id').where('b.inventory_status', '=', 'available').where('loc.is_active', '=', true)
        .orderBy('b.is_primary', 'desc').orderBy('b.qty_on_hand', 'desc').limit(sql.lit(1)).as('bin'), (join) => join.onTrue())
      .leftJoinLateral((eb) => eb.selectFrom('locations').select(['id', 'location_code'])
        .whereRef('location_code', '=', 'ol.bin_location').limit(sql.lit(1)).as('named'), (join) => join.onTrue())
      .select(['ol.id', 'ol.item_id', 'ol.line_number', 'ol.item_number_display', 'ol.item_description', 'ol.unit_of_measure', sql<number>`ol.qty_warehouse - (${WAREHOUSE_SHIPPED}) - coalesce((
        select sum(l.qty_to_pick) from pick_batch_lines l join pick_batches b on b.id = l.pick_batch_id
        where l.order_line_id = ol.id and b.status in (${sql.join(LIVE_BATCH)})), 0)`.as('remaining'),
        sql<string | null>`coalesce(bin.location_id, named.id)`.as('location_id'),
        sql<string | null>`coalesce(bin.location_code, ol.bin_location)`.as('bin_location')])
      .where('ol.order_id', '=', orderId).where('ol.qty_warehouse', '>', 0).orderBy('ol.line_number').execute();
    const toPick = open.filter((line) => Number(line.remaining) > 0);
    if (toPick.length === 0) throw invalidStatus('nothing is left to pick on this order: its warehouse lines are shipped or in live batches');
    // The batch and its lines, each with its order line's number, item and unit (they never change after order entry;
    // migration 0044), and the session they make, the 201's answer: one statement.
    const column = <K extends keyof (typeof toPick)[number]>(key: K) => toPick.map((line) => line[key]);
    const { rows: [session] } = await sql<SessionRow & { batch_number: string }>`
      with batch as (
        insert into pick_batches (order_id, manufacturer_id, batch_number, created_by)
        values (${orderId}, ${order.manufacturer_id}, pick_batch_number(nextval('pick_batch_number_seq')), ${actor.userId})
        returning *
      ), lines as (
        insert into pick_batch_lines (pick_batch_id, order_line_id, item_id, location_id, bin_location, qty_to_pick,
          line_number, item_number_display, item_description, unit_of_measure)
        select batch.id, l.* from batch, unnest(${column('id')}::uuid[], ${column('item_id')}::uuid[],
          ${column('location_id')}::uuid[], ${column('bin_location')}::text[], ${toPick.map((line) => Number(line.remaining))}::int[],
          ${column('line_number')}::int[], ${column('item_number_display')}::text[], ${column('item_description')}::text[],
          ${column('unit_of_measure')}::text[])
          as l(order_line_id, item_id, location_id, bin_location, qty_to_pick, line_number, item_number_display, item_description, unit_of_measure)
        returning *
      )
      select s.*, (select batch_number from batch) from (${writtenSessionQuery()}) s`.execute(tx);
    const batch = session!;
    await recordAndEmit(tx, actor, {
      entityType: 'pick_batch', entityId: batch.id, action: 'started', manufacturerId: order.manufacturer_id,
      after: { batch_number: batch.batch_number, order_id: orderId, lines: toPick.map((line) => ({ order_line_id: line.id, qty_to_pick: Number(line.remaining) })) },
    }, 'pick_batch.started', { ...batchEvent(batch, order.order_number), lines: toPick.length });
    return serializeSession(batch, { started: true });
  });
}

/** A line the picker can still work: the batch in progress and the line not finished. */
function requireOpenLine(batch: BatchRow, line: BatchLineRow, action: string, allowed: readonly string[] = ['pending']) {
  requireBatchStatus(batch, ['in_progress'], action);
  if (!allowed.includes(line.status)) throw invalidStatus(`line is ${line.status}; cannot ${action} it`);
}

/**
 * Every action on a batch but the one-statement ones: one transaction with the order and the batch locked; it answers
 * with `answer` (by default the batch as it is now).
 */
export function batchWrite<T = PickSessionResponse>(
  db: Kysely<DB>, actor: Actor, batchId: string, work: (tx: Transaction<DB>, batch: BatchRow) => Promise<void>,
  answer: (tx: Transaction<DB>) => Promise<T> = (tx) => readSession(tx, actor, batchId) as Promise<T>,
) {
  return inTransaction(db, async (tx) => {
    await work(tx, await lockBatch(tx, actor, batchId));
    return answer(tx);
  });
}

/** A line action that takes more than one statement: the order and the batch locked; it answers with the line. */
function lineAction(db: Kysely<DB>, actor: Actor, batchId: string, lineId: string, work: (tx: Transaction<DB>, batch: BatchRow, line: BatchLineRow) => Promise<void>) {
  return batchWrite(db, actor, batchId, async (tx, batch) => work(tx, batch, await lineOf(tx, batchId, lineId)), async (tx) => {
    const { rows: [line] } = await sessionLineQuery(batchId, lineId).execute(tx);
    return serializeLine(line!);
  });
}

const lineChange = (line: BatchLineRow, after: Partial<BatchLineRow>) => ({
  line_id: line.id, before: { status: line.status, qty_picked: line.qty_picked, qty_short: line.qty_short }, after,
});

interface LineChange {
  batchStatus: BatchRow['status'];
  set: RawBuilder<unknown>;
  /** The action's rules on the line, in SQL: the line changes only where they hold. */
  guard: RawBuilder<unknown>;
  action: string;
  /** The history row's after, from the changed line. */
  after: RawBuilder<unknown>;
  /** Says why the guard refused (throws), or 'done' when nothing needed to change. */
  explain: (batch: BatchRow, line: BatchLineRow) => 'done' | void;
}

/** A floor action as one statement: `write` is its WITH clauses, the one named `changed` returns what it changed. */
interface OneStatementAction<Row> {
  write: RawBuilder<unknown>;
  /** What the answer is made of, read by the same statement: as the batch was when the statement began. */
  read: RawBuilder<Row>;
  /** Nothing changed: says why (throws), or 'done' when nothing needed to change; returning nothing asks for another try. */
  explain: (batch: BatchRow) => Promise<'done' | void>;
}

/**
 * Pick, verify and complete are most of the floor's requests (pick and verify each line), so each is one statement,
 * one round trip to the database: it changes the batch or its line where the action's rules hold (locking the batch
 * row), writes the history row, and reads what it answers with, as the statement began: the caller lays `changed` (the
 * update's RETURNING) over it. When nothing changed, the batch is read again to say why; `changed` is then null.
 * Statuses only move forward, so a second attempt is needed only when the batch reached the status the action needs
 * meanwhile (or the statement waited for a lock and judged the batch as it was before). They lock no order: each takes
 * one row lock, the batch's, so the order-then-batch locking of the other actions never waits on them in a cycle.
 */
async function inOneStatement<Row, Changed>(db: Kysely<DB>, actor: Actor, batchId: string, action: OneStatementAction<Row>) {
  for (let attempt = 1; ; attempt++) {
    const { rows: [row] } = await sql<Row & { changed: Changed | null }>`
      with ${action.write}
      select s.*, (select to_jsonb(changed) from changed) as changed from (${action.read}) as s`.execute(db);
    if (row?.changed) return { row, changed: row.changed };
    const batch = await inPartnerScope(db.selectFrom('pick_batches').selectAll().where('id', '=', batchId), actor, 'manufacturer_id').executeTakeFirst();
    if (!batch) throw notFound('pick batch');
    // Nothing needed to change: the statement's own read is the answer.
    if (await action.explain(batch) === 'done') return { row: row!, changed: null };
    if (attempt === 2) throw conflict('the batch changed while this was done; read it and try again');
  }
}

/** The batch row of a one-statement action, locked, in the key's partner scope and with the status the action needs. */
function lockedBatch(actor: Actor, batchId: string, status: BatchRow['status']) {
  const inScope = actor.manufacturerId ? sql`and manufacturer_id = ${actor.manufacturerId}` : sql``;
  return sql`select id, manufacturer_id from pick_batches where id = ${batchId} and status = ${status} ${inScope} for update`;
}

/** The history row of a one-statement action, written from the `changed` row (its manufacturer_id is the batch's). */
function historyOfChange(actor: Actor, batchId: string, action: string, before: RawBuilder<unknown>, after: RawBuilder<unknown>) {
  return sql`insert into history (user_id, api_key_id, entity_type, entity_id, action, manufacturer_id, before, after)
    select ${actor.userId}, ${actor.apiKeyId}, 'pick_batch', ${batchId}, ${action}, manufacturer_id, ${before}, ${after} from changed`;
}

/**
 * A line action in one statement: the line changes where the guard holds, on a batch with the status it needs. It
 * answers with the line as the session shows it: a line action changes nothing else of the batch.
 */
async function changeLine(db: Kysely<DB>, actor: Actor, batchId: string, lineId: string, change: LineChange) {
  const { row, changed } = await inOneStatement<SessionLineRow, ChangedLine>(db, actor, batchId, {
    write: sql`batch as (${lockedBatch(actor, batchId, change.batchStatus)}), changed as (
        update pick_batch_lines l set ${change.set}, updated_at = now()
        from batch where l.id = ${lineId} and l.pick_batch_id = batch.id and ${change.guard}
        returning l.*, batch.manufacturer_id
      ), history as (${historyOfChange(actor, batchId, change.action, sql`null`, change.after)})`,
    read: sessionLineQuery(batchId, lineId),
    explain: async (batch) => change.explain(batch, await lineOf(db, batchId, lineId)),
  });
  if (!changed) return serializeLine(row);
  const { status, qty_picked, qty_short, short_reason, pack_verified_at } = changed;
  return serializeLine({ ...row, status, qty_picked, qty_short, short_reason, pack_verified_at: isoTimeOfJson(pack_verified_at) });
}

/** The columns a line action changes, as the update returned them (JSON). */
type ChangedLine = Pick<SessionLineRow, 'status' | 'qty_picked' | 'qty_short' | 'short_reason' | 'pack_verified_at'>;

/** Picks units; picks add up, and the line is picked once they reach QtyToPick. */
export function pickLine(db: Kysely<DB>, actor: Actor, batchId: string, lineId: string, qty: number) {
  return changeLine(db, actor, batchId, lineId, {
    batchStatus: 'in_progress',
    set: sql`qty_picked = l.qty_picked + ${qty}::int, status = case when l.qty_picked + ${qty}::int = l.qty_to_pick then 'picked' else 'pending' end`,
    guard: sql`l.status = 'pending' and l.qty_picked + ${qty}::int <= l.qty_to_pick`,
    action: 'line_picked',
    // As lineChange() records it; before from the guard: pending, with qty_picked less what was added.
    after: sql`jsonb_build_object('line_id', id,
      'before', jsonb_build_object('status', 'pending', 'qty_picked', qty_picked - ${qty}::int, 'qty_short', qty_short),
      'after', jsonb_build_object('status', status, 'qty_picked', qty_picked))`,
    explain: (batch, line) => {
      requireOpenLine(batch, line, 'pick');
      const left = line.qty_to_pick - line.qty_picked;
      if (qty > left) throw invalidRequest(`qty_picked ${qty} is more than the ${left} left to pick on this line`);
    },
  });
}

/** The rest of the line cannot be found: it closes short, with a short-pick exception and an order block. */
export function shortLine(db: Kysely<DB>, actor: Actor, batchId: string, lineId: string, input: { qty_short: number; reason: string }) {
  return lineAction(db, actor, batchId, lineId, async (tx, batch, line) => {
    requireOpenLine(batch, line, 'short');
    const left = line.qty_to_pick - line.qty_picked;
    if (input.qty_short !== left) {
      throw invalidRequest(`a short pick closes the line: qty_short must be the ${left} units not picked (pick what you have first)`);
    }
    const reason = input.reason.trim();
    await tx.updateTable('pick_batch_lines').set({ qty_short: input.qty_short, short_reason: reason, status: 'short', updated_at: new Date() })
      .where('id', '=', line.id).execute();
    await recordHistory(tx, actor, { entityType: 'pick_batch', entityId: batch.id, action: 'line_short', manufacturerId: batch.manufacturer_id, after: lineChange(line, { status: 'short', qty_short: input.qty_short, short_reason: reason }) });
    await openException(tx, actor, { kind: 'short_pick', batch, line, qtyShort: input.qty_short, shortReason: reason });
  });
}

/**
 * The bin held another item (or the picker took one): the line is set aside (skipped) with a mispick exception and an
 * order block. A line already set aside may be flagged again; the newer exception supersedes the older.
 */
export function mispickLine(db: Kysely<DB>, actor: Actor, batchId: string, lineId: string, input: { actual_item_id: string; actual_qty: number; reason: string }) {
  return lineAction(db, actor, batchId, lineId, async (tx, batch, line) => {
    requireOpenLine(batch, line, 'flag a mispick on', ['pending', 'skipped']);
    if (input.actual_item_id === line.item_id) throw invalidRequest('actual_item_id is the line\'s own item; that is not a mispick');
    // Only the batch's own partner's items: another partner's item number must not show in this partner's exceptions.
    const actual = await tx.selectFrom('items').select('id').where('id', '=', input.actual_item_id).where('manufacturer_id', '=', batch.manufacturer_id).executeTakeFirst();
    if (!actual) throw invalidRequest('actual_item_id does not name an item of the batch\'s supply partner');
    await setAside(tx, actor, batch, line, 'mispick');
    await openException(tx, actor, { kind: 'mispick', batch, line, flagReason: input.reason.trim(), actualItemId: input.actual_item_id, actualQty: input.actual_qty });
  });
}

/** The stock is damaged or wrong in quality: the line is set aside with a quality exception and an order block. */
export function flagQuality(db: Kysely<DB>, actor: Actor, batchId: string, lineId: string, input: { reason: string }) {
  return lineAction(db, actor, batchId, lineId, async (tx, batch, line) => {
    requireOpenLine(batch, line, 'flag the quality of', ['pending', 'skipped']);
    await setAside(tx, actor, batch, line, 'quality');
    await openException(tx, actor, { kind: 'quality', batch, line, flagReason: input.reason.trim() });
  });
}

/** A flagged line is set aside whole: units already picked from it go back to the bin, so none of it ships. */
async function setAside(tx: Transaction<DB>, actor: Actor, batch: BatchRow, line: BatchLineRow, kind: string) {
  await tx.updateTable('pick_batch_lines').set({ status: 'skipped', qty_picked: 0, updated_at: new Date() }).where('id', '=', line.id).execute();
  await recordHistory(tx, actor, { entityType: 'pick_batch', entityId: batch.id, action: `line_${kind}`, manufacturerId: batch.manufacturer_id, after: lineChange(line, { status: 'skipped', qty_picked: 0 }) });
}

/** Pack verification of a picked line at the pack station (the batch completed; something picked on the line). */
export function verifyLine(db: Kysely<DB>, actor: Actor, batchId: string, lineId: string) {
  return changeLine(db, actor, batchId, lineId, {
    batchStatus: 'completed',
    set: sql`pack_verified_at = now(), pack_verified_by = ${actor.userId}`,
    guard: sql`l.qty_picked > 0 and l.pack_verified_at is null`,
    action: 'line_verified',
    after: sql`jsonb_build_object('line_id', id)`,
    explain: (batch, line) => {
      requireBatchStatus(batch, ['completed'], 'verify lines of');
      if (line.qty_picked === 0) throw invalidStatus(`nothing was picked on this line (${line.status}); there is nothing to verify`);
      if (line.pack_verified_at) return 'done';
    },
  });
}

/** in_progress -> completed once no line is pending (each picked, short or set aside). */
export async function completeBatch(db: Kysely<DB>, actor: Actor, batchId: string) {
  const { row } = await inOneStatement<SessionRow, { status: BatchRow['status'] }>(db, actor, batchId, {
    write: sql`changed as (
        update pick_batches b set status = 'completed', completed_at = now(), updated_at = now()
        from (${lockedBatch(actor, batchId, 'in_progress')}) batch
        where b.id = batch.id and not exists (select 1 from pick_batch_lines l where l.pick_batch_id = b.id and l.status = 'pending')
        returning b.status, b.manufacturer_id
      ), history as (${historyOfChange(actor, batchId, 'completed', sql`'{"status":"in_progress"}'::jsonb`, sql`'{"status":"completed"}'::jsonb`)})`,
    read: sessionQuery(actor, batchId),
    explain: async (batch) => {
      requireBatchStatus(batch, ['in_progress'], 'complete');
      const { n } = await db.selectFrom('pick_batch_lines').where('pick_batch_id', '=', batchId).where('status', '=', 'pending')
        .select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
      if (Number(n) > 0) throw invalidStatus(`${n} line(s) still pending: pick, short or flag each before completing`);
    },
  });
  // Its explanation never says 'done': an answer here is a batch the statement completed.
  return serializeSession({ ...row, status: 'completed' });
}

/**
 * in_progress, completed or packed -> cancelled: the batch's lines stop holding the order lines' units, so the next
 * batch picks them again. Nothing had moved (stock moves when a batch ships). The order blocks the batch opened are
 * cancelled; its exceptions stay for review. A packed batch may be cancelled too (a packed order that cannot ship, say),
 * its packing list stays on file.
 */
export function cancelBatch(db: Kysely<DB>, actor: Actor, batchId: string) {
  return batchWrite(db, actor, batchId, async (tx, batch) => {
    requireBatchStatus(batch, ['in_progress', 'completed', 'packed'], 'cancel');
    await tx.updateTable('pick_batches').set({ status: 'cancelled', cancelled_at: new Date(), updated_at: new Date() }).where('id', '=', batchId).execute();
    const blocks = await tx.updateTable('order_blocks').set({ status: 'cancelled', updated_at: new Date() })
      .where('status', '=', 'open')
      .where(sql<boolean>`${blockExceptionId()} in (select id from pick_exceptions where pick_batch_id = ${batchId})`)
      .returning('id').execute();
    await recordHistory(tx, actor, {
      entityType: 'pick_batch', entityId: batchId, action: 'cancelled', manufacturerId: batch.manufacturer_id,
      before: { status: batch.status }, after: { status: 'cancelled', cancelled_block_ids: blocks.map((b) => b.id) },
    });
  });
}
