// Imports that create a draft batch in one go: JSON lines, or a CSV/XLSX file read with the partner's saved import
// profile. Rows that name no usable item are reported in `skipped`; the good rows become the batch.
import type { Kysely, Transaction } from 'kysely';
import type { ReferenceType } from '../../db/column-types.ts';
import type { DB } from '../../db/schema.ts';
import { inTransaction } from '../../db/transaction.ts';
import { recordHistory } from '../../domain/history.ts';
import { inPartnerScope, type Actor } from '../../http/auth.ts';
import { invalidRequest } from '../../domain/errors.ts';
import { assertPartner, insertBatch } from './service.ts';
import { serializeBatch, serializeLine } from './serialize.ts';

export interface ImportHeader {
  manufacturer_id: string;
  received_date?: string;
  notes?: string | null;
}

/** A row that survived parsing: its position (index or file row), what it names, and the line it becomes. */
export interface ImportRow {
  index: number;
  itemRef: string;
  itemId: string | null;
  qty_received: number;
  reference_number?: string | null;
  reference_type?: ReferenceType | null;
  new_unit_cost?: number | null;
  new_location_id?: string | null;
  uom?: string | null;
}

export interface SkippedRow {
  index: number;
  reason: string;
  item_id: string;
}

const IMPORT_CHUNK = 1000;

type ImportItem = {
  id: string; manufacturer_id: string; item_number_display: string; description: string;
  average_cost: number | null; warehouse_location: string | null; selling_uom: string; purchase_uom: string | null;
};

/** Why a row cannot become a line, or null when it can. */
function rowProblem(
  row: ImportRow, item: ImportItem | undefined, partner: string,
  locations: Map<string, { location_code: string; location_type: string; is_active: boolean }>,
): string | null {
  if (!item) return 'unknown item';
  if (item.manufacturer_id !== partner) return 'the item belongs to another supply partner';
  if (row.uom && ![item.selling_uom, item.purchase_uom].some((u) => u?.toUpperCase() === row.uom!.toUpperCase())) {
    return `unit ${row.uom} is neither the item's selling nor its purchase unit`;
  }
  if (row.new_location_id) {
    const location = locations.get(row.new_location_id);
    if (!location) return 'unknown location';
    if (!location.is_active) return `location ${location.location_code} is retired`;
    if (location.location_type === 'quarantine') return `location ${location.location_code} is a quarantine location`;
  }
  return null;
}

/** Writes the draft batch and its good lines (qty_expected = qty_received), in one transaction. */
export async function writeImport(tx: Transaction<DB>, actor: Actor, header: ImportHeader, rows: ImportRow[], skipped: SkippedRow[], source: string) {
  await assertPartner(tx, actor, header.manufacturer_id);
  const itemIds = [...new Set(rows.map((r) => r.itemId).filter((id): id is string => !!id))];
  const locationIds = [...new Set(rows.map((r) => r.new_location_id).filter((id): id is string => !!id))];
  const items = itemIds.length
    ? await inPartnerScope(tx.selectFrom('items').select([
      'id', 'manufacturer_id', 'item_number_display', 'description', 'average_cost', 'warehouse_location', 'selling_uom', 'purchase_uom',
    ]).where('id', 'in', itemIds), actor, 'manufacturer_id').execute()
    : [];
  const locations = locationIds.length
    ? await tx.selectFrom('locations').select(['id', 'location_code', 'location_type', 'is_active']).where('id', 'in', locationIds).execute()
    : [];
  const itemById = new Map(items.map((i) => [i.id, i]));
  const locationById = new Map(locations.map((l) => [l.id, l]));
  const good: { row: ImportRow; item: ImportItem }[] = [];
  for (const row of rows) {
    const item = row.itemId ? itemById.get(row.itemId) : undefined;
    const problem = rowProblem(row, item, header.manufacturer_id, locationById);
    if (problem) skipped.push({ index: row.index, reason: problem, item_id: row.itemRef });
    else good.push({ row, item: item! });
  }
  skipped.sort((a, b) => a.index - b.index);
  if (!good.length) throw invalidRequest('no row could be imported', { skipped });

  const batch = await insertBatch(tx, actor, header);
  const lines = [];
  for (let start = 0; start < good.length; start += IMPORT_CHUNK) {
    lines.push(...await tx.insertInto('receiving_lines').values(good.slice(start, start + IMPORT_CHUNK).map(({ row, item }) => ({
      batch_id: batch.id,
      item_id: item.id,
      reference_number: row.reference_number?.trim() || null,
      reference_type: row.reference_type ?? null,
      qty_received: row.qty_received,
      qty_expected: row.qty_received,
      new_unit_cost: row.new_unit_cost ?? null,
      old_unit_cost: item.average_cost,
      new_location_id: row.new_location_id ?? null,
      old_location: item.warehouse_location,
      qty_passed: null, qty_failed: null, inspection_notes: null, inspected_by: null, inspected_at: null,
      item_number_display: item.item_number_display,
      item_description: item.description,
    }))).returningAll().execute());
  }
  lines.sort((a, b) => a.seq - b.seq);
  await recordHistory(tx, actor, {
    entityType: 'receiving_batch', entityId: batch.id, action: 'imported', manufacturerId: batch.manufacturer_id,
    after: { source, batch_number: batch.batch_number, added: lines.length, skipped },
  });
  return { batch: serializeBatch(batch, { justCreated: true }), lines: lines.map((l) => serializeLine(l)), added: lines.length, skipped };
}

export interface JsonImport extends ImportHeader {
  lines: {
    item_id: string; qty_received: number; reference_number?: string | null; reference_type?: ReferenceType | null;
    new_unit_cost?: number | null; new_location_id?: string | null;
  }[];
}

export async function importBatch(db: Kysely<DB>, actor: Actor, input: JsonImport) {
  const rows: ImportRow[] = input.lines.map((line, index) => ({ index, itemRef: line.item_id, itemId: line.item_id, ...line }));
  return inTransaction(db, (tx) => writeImport(tx, actor, input, rows, [], 'json'));
}
