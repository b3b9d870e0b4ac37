// Receiving batches and lines as the spec shapes them: dates as midnight UTC, always-null fields present as null,
// joined keys only where the spec puts them.
import type { Selectable } from 'kysely';
import type { ReceivingBatchesTable, ReceivingImportProfilesTable, ReceivingLinesTable } from '../../db/schema.ts';

export type BatchRow = Selectable<ReceivingBatchesTable>;
export type LineRow = Selectable<ReceivingLinesTable>;

/** A date column ('YYYY-MM-DD') as the spec writes dates: midnight UTC. */
export const midnightUtc = (date: string) => `${date}T00:00:00.000Z`;

export interface BatchExtras {
  /** manufacturer_code and manufacturer_name: everywhere but create and import. */
  partner?: { manufacturer_code: string; manufacturer_name: string };
  /** List rows only. */
  totals?: { line_count: number; total_qty: number };
  /** Create and import answer created_by and updated_by as null. */
  justCreated?: boolean;
}

export function serializeBatch(row: BatchRow, extras: BatchExtras = {}) {
  return {
    id: row.id,
    manufacturer_id: row.manufacturer_id,
    batch_number: row.batch_number,
    status: row.status,
    received_date: midnightUtc(row.received_date),
    posted_date: row.posted_date,
    posted_by: row.posted_by,
    created_by: extras.justCreated ? null : row.created_by,
    updated_by: extras.justCreated ? null : row.updated_by,
    notes: row.notes,
    created_at: row.created_at,
    updated_at: row.updated_at,
    ...(extras.partner ? { manufacturer_code: extras.partner.manufacturer_code, manufacturer_name: extras.partner.manufacturer_name } : {}),
    ...(extras.totals ? { line_count: extras.totals.line_count, total_qty: extras.totals.total_qty } : {}),
  };
}

export interface LineJoins {
  item_qty_on_hand: number | null;
  location_code: string | null;
  inspected_by_name: string | null;
}

/** Without joins: the add-line (and import) shape, with item_qty_on_hand null and the joined keys absent. */
export function serializeLine(row: LineRow, joins?: LineJoins) {
  return {
    id: row.id,
    batch_id: row.batch_id,
    item_id: row.item_id,
    reference_number: row.reference_number,
    reference_type: row.reference_type,
    qty_received: row.qty_received,
    qty_expected: row.qty_expected,
    new_unit_cost: row.new_unit_cost,
    old_unit_cost: row.old_unit_cost,
    new_location_id: row.new_location_id,
    old_location: row.old_location,
    inspection_status: row.inspection_status,
    qty_passed: row.qty_passed,
    qty_failed: row.qty_failed,
    inspection_notes: row.inspection_notes,
    inspected_by: row.inspected_by,
    inspected_at: row.inspected_at,
    item_number_display: row.item_number_display,
    item_description: row.item_description,
    created_at: row.created_at,
    updated_at: row.updated_at,
    item_qty_on_hand: joins ? joins.item_qty_on_hand : null,
    stock_order_line_id: null,
    new_price: null,
    old_price: null,
    created_by: null,
    updated_by: null,
    ...(joins ? { location_code: joins.location_code ?? '', inspected_by_name: joins.inspected_by_name ?? '' } : {}),
  };
}

export function serializeProfile(row: Selectable<ReceivingImportProfilesTable>) {
  return {
    manufacturer_id: row.manufacturer_id,
    sheet_name: row.sheet_name,
    header_row: row.header_row,
    column_map: row.column_map,
    updated_at: row.updated_at,
  };
}
