import { Type } from 'typebox';
import { pageParams } from '../../http/pagination.ts';
import { Closed, Nullable, NullableEnum, Text, Timestamp, Uuid } from '../../http/schemas.ts';
import { Document } from '../documents/schemas.ts';

export const ORDER_STATUSES = ['entered', 'selected', 'released', 'partial', 'shipped', 'billed', 'closed', 'cancelled'] as const;
export const PRIORITIES = ['normal', 'high', 'rush'] as const;
export const FULFILLMENT_SOURCES = ['warehouse', 'direct', 'split'] as const;
export const INCLUDES = ['fulfillment', 'shipments', 'blocks', 'documents'] as const;
export const CARRIERS = ['ups', 'fedex', 'usps', 'other'] as const;
export const DEFAULT_PER_PAGE = 25;
/** The spec's unit_price range; outside it the line is refused with 400 invalid_price. */
export const MAX_UNIT_PRICE = 99_999_999;

const NullableText = Nullable(Type.String());
const NullableUuid = Nullable(Uuid);
const NullableTime = Nullable(Timestamp);
const Money = Nullable(Type.Number());
const RequestDate = Type.String({ format: 'date', description: 'YYYY-MM-DD' });

export const Order = Closed({
  id: Uuid,
  manufacturer_id: Uuid,
  customer_id: Uuid,
  order_number: Type.Integer(),
  order_type: Type.Enum(['order', 'invoice', 'credit']),
  status: Type.Enum(ORDER_STATUSES),
  priority: Type.Enum([...PRIORITIES, ''], { description: 'List rows emit the empty string (the column is not selected).' }),
  customer_po_number: NullableText,
  manufacturer_auth: NullableText,
  agency_customer_number: NullableText,
  freight_terms: NullableText,
  shipping_point: NullableText,
  carrier_account: NullableText,
  ship_method: NullableText,
  ship_via_other: NullableText,
  special_instructions: NullableText,
  salesman_id: NullableUuid,
  terms_id: NullableUuid,
  ship_via_id: NullableUuid,
  drop_ship_location_id: NullableUuid,
  third_party_payer_id: NullableUuid,
  customer_discount_pct: Type.Null(),
  scheduled_date: Type.Null(),
  expiration_date: Type.Null(),
  cancellation_date: Type.Null(),
  order_date: Timestamp,
  request_date: NullableTime,
  ship_date: NullableTime,
  ship_to_name: NullableText,
  ship_to_address_1: NullableText,
  ship_to_address_2: NullableText,
  ship_to_city: NullableText,
  ship_to_state: NullableText,
  ship_to_zip: NullableText,
  bill_to_name: NullableText,
  bill_to_address_1: NullableText,
  bill_to_address_2: NullableText,
  bill_to_city: NullableText,
  bill_to_state: NullableText,
  bill_to_zip: NullableText,
  freight_charge: Money,
  total_weight: Money,
  total_extended_price: Money,
  line_count: Type.Integer(),
  release_number: Nullable(Type.Integer()),
  original_release_number: Nullable(Type.Integer()),
  released_by: NullableUuid,
  shipped_by: NullableUuid,
  created_by: NullableUuid,
  updated_by: NullableUuid,
  released_at: NullableTime,
  shipped_at: NullableTime,
  created_at: Timestamp,
  updated_at: Timestamp,
  picked_up_at: Type.Optional(Timestamp),
  picked_up_by_user_id: Type.Optional(NullableUuid),
  picked_up_by_name: Type.Optional(NullableText),
  picked_up_notes: Type.Optional(NullableText),
  ltl_carrier: Type.Optional(NullableText),
  ltl_pro_number: Type.Optional(NullableText),
  ltl_recorded_at: Type.Optional(Timestamp),
  ltl_recorded_by: Type.Optional(NullableUuid),
  ltl_recorded_by_name: Type.Optional(NullableText),
  manufacturer_code: Type.Optional(Type.String()),
  manufacturer_name: Type.Optional(Type.String()),
  customer_name: Type.Optional(Type.String()),
  customer_account: Type.Optional(Type.String()),
  ship_via_code: Type.Optional(NullableText),
  ship_via_description: Type.Optional(NullableText),
  ship_via_carrier_name: Type.Optional(NullableText),
  ship_via_mode: Type.Optional(Type.Enum(['parcel', 'ltl', 'will_call'], { description: 'Absent when the order has no carrier.' })),
  display_substatus: Type.Optional(Type.Enum(['picking', 'picked', 'packed'], { description: 'Order list only, for an order with an active pick batch.' })),
});

const OrderLine = Closed({
  id: Uuid,
  order_id: Uuid,
  item_id: Uuid,
  line_number: Type.Integer(),
  item_number_display: Type.String(),
  item_description: Type.String(),
  additional_description: NullableText,
  bin_location: NullableText,
  qty_ordered: Type.Integer(),
  qty_shipped: Type.Integer(),
  qty_backordered: Type.Integer(),
  qty_warehouse: Type.Integer(),
  qty_direct: Type.Integer(),
  fulfillment_source: Type.Enum(FULFILLMENT_SOURCES),
  unit_price: Type.Number(),
  price_override: Type.Boolean(),
  discount_pct: Type.Number({ description: 'Decimal fraction: 0.10 is 10 percent.' }),
  extended_price: Type.Number({ description: 'qty_ordered × unit_price × (1 − discount_pct), in cents.' }),
  unit_weight: Money,
  unit_of_measure: Type.String(),
  created_at: Timestamp,
  updated_at: Timestamp,
  direct_shipped_at: Type.Optional(Timestamp),
  direct_shipped_by: Type.Optional(Uuid),
  direct_tracking_number: Type.Optional(Type.String()),
  direct_carrier: Type.Optional(Type.Enum(CARRIERS)),
  direct_ship_note: Type.Optional(Type.String()),
  direct_shipped_source: Type.Optional(Type.Enum(['office', 'consignor', 'api'])),
  direct_shipped_api_key_id: Type.Optional(Uuid),
  direct_notified_at: Type.Optional(Timestamp),
  direct_notified_by: Type.Optional(Uuid),
  direct_notified_via: Type.Optional(Type.Enum(['email', 'out_of_band'])),
  item_qty_available: Type.Optional(Type.Integer({ description: 'Detail responses only.' })),
});

const Lifecycle = Closed({
  entered_at: Timestamp,
  released_at: NullableTime,
  pick_started_at: NullableTime,
  packed_at: NullableTime,
  shipped_at: NullableTime,
  picked_up_at: NullableTime,
  cancelled_at: NullableTime,
  entered_by_name: NullableText,
  released_by_name: NullableText,
  pick_started_by_name: NullableText,
  packed_by_name: NullableText,
  shipped_by_name: NullableText,
  picked_up_by_name: NullableText,
  cancelled_by_name: NullableText,
  batch_id: NullableUuid,
  batch_status: NullableText,
  cancelled_reason: NullableText,
});

const PendingDirectLine = Closed({
  order_line_id: Uuid,
  line_number: Type.Integer(),
  item_number_display: Type.String(),
  qty_direct: Type.Integer(),
  direct_notified_at: NullableTime,
  direct_notified_via: NullableEnum(['email', 'out_of_band']),
});

const Fulfillment = Closed({
  display_substatus: Type.Enum(['picking', 'picked', 'packed', '']),
  has_warehouse_portion: Type.Boolean(),
  has_direct_portion: Type.Boolean(),
  pending_direct_lines: Type.Array(PendingDirectLine),
  direct_notify_last_at: NullableTime,
  lifecycle: Lifecycle,
});

export const OrderPickBatch = Closed({
  batch_id: Uuid,
  batch_number: Type.String(),
  status: Type.String(),
  packed_at: NullableTime,
  packed_by_name: NullableText,
  tracking_number: NullableText,
  tracking_carrier: NullableText,
  tracking_captured_at: NullableTime,
  staged_at: NullableTime,
  staged_slot: NullableText,
  parcels: Type.Array(Closed({ id: Uuid, parcel_seq: Type.Integer(), tracking_number: Type.String(), carrier: Type.String(), captured_at: Timestamp })),
});

const ExceptionSummary = Closed({
  id: Uuid,
  kind: Type.Enum(['short_pick', 'mispick', 'quality']),
  status: Type.Enum(['open', 'reviewed', 'superseded']),
  batch_number: Type.String(),
  item_number_display: Type.String(),
  item_description: Type.String(),
  qty_short: Type.Integer(),
  short_reason: Type.Optional(Type.String()),
  flag_reason: Type.Optional(Type.String()),
  actual_item_number_display: NullableText,
  actual_qty: Nullable(Type.Integer()),
});

export const OrderBlock = Closed({
  id: Uuid,
  order_id: Uuid,
  kind: Type.Enum(['short_pick', 'mispick', 'quality']),
  status: Type.Enum(['open', 'resolved', 'cancelled']),
  short_pick_exception_id: NullableUuid,
  mispick_exception_id: NullableUuid,
  quality_exception_id: NullableUuid,
  awaiting_supply_partner_at: NullableTime,
  awaiting_supply_partner_note: NullableText,
  resolution_disposition: NullableText,
  resolution_note: NullableText,
  resolved_at: NullableTime,
  created_at: Timestamp,
  updated_at: Timestamp,
  exception: Nullable(ExceptionSummary),
});

export const OrderDetail = Closed({
  order: Order,
  lines: Type.Array(OrderLine),
  fulfillment: Type.Optional(Fulfillment),
  shipments: Type.Optional(Type.Array(OrderPickBatch)),
  blocks: Type.Optional(Type.Array(OrderBlock)),
  documents: Type.Optional(Closed({ documents: Type.Array(Document), packing_list: Nullable(Document) })),
});

export const LineRequest = Closed({
  item_id: Uuid,
  qty_ordered: Type.Integer({ minimum: 1, maximum: 100_000_000 }),
  unit_price: Type.Optional(Type.Number({ description: `0 to ${MAX_UNIT_PRICE} (else 400 invalid_price); defaults to the item's price_1, else 0.` })),
  discount_pct: Type.Optional(Type.Number({ minimum: 0, maximum: 1, description: 'Decimal fraction, 0 to 1.' })),
  fulfillment_source: Type.Optional(Type.Enum(FULFILLMENT_SOURCES, { default: 'warehouse' })),
  qty_warehouse: Type.Optional(Type.Integer({ minimum: 0, maximum: 100_000_000 })),
  qty_direct: Type.Optional(Type.Integer({ minimum: 0, maximum: 100_000_000 })),
  acknowledge_negative: Type.Optional(Type.Boolean({ default: false })),
  acknowledge_exception: Type.Optional(Type.Boolean({ default: false })),
});

const HeaderText = (max = 200) => Type.Optional(Nullable(Text(max)));

/** Header fields an order is created with and later patched (PATCH: empty strings and null keep the value). */
const headerFields = {
  customer_po_number: HeaderText(100),
  manufacturer_auth: HeaderText(100),
  carrier_account: HeaderText(100),
  shipping_point: HeaderText(100),
  special_instructions: HeaderText(2000),
  freight_terms: HeaderText(50),
  ship_method: HeaderText(100),
  ship_via_other: HeaderText(120),
  ship_via_id: Type.Optional(NullableUuid),
  third_party_payer_id: Type.Optional(NullableUuid),
  bill_to_name: HeaderText(200),
  bill_to_address_1: HeaderText(200),
  bill_to_address_2: HeaderText(200),
  bill_to_city: HeaderText(100),
  bill_to_state: HeaderText(50),
  bill_to_zip: HeaderText(20),
  priority: Type.Optional(Type.Enum(PRIORITIES)),
};

export const CreateOrder = Closed({
  manufacturer_id: Uuid,
  customer_id: Uuid,
  lines: Type.Array(LineRequest, { minItems: 1, maxItems: 1000 }),
  order_date: Type.Optional(RequestDate),
  drop_ship_location_id: Type.Optional(NullableUuid),
  ...headerFields,
});

export const UpdateOrder = Closed(headerFields);

export const SetPriority = Closed({ priority: Type.Enum(PRIORITIES) });

export const LtlFreight = Closed({
  carrier: Type.Optional(Nullable(Text(120))),
  pro_number: Type.Optional(Nullable(Text(120))),
});

export const DirectNotify = Closed({
  line_ids: Type.Array(Uuid, { minItems: 1, maxItems: 1000 }),
  note: Type.Optional(Nullable(Text(2000))),
});

export const DirectShip = Closed({
  line_ids: Type.Array(Uuid, { minItems: 1, maxItems: 1000 }),
  tracking_number: Type.Optional(Nullable(Text(100))),
  carrier: Type.Optional(Nullable(Text(50))),
  note: Type.Optional(Nullable(Text(2000))),
});

export const DirectShipRows = Closed({ rows: Type.Array(PendingDirectLine) });

const ListText = Type.Array(Text(100), { maxItems: 50 });

export const ListOrdersQuery = Closed({
  manufacturer: Type.Optional(Uuid),
  customer: Type.Optional(Uuid),
  status: Type.Optional(ListText),
  priority: Type.Optional(ListText),
  q: Type.Optional(Text(100)),
  aged_hours: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
  awaiting_direct_ship: Type.Optional(Type.Enum(['1'])),
  from: Type.Optional(RequestDate),
  to: Type.Optional(RequestDate),
  ...pageParams(DEFAULT_PER_PAGE),
});

// Unbounded here: include is read after the scope check, so another partner's order is 404 whatever include says.
export const GetOrderQuery = Closed({ include: Type.Optional(Type.Array(Type.String())) });

export const OrderParams = Closed({ id: Uuid });
export const OrderLineParams = Closed({ id: Uuid, lineId: Uuid });
export const PickBatchesParams = Closed({ orderID: Uuid });
