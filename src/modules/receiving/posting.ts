// Posting a verified batch into stock, and voiding a posted one, each in one transaction through domain/stock.ts.
import { sql, type Kysely, type Transaction } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { inTransaction } from '../../db/transaction.ts';
import { emit } from '../../domain/events.ts';
import { quarantineStock, receiveStock, stampReceipt } from '../../domain/stock.ts';
import type { Actor } from '../../http/auth.ts';
import { ApiError, invalidRequest } from '../../domain/errors.ts';
import { batchWithLines } from './queries.ts';
import type { BatchRow, LineRow } from './serialize.ts';
import { lockBatch, recordBatchChange, requireStatus } from './service.ts';

/** Units a line puts on hand (passed, or all of a waived line) and units it sends to quarantine (failed). */
function split(line: LineRow): { onHand: number; quarantined: number } {
  if (line.inspection_status === 'waived') return { onHand: line.qty_received, quarantined: 0 };
  return { onHand: line.qty_passed ?? 0, quarantined: line.qty_failed ?? 0 };
}

// Items in id order: two posts or voids touching the same items lock them in the same order and cannot deadlock.
const byItem = (a: LineRow, b: LineRow) => (a.item_id < b.item_id ? -1 : a.item_id > b.item_id ? 1 : a.seq - b.seq);

/**
 * The put-away bin of each line with units to put away: its own location, else the item's primary bin if its location
 * is active (a primary bin at a retired location counts as none); neither stops the post.
 */
async function putAwayLocations(tx: Transaction<DB>, lines: LineRow[]): Promise<Map<string, string>> {
  const needPrimary = [...new Set(lines.filter((l) => !l.new_location_id && split(l).onHand > 0).map((l) => l.item_id))];
  const primaries = needPrimary.length
    ? await tx.selectFrom('item_locations as b').innerJoin('locations as loc', 'loc.id', 'b.location_id').select(['b.item_id', 'b.location_id'])
      .where('b.item_id', 'in', needPrimary).where('b.is_primary', '=', true).where('b.inventory_status', '=', 'available')
      .where('loc.is_active', '=', true).execute()
    : [];
  const primaryOf = new Map(primaries.map((p) => [p.item_id, p.location_id]));
  const unplaced = lines.filter((l) => split(l).onHand > 0 && !l.new_location_id && !primaryOf.has(l.item_id));
  if (unplaced.length) {
    throw invalidRequest(
      `${unplaced.map((l) => l.item_number_display).join(', ')}: no location on the line and no primary bin at an active location for the item; set the line's location`,
      unplaced.map((l) => ({ line_id: l.id, item_id: l.item_id })),
    );
  }
  return new Map(lines.filter((l) => split(l).onHand > 0).map((l) => [l.id, l.new_location_id ?? primaryOf.get(l.item_id)!]));
}

/** The quarantine location failed units go to: QUARANTINE of the MAIN warehouse, else any active quarantine location. */
async function quarantineLocation(tx: Transaction<DB>): Promise<string> {
  const location = await tx.selectFrom('locations').select('id')
    .where('location_type', '=', 'quarantine').where('is_active', '=', true)
    .orderBy(sql`location_code = 'QUARANTINE'`, 'desc').orderBy('location_code')
    .executeTakeFirst();
  if (!location) throw invalidRequest('there is no active quarantine location for the failed units');
  return location.id;
}

export async function postBatch(db: Kysely<DB>, actor: Actor, batchId: string) {
  return inTransaction(db, async (tx) => {
    const batch = await lockBatch(tx, actor, batchId);
    requireStatus(batch, 'verified', 'posting');
    const lines = (await tx.selectFrom('receiving_lines').selectAll().where('batch_id', '=', batchId).execute()).sort(byItem);
    const pending = lines.filter((l) => l.inspection_status === 'pending');
    if (pending.length) {
      throw new ApiError(422, 'pending_qc', `${pending.length} line(s) of batch ${batch.batch_number} are still pending inspection`, { details: pending.map((l) => ({ line_id: l.id })) });
    }
    const bins = await putAwayLocations(tx, lines);
    const quarantine = lines.some((l) => split(l).quarantined > 0) ? await quarantineLocation(tx) : null;
    const reason = `receiving ${batch.batch_number}`;
    const summary = [];
    for (const line of lines) {
      const { onHand, quarantined } = split(line);
      const bin = bins.get(line.id) ?? null;
      if (bin) {
        await receiveStock(tx, actor, {
          itemId: line.item_id, locationId: bin, quantity: onHand, reason, referenceId: batchId,
          unitCost: line.new_unit_cost, receivedDate: batch.received_date,
        });
      } else {
        await stampReceipt(tx, line.item_id, 0, line.new_unit_cost, batch.received_date);
      }
      if (quarantined > 0) await quarantineStock(tx, actor, { itemId: line.item_id, locationId: quarantine!, quantity: quarantined, reason, referenceId: batchId });
      await tx.updateTable('receiving_lines')
        .set({ posted_location_id: bin, quarantine_location_id: quarantined > 0 ? quarantine : null })
        .where('id', '=', line.id).execute();
      summary.push({ line_id: line.id, item_id: line.item_id, qty_on_hand: onHand, qty_quarantined: quarantined, location_id: bin });
    }
    await tx.updateTable('receiving_batches').set({ status: 'posted', posted_date: sql`now()`, posted_by: actor.userId }).where('id', '=', batchId).execute();
    await recordBatchChange(tx, actor, batch, 'posted', { status: 'posted', lines: summary }, { status: batch.status });
    await emit(tx, 'receiving.posted', eventData(batch, summary), batch.manufacturer_id);
    return batchWithLines(tx, actor, batchId);
  });
}

function eventData(batch: BatchRow, lines: { qty_on_hand: number; qty_quarantined: number }[], extra: Record<string, unknown> = {}) {
  return {
    batch_id: batch.id,
    batch_number: batch.batch_number,
    received_date: batch.received_date,
    qty_on_hand: lines.reduce((sum, l) => sum + l.qty_on_hand, 0),
    qty_quarantined: lines.reduce((sum, l) => sum + l.qty_quarantined, 0),
    lines,
    ...extra,
  };
}

/** The stock a void must take back is gone (moved, shipped, adjusted) or committed: say which item, change nothing. */
function voidRefused(line: LineRow, error: unknown): never {
  if (error instanceof ApiError && error.code === 'insufficient_stock') {
    throw new ApiError(422, 'insufficient_stock', `cannot void: the received units of ${line.item_number_display} are no longer all there (${error.message})`, {
      details: { line_id: line.id, item_id: line.item_id },
    });
  }
  throw error;
}

/**
 * Takes back exactly what the post put: the on-hand units from their bin and the failed units from quarantine, as
 * compensating movements. Average cost stays where the post moved it.
 */
export async function voidBatch(db: Kysely<DB>, actor: Actor, batchId: string, reason: string) {
  return inTransaction(db, async (tx) => {
    const batch = await lockBatch(tx, actor, batchId);
    requireStatus(batch, 'posted', 'voiding');
    const lines = (await tx.selectFrom('receiving_lines').selectAll().where('batch_id', '=', batchId).execute()).sort(byItem);
    const why = `void of ${batch.batch_number}: ${reason.trim()}`;
    const summary = [];
    for (const line of lines) {
      const { onHand, quarantined } = split(line);
      try {
        if (onHand > 0) await receiveStock(tx, actor, { itemId: line.item_id, locationId: line.posted_location_id!, quantity: -onHand, reason: why, referenceId: batchId });
        if (quarantined > 0) await quarantineStock(tx, actor, { itemId: line.item_id, locationId: line.quarantine_location_id!, quantity: -quarantined, reason: why, referenceId: batchId });
      } catch (error) {
        voidRefused(line, error);
      }
      summary.push({ line_id: line.id, item_id: line.item_id, qty_on_hand: -onHand, qty_quarantined: -quarantined, location_id: line.posted_location_id });
    }
    await tx.updateTable('receiving_batches')
      .set({ status: 'voided', voided_at: sql`now()`, voided_by: actor.userId, void_reason: reason.trim() })
      .where('id', '=', batchId).execute();
    await recordBatchChange(tx, actor, batch, 'voided', { status: 'voided', reason: reason.trim(), lines: summary }, { status: batch.status });
    await emit(tx, 'receiving.voided', eventData(batch, summary, { reason: reason.trim() }), batch.manufacturer_id);
    return batchWithLines(tx, actor, batchId);
  });
}
