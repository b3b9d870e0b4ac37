// Cycle counts: a random sample of stocked items, one line per bin; counted, each variance approved as a
// cycle_count_correction movement through domain/stock.ts, then completed. Warehouse work: no partner-scoped keys.
//   draft --start--> in_progress --complete (every line counted)--> completed
//   draft | in_progress --cancel--> cancelled
import { sql, type Kysely, type Transaction } from 'kysely';
import type { CycleCountStatus } from '../../db/column-types.ts';
import { rowCount, totalOfPage } from '../../db/list-counts.ts';
import type { DB } from '../../db/schema.ts';
import { inTransaction } from '../../db/transaction.ts';
import { emit } from '../../domain/events.ts';
import { recordHistory } from '../../domain/history.ts';
import { documentNumber } from '../../domain/numbers.ts';
import { adjustStock } from '../../domain/stock.ts';
import type { Actor } from '../../http/auth.ts';
import { invalidRequest, invalidStatus, notFound } from '../../domain/errors.ts';
import { onePage, type Page } from '../../http/pagination.ts';

type Executor = Kysely<DB> | Transaction<DB>;

/** Batches with their line figures, both from one pass over each batch's lines. */
function batches(db: Executor) {
  const figures = sql<{ line_count: number; counted_count: number }>`lateral (
    select count(*)::int as line_count, count(*) filter (where l.status <> 'pending')::int as counted_count
    from cycle_count_lines l where l.batch_id = b.id)`;
  return db.selectFrom('cycle_count_batches as b').innerJoin(figures.as('f'), (join) => join.onTrue()).select([
    'b.id', 'b.batch_number', 'b.status', 'b.triggered_by', 'b.assigned_to', 'b.started_at', 'b.completed_at', 'b.notes', 'b.created_at',
    'f.line_count', 'f.counted_count',
  ]);
}

async function batchById(db: Executor, id: string) {
  const batch = await batches(db).where('b.id', '=', id).executeTakeFirst();
  if (!batch) throw notFound('cycle count batch');
  return batch;
}

async function linesOf(db: Executor, batchId: string) {
  return db
    .selectFrom('cycle_count_lines as l')
    .innerJoin('items as i', 'i.id', 'l.item_id')
    .leftJoin('locations as loc', 'loc.id', 'l.location_id')
    .select([
      'l.id', 'l.batch_id', 'l.item_id', 'l.location_id', 'l.system_qty', 'l.counted_qty', 'l.variance', 'l.status', 'l.counted_by',
      'l.counted_at', 'i.item_number_display', 'i.description as item_description', 'loc.location_code',
    ])
    .where('l.batch_id', '=', batchId)
    .orderBy('l.seq')
    .execute();
}

async function batchWithLines(db: Executor, id: string) {
  return { batch: await batchById(db, id), lines: await linesOf(db, id) };
}

/**
 * The page's batches are chosen first and their lines counted after: counted in the select list, PostgreSQL would
 * count the lines of every batch an OFFSET skips as well.
 */
export async function listCycleCounts(db: Kysely<DB>, filter: { status?: CycleCountStatus[] }, page: Page) {
  let query = db.selectFrom('cycle_count_batches as b');
  if (filter.status?.length) query = query.where('b.status', 'in', filter.status);
  const total = rowCount(query);
  const pageIds = query.select('b.id as page_id').orderBy('b.created_at', 'desc').orderBy('b.id').$call(onePage(page)).as('p');
  const rows = await batches(db).innerJoin(pageIds, 'p.page_id', 'b.id').select(sql<number>`${total}`.as('total_count'))
    .orderBy('b.created_at', 'desc').orderBy('b.id').execute();
  return { rows: rows.map(({ total_count: _, ...row }) => row), total: await totalOfPage(db, rows, page, total) };
}

export const getCycleCount = (db: Kysely<DB>, id: string) => batchWithLines(db, id);

async function lockBatch(tx: Transaction<DB>, id: string) {
  const batch = await tx.selectFrom('cycle_count_batches').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
  if (!batch) throw notFound('cycle count batch');
  return batch;
}

function requireStatus(batch: { batch_number: string; status: CycleCountStatus }, allowed: CycleCountStatus[], doing: string): void {
  if (!allowed.includes(batch.status)) throw invalidStatus(`cycle count ${batch.batch_number} is ${batch.status}; ${doing} needs ${allowed.join(' or ')}`);
}

const history = (tx: Transaction<DB>, actor: Actor, id: string, action: string, after?: unknown, before?: unknown) =>
  recordHistory(tx, actor, { entityType: 'cycle_count', entityId: id, action, before, after });

/** A draft batch over a random sample of items with stock: one line per available bin of each, at its quantity now. */
export async function generateCycleCount(db: Kysely<DB>, actor: Actor, numItems: number) {
  return inTransaction(db, async (tx) => {
    let batch;
    do {
      batch = await tx.insertInto('cycle_count_batches')
        .values({ batch_number: documentNumber('CC'), triggered_by: 'manual', assigned_to: null, started_at: null, completed_at: null, cancelled_at: null, notes: null, created_by: actor.userId })
        .onConflict((oc) => oc.constraint('cycle_count_batches_batch_number_key').doNothing())
        .returning(['id', 'batch_number']).executeTakeFirst();
    } while (!batch);
    const lines = await sql<{ id: string }>`
      with sample as (select i.id from items i where i.qty_on_hand > 0 order by random() limit ${numItems})
      insert into cycle_count_lines (batch_id, item_id, location_id, system_qty)
      select ${batch.id}, b.item_id, b.location_id, b.qty_on_hand
      from item_locations b join sample s on s.id = b.item_id
      where b.inventory_status = 'available'
      order by b.item_id, b.location_id
      returning id`.execute(tx);
    if (!lines.rows.length) throw invalidRequest('no item has stock to count');
    await history(tx, actor, batch.id, 'generated', { batch_number: batch.batch_number, num_items: numItems, lines: lines.rows.length });
    return batchById(tx, batch.id);
  });
}

export async function startCycleCount(db: Kysely<DB>, actor: Actor, id: string) {
  return inTransaction(db, async (tx) => {
    const batch = await lockBatch(tx, id);
    requireStatus(batch, ['draft'], 'start');
    await tx.updateTable('cycle_count_batches').set({ status: 'in_progress', started_at: sql`now()`, assigned_to: actor.userId, updated_at: sql`now()` }).where('id', '=', id).execute();
    await history(tx, actor, id, 'started', { status: 'in_progress', assigned_to: actor.userId }, { status: batch.status });
    return batchById(tx, id);
  });
}

async function lockLine(tx: Transaction<DB>, batchId: string, lineId: string) {
  const line = await tx.selectFrom('cycle_count_lines').selectAll().where('id', '=', lineId).where('batch_id', '=', batchId).forUpdate().executeTakeFirst();
  if (!line) throw notFound('cycle count line');
  return line;
}

/**
 * A count compares with the bin as the system holds it at that moment (system_qty is refreshed), so stock that moved
 * between generation and counting is not taken for a variance. A line may be recounted until it is approved.
 */
export async function recordCount(db: Kysely<DB>, actor: Actor, id: string, input: { line_id: string; counted_qty: number }): Promise<void> {
  await inTransaction(db, async (tx) => {
    const batch = await lockBatch(tx, id);
    requireStatus(batch, ['in_progress'], 'recording counts');
    const line = await lockLine(tx, id, input.line_id);
    if (line.status === 'approved') throw invalidStatus('the line is approved; its count can no longer change');
    const bin = await tx.selectFrom('item_locations').select('qty_on_hand')
      .where('item_id', '=', line.item_id).where('location_id', '=', line.location_id).where('inventory_status', '=', 'available').executeTakeFirst();
    const systemQty = bin?.qty_on_hand ?? 0;
    const after = { system_qty: systemQty, counted_qty: input.counted_qty, variance: input.counted_qty - systemQty, status: 'counted' as const };
    await tx.updateTable('cycle_count_lines').set({ ...after, counted_by: actor.userId, counted_at: sql`now()`, updated_at: sql`now()` }).where('id', '=', line.id).execute();
    await history(tx, actor, id, 'counted', { line_id: line.id, ...after }, { line_id: line.id, system_qty: line.system_qty, counted_qty: line.counted_qty });
  });
}

/** Approving a counted line applies its variance to the bin as a cycle_count_correction (none when it matched). */
export async function approveLine(db: Kysely<DB>, actor: Actor, id: string, lineId: string): Promise<void> {
  await inTransaction(db, async (tx) => {
    const batch = await lockBatch(tx, id);
    requireStatus(batch, ['in_progress'], 'approving');
    const line = await lockLine(tx, id, lineId);
    if (line.status !== 'counted') throw invalidStatus(line.status === 'pending' ? 'the line has not been counted' : 'the line is already approved');
    const movement = line.variance
      ? await adjustStock(tx, actor, {
        itemId: line.item_id, locationId: line.location_id, quantity: line.variance, movementType: 'cycle_count_correction',
        reason: `cycle count ${batch.batch_number}`, referenceType: 'cycle_count', referenceId: line.id, cycleCountBatchId: batch.id,
      })
      : null;
    await tx.updateTable('cycle_count_lines')
      .set({ status: 'approved', approved_by: actor.userId, approved_at: sql`now()`, movement_id: movement?.id ?? null, updated_at: sql`now()` })
      .where('id', '=', line.id).execute();
    await history(tx, actor, id, 'approved', { line_id: line.id, variance: line.variance, movement_id: movement?.id ?? null });
  });
}

export async function completeCycleCount(db: Kysely<DB>, actor: Actor, id: string) {
  return inTransaction(db, async (tx) => {
    const batch = await lockBatch(tx, id);
    requireStatus(batch, ['in_progress'], 'completing');
    const lines = await tx.selectFrom('cycle_count_lines').select(['status', 'variance']).where('batch_id', '=', id).execute();
    const uncounted = lines.filter((l) => l.status === 'pending').length;
    if (uncounted) throw invalidStatus(`${uncounted} line(s) of ${batch.batch_number} are not counted yet`);
    await tx.updateTable('cycle_count_batches').set({ status: 'completed', completed_at: sql`now()`, updated_at: sql`now()` }).where('id', '=', id).execute();
    const summary = {
      batch_id: id,
      batch_number: batch.batch_number,
      line_count: lines.length,
      lines_with_variance: lines.filter((l) => l.variance).length,
      approved: lines.filter((l) => l.status === 'approved').length,
    };
    await history(tx, actor, id, 'completed', { status: 'completed', ...summary }, { status: batch.status });
    await emit(tx, 'cycle_count.completed', summary);
    return batchWithLines(tx, id);
  });
}

/** Cancelling keeps corrections already approved: they are movements of their own. */
export async function cancelCycleCount(db: Kysely<DB>, actor: Actor, id: string) {
  return inTransaction(db, async (tx) => {
    const batch = await lockBatch(tx, id);
    requireStatus(batch, ['draft', 'in_progress'], 'cancelling');
    await tx.updateTable('cycle_count_batches').set({ status: 'cancelled', cancelled_at: sql`now()`, updated_at: sql`now()` }).where('id', '=', id).execute();
    await history(tx, actor, id, 'cancelled', { status: 'cancelled' }, { status: batch.status });
    return batchById(tx, id);
  });
}
