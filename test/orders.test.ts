// Orders: entry and its rules, allocation, the detail with includes, header changes, the status transitions, lines,
// direct shipping and the list. Every write is checked in the tables it changed (orders, lines, items, history, outbox).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { buildApp } from '../src/app.ts';
import { connectPostgres } from '../src/db/connect.ts';
import { memoryCounterStore } from '../src/http/rate-limit.ts';
import {
  adjust, call, createCustomer, createItem, createLocation, createManufacturer, expectError, onPostgres, startApp, userWithKey, type TestApp,
} from './helpers.ts';

let t: TestApp;
let partner: string;
let otherPartner: string;
let customer: string;
let bin: string;
let shipVia: Record<string, string>;

/** An item of the partner with `stock` units on hand (and a price and weight). */
async function stockedItem(number: string, stock: number, extra: Record<string, unknown> = {}, manufacturer = partner): Promise<string> {
  const id = await createItem(t, manufacturer, number, { unit_weight: 2.5, ...extra });
  await t.db.updateTable('items').set({ price_1: 10 }).where('id', '=', id).execute();
  if (stock > 0) assert.equal((await adjust(t, id, stock, bin)).status, 201);
  return id;
}

const stockOf = (id: string) => t.db.selectFrom('items').select(['qty_on_hand', 'qty_committed', 'qty_available']).where('id', '=', id).executeTakeFirstOrThrow();
const orderRow = (id: string) => t.db.selectFrom('orders').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const historyOf = (id: string) => t.db.selectFrom('history').select(['action', 'before', 'after']).where('entity_id', '=', id).orderBy('occurred_at').execute();
const eventsOf = async (orderId: string) => (await t.db.selectFrom('outbox_events').select(['kind', 'data']).orderBy('seq').execute())
  .filter((event) => (event.data as { order_id?: string }).order_id === orderId);

async function enter(lines: Record<string, unknown>[], extra: Record<string, unknown> = {}, key = t.adminKey) {
  return call(t.app, 'POST', '/api/v1/orders', { key, body: { manufacturer_id: partner, customer_id: customer, lines, ...extra } });
}

async function entered(lines: Record<string, unknown>[], extra: Record<string, unknown> = {}): Promise<string> {
  const answer = await enter(lines, extra);
  assert.equal(answer.status, 201, JSON.stringify(answer.body));
  return answer.body.data.order.id;
}

const post = (url: string, body?: unknown, key = t.adminKey) => call(t.app, 'POST', url, { key, ...(body !== undefined ? { body } : {}) });

before(async () => {
  t = await startApp();
  partner = await createManufacturer(t, 'ORDP');
  otherPartner = await createManufacturer(t, 'ORDQ');
  customer = await createCustomer(t, 'C-100');
  bin = await createLocation(t, 'ORD-01');
  const carriers = (await call(t.app, 'GET', '/api/v1/ship-via', { key: t.adminKey })).body.data as { id: string; code: string }[];
  shipVia = Object.fromEntries(carriers.map((c) => [c.code, c.id]));
});
after(() => t.close());

describe('entering an order', () => {
  test('order and lines in one go: defaults, snapshots, totals, commitments, history and events', async () => {
    const a = await stockedItem('ENT-A', 10);
    const b = await stockedItem('ENT-B', 5);
    await t.db.updateTable('items').set({ unit_weight: null }).where('id', '=', b).execute();
    const answer = await enter([
      { item_id: a, qty_ordered: 3, unit_price: 19.99, discount_pct: 0.1 },
      { item_id: b, qty_ordered: 2 },
    ], { customer_po_number: ' PO-77 ' });
    assert.equal(answer.status, 201);
    const { order, lines } = answer.body.data;
    assert.equal(order.status, 'entered');
    assert.equal(order.priority, 'normal');
    assert.equal(order.order_date, `${new Date().toISOString().slice(0, 10)}T00:00:00.000Z`);
    assert.equal(order.customer_po_number, 'PO-77');
    assert.equal(order.line_count, 2);
    assert.equal(order.total_weight, 7.5);
    assert.equal(order.total_extended_price, 53.97 + 20);
    assert.equal(order.ship_to_name, 'C-100 Hardware');
    assert.equal(order.ship_to_city, 'Springfield');
    assert.equal(order.manufacturer_code, 'ORDP');
    assert.equal(order.customer_account, 'C-100');
    assert.equal(order.release_number, null);
    assert.equal('ship_via_mode' in order, false);
    assert.deepEqual(lines.map((l: { line_number: number }) => l.line_number), [1, 2]);
    assert.equal(lines[0].item_number_display, 'ENT-A');
    assert.equal(lines[0].item_description, 'Item ENT-A');
    assert.equal(lines[0].unit_weight, 2.5);
    assert.equal(lines[0].unit_of_measure, 'EA');
    assert.equal(lines[0].extended_price, 53.97);
    assert.equal(lines[0].price_override, false, 'create responses show price_override false');
    assert.equal(lines[1].unit_price, 10, 'price defaults to the item price');
    assert.equal('item_qty_available' in lines[0], false);
    assert.equal('direct_notified_at' in lines[0], false);
    // The answer is the order as stored (its lines come from the insert, not a read): what its detail shows, less the
    // detail-only keys and the entry-time defaults the spec gives a create response's lines.
    const detail = (await call(t.app, 'GET', `/api/v1/orders/${order.id}`, { key: t.adminKey })).body.data;
    assert.deepEqual(order, detail.order);
    const core = ({ additional_description: _a, qty_backordered: _b, price_override: _c, item_qty_available: _d, ...rest }: Record<string, unknown>) => rest;
    assert.deepEqual(lines.map(core), detail.lines.map(core));

    assert.deepEqual(await stockOf(a), { qty_on_hand: 10, qty_committed: 3, qty_available: 7 });
    assert.deepEqual(await stockOf(b), { qty_on_hand: 5, qty_committed: 2, qty_available: 3 });
    const stored = await t.db.selectFrom('order_lines').select(['item_id', 'qty_committed', 'price_override']).where('order_id', '=', order.id).orderBy('line_number').execute();
    assert.deepEqual(stored.map((l) => [l.qty_committed, l.price_override]), [[3, true], [2, false]]);
    assert.deepEqual((await historyOf(order.id)).map((h) => h.action), ['created', 'priority_changed']);
    const events = await eventsOf(order.id);
    assert.deepEqual(events.map((e) => e.kind), ['order.created']);
    // The number the entry took before writing the order (its event carries it) is the one stored.
    const storedOrder = await orderRow(order.id);
    assert.equal((events[0]!.data as { order_number: number }).order_number, storedOrder.order_number);
    assert.equal(Number(storedOrder.total_extended_price), 53.97 + 20);
    assert.equal(storedOrder.line_count, 2);
  });

  test('the create response\'s lines are partial: no direct_* or item_qty_* keys, even on a direct line', async () => {
    const d = await stockedItem('PART-D', 0);
    const line = (await enter([{ item_id: d, qty_ordered: 2, fulfillment_source: 'direct' }])).body.data.lines[0];
    assert.deepEqual(Object.keys(line).filter((key) => key.startsWith('direct_') || key.startsWith('item_qty_')), []);
    assert.equal(line.qty_direct, 2);
  });

  test('amounts as large as the limits allow are computed exactly from the stored price', async () => {
    const a = await stockedItem('BIG-A', 0);
    const big = (await enter([{ item_id: a, qty_ordered: 100_000_000, unit_price: 99_999_999, fulfillment_source: 'direct' }])).body.data;
    assert.equal(big.lines[0].extended_price, 9_999_999_900_000_000);
    assert.equal(big.order.total_extended_price, 9_999_999_900_000_000);
    // The price is stored with four decimals; the extension is made from the stored price.
    const small = (await enter([{ item_id: a, qty_ordered: 100_000, unit_price: 0.00005, fulfillment_source: 'direct' }])).body.data.lines[0];
    assert.equal(small.unit_price, 0.0001);
    assert.equal(small.extended_price, 10);
  });

  test('a priority other than normal is applied after entry with its own audit record and event', async () => {
    const a = await stockedItem('PRI-A', 5);
    const answer = await enter([{ item_id: a, qty_ordered: 1 }], { priority: 'rush' });
    const id = answer.body.data.order.id;
    assert.equal((await orderRow(id)).priority, 'rush');
    // The answer shows the order as the priority left it.
    assert.deepEqual(answer.body.data.order, (await call(t.app, 'GET', `/api/v1/orders/${id}`, { key: t.adminKey })).body.data.order);
    const history = await historyOf(id);
    assert.deepEqual(history.map((h) => h.action), ['created', 'priority_changed']);
    assert.deepEqual(history[1]!.after, { priority: 'rush' });
    assert.deepEqual((await eventsOf(id)).map((e) => e.kind), ['order.created', 'order.priority_changed']);
  });

  test('a bad line rolls back the whole order and is named by its index', async () => {
    const a = await stockedItem('RB-A', 5);
    const foreign = await stockedItem('RB-F', 5, {}, otherPartner);
    const before = await t.db.selectFrom('orders').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    const answer = await enter([{ item_id: a, qty_ordered: 2 }, { item_id: foreign, qty_ordered: 1 }]);
    expectError(answer, 422, 'invalid_request');
    assert.match(answer.body.error.message, /^lines\[1\]: /);
    assert.deepEqual(answer.body.error.details, { line_index: 1 });
    const afterCount = await t.db.selectFrom('orders').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    assert.equal(afterCount.n, before.n);
    assert.equal((await stockOf(a)).qty_committed, 0);
  });

  test('schema errors name the line too; bad dates, discounts, quantities and unknown fields are 400', async () => {
    const a = await stockedItem('BAD-A', 5);
    const cases: [Record<string, unknown>[], Record<string, unknown>, RegExp][] = [
      [[{ item_id: a, qty_ordered: 0 }], {}, /lines\/0\/qty_ordered/],
      [[{ item_id: a, qty_ordered: 100_000_001 }], {}, /lines\/0\/qty_ordered/],
      [[{ item_id: a, qty_ordered: 1 }, { item_id: a, qty_ordered: 1.5 }], {}, /lines\/1\/qty_ordered/],
      [[{ item_id: a, qty_ordered: 1, discount_pct: -0.1 }], {}, /discount_pct/],
      [[{ item_id: a, qty_ordered: 1, discount_pct: 1.5 }], {}, /discount_pct/],
      [[{ item_id: a, qty_ordered: 1, colour: 'red' }], {}, /colour is not a known field/],
      [[{ item_id: 'nope', qty_ordered: 1 }], {}, /item_id/],
      [[{ item_id: a, qty_ordered: 1 }], { order_date: '2026-02-30' }, /order_date/],
      [[{ item_id: a, qty_ordered: 1 }], { order_date: '11/23/2026' }, /order_date/],
      // Year 0 does not exist in PostgreSQL: a malformed date, named, not the database's refusal.
      [[{ item_id: a, qty_ordered: 1 }], { order_date: '0000-01-01' }, /order_date/],
      [[{ item_id: a, qty_ordered: 1, fulfillment_source: 'drone' }], {}, /fulfillment_source/],
      [[], {}, /lines/],
    ];
    for (const [lines, extra, message] of cases) {
      const answer = await enter(lines, extra);
      expectError(answer, 400, 'bad_request');
      assert.match(answer.body.error.message, message);
    }
    expectError(await enter([{ item_id: a, qty_ordered: 1 }], { priority: 'urgent' }), 400, 'bad_request');
    assert.equal((await stockOf(a)).qty_committed, 0);
  });

  test('unit_price outside 0..99999999 is 400 invalid_price', async () => {
    const a = await stockedItem('PRICE-A', 5);
    for (const price of [-0.01, 100_000_000]) {
      const answer = await enter([{ item_id: a, qty_ordered: 1 }, { item_id: a, qty_ordered: 1, unit_price: price }]);
      expectError(answer, 400, 'invalid_price');
      assert.match(answer.body.error.message, /^lines\[1\]: /);
    }
    assert.equal((await stockOf(a)).qty_committed, 0);
  });

  test('the same item twice on one order is refused', async () => {
    const a = await stockedItem('DUP-A', 5);
    expectError(await enter([{ item_id: a, qty_ordered: 1 }, { item_id: a, qty_ordered: 2 }]), 422, 'invalid_request');
    assert.equal((await stockOf(a)).qty_committed, 0);
  });

  test('unknown customer, partner or carrier, inactive or discontinued items: 422, nothing written', async () => {
    const a = await stockedItem('UNK-A', 5);
    const missing = '00000000-0000-4000-8000-000000000000';
    // Each names what is missing; with both missing, the partner is named first.
    for (const [header, named] of [[{ customer_id: missing }, 'customer_id'], [{ manufacturer_id: missing }, 'manufacturer_id'],
      [{ manufacturer_id: missing, customer_id: missing }, 'manufacturer_id']] as const) {
      const answer = await enter([{ item_id: a, qty_ordered: 1 }], header);
      expectError(answer, 422, 'invalid_request');
      assert.match(answer.body.error.message, new RegExp(`^${named} does not name`), JSON.stringify(header));
    }
    expectError(await enter([{ item_id: a, qty_ordered: 1 }], { ship_via_id: missing }), 422, 'invalid_request');
    expectError(await enter([{ item_id: missing, qty_ordered: 1 }]), 422, 'invalid_request');
    const old = await stockedItem('UNK-OLD', 5);
    assert.equal((await post(`/api/v1/items/${old}/discontinue`, {})).status, 200);
    expectError(await enter([{ item_id: old, qty_ordered: 1 }]), 422, 'invalid_request');
    assert.equal((await stockOf(a)).qty_committed, 0);
  });
});

describe('carriers, drop-ship locations and third-party payers', () => {
  test('parcel keeps ship_method, LTL keeps ship_via_other, will call clears both and forces WILL CALL', async () => {
    const a = await stockedItem('SV-A', 10);
    const fields = { ship_method: 'Ground', ship_via_other: 'Old Dominion', freight_terms: 'PREPAID' };
    const parcel = (await enter([{ item_id: a, qty_ordered: 1 }], { ...fields, ship_via_id: shipVia.UPS })).body.data.order;
    assert.deepEqual([parcel.ship_method, parcel.ship_via_other, parcel.freight_terms, parcel.ship_via_mode, parcel.ship_via_code], ['Ground', null, 'PREPAID', 'parcel', 'UPS']);
    // The entry's answer carries the carrier's joins as the detail read does.
    assert.deepEqual(parcel, (await call(t.app, 'GET', `/api/v1/orders/${parcel.id}`, { key: t.adminKey })).body.data.order);
    const ltl = (await enter([{ item_id: a, qty_ordered: 1 }], { ...fields, ship_via_id: shipVia.LTL })).body.data.order;
    assert.deepEqual([ltl.ship_method, ltl.ship_via_other, ltl.ship_via_mode], [null, 'Old Dominion', 'ltl']);
    const pickup = (await enter([{ item_id: a, qty_ordered: 1 }], { ...fields, ship_via_id: shipVia['WILL-CALL'] })).body.data.order;
    assert.deepEqual([pickup.ship_method, pickup.ship_via_other, pickup.freight_terms, pickup.ship_via_mode], [null, null, 'WILL CALL', 'will_call']);
    const stored = await orderRow(pickup.id);
    assert.equal(stored.freight_terms, 'WILL CALL');
    // A retired carrier cannot be chosen any more; the order that has it keeps it.
    const retired = await post('/api/v1/ship-via', { code: 'OLDCO', description: 'Old carrier', mode: 'parcel' });
    assert.equal(retired.status, 201);
    const withOld = await entered([{ item_id: a, qty_ordered: 1 }], { ship_via_id: retired.body.data.id });
    await t.db.updateTable('ship_via').set({ is_active: false }).where('id', '=', retired.body.data.id).execute();
    expectError(await enter([{ item_id: a, qty_ordered: 1 }], { ship_via_id: retired.body.data.id }), 422, 'invalid_request');
    expectError(await call(t.app, 'PATCH', `/api/v1/orders/${parcel.id}`, { key: t.adminKey, body: { ship_via_id: retired.body.data.id } }), 422, 'invalid_request');
    assert.equal((await call(t.app, 'PATCH', `/api/v1/orders/${withOld}`, { key: t.adminKey, body: { customer_po_number: 'PO-9' } })).status, 200);
  });

  test('a drop-ship location of the customer is snapshotted into ship_to; hidden or foreign ones are refused', async () => {
    const a = await stockedItem('DS-A', 10);
    const other = await createCustomer(t, 'C-200');
    const place = await post(`/api/v1/customers/${customer}/drop-ship-locations`, { name: 'Jobsite 4', address_line_1: '9 Dock Rd', city: 'Peoria', state: 'il', zip_code: '61602' });
    assert.equal(place.status, 201);
    const placeId = place.body.data.drop_ship_location.id;
    const order = (await enter([{ item_id: a, qty_ordered: 1 }], { drop_ship_location_id: placeId })).body.data.order;
    assert.deepEqual([order.drop_ship_location_id, order.ship_to_name, order.ship_to_address_1, order.ship_to_city, order.ship_to_state, order.ship_to_zip],
      [placeId, 'Jobsite 4', '9 Dock Rd', 'Peoria', 'IL', '61602']);
    const foreign = await post(`/api/v1/customers/${other}/drop-ship-locations`, { name: 'Elsewhere', address_line_1: '1 A St', city: 'Joliet', state: 'IL', zip_code: '60431' });
    expectError(await enter([{ item_id: a, qty_ordered: 1 }], { drop_ship_location_id: foreign.body.data.drop_ship_location.id }), 422, 'invalid_request');
    assert.equal((await post(`/api/v1/customers/${customer}/drop-ship-locations/${placeId}/hide`)).status, 200);
    expectError(await enter([{ item_id: a, qty_ordered: 1 }], { drop_ship_location_id: placeId }), 422, 'invalid_request');
    // The order that already uses the hidden location keeps it.
    assert.equal((await call(t.app, 'GET', `/api/v1/orders/${order.id}`, { key: t.adminKey })).body.data.order.drop_ship_location_id, placeId);
    assert.equal((await stockOf(a)).qty_committed, 1);
  });

  test('a third-party payer is snapshotted into bill_to and carrier_account; with an inline bill-to it is refused', async () => {
    const a = await stockedItem('TP-A', 10);
    const payer = await post(`/api/v1/customers/${customer}/third-party-payers`, {
      name: 'Freight Payer Co', address_line_1: '5 Pay Ln', city: 'Chicago', state: 'IL', zip_code: '60601', carrier_account: 'ACCT-9',
    });
    assert.equal(payer.status, 201);
    const payerId = payer.body.data.third_party_payer.id;
    const order = (await enter([{ item_id: a, qty_ordered: 1 }], { third_party_payer_id: payerId, carrier_account: 'ignored' })).body.data.order;
    assert.deepEqual([order.bill_to_name, order.bill_to_city, order.carrier_account, order.third_party_payer_id], ['Freight Payer Co', 'Chicago', 'ACCT-9', payerId]);
    expectError(await enter([{ item_id: a, qty_ordered: 1 }], { third_party_payer_id: payerId, bill_to_name: 'Someone' }), 422, 'invalid_request');
    const inline = (await enter([{ item_id: a, qty_ordered: 1 }], { bill_to_name: 'Inline Bill', bill_to_zip: '60602' })).body.data.order;
    assert.deepEqual([inline.bill_to_name, inline.bill_to_zip, inline.third_party_payer_id], ['Inline Bill', '60602', null]);
    const patch = (id: string, body: Record<string, unknown>) => call(t.app, 'PATCH', `/api/v1/orders/${id}`, { key: t.adminKey, body });
    expectError(await patch(inline.id, { third_party_payer_id: payerId, bill_to_name: 'Someone' }), 422, 'invalid_request');
    assert.equal((await orderRow(inline.id)).third_party_payer_id, null);
    const switched = (await patch(inline.id, { third_party_payer_id: payerId })).body.data.order;
    assert.deepEqual([switched.bill_to_name, switched.carrier_account], ['Freight Payer Co', 'ACCT-9']);
    // Once hidden, the payer cannot be picked again, but the orders naming it keep it and may send it back unchanged.
    assert.equal((await post(`/api/v1/customers/${customer}/third-party-payers/${payerId}/hide`)).status, 200);
    expectError(await enter([{ item_id: a, qty_ordered: 1 }], { third_party_payer_id: payerId }), 422, 'invalid_request');
    assert.equal((await patch(order.id, { third_party_payer_id: payerId, customer_po_number: 'PO-KEEP' })).status, 200);
    assert.equal((await orderRow(order.id)).third_party_payer_id, payerId);
    // An order with a payer bills to it: another inline bill-to is refused whether or not the payer is sent again
    // (found by a black-box run: the PATCH kept the payer beside a bill-to of its own); the payer's own values may
    // be sent back, and clearing the payer frees the bill-to.
    for (const body of [{ bill_to_city: 'Dallas' }, { third_party_payer_id: payerId, bill_to_name: 'Other' }]) {
      expectError(await patch(order.id, body), 422, 'invalid_request');
      assert.deepEqual([(await orderRow(order.id)).bill_to_name, (await orderRow(order.id)).bill_to_city], ['Freight Payer Co', 'Chicago']);
    }
    assert.equal((await patch(order.id, { bill_to_name: 'Freight Payer Co', bill_to_city: 'Chicago' })).status, 200);
    const cleared = (await patch(order.id, { third_party_payer_id: null, bill_to_city: 'Dallas' })).body.data.order;
    assert.deepEqual([cleared.third_party_payer_id, cleared.bill_to_name, cleared.bill_to_city], [null, 'Freight Payer Co', 'Dallas']);
  });

  test('leaving will call through PATCH drops WILL CALL unless freight terms come with the change', async () => {
    const a = await stockedItem('WC-A', 10);
    const patch = (id: string, body: Record<string, unknown>) => call(t.app, 'PATCH', `/api/v1/orders/${id}`, { key: t.adminKey, body });
    const pickup = await entered([{ item_id: a, qty_ordered: 1 }], { ship_via_id: shipVia['WILL-CALL'] });
    const moved = (await patch(pickup, { ship_via_id: shipVia.UPS })).body.data.order;
    assert.deepEqual([moved.freight_terms, moved.ship_via_mode], [null, 'parcel']);
    const other = await entered([{ item_id: a, qty_ordered: 1 }], { ship_via_id: shipVia['WILL-CALL'] });
    assert.equal((await patch(other, { ship_via_id: shipVia.LTL, freight_terms: 'COLLECT' })).body.data.order.freight_terms, 'COLLECT');
    assert.equal((await orderRow(other)).freight_terms, 'COLLECT');
  });
});

describe('allocation', () => {
  test('a warehouse line may not drive qty_available negative unless acknowledged', async () => {
    const a = await stockedItem('NEG-A', 3);
    const refused = await enter([{ item_id: a, qty_ordered: 4 }]);
    expectError(refused, 422, 'negative_stock');
    assert.match(refused.body.error.message, /^lines\[0\]: /);
    assert.equal((await stockOf(a)).qty_committed, 0);
    await entered([{ item_id: a, qty_ordered: 4, acknowledge_negative: true }]);
    assert.deepEqual(await stockOf(a), { qty_on_hand: 3, qty_committed: 4, qty_available: -1 });
  });

  test('a commitment past the units an item can hold (2,147,483,647 committed) is 422 naming the line; nothing is written', async () => {
    // Found by a black-box run: the 21st acknowledged order of 100,000,000 units overflowed qty_committed into a bare 400.
    const a = await stockedItem('OVF-A', 1);
    await t.db.updateTable('items').set({ qty_committed: 2_147_483_000 }).where('id', '=', a).execute();
    const orders = async () => (await t.db.selectFrom('orders').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n;
    const before = await orders();
    const refused = await enter([{ item_id: a, qty_ordered: 1000, acknowledge_negative: true }]);
    expectError(refused, 422, 'invalid_request');
    assert.match(refused.body.error.message, /^lines\[0\]: OVF-A: committed would be 2147484000, more than the 2147483647 units/);
    assert.equal((await stockOf(a)).qty_committed, 2_147_483_000);
    assert.equal(Number(await orders()), Number(before));
    await entered([{ item_id: a, qty_ordered: 647, acknowledge_negative: true }]);
    assert.equal((await stockOf(a)).qty_committed, 2_147_483_647);

    // An item already short: its available (on hand less committed) would pass the least it can hold first.
    const b = await stockedItem('OVF-B', 1);
    await t.db.updateTable('items').set({ qty_on_hand: -2, qty_committed: 2_147_483_000 }).where('id', '=', b).execute();
    const short = await enter([{ item_id: b, qty_ordered: 647, acknowledge_negative: true }]);
    expectError(short, 422, 'invalid_request');
    assert.match(short.body.error.message, /^lines\[0\]: OVF-B: available would be -2147483649, less than the -2147483648 units/);
    assert.deepEqual(await stockOf(b), { qty_on_hand: -2, qty_committed: 2_147_483_000, qty_available: -2_147_483_002 });
    assert.equal(Number(await orders()), Number(before) + 1);
  });

  test('split lines commit only qty_warehouse and must add up; direct lines never touch stock', async () => {
    const a = await stockedItem('SPL-A', 2);
    expectError(await enter([{ item_id: a, qty_ordered: 5, fulfillment_source: 'split', qty_warehouse: 2, qty_direct: 2 }]), 422, 'invalid_split');
    expectError(await enter([{ item_id: a, qty_ordered: 5, fulfillment_source: 'warehouse', qty_direct: 1 }]), 422, 'invalid_split');
    const id = await entered([{ item_id: a, qty_ordered: 5, fulfillment_source: 'split', qty_warehouse: 2, qty_direct: 3 }]);
    assert.equal((await stockOf(a)).qty_committed, 2);
    const d = await stockedItem('DIR-A', 0);
    await t.db.insertInto('pick_exceptions').values({ kind: 'short_pick', manufacturer_id: partner, item_id: d, order_id: null, order_line_id: null, pick_batch_id: null, short_reason: null, flag_reason: null, actual_item_id: null, actual_qty: null }).execute();
    const direct = (await enter([{ item_id: d, qty_ordered: 7, fulfillment_source: 'direct' }])).body.data.lines[0];
    assert.deepEqual([direct.qty_warehouse, direct.qty_direct], [0, 7]);
    assert.deepEqual(await stockOf(d), { qty_on_hand: 0, qty_committed: 0, qty_available: 0 });
    const line = (await call(t.app, 'GET', `/api/v1/orders/${id}`, { key: t.adminKey })).body.data.lines[0];
    assert.deepEqual([line.qty_warehouse, line.qty_direct, line.fulfillment_source], [2, 3, 'split']);
  });

  test('an item with an open pick exception needs acknowledge_exception', async () => {
    const a = await stockedItem('EXC-A', 10);
    await t.db.insertInto('pick_exceptions').values({ kind: 'mispick', manufacturer_id: partner, item_id: a, order_id: null, order_line_id: null, pick_batch_id: null, short_reason: null, flag_reason: null, actual_item_id: null, actual_qty: null }).execute();
    expectError(await enter([{ item_id: a, qty_ordered: 1 }]), 422, 'exception_blocked');
    assert.equal((await stockOf(a)).qty_committed, 0);
    await entered([{ item_id: a, qty_ordered: 1, acknowledge_exception: true }]);
    assert.equal((await stockOf(a)).qty_committed, 1);
  });
});

describe('reading an order', () => {
  test('detail lines carry item_qty_available; includes come as a comma list or repeated', async () => {
    const a = await stockedItem('GET-A', 10);
    const id = await entered([{ item_id: a, qty_ordered: 4 }]);
    const plain = await call(t.app, 'GET', `/api/v1/orders/${id}`, { key: t.adminKey });
    assert.equal(plain.body.data.lines[0].item_qty_available, 6);
    assert.deepEqual(Object.keys(plain.body.data).sort(), ['lines', 'order']);
    const all = await call(t.app, 'GET', `/api/v1/orders/${id}?include=fulfillment,shipments&include=blocks&include=documents`, { key: t.adminKey });
    assert.equal(all.status, 200);
    const { fulfillment, shipments, blocks, documents } = all.body.data;
    assert.deepEqual([shipments, blocks, documents], [[], [], { documents: [], packing_list: null }]);
    assert.equal(fulfillment.display_substatus, '');
    assert.equal(fulfillment.has_warehouse_portion, true);
    assert.equal(fulfillment.has_direct_portion, false);
    assert.equal(fulfillment.lifecycle.entered_by_name, 'admin');
    assert.equal(fulfillment.lifecycle.released_at, null);
    expectError(await call(t.app, 'GET', `/api/v1/orders/${id}?include=fulfilment`, { key: t.adminKey }), 400, 'bad_request');
  });

  test('includes read what picking writes: batches with parcels, open blocks with their exception, documents', async () => {
    const a = await stockedItem('INC-A', 10);
    const id = await entered([{ item_id: a, qty_ordered: 2 }]);
    const batch = await t.db.insertInto('pick_batches').values({
      order_id: id, manufacturer_id: partner, batch_number: 'PB-1', status: 'completed', packed_at: null, packed_by: null, tracking_number: null,
      tracking_carrier: null, tracking_captured_at: null, tracking_flagged_for_office_at: null, staged_slot: null, staged_at: null, created_by: null,
    }).returning('id').executeTakeFirstOrThrow();
    await t.db.insertInto('pick_batch_parcels').values({ pick_batch_id: batch.id, parcel_seq: 1, tracking_number: '1Z999', carrier: 'ups', captured_by: null }).execute();
    const exception = await t.db.insertInto('pick_exceptions').values({
      kind: 'short_pick', manufacturer_id: partner, item_id: a, order_id: id, order_line_id: null, pick_batch_id: batch.id, qty_short: 1, short_reason: 'bin empty', flag_reason: null, actual_item_id: null, actual_qty: null,
    }).returning('id').executeTakeFirstOrThrow();
    await t.db.insertInto('order_blocks').values({
      order_id: id, kind: 'short_pick', short_pick_exception_id: exception.id, mispick_exception_id: null, quality_exception_id: null,
      awaiting_supply_partner_at: null, awaiting_supply_partner_note: null, resolution_disposition: null, resolution_note: null, resolved_at: null,
    }).execute();
    const admin = await t.db.selectFrom('users').select('id').where('name', '=', 'admin').executeTakeFirstOrThrow();
    await t.db.insertInto('documents').values({ entity_type: 'order', entity_id: id, manufacturer_id: partner, file_name: 'pl.pdf', file_type: 'application/pdf', storage_key: 'k1', file_size: 10, description: null, tags: ['packing_list'], uploaded_by: admin.id }).execute();
    const detail = (await call(t.app, 'GET', `/api/v1/orders/${id}?include=shipments,blocks,documents,fulfillment`, { key: t.adminKey })).body.data;
    assert.equal(detail.shipments[0].batch_number, 'PB-1');
    assert.deepEqual(detail.shipments[0].parcels.map((p: { tracking_number: string }) => p.tracking_number), ['1Z999']);
    assert.match(detail.shipments[0].parcels[0].captured_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.equal(detail.blocks[0].exception.kind, 'short_pick');
    assert.equal(detail.blocks[0].exception.qty_short, 1);
    assert.equal(detail.blocks[0].exception.short_reason, 'bin empty');
    assert.equal(detail.blocks[0].exception.batch_number, 'PB-1');
    assert.equal(detail.documents.packing_list.file_name, 'pl.pdf');
    assert.equal(detail.documents.documents[0].uploaded_by_name, 'admin');
    assert.equal(detail.fulfillment.display_substatus, 'picked');
    assert.equal(detail.fulfillment.lifecycle.batch_id, batch.id);
    const list = (await call(t.app, 'GET', `/api/v1/orders?q=${(await orderRow(id)).order_number}`, { key: t.adminKey })).body.data;
    assert.equal(list[0].display_substatus, 'picked');
    const batches = await call(t.app, 'GET', `/api/v1/orders/${id}/pick-batches`, { key: t.adminKey });
    assert.equal(batches.body.meta.total_count, 1);
    // An open block stops the release.
    expectError(await post(`/api/v1/orders/${id}/release`), 422, 'invalid_status');
  });

  test('an order without an entry row in history (loaded from elsewhere) is entered when and by whom it was created', async () => {
    const a = await stockedItem('LIFE-A', 5);
    const id = await entered([{ item_id: a, qty_ordered: 1 }]);
    await t.db.deleteFrom('history').where('entity_id', '=', id).where('action', '=', 'created').execute();
    const lifecycle = (await call(t.app, 'GET', `/api/v1/orders/${id}?include=fulfillment`, { key: t.adminKey })).body.data.fulfillment.lifecycle;
    assert.equal(lifecycle.entered_at, (await orderRow(id)).created_at);
    assert.equal(lifecycle.entered_by_name, 'admin');
  });

  test('a partner-scoped key gets 404 for another partner\'s order, before any include runs', async () => {
    const a = await stockedItem('SCO-A', 10);
    const id = await entered([{ item_id: a, qty_ordered: 1 }]);
    const stranger = await userWithKey(t, 'consignor', { manufacturerId: otherPartner });
    const hidden = await call(t.app, 'GET', `/api/v1/orders/${id}?include=nonsense&include=${'x'.repeat(300)}`, { key: stranger.key });
    expectError(hidden, 404, 'not_found');
    expectError(await post(`/api/v1/orders/${id}/cancel`, undefined, stranger.key), 404, 'not_found');
    expectError(await call(t.app, 'GET', `/api/v1/orders/${id}/pick-batches`, { key: stranger.key }), 404, 'not_found');
    const owner = await userWithKey(t, 'consignor', { manufacturerId: partner });
    assert.equal((await call(t.app, 'GET', `/api/v1/orders/${id}`, { key: owner.key })).status, 200);
    expectError(await enter([{ item_id: a, qty_ordered: 1 }], {}, stranger.key), 403, 'forbidden');
    const line = (await call(t.app, 'GET', `/api/v1/orders/${id}`, { key: t.adminKey })).body.data.lines[0].id;
    const attempts = [
      call(t.app, 'PATCH', `/api/v1/orders/${id}`, { key: stranger.key, body: { customer_po_number: 'X' } }),
      post(`/api/v1/orders/${id}/release`, undefined, stranger.key),
      post(`/api/v1/orders/${id}/priority`, { priority: 'rush' }, stranger.key),
      post(`/api/v1/orders/${id}/lines`, { item_id: a, qty_ordered: 1 }, stranger.key),
      call(t.app, 'DELETE', `/api/v1/orders/${id}/lines/${line}`, { key: stranger.key }),
      call(t.app, 'PUT', `/api/v1/orders/${id}/ltl-freight`, { key: stranger.key, body: { carrier: 'X' } }),
      post(`/api/v1/orders/${id}/direct-ship/notify-out-of-band`, { line_ids: [line] }, stranger.key),
      post(`/api/v1/orders/${id}/bill`, undefined, stranger.key),
    ];
    for (const answer of await Promise.all(attempts)) expectError(answer, 404, 'not_found');
    const stored = await orderRow(id);
    assert.deepEqual([stored.status, stored.priority, stored.customer_po_number, stored.line_count], ['entered', 'normal', null, 1]);
  });
});

describe('changing an order', () => {
  test('PATCH: empty strings and null keep values; will call forces WILL CALL; a payer is snapshotted', async () => {
    const a = await stockedItem('UPD-A', 10);
    const id = await entered([{ item_id: a, qty_ordered: 1 }], { customer_po_number: 'PO-1', special_instructions: 'Fragile' });
    const patched = await call(t.app, 'PATCH', `/api/v1/orders/${id}`, {
      key: t.adminKey, body: { customer_po_number: '', special_instructions: null, manufacturer_auth: 'RA-5', ship_via_id: shipVia['WILL-CALL'], freight_terms: 'PREPAID' },
    });
    assert.equal(patched.status, 200);
    const order = patched.body.data.order;
    assert.deepEqual([order.customer_po_number, order.special_instructions, order.manufacturer_auth, order.freight_terms], ['PO-1', 'Fragile', 'RA-5', 'WILL CALL']);
    assert.equal(patched.body.data.lines[0].item_qty_available, 9);
    const stored = await orderRow(id);
    assert.equal(stored.freight_terms, 'WILL CALL');
    assert.equal(stored.updated_by !== null, true);
    const cleared = await call(t.app, 'PATCH', `/api/v1/orders/${id}`, { key: t.adminKey, body: { ship_via_id: null } });
    assert.equal(cleared.body.data.order.ship_via_id, null);
    assert.equal('ship_via_mode' in cleared.body.data.order, false);
    assert.ok((await historyOf(id)).some((h) => h.action === 'updated'));
    expectError(await call(t.app, 'PATCH', `/api/v1/orders/${id}`, { key: t.adminKey, body: { status: 'closed' } }), 400, 'bad_request');
  });

  test('priority changes until the order ships, each with its own audit record', async () => {
    const a = await stockedItem('PRIO-A', 10);
    const id = await entered([{ item_id: a, qty_ordered: 1 }]);
    const answer = await post(`/api/v1/orders/${id}/priority`, { priority: 'high' });
    assert.equal(answer.body.data.order.priority, 'high');
    assert.deepEqual((await historyOf(id)).filter((h) => h.action === 'priority_changed').map((h) => h.after), [{ priority: 'normal' }, { priority: 'high' }]);
    assert.ok((await eventsOf(id)).some((e) => e.kind === 'order.priority_changed'));
    expectError(await post(`/api/v1/orders/${id}/priority`, { priority: 'urgent' }), 400, 'bad_request');
    // A PATCH of the priority alone, or of values the order already has, records the priority only: no `updated` row
    // whose before and after are equal.
    const stamp = (await orderRow(id)).updated_at;
    assert.equal((await call(t.app, 'PATCH', `/api/v1/orders/${id}`, { key: t.adminKey, body: { priority: 'rush' } })).status, 200);
    assert.equal((await call(t.app, 'PATCH', `/api/v1/orders/${id}`, { key: t.adminKey, body: { customer_po_number: (await orderRow(id)).customer_po_number ?? '' } })).status, 200);
    assert.deepEqual((await historyOf(id)).map((h) => h.action).filter((action) => action !== 'created'), ['priority_changed', 'priority_changed', 'priority_changed']);
    assert.equal((await orderRow(id)).priority, 'rush');
    assert.notEqual((await orderRow(id)).updated_at, stamp, 'the priority itself is a change of the order');
    await post(`/api/v1/orders/${id}/cancel`);
    expectError(await post(`/api/v1/orders/${id}/priority`, { priority: 'rush' }), 422, 'invalid_status');
  });
});

describe('status transitions', () => {
  test('release stamps the partner and global release numbers once; a second release is invalid_status', async () => {
    const a = await stockedItem('REL-A', 10);
    const first = await entered([{ item_id: a, qty_ordered: 1 }]);
    const second = await entered([{ item_id: a, qty_ordered: 1 }]);
    const r1 = (await post(`/api/v1/orders/${first}/release`)).body.data.order;
    const r2 = (await post(`/api/v1/orders/${second}/release`)).body.data.order;
    assert.equal(r1.status, 'released');
    assert.equal(r2.release_number, r1.release_number + 1);
    assert.equal(r2.original_release_number, r1.original_release_number + 1);
    assert.ok(r1.released_by && r1.released_at);
    expectError(await post(`/api/v1/orders/${first}/release`), 422, 'invalid_status');
    assert.deepEqual((await eventsOf(first)).map((e) => e.kind), ['order.created', 'order.released']);
    const lifecycle = (await call(t.app, 'GET', `/api/v1/orders/${first}?include=fulfillment`, { key: t.adminKey })).body.data.fulfillment.lifecycle;
    assert.equal(lifecycle.released_by_name, 'admin');
    assert.ok(lifecycle.released_at);
  });

  test('release needs orders.release and a line', async () => {
    const a = await stockedItem('REL-B', 10);
    const id = await entered([{ item_id: a, qty_ordered: 1 }]);
    const warehouse = await userWithKey(t, 'warehouse');
    expectError(await post(`/api/v1/orders/${id}/release`, undefined, warehouse.key), 403, 'forbidden');
    const line = (await call(t.app, 'GET', `/api/v1/orders/${id}`, { key: t.adminKey })).body.data.lines[0].id;
    assert.equal((await call(t.app, 'DELETE', `/api/v1/orders/${id}/lines/${line}`, { key: t.adminKey })).status, 204);
    expectError(await post(`/api/v1/orders/${id}/release`), 422, 'invalid_status');
    assert.equal((await orderRow(id)).release_number, null);
  });

  test('cancel gives committed stock back; shipped, billed and closed orders cannot be cancelled', async () => {
    const a = await stockedItem('CAN-A', 10);
    const id = await entered([{ item_id: a, qty_ordered: 4 }]);
    await post(`/api/v1/orders/${id}/release`);
    const cancelled = await post(`/api/v1/orders/${id}/cancel`);
    assert.equal(cancelled.body.data.order.status, 'cancelled');
    assert.equal((await stockOf(a)).qty_committed, 0);
    assert.deepEqual((await t.db.selectFrom('order_lines').select('qty_committed').where('order_id', '=', id).execute()).map((l) => l.qty_committed), [0]);
    expectError(await post(`/api/v1/orders/${id}/cancel`), 422, 'invalid_status');
    assert.equal((await stockOf(a)).qty_committed, 0, 'a second cancel releases nothing');
    expectError(await call(t.app, 'PATCH', `/api/v1/orders/${id}`, { key: t.adminKey, body: { customer_po_number: 'X' } }), 422, 'invalid_status');
    const lifecycle = (await call(t.app, 'GET', `/api/v1/orders/${id}?include=fulfillment`, { key: t.adminKey })).body.data.fulfillment.lifecycle;
    assert.equal(lifecycle.cancelled_by_name, 'admin');
    assert.ok((await eventsOf(id)).some((e) => e.kind === 'order.cancelled'));
  });

  test('bill from shipped, close from shipped or billed; closed orders are read-only; LTL freight only when shipped, partial or closed', async () => {
    const d = await stockedItem('BIL-D', 0);
    const id = await entered([{ item_id: d, qty_ordered: 2, fulfillment_source: 'direct' }]);
    expectError(await post(`/api/v1/orders/${id}/bill`), 422, 'invalid_status');
    expectError(await post(`/api/v1/orders/${id}/close`), 422, 'invalid_status');
    expectError(await call(t.app, 'PUT', `/api/v1/orders/${id}/ltl-freight`, { key: t.adminKey, body: { carrier: 'ODFL' } }), 422, 'invalid_status');
    const line = (await call(t.app, 'GET', `/api/v1/orders/${id}`, { key: t.adminKey })).body.data.lines[0].id;
    assert.equal((await post(`/api/v1/orders/${id}/direct-ship/ship`, { line_ids: [line], tracking_number: '1Z1', carrier: 'UPS Ground' })).status, 200);
    assert.equal((await orderRow(id)).status, 'shipped');
    const ltl = await call(t.app, 'PUT', `/api/v1/orders/${id}/ltl-freight`, { key: t.adminKey, body: { carrier: 'ODFL', pro_number: 'PRO-1' } });
    assert.deepEqual([ltl.body.data.order.ltl_carrier, ltl.body.data.order.ltl_pro_number, ltl.body.data.order.ltl_recorded_by_name], ['ODFL', 'PRO-1', 'admin']);
    const proOnly = await call(t.app, 'PUT', `/api/v1/orders/${id}/ltl-freight`, { key: t.adminKey, body: { pro_number: 'PRO-2' } });
    assert.deepEqual([proOnly.body.data.order.ltl_carrier, proOnly.body.data.order.ltl_pro_number], ['ODFL', 'PRO-2']);
    expectError(await call(t.app, 'PUT', `/api/v1/orders/${id}/ltl-freight`, { key: t.adminKey, body: { carrier: 'x'.repeat(121) } }), 400, 'bad_request');
    const clearedAnswer = await call(t.app, 'PUT', `/api/v1/orders/${id}/ltl-freight`, { key: t.adminKey, body: { carrier: '', pro_number: '' } });
    assert.equal('ltl_carrier' in clearedAnswer.body.data.order, false);
    assert.equal((await orderRow(id)).ltl_recorded_at, null);
    expectError(await post(`/api/v1/orders/${id}/priority`, { priority: 'rush' }), 422, 'invalid_status');
    assert.equal((await post(`/api/v1/orders/${id}/bill`)).body.data.order.status, 'billed');
    assert.equal((await post(`/api/v1/orders/${id}/close`)).body.data.order.status, 'closed');
    expectError(await post(`/api/v1/orders/${id}/cancel`), 422, 'invalid_status');
    expectError(await call(t.app, 'PATCH', `/api/v1/orders/${id}`, { key: t.adminKey, body: { customer_po_number: 'X' } }), 422, 'invalid_status');
    expectError(await post(`/api/v1/orders/${id}/lines`, { item_id: d, qty_ordered: 1 }), 422, 'invalid_status');
    assert.equal((await call(t.app, 'PUT', `/api/v1/orders/${id}/ltl-freight`, { key: t.adminKey, body: { carrier: 'SAIA' } })).status, 200);
    assert.deepEqual((await eventsOf(id)).map((e) => e.kind), ['order.created', 'order.direct_shipped', 'order.shipped', 'order.billed', 'order.closed']);
  });
});

describe('lines', () => {
  test('add a line (201) before release; delete one (204, stock released); 404 and invalid_status', async () => {
    const a = await stockedItem('LIN-A', 10);
    const b = await stockedItem('LIN-B', 10);
    const id = await entered([{ item_id: a, qty_ordered: 2 }]);
    const added = await post(`/api/v1/orders/${id}/lines`, { item_id: b, qty_ordered: 3 });
    assert.equal(added.status, 201);
    assert.deepEqual(added.body.data.lines.map((l: { line_number: number }) => l.line_number), [1, 2]);
    assert.equal(added.body.data.order.line_count, 2);
    assert.equal((await stockOf(b)).qty_committed, 3);
    const again = await post(`/api/v1/orders/${id}/lines`, { item_id: b, qty_ordered: 1 });
    expectError(again, 422, 'invalid_request');
    assert.match(again.body.error.message, /already on line 2/);
    assert.equal((await stockOf(b)).qty_committed, 3, 'the refused line committed nothing');
    const lineB = added.body.data.lines[1].id;
    const other = await entered([{ item_id: a, qty_ordered: 1 }]);
    expectError(await call(t.app, 'DELETE', `/api/v1/orders/${other}/lines/${lineB}`, { key: t.adminKey }), 404, 'not_found');
    expectError(await call(t.app, 'DELETE', `/api/v1/orders/${id}/lines/00000000-0000-4000-8000-000000000000`, { key: t.adminKey }), 404, 'not_found');
    expectError(await call(t.app, 'DELETE', `/api/v1/orders/${id}/lines/not-a-uuid`, { key: t.adminKey }), 400, 'bad_request');
    assert.equal((await call(t.app, 'DELETE', `/api/v1/orders/${id}/lines/${lineB}`, { key: t.adminKey })).status, 204);
    assert.equal((await stockOf(b)).qty_committed, 0);
    assert.equal((await orderRow(id)).line_count, 1);
    assert.equal((await orderRow(id)).total_extended_price, 20);
    await post(`/api/v1/orders/${id}/release`);
    expectError(await post(`/api/v1/orders/${id}/lines`, { item_id: b, qty_ordered: 1 }), 422, 'invalid_status');
    const lineA = (await call(t.app, 'GET', `/api/v1/orders/${id}`, { key: t.adminKey })).body.data.lines[0].id;
    expectError(await call(t.app, 'DELETE', `/api/v1/orders/${id}/lines/${lineA}`, { key: t.adminKey }), 422, 'invalid_status');
    assert.deepEqual((await historyOf(id)).map((h) => h.action), ['created', 'priority_changed', 'line_added', 'line_deleted', 'released']);
  });
});

describe('adding lines: the entry rules apply to each added line', () => {
  test('invalid_price, invalid_split, negative_stock, exception_blocked; direct lines skip the stock and exception checks', async () => {
    const filler = await stockedItem('ADD-F', 10);
    const id = await entered([{ item_id: filler, qty_ordered: 1 }]);
    const scarce = await stockedItem('ADD-S', 2);
    const blocked = await stockedItem('ADD-B', 10);
    await t.db.insertInto('pick_exceptions').values({ kind: 'quality', manufacturer_id: partner, item_id: blocked, order_id: null, order_line_id: null, pick_batch_id: null, short_reason: null, flag_reason: null, actual_item_id: null, actual_qty: null }).execute();
    const add = (body: Record<string, unknown>) => post(`/api/v1/orders/${id}/lines`, body);
    expectError(await add({ item_id: scarce, qty_ordered: 1, unit_price: 100_000_000 }), 400, 'invalid_price');
    expectError(await add({ item_id: scarce, qty_ordered: 3, fulfillment_source: 'split', qty_warehouse: 1, qty_direct: 1 }), 422, 'invalid_split');
    const negative = await add({ item_id: scarce, qty_ordered: 3 });
    expectError(negative, 422, 'negative_stock');
    assert.deepEqual(negative.body.error.details, { item_id: scarce });
    expectError(await add({ item_id: blocked, qty_ordered: 1 }), 422, 'exception_blocked');
    assert.equal((await orderRow(id)).line_count, 1);
    assert.deepEqual([(await stockOf(scarce)).qty_committed, (await stockOf(blocked)).qty_committed], [0, 0]);
    assert.equal((await add({ item_id: blocked, qty_ordered: 5, fulfillment_source: 'direct' })).status, 201);
    assert.equal((await add({ item_id: scarce, qty_ordered: 3, acknowledge_negative: true })).status, 201);
    assert.deepEqual(await stockOf(scarce), { qty_on_hand: 2, qty_committed: 3, qty_available: -1 });
    assert.equal((await stockOf(blocked)).qty_committed, 0);
  });

  test('a direct-shipped line cannot be deleted; deleting the warehouse line of a shipped direct remainder ships the order', async () => {
    const d = await stockedItem('DEL-D', 0);
    const w = await stockedItem('DEL-W', 5);
    const id = await entered([{ item_id: d, qty_ordered: 1, fulfillment_source: 'direct' }, { item_id: w, qty_ordered: 2 }]);
    const [direct, warehouse] = (await call(t.app, 'GET', `/api/v1/orders/${id}`, { key: t.adminKey })).body.data.lines;
    await post(`/api/v1/orders/${id}/direct-ship/ship`, { line_ids: [direct.id], carrier: 'ups' });
    assert.equal((await orderRow(id)).status, 'entered', 'the warehouse line still has to ship');
    expectError(await call(t.app, 'DELETE', `/api/v1/orders/${id}/lines/${direct.id}`, { key: t.adminKey }), 422, 'invalid_request');
    assert.equal((await call(t.app, 'DELETE', `/api/v1/orders/${id}/lines/${warehouse.id}`, { key: t.adminKey })).status, 204);
    const after = await orderRow(id);
    assert.equal(after.status, 'shipped');
    assert.ok(after.shipped_at);
    assert.equal((await stockOf(w)).qty_committed, 0);
  });
});

describe('direct shipping', () => {
  test('notify by e-mail needs an active direct_ship contact with an address; it stamps the lines and queues the mailer event', async () => {
    const d = await stockedItem('DSN-A', 0);
    const w = await stockedItem('DSN-W', 5);
    const id = await entered([{ item_id: d, qty_ordered: 2, fulfillment_source: 'direct' }, { item_id: w, qty_ordered: 1 }]);
    const [direct, warehouse] = (await call(t.app, 'GET', `/api/v1/orders/${id}`, { key: t.adminKey })).body.data.lines;
    expectError(await post(`/api/v1/orders/${id}/direct-ship/notify`, { line_ids: [direct.id] }), 400, 'no_email_contact');
    const contact = await post(`/api/v1/contacts/manufacturer/${partner}`, { last_name: 'Shipper', first_name: 'Dana', role: 'direct_ship' });
    assert.equal(contact.status, 201);
    expectError(await post(`/api/v1/orders/${id}/direct-ship/notify`, { line_ids: [direct.id] }), 400, 'no_email_contact');
    await call(t.app, 'PATCH', `/api/v1/contacts/${contact.body.id}`, { key: t.adminKey, body: { last_name: 'Shipper', email: 'dana@partner.example' } });
    expectError(await post(`/api/v1/orders/${id}/direct-ship/notify`, { line_ids: [warehouse.id] }), 422, 'invalid_request');
    expectError(await post(`/api/v1/orders/${id}/direct-ship/notify`, { line_ids: ['00000000-0000-4000-8000-000000000000'] }), 404, 'not_found');
    const answer = await post(`/api/v1/orders/${id}/direct-ship/notify`, { line_ids: [direct.id], note: 'please ship Monday' });
    assert.equal(answer.status, 200);
    assert.equal(answer.body.data.rows[0].direct_notified_via, 'email');
    const stored = await t.db.selectFrom('order_lines').select(['direct_notified_at', 'direct_notified_via', 'direct_notified_by']).where('id', '=', direct.id).executeTakeFirstOrThrow();
    assert.equal(stored.direct_notified_via, 'email');
    assert.ok(stored.direct_notified_at && stored.direct_notified_by);
    const mail = (await eventsOf(id)).find((e) => e.kind === 'order.direct_ship_notification_requested');
    assert.deepEqual((mail!.data as { to: { email: string }[] }).to.map((r) => r.email), ['dana@partner.example']);
    const detail = (await call(t.app, 'GET', `/api/v1/orders/${id}?include=fulfillment`, { key: t.adminKey })).body.data;
    assert.equal(detail.lines[0].direct_notified_via, 'email');
    assert.equal(detail.fulfillment.pending_direct_lines.length, 1);
    assert.ok(detail.fulfillment.direct_notify_last_at);
    assert.equal(detail.fulfillment.has_direct_portion, true);
  });

  test('out-of-band notify skips the contact check; marking shipped normalizes the carrier and ships an all-direct order', async () => {
    const p = await createManufacturer(t, 'NOCONTACT');
    const d1 = await stockedItem('OOB-1', 0, {}, p);
    const d2 = await stockedItem('OOB-2', 0, {}, p);
    const id = (await enter([{ item_id: d1, qty_ordered: 1, fulfillment_source: 'direct' }, { item_id: d2, qty_ordered: 2, fulfillment_source: 'direct' }], { manufacturer_id: p })).body.data.order.id;
    const [l1, l2] = (await call(t.app, 'GET', `/api/v1/orders/${id}`, { key: t.adminKey })).body.data.lines;
    const oob = await post(`/api/v1/orders/${id}/direct-ship/notify-out-of-band`, { line_ids: [l1.id, l2.id] });
    assert.deepEqual(oob.body.data.rows.map((r: { direct_notified_via: string }) => r.direct_notified_via), ['out_of_band', 'out_of_band']);
    const first = await post(`/api/v1/orders/${id}/direct-ship/ship`, { line_ids: [l1.id], tracking_number: '9400', carrier: 'U.S. Postal Service (USPS)', note: 'left at dock' });
    assert.equal(first.status, 200);
    assert.equal((await orderRow(id)).status, 'partial');
    const line = (await call(t.app, 'GET', `/api/v1/orders/${id}`, { key: t.adminKey })).body.data.lines[0];
    assert.deepEqual([line.direct_carrier, line.direct_tracking_number, line.direct_shipped_source, line.direct_ship_note, line.qty_shipped], ['usps', '9400', 'api', 'left at dock', 1]);
    assert.ok(line.direct_shipped_api_key_id);
    expectError(await post(`/api/v1/orders/${id}/direct-ship/ship`, { line_ids: [l1.id] }), 422, 'invalid_request');
    await post(`/api/v1/orders/${id}/direct-ship/ship`, { line_ids: [l2.id], carrier: 'FedEx Freight' });
    const shipped = await orderRow(id);
    assert.equal(shipped.status, 'shipped');
    assert.ok(shipped.shipped_at && shipped.shipped_by);
    const stored = await t.db.selectFrom('order_lines').select('direct_carrier').where('id', '=', l2.id).executeTakeFirstOrThrow();
    assert.equal(stored.direct_carrier, 'fedex');
    const lifecycle = (await call(t.app, 'GET', `/api/v1/orders/${id}?include=fulfillment`, { key: t.adminKey })).body.data.fulfillment.lifecycle;
    assert.equal(lifecycle.shipped_by_name, 'admin');
    assert.ok((await eventsOf(id)).some((e) => e.kind === 'order.shipped'));
  });
});

describe('the order list', () => {
  let listPartner: string;
  let listCustomer: string;
  const ids: Record<string, string> = {};
  before(async () => {
    listPartner = await createManufacturer(t, 'LISTP');
    listCustomer = await createCustomer(t, 'L-500', { name: 'Lakeside Supply' });
    const item = await stockedItem('LST-A', 100, {}, listPartner);
    const direct = await stockedItem('LST-D', 0, {}, listPartner);
    const make = async (name: string, extra: Record<string, unknown>, lines: Record<string, unknown>[] = [{ item_id: item, qty_ordered: 1 }]) => {
      const answer = await enter(lines, { manufacturer_id: listPartner, customer_id: listCustomer, ...extra });
      assert.equal(answer.status, 201);
      ids[name] = answer.body.data.order.id;
    };
    await make('old', { order_date: '2026-01-15', customer_po_number: 'PO-OLD' });
    await make('rush', { priority: 'rush', customer_po_number: 'PO-RUSH-9' });
    await make('released', {});
    await post(`/api/v1/orders/${ids.released}/release`);
    await make('cancelled', {});
    await post(`/api/v1/orders/${ids.cancelled}/cancel`);
    await make('direct', {}, [{ item_id: direct, qty_ordered: 1, fulfillment_source: 'direct' }]);
  });
  const list = async (query: string, key = t.adminKey) => call(t.app, 'GET', `/api/v1/orders?manufacturer=${listPartner}&${query}`, { key });
  const names = (answer: { body: { data: { id: string }[] } }) => answer.body.data.map((o) => Object.entries(ids).find(([, id]) => id === o.id)?.[0]);

  test('newest first, 25 a page by default, list-row quirks', async () => {
    const answer = await list('');
    assert.deepEqual(names(answer), ['direct', 'cancelled', 'released', 'rush', 'old']);
    assert.equal(answer.body.meta.per_page, 25);
    const row = answer.body.data[3];
    assert.equal(row.priority, '');
    assert.equal(row.ship_to_name, null);
    assert.equal(row.customer_name, 'Lakeside Supply');
    assert.equal(row.manufacturer_code, 'LISTP');
    assert.equal('display_substatus' in row, false);
  });

  test('status (open expands; repeated or comma list), priority, q, dates, customer, awaiting_direct_ship', async () => {
    assert.deepEqual(names(await list('status=open')), ['direct', 'released', 'rush', 'old']);
    assert.deepEqual(names(await list('status=cancelled,released')), ['cancelled', 'released']);
    assert.deepEqual(names(await list('status=cancelled&status=released')), ['cancelled', 'released']);
    assert.deepEqual(names(await list('priority=rush,high')), ['rush']);
    assert.deepEqual(names(await list('q=po-rush')), ['rush']);
    assert.deepEqual(names(await list('q=lakeside')).length, 5);
    assert.deepEqual(names(await list('q=LAKESIDE')).length, 5, 'the customer name folded, and the pattern with it');
    const number = (await orderRow(ids.old!)).order_number;
    assert.deepEqual(names(await list(`q=${number}`)), ['old']);
    const release = (await orderRow(ids.released!)).original_release_number;
    assert.ok(names(await list(`q=${release}`)).includes('released'));
    assert.deepEqual(names(await list('from=2026-01-01&to=2026-01-15')), ['old']);
    assert.deepEqual(names(await list(`customer=${listCustomer}&awaiting_direct_ship=1`)), ['direct']);
    assert.deepEqual(names(await list('aged_hours=1')), []);
    await sql`update orders set created_at = now() - interval '3 hours' where id = ${ids.old!}`.execute(t.db);
    assert.deepEqual(names(await list('aged_hours=2')), ['old']);
    assert.deepEqual(names(await list('aged_hours=4')), []);
  });

  test('the page carries the total (maintained or counted) on every page, past the last one, and 0 when nothing matches', async () => {
    // Maintained: partner, status and priority. Counted: customer, q, dates. aged_hours: maintained less counted.
    for (const [query, where] of [
      ['', 'true'], ['status=open', `status in ('entered', 'released', 'partial')`], ['status=cancelled', `status = 'cancelled'`],
      ['aged_hours=2', `created_at <= now() - interval '2 hours'`], ['aged_hours=1', `created_at <= now() - interval '1 hour'`],
      ['aged_hours=2&status=open&priority=normal', `created_at <= now() - interval '2 hours' and status in ('entered', 'released', 'partial') and priority = 'normal'`],
      ['aged_hours=2&status=cancelled', `created_at <= now() - interval '2 hours' and status = 'cancelled'`],
      [`customer=${listCustomer}`, `customer_id = '${listCustomer}'`], ['priority=rush', `priority = 'rush'`],
      ['status=open&priority=normal,rush', `status in ('entered', 'released', 'partial') and priority in ('normal', 'rush')`],
      ['q=po-', `customer_po_number ilike '%po-%'`], ['status=billed', 'false'], ['from=2000-01-01&to=2000-01-02', 'false'],
    ] as const) {
      const { rows: [counted] } = await sql<{ n: number }>`select count(*)::int as n from orders
        where manufacturer_id = ${listPartner} and ${sql.raw(where)}`.execute(t.db);
      const expected = counted!.n;
      const pages = await Promise.all(Array.from({ length: expected + 2 }, (_, i) => list(`${query}&per_page=1&page=${i + 1}`)));
      assert.deepEqual(pages.map((answer) => answer.body.meta.total_count), pages.map(() => expected), query);
      assert.equal(pages.filter((answer) => answer.body.data.length === 1).length, expected, query);
    }
    // aged_hours when the aged orders are most of them (above, the younger ones were): the kept total less the younger.
    const newest = (await t.db.selectFrom('orders').select('id').where('manufacturer_id', '=', listPartner).orderBy('order_number', 'desc').executeTakeFirstOrThrow()).id;
    await sql`update orders set created_at = created_at - interval '3 hours' where manufacturer_id = ${listPartner} and id <> ${newest}`.execute(t.db);
    try {
      for (const [query, where] of [['aged_hours=2', sql`true`], ['aged_hours=2&status=open', sql`status in ('entered', 'released', 'partial')`]] as const) {
        const { rows: [counted] } = await sql<{ n: number }>`select count(*)::int as n from orders
          where manufacturer_id = ${listPartner} and id <> ${newest} and ${where}`.execute(t.db);
        assert.ok(counted!.n >= 3, 'most of the partner\'s orders are aged');
        const pages = await Promise.all([1, counted!.n + 1].map((page) => list(`${query}&per_page=1&page=${page}`)));
        assert.deepEqual(pages.map((answer) => answer.body.meta.total_count), [counted!.n, counted!.n], query);
      }
    } finally {
      await sql`update orders set created_at = created_at + interval '3 hours' where manufacturer_id = ${listPartner} and id <> ${newest}`.execute(t.db);
    }
    // A partner-scoped key naming another partner: its own partner's total, on every page and past the last.
    const consignor = await userWithKey(t, 'consignor', { manufacturerId: partner });
    assert.equal((await enter([{ item_id: await stockedItem('SCOPED-TOTAL', 5), qty_ordered: 1 }])).status, 201);
    const { rows: [own] } = await sql<{ n: number }>`select count(*)::int as n from orders where manufacturer_id = ${partner}`.execute(t.db);
    const pages = await Promise.all(Array.from({ length: own!.n + 2 }, (_, i) =>
      call(t.app, 'GET', `/api/v1/orders?manufacturer=${listPartner}&per_page=1&page=${i + 1}`, { key: consignor.key })));
    assert.deepEqual(pages.map((answer) => answer.body.meta.total_count), pages.map(() => own!.n));
    assert.equal(pages.filter((answer) => answer.body.data.length === 1).length, own!.n);
    const { rows: [ownNormal] } = await sql<{ n: number }>`select count(*)::int as n from orders
      where manufacturer_id = ${partner} and priority = 'normal' and status in ('entered', 'released', 'partial')`.execute(t.db);
    const byPriority = await call(t.app, 'GET', `/api/v1/orders?manufacturer=${listPartner}&priority=normal&status=open`, { key: consignor.key });
    assert.equal(byPriority.body.meta.total_count, ownNormal!.n);
    assert.ok(ownNormal!.n >= 1, 'the order the consignor\'s partner just entered');
    const aged = await call(t.app, 'GET', `/api/v1/orders?manufacturer=${listPartner}&aged_hours=2`, { key: consignor.key });
    assert.deepEqual([aged.body.meta.total_count, aged.body.data.length], [0, 0], 'none of its own partner\'s orders is 2 hours old');
  });

  test('unknown status or priority values and bad aged_hours are 400, never dropped', async () => {
    for (const query of ['status=open,lost', 'status=shipped&status=nope', 'priority=urgent', 'aged_hours=0', 'aged_hours=-3', 'aged_hours=x', 'awaiting_direct_ship=2', 'from=2026-13-01', 'colour=red']) {
      expectError(await list(query), 400, 'bad_request');
    }
  });

  test('a partner-scoped key lists its own partner only, whatever manufacturer it names', async () => {
    const consignor = await userWithKey(t, 'consignor', { manufacturerId: partner });
    const answer = await call(t.app, 'GET', `/api/v1/orders?manufacturer=${listPartner}`, { key: consignor.key });
    assert.ok(answer.body.data.length > 0);
    assert.ok(answer.body.data.every((o: { manufacturer_id: string }) => o.manufacturer_id === partner));
  });

  test('a row answered before shows what changed since: its customer, its partner, and its pick batch\'s state', async () => {
    const rowOf = async (name: string) => (await list('')).body.data.find((o: { id: string }) => o.id === ids[name]);
    const first = await list('');
    assert.deepEqual((await list('')).body, first.body, 'the same answer when its rows are known');
    assert.equal('display_substatus' in (await rowOf('released')), false);
    // Each change alone, so that each part of a row's version is what shows it.
    await t.db.updateTable('customers').set({ name: 'Lakeside Supply West' }).where('id', '=', listCustomer).execute();
    assert.deepEqual((await list('')).body.data.map((o: { customer_name: string }) => o.customer_name), first.body.data.map(() => 'Lakeside Supply West'));
    await t.db.updateTable('manufacturers').set({ name: 'List Partner Ltd' }).where('id', '=', listPartner).execute();
    assert.equal((await rowOf('old')).manufacturer_name, 'List Partner Ltd');
    const batch = await call(t.app, 'POST', '/api/v1/pick-batches', { key: t.adminKey, body: { order_id: ids.released } });
    assert.equal(batch.status, 201);
    assert.equal((await rowOf('released')).display_substatus, 'picking');
    // The batch picked whole and completed: its state moves on while the order's row stays as it was.
    const version = async () => (await sql<{ v: string }>`select xmin::text || ctid::text as v from orders where id = ${ids.released!}`.execute(t.db)).rows[0]!.v;
    const before = await version();
    const lines = (await call(t.app, 'GET', `/api/v1/pick-batches/${batch.body.data.ID}`, { key: t.adminKey })).body.data.Lines;
    for (const line of lines) await post(`/api/v1/pick-batches/${batch.body.data.ID}/lines/${line.PickBatchLineID}/pick`, { qty_picked: line.QtyToPick });
    await post(`/api/v1/pick-batches/${batch.body.data.ID}/complete`);
    assert.equal(await version(), before, 'the order row was not written');
    assert.equal((await rowOf('released')).display_substatus, 'picked');
  });
});

describe('permissions', () => {
  test('entering needs orders.create and orders.edit; warehouse staff read nothing of orders', async () => {
    const a = await stockedItem('PERM-A', 5);
    const creator = await userWithKey(t, 'office', { scopes: ['orders.create', 'orders.view'] });
    expectError(await enter([{ item_id: a, qty_ordered: 1 }], {}, creator.key), 403, 'forbidden');
    const office = await userWithKey(t, 'office');
    assert.equal((await enter([{ item_id: a, qty_ordered: 1 }], {}, office.key)).status, 201);
    const warehouse = await userWithKey(t, 'warehouse');
    expectError(await call(t.app, 'GET', '/api/v1/orders', { key: warehouse.key }), 403, 'forbidden');
  });
});

describe('concurrency on PostgreSQL', { skip: !onPostgres && 'needs TEST_DATABASE_URL (PGlite runs one transaction at a time)' }, () => {
  test('20 parallel add-line requests for the last 10 units: exactly 10 commit, qty_committed never passes on-hand', async () => {
    const filler = await stockedItem('CON-FILL', 100);
    const scarce = await stockedItem('CON-LAST', 10);
    const orders = await Promise.all(Array.from({ length: 20 }, () => entered([{ item_id: filler, qty_ordered: 1 }])));
    const answers = await Promise.all(orders.map((id) => post(`/api/v1/orders/${id}/lines`, { item_id: scarce, qty_ordered: 1 })));
    assert.equal(answers.filter((a) => a.status === 201).length, 10);
    for (const refused of answers.filter((a) => a.status !== 201)) expectError(refused, 422, 'negative_stock');
    assert.deepEqual(await stockOf(scarce), { qty_on_hand: 10, qty_committed: 10, qty_available: 0 });
    const lines = await t.db.selectFrom('order_lines').select((eb) => eb.fn.sum<number>('qty_committed').as('held')).where('item_id', '=', scarce).executeTakeFirstOrThrow();
    assert.equal(Number(lines.held), 10);
  });

  test('orders naming the same items in opposite orders are entered in parallel without a deadlock', async () => {
    const a = await stockedItem('CON-X', 1000);
    const b = await stockedItem('CON-Y', 1000);
    const deadlocks = async () => {
      // Statistics reach the shared counters when a backend goes idle: wait for them, then read afresh.
      await new Promise((resolve) => setTimeout(resolve, 1200));
      await sql`select pg_stat_clear_snapshot()`.execute(t.db);
      return Number((await sql<{ n: string }>`select deadlocks as n from pg_stat_database where datname = current_database()`.execute(t.db)).rows[0]!.n);
    };
    const before = await deadlocks();
    const answers = await Promise.all(Array.from({ length: 16 }, (_, i) => enter(i % 2
      ? [{ item_id: a, qty_ordered: 1 }, { item_id: b, qty_ordered: 1 }]
      : [{ item_id: b, qty_ordered: 1 }, { item_id: a, qty_ordered: 1 }])));
    assert.deepEqual(answers.map((a) => a.status), Array(16).fill(201));
    // inTransaction retries a deadlock once, so the answers alone would not show one.
    assert.equal(await deadlocks(), before);
    assert.equal((await stockOf(a)).qty_committed, 16);
    assert.equal((await stockOf(b)).qty_committed, 16);
  });

  test('parallel releases on two instances: release numbers per partner and globally are unique and gap-free', async () => {
    const name = (await sql<{ name: string }>`select current_database() as name`.execute(t.db)).rows[0]!.name;
    const url = new URL(process.env.TEST_DATABASE_URL!);
    url.pathname = `/${name}`;
    const second = connectPostgres(url.toString(), { poolSize: 5 });
    const other = await buildApp({ config: t.config, db: second.db, counters: memoryCounterStore(), listen: second.listen, logger: false });
    try {
      const p2 = await createManufacturer(t, 'RELQ');
      const a = await stockedItem('CON-REL', 1000);
      const b = await stockedItem('CON-REL2', 1000, {}, p2);
      const before = await t.db.selectFrom('release_counters').select(['manufacturer_id', 'last_number']).execute();
      const globalBefore = before.find((row) => row.manufacturer_id === null)!.last_number;
      const partnerBefore = before.find((row) => row.manufacturer_id === partner)?.last_number ?? 0;
      const ours = await Promise.all(Array.from({ length: 12 }, () => entered([{ item_id: a, qty_ordered: 1 }])));
      const theirs = await Promise.all(Array.from({ length: 8 }, () => enter([{ item_id: b, qty_ordered: 1 }], { manufacturer_id: p2 }).then((r) => r.body.data.order.id as string)));
      const all = [...ours, ...theirs];
      const answers = await Promise.all(all.map((id, i) => call(i % 2 ? other : t.app, 'POST', `/api/v1/orders/${id}/release`, { key: t.adminKey })));
      assert.deepEqual(answers.map((a) => a.status), Array(all.length).fill(200));
      const rows = await t.db.selectFrom('orders').select(['manufacturer_id', 'release_number', 'original_release_number']).where('id', 'in', all).execute();
      const sorted = (values: number[]) => [...values].sort((x, y) => x - y);
      const range = (from: number, count: number) => Array.from({ length: count }, (_, i) => from + i);
      assert.deepEqual(sorted(rows.filter((r) => r.manufacturer_id === partner).map((r) => r.release_number!)), range(partnerBefore + 1, 12));
      assert.deepEqual(sorted(rows.filter((r) => r.manufacturer_id === p2).map((r) => r.release_number!)), range(1, 8));
      assert.deepEqual(sorted(rows.map((r) => r.original_release_number!)), range(globalBefore + 1, 20));
    } finally {
      await other.close();
      await second.close();
    }
  });
});
