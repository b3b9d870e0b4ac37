// The event stream: an event as it is polled (and, later, delivered), the data each kind carries, and the poll and
// acknowledge requests. docs/events.md says the same in prose.
import { Type, type TSchema } from 'typebox';
import { EVENT_KINDS } from '../../domain/events.ts';
import { pageParams } from '../../http/pagination.ts';
import { Closed, Nullable, Timestamp, Uuid } from '../../http/schemas.ts';

export const DEFAULT_PER_PAGE = 100;
const Int = Type.Integer();
const NullableText = Nullable(Type.String());

const order = {
  order_id: Uuid, order_number: Int, status: Type.String(), priority: Type.String(), customer_id: Uuid,
  release_number: Nullable(Int), original_release_number: Nullable(Int),
};
const batch = { pick_batch_id: Uuid, batch_number: Type.String(), order_id: Uuid, order_number: Int, status: Type.String() };
const DirectLine = Closed({ order_line_id: Uuid, line_number: Int, item_number_display: Type.String(), qty_direct: Int });
const ReceivedLine = Closed({ line_id: Uuid, item_id: Uuid, qty_on_hand: Int, qty_quarantined: Int, location_id: Nullable(Uuid) });
const received = {
  batch_id: Uuid, batch_number: Type.String(), received_date: Type.Unsafe<string | Date>({ type: 'string' }),
  qty_on_hand: Int, qty_quarantined: Int, lines: Type.Array(ReceivedLine),
};

/** The data of each kind (closed: a key added to an event without its schema fails the tests). */
export const EVENT_DATA: Record<(typeof EVENT_KINDS)[number], TSchema> = {
  'order.created': Closed(order),
  'order.released': Closed(order),
  'order.priority_changed': Closed({ ...order, previous_priority: Type.String() }),
  'order.cancelled': Closed(order),
  'order.shipped': Closed(order),
  'order.billed': Closed(order),
  'order.closed': Closed(order),
  'order.direct_ship_notification_requested': Closed({
    ...order, to: Type.Array(Closed({ name: Type.String(), email: Type.String() })), lines: Type.Array(DirectLine), note: NullableText,
  }),
  'order.direct_ship_notified': Closed({ ...order, via: Type.String(), lines: Type.Array(DirectLine) }),
  'order.direct_shipped': Closed({
    ...order, tracking_number: NullableText, carrier: NullableText,
    lines: Type.Array(Closed({ order_line_id: Uuid, line_number: Int, qty_direct: Int })),
  }),
  'pick_batch.started': Closed({ ...batch, lines: Int }),
  'pick_batch.packed': Closed({ ...batch, packing_list_document_id: Uuid }),
  'pick_batch.shipped': Closed({
    ...batch, tracking_number: NullableText, carrier: NullableText,
    lines: Type.Array(Closed({ order_line_id: Uuid, item_id: Uuid, qty_shipped: Int })),
  }),
  'shipment.tracking_updated': Closed({ pick_batch_id: Uuid, batch_number: Type.String(), order_id: Uuid, tracking_number: NullableText, carrier: NullableText }),
  'exception.opened': Closed({
    exception_id: Uuid, kind: Type.String(), order_id: Nullable(Uuid), pick_batch_id: Nullable(Uuid), batch_number: Type.String(),
    order_line_id: Nullable(Uuid), item_id: Uuid, qty_short: Int, short_reason: NullableText, flag_reason: NullableText,
    actual_item_id: Nullable(Uuid), actual_qty: Nullable(Int), order_block_id: Uuid, superseded_exception_ids: Type.Array(Uuid),
  }),
  'exception.reviewed': Closed({
    exception_id: Uuid, kind: Type.String(), order_id: Nullable(Uuid), pick_batch_id: Nullable(Uuid), item_id: Uuid,
    disposition: Type.String(), note: NullableText, resolved_block_ids: Type.Array(Uuid),
  }),
  'receiving.posted': Closed(received),
  'receiving.voided': Closed({ ...received, reason: Type.String() }),
  'inventory.adjusted': Closed({
    movement_id: Uuid, item_id: Uuid, location_id: Nullable(Uuid), movement_type: Type.String(), quantity: Int, balance_after: Int, reason: NullableText,
  }),
  'inventory.relocated': Closed({ item_id: Uuid, from_location_id: Uuid, to_location_id: Uuid, qty: Int, reference_id: Uuid }),
  'cycle_count.completed': Closed({ batch_id: Uuid, batch_number: Type.String(), line_count: Int, lines_with_variance: Int, approved: Int }),
  'webhook.ping': Closed({ subscription_id: Uuid, message: Type.String() }),
};

export const Event = Closed({
  id: Uuid,
  kind: Type.Enum(EVENT_KINDS),
  occurred_at: Timestamp,
  manufacturer_id: Nullable(Uuid),
  data: Type.Unsafe<Record<string, unknown>>(Type.Union(Object.values(EVENT_DATA), { description: 'What happened; its keys depend on kind (docs/events.md).' })),
}, { description: 'An event: written in the transaction of the change it reports.' });

export const PollQuery = Closed({
  kind: Type.Optional(Type.Enum(EVENT_KINDS, { description: 'Only events of this kind.' })),
  ...pageParams(DEFAULT_PER_PAGE),
});

export const AckBody = Closed({
  ids: Type.Array(Uuid, { minItems: 1, maxItems: 1000, description: 'Events handled; acknowledging one twice changes nothing.' }),
});

