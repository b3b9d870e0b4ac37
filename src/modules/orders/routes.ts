import { actorOf, requirePermission } from '../../http/auth.ts';
import { badRequest } from '../../domain/errors.ts';
import { listResponse, pageOf, pageParams, sendListTexts } from '../../http/pagination.ts';
import { sendCsvExport } from '../../http/csv-export.ts';
import { CSV, JSON_TYPE, preferredRepresentation } from '../../http/representations.ts';
import { Closed, DataEnvelope, ListEnvelope, listOrCsv, noContent, responses } from '../../http/schemas.ts';
import type { App, ModuleDeps } from '../../http/types.ts';
import type { OrderStatus } from '../../db/column-types.ts';
import { markDirectShipped, notifyDirectShip } from './direct-ship.ts';
import { allOrderRows, listOrders, pickBatchesOf, orderWithJoins } from './queries.ts';
import { getOrder } from './read.ts';
import {
  CreateOrder, DEFAULT_PER_PAGE, DirectNotify, DirectShip, DirectShipRows, GetOrderQuery, LineRequest, ListOrdersQuery, LtlFreight, Order,
  OrderDetail, OrderLineParams, OrderParams, OrderPickBatch, ORDER_STATUSES, PickBatchesParams, PRIORITIES, SetPriority, UpdateOrder,
} from './schemas.ts';
import { serializeOrder } from './serialize.ts';
import {
  addLine, advanceOrder, cancelOrder, changePriority, createOrder, deleteLine, recordLtlFreight, releaseOrder, updateOrder,
} from './service.ts';

const tags = ['Orders'];
/** The export's columns: the list row's fields, in the order of the JSON. */
const ORDER_COLUMNS = Object.keys(Order.properties);
const view = { permission: 'orders.view' } as const;
const edit = { permission: 'orders.edit' } as const;
const detail = responses({ 200: DataEnvelope(OrderDetail) });

/** Values of a repeatable or comma-separated filter, each known (400 names the unknown ones). */
function listValues<V extends string>(values: string[] | undefined, known: readonly V[], name: string): V[] {
  const parsed = (values ?? []).flatMap((value) => value.split(',')).map((value) => value.trim()).filter(Boolean);
  const unknown = parsed.filter((value) => !(known as readonly string[]).includes(value));
  if (unknown.length) throw badRequest(`querystring/${name}: unknown value ${unknown.map((v) => `"${v}"`).join(', ')}; known: ${known.join(', ')}`);
  return [...new Set(parsed)] as V[];
}

// "open" is shorthand for the statuses still to be worked.
const OPEN_STATUSES: OrderStatus[] = ['entered', 'released', 'partial'];

export async function orderRoutes(app: App, { db, reads, rowTexts }: ModuleDeps) {
  app.get('/orders', {
    config: { ...view, readCache: { clockParams: ['aged_hours'] } },
    schema: {
      tags, summary: 'List orders (newest first)',
      description: 'status and priority are repeatable or comma lists; status open means entered, released and partial. ' +
        'List rows carry priority as the empty string and ship_to_* as null.',
      querystring: ListOrdersQuery, response: listOrCsv(Order),
    },
  }, async (request, reply) => {
    const query = request.query;
    const statuses = listValues(query.status, [...ORDER_STATUSES, 'open'] as const, 'status').flatMap((s) => (s === 'open' ? OPEN_STATUSES : [s]));
    const filter = { ...query, statuses: [...new Set(statuses)], priorities: listValues(query.priority, PRIORITIES, 'priority') };
    if (preferredRepresentation(request, [JSON_TYPE, CSV]) === CSV) {
      return sendCsvExport(reply, reads, {
        query: allOrderRows(reads, actorOf(request), filter), columns: ORDER_COLUMNS, fileName: 'orders.csv', toRow: (row) => serializeOrder(row, 'list'),
      });
    }
    const page = pageOf(query, DEFAULT_PER_PAGE);
    const { rows, total } = await listOrders(reads, actorOf(request), filter, page, rowTexts);
    return sendListTexts(reply, rows, total, page);
  });

  app.post('/orders', {
    config: { permission: 'orders.create' },
    schema: {
      tags, summary: 'Enter an order with its lines (one transaction)',
      description: 'Needs orders.create and orders.edit. A bad line rolls everything back; its error names it (lines[i]). ' +
        'The response carries partial lines, as the spec says.',
      body: CreateOrder, response: responses({ 201: DataEnvelope(OrderDetail) }),
    },
  }, async (request, reply) => {
    const actor = actorOf(request);
    requirePermission(actor, 'orders.edit');
    return reply.code(201).send({ data: await createOrder(db, actor, request.body) });
  });

  app.get('/orders/:id', {
    config: view,
    schema: {
      tags, summary: 'Get an order', description: 'include: fulfillment, shipments, blocks, documents (repeatable or a comma list).',
      params: OrderParams, querystring: GetOrderQuery, response: detail,
    },
  }, async (request) => ({ data: await getOrder(db, actorOf(request), request.params.id, request.query.include) }));

  app.patch('/orders/:id', {
    config: edit,
    schema: {
      tags, summary: 'Change an order\'s header',
      description: 'Absent, null and empty text fields keep their value; ship_via_id and third_party_payer_id may be set to null.',
      params: OrderParams, body: UpdateOrder, response: detail,
    },
  }, async (request) => ({ data: await updateOrder(db, actorOf(request), request.params.id, request.body) }));

  app.post('/orders/:id/release', {
    config: { permission: 'orders.release' },
    schema: { tags, summary: 'Release an entered order to the warehouse', params: OrderParams, response: detail },
  }, async (request) => ({ data: await releaseOrder(db, actorOf(request), request.params.id) }));

  app.post('/orders/:id/cancel', {
    config: edit,
    schema: { tags, summary: 'Cancel an order (before it ships); its committed stock is released', params: OrderParams, response: detail },
  }, async (request) => ({ data: await cancelOrder(db, actorOf(request), request.params.id) }));

  app.post('/orders/:id/bill', {
    config: edit,
    schema: { tags, summary: 'Bill a shipped order', params: OrderParams, response: detail },
  }, async (request) => ({ data: await advanceOrder(db, actorOf(request), request.params.id, 'billed') }));

  app.post('/orders/:id/close', {
    config: edit,
    schema: { tags, summary: 'Close a shipped or billed order (read-only afterwards)', params: OrderParams, response: detail },
  }, async (request) => ({ data: await advanceOrder(db, actorOf(request), request.params.id, 'closed') }));

  app.post('/orders/:id/priority', {
    config: edit,
    schema: { tags, summary: 'Set an order\'s priority (until it ships)', params: OrderParams, body: SetPriority, response: detail },
  }, async (request) => ({ data: await changePriority(db, actorOf(request), request.params.id, request.body.priority) }));

  app.put('/orders/:id/ltl-freight', {
    config: edit,
    schema: {
      tags, summary: 'Record LTL carrier and PRO number (shipped, partial or closed orders)',
      description: 'Each field is recorded independently; a blank one clears it; when both are clear the record is gone.',
      params: OrderParams, body: LtlFreight, response: detail,
    },
  }, async (request) => ({ data: await recordLtlFreight(db, actorOf(request), request.params.id, request.body) }));

  app.post('/orders/:id/lines', {
    config: edit,
    schema: { tags, summary: 'Add a line (before release)', params: OrderParams, body: LineRequest, response: responses({ 201: DataEnvelope(OrderDetail) }) },
  }, async (request, reply) => reply.code(201).send({ data: await addLine(db, actorOf(request), request.params.id, request.body) }));

  app.delete('/orders/:id/lines/:lineId', {
    config: edit,
    schema: { tags, summary: 'Delete a line (before release); its committed stock is released', params: OrderLineParams, response: noContent },
  }, async (request, reply) => {
    await deleteLine(db, actorOf(request), request.params.id, request.params.lineId);
    return reply.code(204).send(null);
  });

  app.post('/orders/:id/direct-ship/notify', {
    config: edit,
    schema: {
      tags, summary: 'Ask the supply partner by e-mail to ship direct lines',
      description: 'Queues order.direct_ship_notification_requested for the mailer. 400 no_email_contact without an active direct_ship contact with an e-mail.',
      params: OrderParams, body: DirectNotify, response: responses({ 200: DataEnvelope(DirectShipRows) }),
    },
  }, async (request) => ({ data: await notifyDirectShip(db, actorOf(request), request.params.id, request.body, 'email') }));

  app.post('/orders/:id/direct-ship/notify-out-of-band', {
    config: edit,
    schema: { tags, summary: 'Record that the supply partner was asked another way', params: OrderParams, body: DirectNotify, response: responses({ 200: DataEnvelope(DirectShipRows) }) },
  }, async (request) => ({ data: await notifyDirectShip(db, actorOf(request), request.params.id, request.body, 'out_of_band') }));

  app.post('/orders/:id/direct-ship/ship', {
    config: edit,
    schema: {
      tags, summary: 'Record that the supply partner shipped direct lines',
      description: 'carrier is normalized to ups, fedex, usps or other. An order of direct lines only is shipped when all have shipped.',
      params: OrderParams, body: DirectShip, response: responses({ 200: DataEnvelope(DirectShipRows) }),
    },
  }, async (request) => ({ data: await markDirectShipped(db, actorOf(request), request.params.id, request.body) }));

  app.get('/orders/:orderID/pick-batches', {
    config: view,
    schema: {
      tags, summary: 'Pick batches of an order, with tracking', params: PickBatchesParams,
      querystring: Closed(pageParams(DEFAULT_PER_PAGE)), response: responses({ 200: ListEnvelope(OrderPickBatch) }),
    },
  }, async (request) => {
    await orderWithJoins(db, actorOf(request), request.params.orderID);
    const page = pageOf(request.query, DEFAULT_PER_PAGE);
    const batches = await pickBatchesOf(db, request.params.orderID);
    return listResponse(batches.slice(page.offset, page.offset + page.perPage), batches.length, page);
  });
}

