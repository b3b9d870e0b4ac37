// Shared by the picking test files: a warehouse with a partner, a customer, a bin in a zone, staging and shipping
// locations, stocked items, released orders, and views of what picking stored.
import assert from 'node:assert/strict';
import { adjust, call, createItem, createLocation, createManufacturer, type Answer, type TestApp } from './helpers.ts';

export interface Floor {
  t: TestApp;
  partner: string;
  otherPartner: string;
  customer: string;
  bin: string;
  shipVia: Record<string, string>;
}

let sequence = 0;

export async function setUpFloor(t: TestApp): Promise<Floor> {
  const partner = await createManufacturer(t, 'PICKP');
  const otherPartner = await createManufacturer(t, 'PICKQ');
  const customer = await call(t.app, 'POST', '/api/v1/customers', {
    key: t.adminKey, body: { account_number: 'P-100', name: 'Dockside Supply', address_line_1: '1 Main St', city: 'Springfield', state: 'IL', zip_code: '62701' },
  });
  const bin = await createLocation(t, 'A-01-02', { zone: 'A', aisle: '01', rack: '02', shelf: '3' });
  await createLocation(t, 'STAGE-1', { location_type: 'staging' });
  await createLocation(t, 'DOCK-1', { location_type: 'shipping' });
  const carriers = (await call(t.app, 'GET', '/api/v1/ship-via', { key: t.adminKey })).body.data as { id: string; code: string }[];
  return { t, partner, otherPartner, customer: customer.body.data.id ?? customer.body.data.customer.id, bin, shipVia: Object.fromEntries(carriers.map((c) => [c.code, c.id])) };
}

/** An item of the partner with `stock` units in the floor's bin. */
export async function stockedItem(floor: Floor, stock: number, manufacturer = floor.partner): Promise<string> {
  const id = await createItem(floor.t, manufacturer, `PK-${++sequence}`, { selling_uom: 'EA' });
  if (stock > 0) assert.equal((await adjust(floor.t, id, stock, floor.bin)).status, 201);
  return id;
}

/** A released order of the partner for the given items and quantities. */
export async function releasedOrder(floor: Floor, lines: { item: string; qty: number }[], extra: Record<string, unknown> = {}): Promise<string> {
  const entered = await call(floor.t.app, 'POST', '/api/v1/orders', {
    key: floor.t.adminKey,
    body: { manufacturer_id: floor.partner, customer_id: floor.customer, lines: lines.map((line) => ({ item_id: line.item, qty_ordered: line.qty, unit_price: 5 })), ...extra },
  });
  assert.equal(entered.status, 201, JSON.stringify(entered.body));
  const id = entered.body.data.order.id;
  assert.equal((await call(floor.t.app, 'POST', `/api/v1/orders/${id}/release`, { key: floor.t.adminKey })).status, 200);
  return id;
}

export const post = (floor: Floor, url: string, body?: unknown, key = floor.t.adminKey) =>
  call(floor.t.app, 'POST', `/api/v1${url}`, { key, ...(body !== undefined ? { body } : {}) });

export async function ok(answer: Promise<Answer> | Answer, status = 200) {
  const done = await answer;
  assert.equal(done.status, status, JSON.stringify(done.body));
  return done.body.data;
}

/** A batch started for the order; returns the session as GET shows it (with line ids). */
export async function startedBatch(floor: Floor, orderId: string) {
  const started = await ok(post(floor, '/pick-batches', { order_id: orderId }), 201);
  return ok(call(floor.t.app, 'GET', `/api/v1/pick-batches/${started.ID}`, { key: floor.t.adminKey }));
}

/** Picks every line in full, completes, verifies and packs: a batch ready to stage and ship. */
export async function packedBatch(floor: Floor, orderId: string) {
  const batch = await startedBatch(floor, orderId);
  for (const line of batch.Lines) await ok(post(floor, `/pick-batches/${batch.ID}/lines/${line.PickBatchLineID}/pick`, { qty_picked: line.QtyToPick }));
  await ok(post(floor, `/pick-batches/${batch.ID}/complete`));
  for (const line of batch.Lines) await ok(post(floor, `/pick-batches/${batch.ID}/lines/${line.PickBatchLineID}/verify`));
  return ok(post(floor, `/pick-batches/${batch.ID}/pack`));
}

export const stockOf = (floor: Floor, itemId: string) =>
  floor.t.db.selectFrom('items').select(['qty_on_hand', 'qty_committed', 'qty_available']).where('id', '=', itemId).executeTakeFirstOrThrow();
export const binOf = async (floor: Floor, itemId: string) =>
  (await floor.t.db.selectFrom('item_locations').select('qty_on_hand').where('item_id', '=', itemId).where('location_id', '=', floor.bin).executeTakeFirst())?.qty_on_hand ?? 0;
export const eventsOf = async (floor: Floor, kind: string) =>
  (await floor.t.db.selectFrom('outbox_events').select(['kind', 'data', 'manufacturer_id']).where('kind', '=', kind).orderBy('seq').execute());

/** A packed batch of a new one-line order: its id, batch number and order number. */
export async function packedOneLine(floor: Floor) {
  const orderId = await releasedOrder(floor, [{ item: await stockedItem(floor, 5), qty: 1 }]);
  const batch = await packedBatch(floor, orderId);
  const row = await floor.t.db.selectFrom('pick_batches as b').innerJoin('orders as o', 'o.id', 'b.order_id')
    .select(['b.batch_number', 'o.order_number']).where('b.id', '=', batch.ID).executeTakeFirstOrThrow();
  return { id: batch.ID as string, batchNumber: row.batch_number, orderNumber: row.order_number, orderId };
}

export const parcelsOf = (floor: Floor, batchId: string) =>
  floor.t.db.selectFrom('pick_batch_parcels').select(['parcel_seq', 'tracking_number', 'carrier']).where('pick_batch_id', '=', batchId).orderBy('parcel_seq').execute();
