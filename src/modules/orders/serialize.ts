// Orders and lines as the spec shapes them: date-only columns as midnight UTC, keys present only when recorded, the
// list row's quirks (priority '' and ship_to_* null), and the create response's partial lines.
import type { Selectable } from 'kysely';
import type { OrderLinesTable, OrdersTable } from '../../db/schema.ts';

export type OrderRow = Selectable<OrdersTable>;
export type LineRow = Selectable<OrderLinesTable>;

/** Join-derived header keys: partner, customer, carrier and the name of whoever recorded LTL freight. */
export interface OrderJoins {
  manufacturer_code: string;
  manufacturer_name: string;
  customer_name: string;
  customer_account: string;
  ship_via_code: string | null;
  ship_via_description: string | null;
  ship_via_carrier_name: string | null;
  ship_via_mode: 'parcel' | 'ltl' | 'will_call' | null;
  ltl_recorded_by_name: string | null;
}

type OrderView = 'detail' | 'list';
export type DisplaySubstatus = 'picking' | 'picked' | 'packed';

/** 'YYYY-MM-DD' as the spec's midnight-UTC date-time. */
const midnightUtc = (date: string | null) => (date === null ? null : `${date}T00:00:00.000Z`);

const ALWAYS_NULL = { salesman_id: null, terms_id: null, customer_discount_pct: null, scheduled_date: null, expiration_date: null, cancellation_date: null } as const;

export function serializeOrder(row: OrderRow & OrderJoins & { display_substatus?: DisplaySubstatus | null }, view: OrderView) {
  const list = view === 'list';
  return {
    id: row.id,
    manufacturer_id: row.manufacturer_id,
    customer_id: row.customer_id,
    order_number: row.order_number,
    order_type: row.order_type,
    status: row.status,
    priority: list ? ('' as const) : row.priority,
    customer_po_number: row.customer_po_number,
    manufacturer_auth: row.manufacturer_auth,
    agency_customer_number: row.agency_customer_number,
    freight_terms: row.freight_terms,
    shipping_point: row.shipping_point,
    carrier_account: row.carrier_account,
    ship_method: row.ship_method,
    ship_via_other: row.ship_via_other,
    special_instructions: row.special_instructions,
    ship_via_id: row.ship_via_id,
    drop_ship_location_id: row.drop_ship_location_id,
    third_party_payer_id: row.third_party_payer_id,
    ...ALWAYS_NULL,
    order_date: `${row.order_date}T00:00:00.000Z`,
    request_date: midnightUtc(row.request_date),
    ship_date: midnightUtc(row.ship_date),
    ship_to_name: list ? null : row.ship_to_name,
    ship_to_address_1: list ? null : row.ship_to_address_1,
    ship_to_address_2: list ? null : row.ship_to_address_2,
    ship_to_city: list ? null : row.ship_to_city,
    ship_to_state: list ? null : row.ship_to_state,
    ship_to_zip: list ? null : row.ship_to_zip,
    bill_to_name: row.bill_to_name,
    bill_to_address_1: row.bill_to_address_1,
    bill_to_address_2: row.bill_to_address_2,
    bill_to_city: row.bill_to_city,
    bill_to_state: row.bill_to_state,
    bill_to_zip: row.bill_to_zip,
    freight_charge: row.freight_charge,
    total_weight: row.total_weight,
    total_extended_price: row.total_extended_price,
    line_count: row.line_count,
    release_number: row.release_number,
    original_release_number: row.original_release_number,
    released_by: row.released_by,
    shipped_by: row.shipped_by,
    created_by: row.created_by,
    updated_by: row.updated_by,
    released_at: row.released_at,
    shipped_at: row.shipped_at,
    created_at: row.created_at,
    updated_at: row.updated_at,
    ...(row.picked_up_at ? {
      picked_up_at: row.picked_up_at,
      picked_up_by_user_id: row.picked_up_by_user_id,
      picked_up_by_name: row.picked_up_by_name,
      picked_up_notes: row.picked_up_notes,
    } : {}),
    ...(row.ltl_recorded_at ? {
      ltl_carrier: row.ltl_carrier,
      ltl_pro_number: row.ltl_pro_number,
      ltl_recorded_at: row.ltl_recorded_at,
      ltl_recorded_by: row.ltl_recorded_by,
      ltl_recorded_by_name: row.ltl_recorded_by_name,
    } : {}),
    manufacturer_code: row.manufacturer_code,
    manufacturer_name: row.manufacturer_name,
    customer_name: row.customer_name,
    customer_account: row.customer_account,
    ship_via_code: row.ship_via_code,
    ship_via_description: row.ship_via_description,
    ship_via_carrier_name: row.ship_via_carrier_name,
    ...(row.ship_via_mode ? { ship_via_mode: row.ship_via_mode } : {}),
    ...(list && row.display_substatus ? { display_substatus: row.display_substatus } : {}),
  };
}

// The direct-fulfilment keys of a line, each present only when set.
const DIRECT_KEYS = [
  'direct_shipped_at', 'direct_shipped_by', 'direct_tracking_number', 'direct_carrier', 'direct_ship_note',
  'direct_shipped_source', 'direct_shipped_api_key_id', 'direct_notified_at', 'direct_notified_by', 'direct_notified_via',
] as const;

function lineCore(row: LineRow) {
  return {
    id: row.id,
    order_id: row.order_id,
    item_id: row.item_id,
    line_number: row.line_number,
    item_number_display: row.item_number_display,
    item_description: row.item_description,
    additional_description: row.additional_description,
    bin_location: row.bin_location,
    qty_ordered: row.qty_ordered,
    qty_shipped: row.qty_shipped,
    qty_backordered: row.qty_backordered,
    qty_warehouse: row.qty_warehouse,
    qty_direct: row.qty_direct,
    fulfillment_source: row.fulfillment_source,
    unit_price: row.unit_price,
    price_override: row.price_override,
    discount_pct: row.discount_pct,
    extended_price: row.extended_price,
    unit_weight: row.unit_weight,
    unit_of_measure: row.unit_of_measure,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/** A line of a detail response: direct keys when set, and the item's current qty_available. */
export function serializeLine(row: LineRow & { item_qty_available: number }) {
  const direct: { [K in (typeof DIRECT_KEYS)[number]]?: NonNullable<LineRow[K]> } = {};
  for (const key of DIRECT_KEYS) if (row[key] !== null) (direct as Record<string, unknown>)[key] = row[key];
  return { ...lineCore(row), ...direct, item_qty_available: row.item_qty_available };
}

/** A line of the create response: partial, as the spec says (no direct or item keys, entry-time defaults). */
export function serializeCreatedLine(row: LineRow) {
  return { ...lineCore(row), additional_description: null, qty_backordered: 0, price_override: false };
}
