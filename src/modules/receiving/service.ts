// Receiving batches and their lines while the batch is a draft: create, delete, add, edit and remove lines, and put
// every line to one location. The shared pieces (locking a batch, status rules, history) are used by the QC,
// posting and import files too.
import { sql, type Kysely, type Transaction } from 'kysely';
import type { ReceivingBatchStatus, ReferenceType } from '../../db/column-types.ts';
import type { DB } from '../../db/schema.ts';
import { inTransaction } from '../../db/transaction.ts';
import { recordHistory } from '../../domain/history.ts';
import { documentNumber, localDate } from '../../domain/numbers.ts';
import { inPartnerScope, type Actor } from '../../http/auth.ts';
import { ApiError, forbidden, invalidRequest, invalidStatus, notFound } from '../../domain/errors.ts';
import { batchWithLines } from './queries.ts';
import { serializeBatch, serializeLine, type BatchRow } from './serialize.ts';

/** Locks the batch row: changes to one batch (and a post racing a post) run one after the other. 404 outside scope. */
export async function lockBatch(tx: Transaction<DB>, actor: Actor, id: string): Promise<BatchRow> {
  const batch = await inPartnerScope(tx.selectFrom('receiving_batches').selectAll().where('id', '=', id), actor, 'manufacturer_id')
    .forUpdate()
    .executeTakeFirst();
  if (!batch) throw notFound('receiving batch');
  return batch;
}

export function requireStatus(batch: BatchRow, status: ReceivingBatchStatus, doing: string): void {
  if (batch.status !== status) throw invalidStatus(`batch ${batch.batch_number} is ${batch.status}; ${doing} needs a ${status} batch`);
}

/** Every change to a batch: who changed it last, and the audit row. */
export async function recordBatchChange(tx: Transaction<DB>, actor: Actor, batch: BatchRow, action: string, after?: unknown, before?: unknown) {
  await tx.updateTable('receiving_batches').set({ updated_by: actor.userId, updated_at: sql`now()` }).where('id', '=', batch.id).execute();
  await recordHistory(tx, actor, { entityType: 'receiving_batch', entityId: batch.id, action, manufacturerId: batch.manufacturer_id, before, after });
}

/** A scoped key works only for its own partner (403), and the partner must exist (422). */
export async function assertPartner(tx: Transaction<DB>, actor: Actor, manufacturerId: string): Promise<void> {
  if (actor.manufacturerId && actor.manufacturerId !== manufacturerId) {
    throw forbidden('a partner-scoped key receives only for its own supply partner');
  }
  const partner = await tx.selectFrom('manufacturers').select('id').where('id', '=', manufacturerId).executeTakeFirst();
  if (!partner) throw invalidRequest('manufacturer_id does not name a supply partner');
}

/** Inserts a draft batch under a fresh number (a collision draws another). */
export async function insertBatch(tx: Transaction<DB>, actor: Actor, input: { manufacturer_id: string; received_date?: string; notes?: string | null }) {
  for (;;) {
    const row = await tx
      .insertInto('receiving_batches')
      .values({
        manufacturer_id: input.manufacturer_id,
        batch_number: documentNumber('RB'),
        received_date: input.received_date ?? localDate(),
        notes: input.notes?.trim() || null,
        posted_date: null, posted_by: null, voided_at: null, voided_by: null, void_reason: null,
        created_by: actor.userId,
        updated_by: actor.userId,
      })
      .onConflict((oc) => oc.constraint('receiving_batches_batch_number_key').doNothing())
      .returningAll()
      .executeTakeFirst();
    if (row) return row;
  }
}

export async function createBatch(db: Kysely<DB>, actor: Actor, input: { manufacturer_id: string; received_date?: string; notes?: string | null }) {
  return inTransaction(db, async (tx) => {
    await assertPartner(tx, actor, input.manufacturer_id);
    const row = await insertBatch(tx, actor, input);
    const batch = serializeBatch(row, { justCreated: true });
    await recordHistory(tx, actor, { entityType: 'receiving_batch', entityId: row.id, action: 'created', manufacturerId: row.manufacturer_id, after: batch });
    return batch;
  });
}

export async function deleteBatch(db: Kysely<DB>, actor: Actor, id: string): Promise<void> {
  await inTransaction(db, async (tx) => {
    const batch = await lockBatch(tx, actor, id);
    requireStatus(batch, 'draft', 'deleting');
    const lines = await tx.deleteFrom('receiving_lines').where('batch_id', '=', id).returning('id').execute();
    await tx.deleteFrom('receiving_batches').where('id', '=', id).execute();
    await recordHistory(tx, actor, { entityType: 'receiving_batch', entityId: id, action: 'deleted', manufacturerId: batch.manufacturer_id, before: { ...batch, line_count: lines.length } });
  });
}

/** A put-away location a line may name: existing, active, and not quarantine (failed units go there by themselves). */
export async function assertPutAwayLocation(tx: Transaction<DB>, locationId: string): Promise<void> {
  const location = await tx.selectFrom('locations').select(['location_code', 'location_type', 'is_active']).where('id', '=', locationId).executeTakeFirst();
  if (!location) throw invalidRequest('the location does not exist');
  if (!location.is_active) throw invalidRequest(`location ${location.location_code} is retired`);
  if (location.location_type === 'quarantine') throw invalidRequest(`location ${location.location_code} is a quarantine location`);
}

export interface NewLine {
  item_id: string;
  qty_received: number;
  reference_number?: string | null;
  reference_type?: ReferenceType | null;
  new_unit_cost?: number | null;
  new_location_id?: string | null;
}

export async function addLine(db: Kysely<DB>, actor: Actor, batchId: string, input: NewLine) {
  return inTransaction(db, async (tx) => {
    const batch = await lockBatch(tx, actor, batchId);
    requireStatus(batch, 'draft', 'adding lines');
    // A scoped key looks only among its own items, so another partner's item reads as unknown.
    const item = await inPartnerScope(tx.selectFrom('items').selectAll().where('id', '=', input.item_id), actor, 'manufacturer_id').executeTakeFirst();
    if (!item) throw invalidRequest('item_id does not name an item');
    if (item.manufacturer_id !== batch.manufacturer_id) {
      throw new ApiError(422, 'manufacturer_mismatch', `item ${item.item_number_display} belongs to another supply partner than the batch`);
    }
    if (input.new_location_id) await assertPutAwayLocation(tx, input.new_location_id);
    const line = await tx
      .insertInto('receiving_lines')
      .values({
        batch_id: batchId,
        item_id: item.id,
        reference_number: input.reference_number?.trim() || null,
        reference_type: input.reference_type ?? null,
        qty_received: input.qty_received,
        qty_expected: null,
        new_unit_cost: input.new_unit_cost ?? null,
        old_unit_cost: item.average_cost,
        new_location_id: input.new_location_id ?? null,
        old_location: item.warehouse_location,
        qty_passed: null, qty_failed: null, inspection_notes: null, inspected_by: null, inspected_at: null,
        item_number_display: item.item_number_display,
        item_description: item.description,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    const shaped = serializeLine(line);
    await recordBatchChange(tx, actor, batch, 'line_added', shaped);
    return shaped;
  });
}

export interface LineChanges {
  qty_received: number;
  reference_number?: string | null;
  new_unit_cost?: number | null;
  new_location_id?: string | null;
}

async function lineOf(tx: Transaction<DB>, batchId: string, lineId: string) {
  const line = await tx.selectFrom('receiving_lines').selectAll().where('id', '=', lineId).where('batch_id', '=', batchId).forUpdate().executeTakeFirst();
  if (!line) throw notFound('receiving line');
  return line;
}

export async function editLine(db: Kysely<DB>, actor: Actor, batchId: string, lineId: string, changes: LineChanges) {
  return inTransaction(db, async (tx) => {
    const batch = await lockBatch(tx, actor, batchId);
    requireStatus(batch, 'draft', 'editing lines');
    const before = await lineOf(tx, batchId, lineId);
    if (changes.new_location_id) await assertPutAwayLocation(tx, changes.new_location_id);
    const after = await tx
      .updateTable('receiving_lines')
      .set({
        qty_received: changes.qty_received,
        reference_number: changes.reference_number === undefined ? undefined : changes.reference_number?.trim() || null,
        new_unit_cost: changes.new_unit_cost,
        new_location_id: changes.new_location_id,
        updated_at: sql`now()`,
      })
      .where('id', '=', lineId)
      .returningAll()
      .executeTakeFirstOrThrow();
    await recordBatchChange(tx, actor, batch, 'line_updated', serializeLine(after), serializeLine(before));
    return batchWithLines(tx, actor, batchId);
  });
}

export async function deleteLine(db: Kysely<DB>, actor: Actor, batchId: string, lineId: string): Promise<void> {
  await inTransaction(db, async (tx) => {
    const batch = await lockBatch(tx, actor, batchId);
    requireStatus(batch, 'draft', 'removing lines');
    const line = await lineOf(tx, batchId, lineId);
    await tx.deleteFrom('receiving_lines').where('id', '=', lineId).execute();
    await recordBatchChange(tx, actor, batch, 'line_deleted', undefined, serializeLine(line));
  });
}

export async function setLocationOfAllLines(db: Kysely<DB>, actor: Actor, batchId: string, locationId: string) {
  return inTransaction(db, async (tx) => {
    const batch = await lockBatch(tx, actor, batchId);
    requireStatus(batch, 'draft', 'setting the location');
    await assertPutAwayLocation(tx, locationId);
    const moved = await tx.updateTable('receiving_lines').set({ new_location_id: locationId, updated_at: sql`now()` })
      .where('batch_id', '=', batchId).returning('id').execute();
    await recordBatchChange(tx, actor, batch, 'location_set', { location_id: locationId, lines: moved.length });
    return batchWithLines(tx, actor, batchId);
  });
}

export const getBatch = (db: Kysely<DB>, actor: Actor, id: string) => batchWithLines(db, actor, id);
