// QC of a verified batch (record counts, mark passed, waive) and the moves between draft and verified.
import { sql, type Kysely, type Transaction } from 'kysely';
import type { InspectionStatus } from '../../db/column-types.ts';
import type { DB } from '../../db/schema.ts';
import { inTransaction } from '../../db/transaction.ts';
import type { Actor } from '../../http/auth.ts';
import { ApiError, badRequest, notFound } from '../../domain/errors.ts';
import { batchWithLines } from './queries.ts';
import { lockBatch, recordBatchChange, requireStatus } from './service.ts';

const CLEARED = { inspection_status: 'pending', qty_passed: null, qty_failed: null, inspection_notes: null, inspected_by: null, inspected_at: null } as const;

/** The result of recorded counts: passed when none failed, failed when none passed, partial otherwise. */
export function inspectionResult(passed: number, failed: number): InspectionStatus {
  if (failed === 0) return 'passed';
  if (passed === 0) return 'failed';
  return 'partial';
}

async function inspectLine(
  db: Kysely<DB>, actor: Actor, batchId: string, lineId: string,
  decide: (line: { qty_received: number; inspection_status: InspectionStatus; qty_passed: number | null }) =>
    { action: string; set: Record<string, unknown> },
) {
  return inTransaction(db, async (tx) => {
    const batch = await lockBatch(tx, actor, batchId);
    requireStatus(batch, 'verified', 'inspection');
    const line = await tx.selectFrom('receiving_lines').selectAll().where('id', '=', lineId).where('batch_id', '=', batchId).forUpdate().executeTakeFirst();
    if (!line) throw notFound('receiving line');
    const { action, set } = decide(line);
    await tx.updateTable('receiving_lines').set({ ...set, updated_at: sql`now()` }).where('id', '=', lineId).execute();
    await recordBatchChange(tx, actor, batch, action, { line_id: lineId, ...set }, {
      line_id: lineId, inspection_status: line.inspection_status, qty_passed: line.qty_passed, qty_failed: line.qty_failed,
    });
    return batchWithLines(tx, actor, batchId);
  });
}

const inspectedBy = (actor: Actor) => ({ inspected_by: actor.userId, inspected_at: new Date() });

export function recordInspection(db: Kysely<DB>, actor: Actor, batchId: string, lineId: string, counts: { qty_passed: number; qty_failed: number; inspection_notes?: string | null }) {
  return inspectLine(db, actor, batchId, lineId, (line) => {
    if (counts.qty_passed + counts.qty_failed !== line.qty_received) {
      throw badRequest(`qty_passed + qty_failed must equal qty_received (${line.qty_received})`);
    }
    return {
      action: 'inspection_recorded',
      set: {
        inspection_status: inspectionResult(counts.qty_passed, counts.qty_failed),
        qty_passed: counts.qty_passed,
        qty_failed: counts.qty_failed,
        inspection_notes: counts.inspection_notes?.trim() || null,
        ...inspectedBy(actor),
      },
    };
  });
}

/** A toggle: passes every unit; on a line already fully passed it takes the inspection back to pending. */
export function markLinePassed(db: Kysely<DB>, actor: Actor, batchId: string, lineId: string) {
  return inspectLine(db, actor, batchId, lineId, (line) => {
    if (line.inspection_status === 'passed' && line.qty_passed === line.qty_received) return { action: 'line_pass_reverted', set: CLEARED };
    return {
      action: 'line_passed',
      set: { inspection_status: 'passed', qty_passed: line.qty_received, qty_failed: 0, inspection_notes: null, ...inspectedBy(actor) },
    };
  });
}

export function waiveLine(db: Kysely<DB>, actor: Actor, batchId: string, lineId: string) {
  return inspectLine(db, actor, batchId, lineId, () => ({
    action: 'line_waived',
    set: { inspection_status: 'waived', qty_passed: null, qty_failed: null, inspection_notes: null, ...inspectedBy(actor) },
  }));
}

async function transition(db: Kysely<DB>, actor: Actor, batchId: string, work: (tx: Transaction<DB>) => Promise<void>) {
  return inTransaction(db, async (tx) => {
    await work(tx);
    return batchWithLines(tx, actor, batchId);
  });
}

export function verifyBatch(db: Kysely<DB>, actor: Actor, batchId: string) {
  return transition(db, actor, batchId, async (tx) => {
    const batch = await lockBatch(tx, actor, batchId);
    requireStatus(batch, 'draft', 'verify');
    const line = await tx.selectFrom('receiving_lines').select('id').where('batch_id', '=', batchId).limit(1).executeTakeFirst();
    if (!line) throw new ApiError(422, 'batch_empty', `batch ${batch.batch_number} has no lines to verify`);
    await tx.updateTable('receiving_batches').set({ status: 'verified' }).where('id', '=', batchId).execute();
    await recordBatchChange(tx, actor, batch, 'verified', { status: 'verified' }, { status: batch.status });
  });
}

/** Back to draft for corrections; the inspection results are cleared, since the lines may change. */
export function reopenBatch(db: Kysely<DB>, actor: Actor, batchId: string) {
  return transition(db, actor, batchId, async (tx) => {
    const batch = await lockBatch(tx, actor, batchId);
    requireStatus(batch, 'verified', 'reopen');
    await tx.updateTable('receiving_lines').set({ ...CLEARED, updated_at: sql`now()` }).where('batch_id', '=', batchId).execute();
    await tx.updateTable('receiving_batches').set({ status: 'draft' }).where('id', '=', batchId).execute();
    await recordBatchChange(tx, actor, batch, 'reopened', { status: 'draft' }, { status: batch.status });
  });
}
