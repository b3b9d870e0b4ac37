// Reading an order back: the {order, lines} every order operation answers with, the includes of GET /orders/{id},
// and the event payload of an order.
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/schema.ts';
import type { Actor } from '../../http/auth.ts';
import { badRequest } from '../../domain/errors.ts';
import {
  displaySubstatusOf, documentsOf, lifecycleOf, linesWithAvailability, openBlocksOf, orderWithJoins, pickBatchesOf,
} from './queries.ts';
import { INCLUDES } from './schemas.ts';
import { serializeLine, serializeOrder, type OrderRow, type serializeCreatedLine } from './serialize.ts';

type Executor = Kysely<DB> | Transaction<DB>;
type Include = (typeof INCLUDES)[number];

/** What an order's events and its priority's audit record are made from. */
export type EventOrder = Pick<OrderRow, 'id' | 'order_number' | 'status' | 'priority' | 'manufacturer_id' | 'customer_id' | 'release_number' | 'original_release_number'>;

/** What partners and integrators learn of an order with each of its events. */
export function orderEvent(order: EventOrder) {
  return {
    order_id: order.id,
    order_number: order.order_number,
    status: order.status,
    priority: order.priority,
    customer_id: order.customer_id,
    release_number: order.release_number,
    original_release_number: order.original_release_number,
  };
}

export type OrderResponse = Awaited<ReturnType<typeof readOrder>>;

/** Order entry's answer: the order, and its lines as entered (partial, as the spec says). */
export type CreatedOrderResponse = { order: OrderResponse['order']; lines: ReturnType<typeof serializeCreatedLine>[] };

/** The order and its detail lines (with the item's availability). */
export async function readOrder(db: Executor, actor: Actor, id: string) {
  const order = await orderWithJoins(db, actor, id);
  const lines = await linesWithAvailability(db, id);
  return { order: serializeOrder(order, 'detail'), lines: lines.map(serializeLine) };
}

/** include values, as a comma list or repeated; an unknown one is 400. */
function parseIncludes(values: string[] | undefined): Include[] {
  const names = (values ?? []).flatMap((value) => value.split(',')).map((value) => value.trim()).filter(Boolean);
  const unknown = names.filter((name) => !(INCLUDES as readonly string[]).includes(name));
  if (unknown.length) throw badRequest(`unknown include value ${unknown.map((v) => `"${v}"`).join(', ')}; known: ${INCLUDES.join(', ')}`);
  return [...new Set(names)] as Include[];
}

async function fulfillmentOf(db: Executor, order: OrderRow, lines: Awaited<ReturnType<typeof linesWithAvailability>>) {
  const orderId = order.id;
  const notified = lines.map((line) => line.direct_notified_at).filter((at): at is string => at !== null);
  return {
    display_substatus: await displaySubstatusOf(db, orderId),
    has_warehouse_portion: lines.some((line) => line.qty_warehouse > 0),
    has_direct_portion: lines.some((line) => line.qty_direct > 0),
    pending_direct_lines: lines.filter((line) => line.qty_direct > 0 && line.direct_shipped_at === null).map(pendingDirectLine),
    direct_notify_last_at: notified.length ? new Date(Math.max(...notified.map((at) => Date.parse(at)))).toISOString() : null,
    lifecycle: await lifecycleOf(db, order),
  };
}

export function pendingDirectLine(line: { id: string; line_number: number; item_number_display: string; qty_direct: number; direct_notified_at: string | null; direct_notified_via: 'email' | 'out_of_band' | null }) {
  return {
    order_line_id: line.id,
    line_number: line.line_number,
    item_number_display: line.item_number_display,
    qty_direct: line.qty_direct,
    direct_notified_at: line.direct_notified_at,
    direct_notified_via: line.direct_notified_via,
  };
}

async function blocksOf(db: Executor, orderId: string) {
  return (await openBlocksOf(db, orderId)).map(({
    exception_id, exception_kind, exception_status, batch_number, item_number_display, item_description, qty_short,
    short_reason, flag_reason, actual_item_number_display, actual_qty, ...block
  }) => ({
    ...block,
    exception: exception_id ? {
      id: exception_id,
      kind: exception_kind!,
      status: exception_status!,
      batch_number: batch_number ?? '',
      item_number_display: item_number_display ?? '',
      item_description: item_description ?? '',
      // Short quantities and reasons belong to their kind; empty reasons are left out (spec: Exception summary).
      qty_short: exception_kind === 'short_pick' ? qty_short ?? 0 : 0,
      ...(exception_kind === 'short_pick' && short_reason ? { short_reason } : {}),
      ...(exception_kind !== 'short_pick' && flag_reason ? { flag_reason } : {}),
      actual_item_number_display: actual_item_number_display ?? null,
      actual_qty: actual_qty ?? null,
    } : null,
  }));
}

async function documentsInclude(db: Executor, orderId: string) {
  const documents = await documentsOf(db, orderId);
  return { documents, packing_list: documents.find((document) => document.tags?.includes('packing_list')) ?? null };
}

/** GET /orders/{id}: scope first (404 before any include is even read), then one key per include. */
export async function getOrder(db: Kysely<DB>, actor: Actor, id: string, include: string[] | undefined) {
  const order = await orderWithJoins(db, actor, id);
  const includes = parseIncludes(include);
  const lines = await linesWithAvailability(db, id);
  const wanted = new Set(includes);
  return {
    order: serializeOrder(order, 'detail'),
    lines: lines.map(serializeLine),
    ...(wanted.has('fulfillment') ? { fulfillment: await fulfillmentOf(db, order, lines) } : {}),
    ...(wanted.has('shipments') ? { shipments: await pickBatchesOf(db, id) } : {}),
    ...(wanted.has('blocks') ? { blocks: await blocksOf(db, id) } : {}),
    ...(wanted.has('documents') ? { documents: await documentsInclude(db, id) } : {}),
  };
}
