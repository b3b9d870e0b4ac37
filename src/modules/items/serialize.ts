// Items as the spec shapes them: every field always present; list rows carry only the columns a list selects, the
// rest at their zero value; join-derived partner keys only where the spec puts them.
import type { Selectable } from 'kysely';
import type { ItemsTable } from '../../db/schema.ts';

type ItemRow = Selectable<ItemsTable>;
type Joined = { manufacturer_code: string; manufacturer_name: string };

/** Columns a list row (and a search hit) selects. */
export const LIST_COLUMNS = [
  'id', 'manufacturer_id', 'item_number_display', 'item_number_normalized', 'description', 'category', 'selling_uom',
  'warehouse_location', 'price_1', 'qty_on_hand', 'qty_committed', 'qty_available', 'reorder_level', 'status',
  'date_last_movement', 'created_at', 'updated_at',
] as const;
export type ListRow = Pick<ItemRow, (typeof LIST_COLUMNS)[number]>;

/** Columns a search hit selects: a list row's but its times, which a hit shows at the zero time. */
export const SEARCH_COLUMNS = LIST_COLUMNS.filter((column) => column !== 'created_at' && column !== 'updated_at') as
  Exclude<(typeof LIST_COLUMNS)[number], 'created_at' | 'updated_at'>[];
export type SearchRow = Pick<ItemRow, (typeof SEARCH_COLUMNS)[number]>;

// Columns the spec lists as "always null today".
const ALWAYS_NULL = {
  freight_class_id: null, alternate_item_id: null, gl_account_id: null, price_code_id: null, created_by: null, updated_by: null,
} as const;

/**
 * A whole item row, or a list row: a field a list does not select is its zero value (null for nullable, 0 for
 * integers, false for booleans). Filled in here rather than by spreading zeros into each row first: a list page made
 * 50 throwaway objects of 40 keys that way.
 */
export function serializeItem(row: ListRow & Partial<ItemRow>, joined?: Joined) {
  return {
    id: row.id,
    manufacturer_id: row.manufacturer_id,
    item_number_display: row.item_number_display,
    item_number_normalized: row.item_number_normalized,
    description: row.description,
    description_extended: row.description_extended ?? null,
    category: row.category,
    selling_uom: row.selling_uom,
    purchase_uom: row.purchase_uom ?? null,
    conversion_factor: row.conversion_factor ?? null,
    unit_weight: row.unit_weight ?? null,
    cubes: row.cubes ?? null,
    warehouse_location: row.warehouse_location,
    price_1: row.price_1,
    price_2: row.price_2 ?? null,
    price_3: row.price_3 ?? null,
    average_cost: row.average_cost ?? null,
    last_cost: row.last_cost ?? null,
    qty_on_hand: row.qty_on_hand,
    qty_committed: row.qty_committed,
    qty_on_order: row.qty_on_order ?? 0,
    qty_on_backorder: row.qty_on_backorder ?? 0,
    ytd_returns: row.ytd_returns ?? 0,
    reorder_level: row.reorder_level,
    min_reorder_qty: row.min_reorder_qty ?? 0,
    economic_order_qty: row.economic_order_qty ?? 0,
    lead_time_days: row.lead_time_days ?? 0,
    qty_available: row.qty_available,
    backorder_control: row.backorder_control ?? false,
    serial_tracking: row.serial_tracking ?? false,
    status: row.status,
    date_last_ordered: row.date_last_ordered ?? null,
    date_last_received: row.date_last_received ?? null,
    date_last_movement: row.date_last_movement,
    created_at: row.created_at,
    updated_at: row.updated_at,
    ...ALWAYS_NULL,
    ...(joined ? { manufacturer_code: joined.manufacturer_code, manufacturer_name: joined.manufacturer_name } : {}),
  };
}

export function serializeListItem(row: ListRow & Joined) {
  return serializeItem(row, row);
}

const ZERO_TIME = '0001-01-01T00:00:00Z';

/** The Item nested in a search hit: a list row with created_at and updated_at at the zero time. */
export function serializeSearchItem(row: SearchRow & Joined) {
  return serializeItem({ ...row, created_at: ZERO_TIME, updated_at: ZERO_TIME }, row);
}
