// Orders: entry with all lines in one transaction, header changes with the carrier's rules, the status transitions
// (release with gap-free numbers, cancel, bill, close), priority, LTL freight, and adding and deleting lines.
import { randomUUID } from 'node:crypto';
import { sql, type Kysely, type Transaction, type Updateable } from 'kysely';
import type { OrderStatus, Priority } from '../../db/column-types.ts';
import type { DB, OrdersTable } from '../../db/schema.ts';
import { inTransaction } from '../../db/transaction.ts';
import { emit, recordAndEmit, recordAndEmitAnswering } from '../../domain/events.ts';
import { recordHistories, recordHistory, type HistoryEntry } from '../../domain/history.ts';
import { forbidden, invalidRequest, invalidStatus, notFound } from '../../domain/errors.ts';
import type { Actor } from '../../http/auth.ts';
import { enteredLine, insertOrderWithLines, prepareLines, refreshTotals, releaseLines, type LineRequest } from './lines.ts';
import { followDirectShipments } from './direct-ship.ts';
import { lockOrder, orderWithJoins, withJoins } from './queries.ts';
import { orderEvent, readOrder, type CreatedOrderResponse, type EventOrder, type OrderResponse } from './read.ts';
import { serializeCreatedLine, serializeOrder, type LineRow, type OrderJoins, type OrderRow } from './serialize.ts';

/** Statuses whose header may change: before the order ships. */
const OPEN: OrderStatus[] = ['entered', 'selected', 'released', 'partial'];
/** Statuses whose lines may change: before release. */
const EDITABLE: OrderStatus[] = ['entered', 'selected'];

function assertStatus(order: OrderRow, allowed: OrderStatus[], operation: string): void {
  if (!allowed.includes(order.status)) throw invalidStatus(`cannot ${operation} an order that is ${order.status}`);
}

/** Trimmed text; blank is null. */
const text = (value: string | null | undefined) => value?.trim() || null;

interface HeaderInput {
  customer_po_number?: string | null;
  manufacturer_auth?: string | null;
  carrier_account?: string | null;
  shipping_point?: string | null;
  special_instructions?: string | null;
  freight_terms?: string | null;
  ship_method?: string | null;
  ship_via_other?: string | null;
  ship_via_id?: string | null;
  third_party_payer_id?: string | null;
  bill_to_name?: string | null;
  bill_to_address_1?: string | null;
  bill_to_address_2?: string | null;
  bill_to_city?: string | null;
  bill_to_state?: string | null;
  bill_to_zip?: string | null;
  priority?: Priority;
}

const TEXT_FIELDS = [
  'customer_po_number', 'manufacturer_auth', 'carrier_account', 'shipping_point', 'special_instructions', 'freight_terms',
  'ship_method', 'ship_via_other', 'bill_to_name', 'bill_to_address_1', 'bill_to_address_2', 'bill_to_city', 'bill_to_state', 'bill_to_zip',
] as const;
const BILL_TO_FIELDS = ['bill_to_name', 'bill_to_address_1', 'bill_to_address_2', 'bill_to_city', 'bill_to_state', 'bill_to_zip'] as const;

type Header = Pick<OrdersTable, (typeof TEXT_FIELDS)[number] | 'ship_via_id' | 'third_party_payer_id'>;

/**
 * The carrier's mode decides which shipping fields an order keeps (spec: Ship-via code). A carrier being chosen must
 * be active; an order keeps the one it has even after it is retired.
 */
async function applyCarrierRules(tx: Transaction<DB>, header: Header, chosen: boolean): Promise<void> {
  if (!header.ship_via_id) return;
  const carrier = await tx.selectFrom('ship_via').select(['mode', 'is_active']).where('id', '=', header.ship_via_id).executeTakeFirst();
  if (!carrier || (chosen && !carrier.is_active)) throw invalidRequest('ship_via_id does not name an active ship-via code');
  if (carrier.mode === 'parcel') header.ship_via_other = null;
  if (carrier.mode === 'ltl') header.ship_method = null;
  if (carrier.mode === 'will_call') {
    header.ship_method = null;
    header.ship_via_other = null;
    header.freight_terms = 'WILL CALL';
  }
}

/** A third-party payer of the customer that order entry may pick (not hidden): its address and account become the bill-to. */
async function payerSnapshot(tx: Transaction<DB>, customerId: string, payerId: string) {
  const payer = await tx.selectFrom('third_party_payers').selectAll().where('id', '=', payerId).executeTakeFirst();
  if (!payer || payer.customer_id !== customerId || payer.is_hidden) throw invalidRequest('third_party_payer_id does not name a visible third-party payer of the customer');
  return {
    bill_to_name: payer.name, bill_to_address_1: payer.address_line_1, bill_to_address_2: payer.address_line_2,
    bill_to_city: payer.city, bill_to_state: payer.state, bill_to_zip: payer.zip_code, carrier_account: payer.carrier_account,
  };
}

/** Where the order ships: the drop-ship location's address when one is named, else the customer's own. */
async function shipToSnapshot(tx: Transaction<DB>, customer: { id: string; name: string; address_line_1: string | null; address_line_2: string | null; city: string | null; state: string | null; zip_code: string | null }, dropShipId: string | null) {
  if (!dropShipId) {
    return {
      ship_to_name: customer.name, ship_to_address_1: customer.address_line_1, ship_to_address_2: customer.address_line_2,
      ship_to_city: customer.city, ship_to_state: customer.state, ship_to_zip: customer.zip_code,
    };
  }
  const place = await tx.selectFrom('drop_ship_locations').selectAll().where('id', '=', dropShipId).executeTakeFirst();
  if (!place || place.customer_id !== customer.id || place.is_hidden) throw invalidRequest('drop_ship_location_id does not name a visible drop-ship location of the customer');
  return {
    ship_to_name: place.name, ship_to_address_1: place.address_line_1, ship_to_address_2: place.address_line_2,
    ship_to_city: place.city, ship_to_state: place.state, ship_to_zip: place.zip_code,
  };
}

export interface NewOrder extends HeaderInput {
  manufacturer_id: string;
  customer_id: string;
  order_date?: string;
  drop_ship_location_id?: string | null;
  lines: LineRequest[];
}

/** The audit record every priority setting gets, the default one at entry included. */
const priorityEntry = (order: EventOrder, priority: Priority): HistoryEntry => ({
  entityType: 'order', entityId: order.id, action: 'priority_changed', manufacturerId: order.manufacturer_id,
  before: { priority: order.priority }, after: { priority },
});

/** A priority other than the order's: the change and its event. */
async function changePriorityOf(tx: Transaction<DB>, actor: Actor, order: EventOrder, priority: Priority): Promise<void> {
  if (priority === order.priority) return;
  await tx.updateTable('orders').set({ priority, updated_by: actor.userId, updated_at: new Date() }).where('id', '=', order.id).execute();
  await emit(tx, 'order.priority_changed', { ...orderEvent(order), priority, previous_priority: order.priority }, order.manufacturer_id);
}

/** Priority is applied after entry, with its own audit record (and event when it is not the default). */
async function setPriority(tx: Transaction<DB>, actor: Actor, order: OrderRow, priority: Priority): Promise<void> {
  await changePriorityOf(tx, actor, order, priority);
  await recordHistory(tx, actor, priorityEntry(order, priority));
}

export async function createOrder(db: Kysely<DB>, actor: Actor, input: NewOrder): Promise<CreatedOrderResponse> {
  if (actor.manufacturerId && actor.manufacturerId !== input.manufacturer_id) throw forbidden('a partner-scoped key enters orders only for its own supply partner');
  return inTransaction(db, async (tx) => {
    // The customer with the partner's id and the order's number, in one read; without a customer, the partner is looked
    // for on its own, so that a missing partner is still the error named first. The number is taken before the order
    // is written with its lines, because the entry's event carries it.
    const customer = await tx.selectFrom('customers').selectAll()
      .select((eb) => eb.selectFrom('manufacturers').select('id').where('id', '=', input.manufacturer_id).$asScalar().as('partner_id'))
      .select(sql<number>`nextval('order_number_seq')`.as('order_number'))
      .where('id', '=', input.customer_id).executeTakeFirst();
    const partnerFound = customer ? customer.partner_id !== null
      : await tx.selectFrom('manufacturers').select('id').where('id', '=', input.manufacturer_id).executeTakeFirst() !== undefined;
    if (!partnerFound) throw invalidRequest('manufacturer_id does not name a supply partner');
    if (!customer) throw invalidRequest('customer_id does not name a customer');
    if (customer.status !== 'active') throw invalidRequest('the customer is inactive');

    const header: Header = { ship_via_id: input.ship_via_id ?? null, third_party_payer_id: input.third_party_payer_id ?? null } as Header;
    for (const field of TEXT_FIELDS) header[field] = text(input[field]);
    if (header.third_party_payer_id) {
      if (BILL_TO_FIELDS.some((field) => header[field])) throw invalidRequest('name either third_party_payer_id or an inline bill_to, not both');
      Object.assign(header, await payerSnapshot(tx, customer.id, header.third_party_payer_id));
    }
    await applyCarrierRules(tx, header, true);
    const shipTo = await shipToSnapshot(tx, customer, input.drop_ship_location_id ?? null);
    // What the entry's records say of the order; its priority is set after entry, as every later change of it is.
    const order: EventOrder = {
      id: randomUUID(), order_number: customer.order_number, status: 'entered', priority: 'normal', manufacturer_id: input.manufacturer_id,
      customer_id: customer.id, release_number: null, original_release_number: null,
    };
    const lines = await prepareLines(tx, { ...order, line_count: 0 }, input.lines.map((line, index) => ({ line, index, lineNumber: index + 1 })));
    // The order, its lines and totals, the entry's and the priority's audit records and the event: one statement, which
    // answers with the order as inserted, with its joins and its lines (the answer, without a read of its own).
    const { writes, lines: enteredLines } = insertOrderWithLines(tx, {
      ...header,
      ...shipTo,
      ...order,
      drop_ship_location_id: input.drop_ship_location_id ?? null,
      ...(input.order_date ? { order_date: input.order_date } : {}),
      created_by: actor.userId,
      updated_by: null,
    }, lines);
    const priority = input.priority ?? order.priority;
    const [entered] = await recordAndEmitAnswering(tx, actor,
      { entityType: 'order', entityId: order.id, action: 'created', manufacturerId: order.manufacturer_id, after: { order_number: order.order_number, lines: input.lines.length } },
      'order.created', orderEvent(order), {
        after: [priorityEntry(order, priority)],
        writes,
        answer: sql<OrderRow & OrderJoins & { lines: LineRow[] }>`${withJoins(tx, 'entered_order').select(enteredLines.as('lines'))}`,
      });
    await changePriorityOf(tx, actor, order, priority);
    // The header as entered, or as a priority other than the default left it.
    const shown = priority === order.priority ? entered! : await orderWithJoins(tx, actor, order.id);
    return { order: serializeOrder(shown, 'detail'), lines: entered!.lines.map((line) => serializeCreatedLine(enteredLine(line))) };
  });
}

/** PATCH: absent, null and empty strings keep a text field; ship_via_id and third_party_payer_id may be set to null. */
export async function updateOrder(db: Kysely<DB>, actor: Actor, id: string, changes: HeaderInput): Promise<OrderResponse> {
  return inTransaction(db, async (tx) => {
    const before = await lockOrder(tx, actor, id);
    assertStatus(before, OPEN, 'change');
    const header: Header = Object.fromEntries([...TEXT_FIELDS, 'ship_via_id', 'third_party_payer_id'].map((f) => [f, before[f as keyof Header]])) as Header;
    for (const field of TEXT_FIELDS) header[field] = text(changes[field]) ?? header[field];
    const carrierChanged = changes.ship_via_id !== undefined && changes.ship_via_id !== before.ship_via_id;
    if (carrierChanged) {
      header.ship_via_id = changes.ship_via_id!;
      // Leaving will call: WILL CALL was the carrier's, not the office's, unless freight terms are sent with the change.
      if (before.freight_terms === 'WILL CALL' && !text(changes.freight_terms)) header.freight_terms = null;
    }
    const payerChanged = changes.third_party_payer_id !== undefined && changes.third_party_payer_id !== before.third_party_payer_id;
    const payerAfter = changes.third_party_payer_id !== undefined ? changes.third_party_payer_id : before.third_party_payer_id;
    // The bill-to of an order with a payer is the payer's: an inline one that differs contradicts it (the rule at entry).
    if (payerAfter && BILL_TO_FIELDS.some((field) => text(changes[field]) && (payerChanged || text(changes[field]) !== before[field]))) {
      throw invalidRequest('name either third_party_payer_id or an inline bill_to, not both (an order with a third-party payer bills to the payer)');
    }
    if (payerChanged) {
      header.third_party_payer_id = changes.third_party_payer_id!;
      if (changes.third_party_payer_id) Object.assign(header, await payerSnapshot(tx, before.customer_id, changes.third_party_payer_id));
    }
    await applyCarrierRules(tx, header, carrierChanged);
    // A PATCH that changes no header field (a priority alone, or values the order already has) writes no header row
    // and no `updated` history row: an entry whose before and after are equal says nothing.
    if ((Object.keys(header) as (keyof Header)[]).some((field) => header[field] !== before[field])) {
      const set: Updateable<OrdersTable> = { ...header, updated_by: actor.userId, updated_at: new Date() };
      await tx.updateTable('orders').set(set).where('id', '=', id).execute();
      await recordHistory(tx, actor, {
        entityType: 'order', entityId: id, action: 'updated', manufacturerId: before.manufacturer_id,
        before: Object.fromEntries(Object.keys(header).map((f) => [f, before[f as keyof Header]])), after: header,
      });
    }
    if (changes.priority) await setPriority(tx, actor, before, changes.priority);
    return readOrder(tx, actor, id);
  });
}

export async function changePriority(db: Kysely<DB>, actor: Actor, id: string, priority: Priority): Promise<OrderResponse> {
  return inTransaction(db, async (tx) => {
    const order = await lockOrder(tx, actor, id);
    assertStatus(order, OPEN, 'change the priority of');
    await setPriority(tx, actor, order, priority);
    return readOrder(tx, actor, id);
  });
}

/** The next number of a release counter, taken under its row lock: a rolled-back release gives it back. */
async function nextReleaseNumber(tx: Transaction<DB>, manufacturerId: string | null): Promise<number> {
  const row = await tx
    .insertInto('release_counters')
    .values({ manufacturer_id: manufacturerId, last_number: 1 })
    .onConflict((oc) => oc.constraint('release_counters_manufacturer_key').doUpdateSet((eb) => ({ last_number: eb('release_counters.last_number', '+', 1) })))
    .returning('last_number')
    .executeTakeFirstOrThrow();
  return row.last_number;
}

export async function releaseOrder(db: Kysely<DB>, actor: Actor, id: string): Promise<OrderResponse> {
  return inTransaction(db, async (tx) => {
    const order = await lockOrder(tx, actor, id);
    assertStatus(order, ['entered'], 'release');
    if (order.line_count === 0) throw invalidStatus('an order needs at least one line to be released');
    const block = await tx.selectFrom('order_blocks').select('kind').where('order_id', '=', id).where('status', '=', 'open').executeTakeFirst();
    if (block) throw invalidStatus(`the order has an open ${block.kind} block`);
    // The partner's counter first, then the global one: every release takes them in this order.
    const releaseNumber = await nextReleaseNumber(tx, order.manufacturer_id);
    const originalReleaseNumber = await nextReleaseNumber(tx, null);
    const released = await tx
      .updateTable('orders')
      .set({ status: 'released', release_number: releaseNumber, original_release_number: originalReleaseNumber, released_by: actor.userId, released_at: new Date(), updated_by: actor.userId, updated_at: new Date() })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow();
    await recordAndEmit(tx, actor, { entityType: 'order', entityId: id, action: 'released', manufacturerId: order.manufacturer_id, before: { status: order.status }, after: { status: 'released', release_number: releaseNumber, original_release_number: originalReleaseNumber } }, 'order.released', orderEvent(released));
    return readOrder(tx, actor, id);
  });
}

/** Any status before shipped; what the lines hold in qty_committed goes back to the items, open blocks end. */
export async function cancelOrder(db: Kysely<DB>, actor: Actor, id: string): Promise<OrderResponse> {
  return inTransaction(db, async (tx) => {
    const order = await lockOrder(tx, actor, id);
    assertStatus(order, OPEN, 'cancel');
    await releaseLines(tx, (await tx.selectFrom('order_lines').select('id').where('order_id', '=', id).execute()).map((line) => line.id));
    await tx.updateTable('order_blocks').set({ status: 'cancelled', updated_at: new Date() }).where('order_id', '=', id).where('status', '=', 'open').execute();
    // The floor stops working a cancelled order: its live pick batches end with it (nothing had shipped from them).
    const batches = await tx.updateTable('pick_batches').set({ status: 'cancelled', cancelled_at: new Date(), updated_at: new Date() })
      .where('order_id', '=', id).where('status', 'in', ['in_progress', 'completed', 'packed']).returning(['id', 'status']).execute();
    await recordHistories(tx, actor, batches.map((batch) => ({
      entityType: 'pick_batch', entityId: batch.id, action: 'cancelled', manufacturerId: order.manufacturer_id, after: { status: 'cancelled', reason: 'order cancelled' },
    })));
    const cancelled = await tx.updateTable('orders').set({ status: 'cancelled', updated_by: actor.userId, updated_at: new Date() }).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
    await recordAndEmit(tx, actor, { entityType: 'order', entityId: id, action: 'cancelled', manufacturerId: order.manufacturer_id, before: { status: order.status }, after: { status: 'cancelled', reason: null } }, 'order.cancelled', orderEvent(cancelled));
    return readOrder(tx, actor, id);
  });
}

/** bill: shipped -> billed; close: shipped or billed -> closed (read-only from then on). */
export async function advanceOrder(db: Kysely<DB>, actor: Actor, id: string, to: 'billed' | 'closed'): Promise<OrderResponse> {
  return inTransaction(db, async (tx) => {
    const order = await lockOrder(tx, actor, id);
    assertStatus(order, to === 'billed' ? ['shipped'] : ['shipped', 'billed'], to === 'billed' ? 'bill' : 'close');
    const after = await tx.updateTable('orders').set({ status: to, updated_by: actor.userId, updated_at: new Date() }).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
    await recordAndEmit(tx, actor, { entityType: 'order', entityId: id, action: to, manufacturerId: order.manufacturer_id, before: { status: order.status }, after: { status: to } }, `order.${to}`, orderEvent(after));
    return readOrder(tx, actor, id);
  });
}

/** Carrier and PRO are recorded independently; a blank one clears it, and when both are clear the record is gone. */
export async function recordLtlFreight(db: Kysely<DB>, actor: Actor, id: string, input: { carrier?: string | null; pro_number?: string | null }): Promise<OrderResponse> {
  return inTransaction(db, async (tx) => {
    const order = await lockOrder(tx, actor, id);
    assertStatus(order, ['shipped', 'partial', 'closed'], 'record LTL freight for');
    const carrier = input.carrier === undefined ? order.ltl_carrier : text(input.carrier);
    const proNumber = input.pro_number === undefined ? order.ltl_pro_number : text(input.pro_number);
    const recorded = carrier !== null || proNumber !== null;
    await tx.updateTable('orders').set({
      ltl_carrier: carrier, ltl_pro_number: proNumber,
      ltl_recorded_at: recorded ? new Date() : null, ltl_recorded_by: recorded ? actor.userId : null,
      updated_by: actor.userId, updated_at: new Date(),
    }).where('id', '=', id).execute();
    await recordHistory(tx, actor, {
      entityType: 'order', entityId: id, action: recorded ? 'ltl_recorded' : 'ltl_cleared', manufacturerId: order.manufacturer_id,
      before: { ltl_carrier: order.ltl_carrier, ltl_pro_number: order.ltl_pro_number }, after: { ltl_carrier: carrier, ltl_pro_number: proNumber },
    });
    return readOrder(tx, actor, id);
  });
}

export async function addLine(db: Kysely<DB>, actor: Actor, id: string, line: LineRequest): Promise<OrderResponse> {
  return inTransaction(db, async (tx) => {
    const order = await lockOrder(tx, actor, id);
    assertStatus(order, EDITABLE, 'add a line to');
    const last = await tx.selectFrom('order_lines').select((eb) => eb.fn.max('line_number').as('max')).where('order_id', '=', id).executeTakeFirst();
    const [prepared] = await prepareLines(tx, order, [{ line, index: null, lineNumber: (last?.max ?? 0) + 1 }]);
    const row = await tx.insertInto('order_lines').values(prepared!).returningAll().executeTakeFirstOrThrow();
    await refreshTotals(tx, id);
    await recordHistory(tx, actor, { entityType: 'order', entityId: id, action: 'line_added', manufacturerId: order.manufacturer_id, after: row });
    return readOrder(tx, actor, id);
  });
}

export async function deleteLine(db: Kysely<DB>, actor: Actor, id: string, lineId: string): Promise<void> {
  await inTransaction(db, async (tx) => {
    const order = await lockOrder(tx, actor, id);
    const line = await tx.selectFrom('order_lines').selectAll().where('id', '=', lineId).where('order_id', '=', id).executeTakeFirst();
    if (!line) throw notFound('order line');
    assertStatus(order, EDITABLE, 'delete a line of');
    if (line.direct_shipped_at) throw invalidRequest(`line ${line.line_number} has been direct-shipped; its shipment stays on record`);
    await releaseLines(tx, [line.id]);
    await tx.deleteFrom('order_lines').where('id', '=', lineId).execute();
    await refreshTotals(tx, id);
    await recordHistory(tx, actor, { entityType: 'order', entityId: id, action: 'line_deleted', manufacturerId: order.manufacturer_id, before: line });
    // The lines left may all be direct and shipped.
    await followDirectShipments(tx, actor, order);
  });
}

/** The order detail every order operation answers with, for other modules' operations on an order. */
export function readOrderDetail(tx: Transaction<DB>, actor: Actor, id: string): Promise<OrderResponse> {
  return readOrder(tx, actor, id);
}

/**
 * Locks an order that a batch is about to ship from (the key's partner scope applies when an actor is given): it must
 * be released or partial and have no open block (422 invalid_status naming it).
 */
export async function lockOrderForShipping(tx: Transaction<DB>, id: string, actor: Actor): Promise<OrderRow> {
  await lockOrder(tx, actor, id);
  return shippableOrder(tx, id);
}

/**
 * An order the caller has locked, that stock may ship from: released or partial, with no open block (422 otherwise).
 * One statement; it must follow the lock, so that it sees a block opened while the lock was waited for.
 */
export async function shippableOrder(tx: Transaction<DB>, id: string): Promise<OrderRow> {
  const { rows: [row] } = await sql<OrderRow & { open_block: { id: string; kind: string } | null }>`
    select o.*, (select json_build_object('id', b.id, 'kind', b.kind) from order_blocks b
      where b.order_id = o.id and b.status = 'open' order by b.created_at limit 1) as open_block
    from orders o where o.id = ${id}`.execute(tx);
  const { open_block: block, ...order } = row!;
  assertStatus(order, ['released', 'partial'], 'ship from');
  if (block) throw invalidStatus(`the order has an open ${block.kind} block (${block.id}); review its exception first`);
  return order;
}

/** After a batch shipped: shipped when every line has shipped all it ordered (direct portions included), else partial. */
export async function followWarehouseShipment(tx: Transaction<DB>, actor: Actor, order: OrderRow): Promise<void> {
  // One statement: the status the lines call for, written only when it differs from the order's.
  const { rows: [after] } = await sql<OrderRow>`
    with follows as (
      select case when exists (select 1 from order_lines where order_id = ${order.id} and qty_shipped < qty_ordered)
        then 'partial' else 'shipped' end as status
    )
    update orders o set status = f.status, updated_by = ${actor.userId}, updated_at = now(),
      shipped_at = case when f.status = 'shipped' then now() else o.shipped_at end,
      shipped_by = case when f.status = 'shipped' then ${actor.userId}::uuid else o.shipped_by end
    from follows f where o.id = ${order.id} and o.status <> f.status
    returning o.*`.execute(tx);
  if (!after) return;
  const status = after.status;
  const entry = { entityType: 'order', entityId: order.id, action: status, manufacturerId: order.manufacturer_id, before: { status: order.status }, after: { status } };
  if (status === 'shipped') await recordAndEmit(tx, actor, entry, 'order.shipped', orderEvent(after));
  else await recordHistory(tx, actor, entry);
}
