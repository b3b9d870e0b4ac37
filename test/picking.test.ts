// Pick, pack and ship through the API: the session shape, each line action and its rules, packing with the packing
// list, staging, parcels, shipping (stock, ledger, order status) and will-call pickup, checked in the database.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { connectPGlite } from '../src/db/connect.ts';
import { listMigrations, migrate } from '../src/db/migrate.ts';
import { call, createLocation, expectError, startApp, userWithKey, type TestApp } from './helpers.ts';
import {
  binOf, eventsOf, ok, packedBatch, post, releasedOrder, setUpFloor, startedBatch, stockedItem, stockOf, type Floor,
} from './picking-kit.ts';

let t: TestApp;
let floor: Floor;
before(async () => {
  t = await startApp();
  floor = await setUpFloor(t);
});
after(() => t.close());

const get = (url: string, key = t.adminKey) => call(t.app, 'GET', `/api/v1${url}`, { key });
/** What a shipped batch keeps of its lines for the order-fulfillment report (null before it ships). */
const shippedFigures = (batchId: string) => t.db.selectFrom('pick_batches')
  .select(['shipped_lines', 'shipped_lines_in_full', 'shipped_units_to_pick', 'shipped_units_picked']).where('id', '=', batchId).executeTakeFirstOrThrow();
const lineRows = (batchId: string) => t.db.selectFrom('pick_batch_lines').selectAll().where('pick_batch_id', '=', batchId).execute();

describe('starting a batch', () => {
  test('201 with an in_progress session in the spec\'s shape: empty line ids, null tracking and staging, bin location parts', async () => {
    const item = await stockedItem(floor, 10);
    const orderId = await releasedOrder(floor, [{ item, qty: 4 }]);
    const started = await post(floor, '/pick-batches', { order_id: orderId });
    const session = await ok(started, 201);
    assert.equal(session.Status, 'in_progress');
    assert.equal(session.OrderID, orderId);
    assert.equal(session.CustomerName, 'Dockside Supply');
    assert.equal(session.ManufacturerName, 'PICKP Inc.');
    assert.equal(session.TrackingNumbers, null);
    for (const key of ['TrackingNumber', 'TrackingCarrier', 'TrackingCapturedAt', 'TrackingFlaggedForOfficeAt', 'Parcels', 'StagedSlot', 'StagedAt', 'StagedLocType']) {
      assert.equal(session[key], null, key);
    }
    assert.deepEqual(session.Lines, [{
      PickBatchLineID: '', OrderLineID: session.Lines[0].OrderLineID, ItemID: item, ItemNumberDisplay: session.Lines[0].ItemNumberDisplay,
      ItemDescription: session.Lines[0].ItemDescription, BinLocation: 'A-01-02', UnitOfMeasure: 'EA', ShortReason: '', QtyToPick: 4, QtyPicked: 0,
      QtyShort: 0, QtyOnHand: 10, QtyAvailable: 6, Status: 'pending', ExceptionStatus: '', PackVerifiedAt: null,
      LocZone: 'A', LocAisle: '01', LocRack: '02', LocShelf: '3',
    }]);
    const read = await ok(get(`/pick-batches/${session.ID}`));
    const [stored] = await lineRows(session.ID);
    assert.equal(read.Lines[0].PickBatchLineID, stored!.id, 'GET carries the real line id');
    const orderLine = await t.db.selectFrom('order_lines').select(['line_number', 'item_number_display', 'item_description', 'unit_of_measure'])
      .where('id', '=', stored!.order_line_id).executeTakeFirstOrThrow();
    assert.deepEqual([stored!.line_number, stored!.item_number_display, stored!.item_description, stored!.unit_of_measure],
      [orderLine.line_number, orderLine.item_number_display, orderLine.item_description, orderLine.unit_of_measure], 'the line carries its order line\'s');
    assert.deepEqual([read.Lines[0].ItemNumberDisplay, read.Lines[0].ItemDescription], [orderLine.item_number_display, orderLine.item_description]);
    const history = await t.db.selectFrom('history').select('action').where('entity_id', '=', session.ID).execute();
    assert.deepEqual(history.map((row) => row.action), ['started']);
    const [event] = (await eventsOf(floor, 'pick_batch.started')).filter((e) => (e.data as { pick_batch_id: string }).pick_batch_id === session.ID);
    assert.equal((event!.data as { order_id: string }).order_id, orderId);
    assert.equal(event!.manufacturer_id, floor.partner);
  });

  test('a second batch takes only what live batches do not hold; none left is 422 invalid_status', async () => {
    const [a, b] = [await stockedItem(floor, 10), await stockedItem(floor, 10)];
    const orderId = await releasedOrder(floor, [{ item: a, qty: 3 }, { item: b, qty: 2 }]);
    await startedBatch(floor, orderId);
    expectError(await post(floor, '/pick-batches', { order_id: orderId }), 422, 'invalid_status');
  });

  test('batch numbers are PB and six digits, and keep counting past 999,999 (not cut back to an earlier number)', async () => {
    const item = await stockedItem(floor, 10);
    const numberAfter = async (last: number) => {
      await sql`select setval('pick_batch_number_seq', ${last})`.execute(t.db);
      const batch = await startedBatch(floor, await releasedOrder(floor, [{ item, qty: 1 }]));
      return (await t.db.selectFrom('pick_batches').select('batch_number').where('id', '=', batch.ID).executeTakeFirstOrThrow()).batch_number;
    };
    assert.equal(await numberAfter(99_999), 'PB100000');
    assert.equal(await numberAfter(999_999), 'PB1000000');
  });

  test('only released or partial orders; unknown order 404; another partner\'s key 404; bad ids 400', async () => {
    const item = await stockedItem(floor, 5);
    const entered = await call(t.app, 'POST', '/api/v1/orders', {
      key: t.adminKey, body: { manufacturer_id: floor.partner, customer_id: floor.customer, lines: [{ item_id: item, qty_ordered: 1 }] },
    });
    expectError(await post(floor, '/pick-batches', { order_id: entered.body.data.order.id }), 422, 'invalid_status');
    expectError(await post(floor, '/pick-batches', { order_id: '00000000-0000-4000-8000-000000000000' }), 404, 'not_found');
    expectError(await post(floor, '/pick-batches', { order_id: 'not-a-uuid' }), 400, 'bad_request');
    const released = await releasedOrder(floor, [{ item, qty: 1 }]);
    const other = await userWithKey(t, 'consignor', { manufacturerId: floor.otherPartner, scopes: ['orders.view'] });
    expectError(await post(floor, '/pick-batches', { order_id: released }, other.key), 403, 'forbidden');
    const warehouse = await userWithKey(t, 'warehouse');
    const session = await ok(post(floor, '/pick-batches', { order_id: released }, warehouse.key), 201);
    expectError(await get(`/pick-batches/${session.ID}`, other.key), 404, 'not_found');
    assert.equal((await t.db.selectFrom('pick_batches').select('id').where('order_id', '=', entered.body.data.order.id).execute()).length, 0);
  });
});

describe('line actions', () => {
  test('picks add up to QtyToPick; more, negative or again after picked is refused, nothing changed', async () => {
    const item = await stockedItem(floor, 10);
    const batch = await startedBatch(floor, await releasedOrder(floor, [{ item, qty: 5 }]));
    const line = batch.Lines[0];
    const url = `/pick-batches/${batch.ID}/lines/${line.PickBatchLineID}/pick`;
    assert.equal((await ok(post(floor, url, { qty_picked: 2 }))).Status, 'pending');
    expectError(await post(floor, url, { qty_picked: 4 }), 422, 'invalid_request');
    expectError(await post(floor, url, { qty_picked: -1 }), 400, 'bad_request');
    expectError(await post(floor, url, { qty_picked: 0 }), 400, 'bad_request');
    const done = await ok(post(floor, url, { qty_picked: 3 }));
    assert.equal(done.Status, 'picked');
    assert.equal(done.QtyPicked, 5);
    // The answer lays the changed line over the line as the statement began: the same as reading the batch afresh.
    assert.deepEqual(done, (await ok(get(`/pick-batches/${batch.ID}`))).Lines[0]);
    expectError(await post(floor, url, { qty_picked: 1 }), 422, 'invalid_status');
    const [stored] = await lineRows(batch.ID);
    assert.equal(stored!.qty_picked, 5);
    assert.equal(stored!.status, 'picked');
    expectError(await post(floor, `/pick-batches/${batch.ID}/lines/00000000-0000-4000-8000-000000000000/pick`, { qty_picked: 1 }), 404, 'not_found');
  });

  test('short closes the line with an open exception and an open order block; a wrong qty_short is 422', async () => {
    const item = await stockedItem(floor, 10);
    const orderId = await releasedOrder(floor, [{ item, qty: 6 }]);
    const batch = await startedBatch(floor, orderId);
    const line = batch.Lines[0];
    await ok(post(floor, `/pick-batches/${batch.ID}/lines/${line.PickBatchLineID}/pick`, { qty_picked: 4 }));
    expectError(await post(floor, `/pick-batches/${batch.ID}/lines/${line.PickBatchLineID}/short`, { qty_short: 1, reason: 'gone' }), 422, 'invalid_request');
    const shorted = await ok(post(floor, `/pick-batches/${batch.ID}/lines/${line.PickBatchLineID}/short`, { qty_short: 2, reason: 'bin empty' }));
    assert.deepEqual([shorted.Status, shorted.QtyShort, shorted.ShortReason, shorted.ExceptionStatus], ['short', 2, 'bin empty', 'open']);
    assert.deepEqual(shorted, (await ok(get(`/pick-batches/${batch.ID}`))).Lines[0]);
    const exception = await t.db.selectFrom('pick_exceptions').selectAll().where('pick_batch_line_id', '=', line.PickBatchLineID).executeTakeFirstOrThrow();
    assert.deepEqual([exception.kind, exception.status, exception.qty_short, exception.short_reason, exception.order_id], ['short_pick', 'open', 2, 'bin empty', orderId]);
    const block = await t.db.selectFrom('order_blocks').selectAll().where('short_pick_exception_id', '=', exception.id).executeTakeFirstOrThrow();
    assert.deepEqual([block.kind, block.status, block.order_id], ['short_pick', 'open', orderId]);
    assert.equal((await eventsOf(floor, 'exception.opened')).filter((e) => (e.data as { exception_id: string }).exception_id === exception.id).length, 1);
    expectError(await post(floor, `/pick-batches/${batch.ID}/lines/${line.PickBatchLineID}/pick`, { qty_picked: 1 }), 422, 'invalid_status');
  });

  test('mispick and quality set the line aside; a newer flag supersedes the open one and cancels its block', async () => {
    const [item, wrong] = [await stockedItem(floor, 10), await stockedItem(floor, 10)];
    const orderId = await releasedOrder(floor, [{ item, qty: 2 }]);
    const batch = await startedBatch(floor, orderId);
    const lineUrl = `/pick-batches/${batch.ID}/lines/${batch.Lines[0].PickBatchLineID}`;
    expectError(await post(floor, `${lineUrl}/mispick`, { actual_item_id: item, actual_qty: 1, reason: 'same' }), 422, 'invalid_request');
    const flagged = await ok(post(floor, `${lineUrl}/mispick`, { actual_item_id: wrong, actual_qty: 2, reason: 'wrong part in bin' }));
    assert.equal(flagged.Status, 'skipped');
    const quality = await ok(post(floor, `${lineUrl}/quality`, { reason: 'crushed box' }));
    assert.equal(quality.ExceptionStatus, 'open');
    const exceptions = await t.db.selectFrom('pick_exceptions').select(['kind', 'status', 'id']).where('pick_batch_line_id', '=', batch.Lines[0].PickBatchLineID).orderBy('created_at').execute();
    assert.deepEqual(exceptions.map((e) => [e.kind, e.status]), [['mispick', 'superseded'], ['quality', 'open']]);
    const blocks = await t.db.selectFrom('order_blocks').select(['kind', 'status']).where('order_id', '=', orderId).orderBy('created_at').execute();
    assert.deepEqual(blocks.map((b) => [b.kind, b.status]), [['mispick', 'cancelled'], ['quality', 'open']]);
    expectError(await post(floor, `${lineUrl}/pick`, { qty_picked: 1 }), 422, 'invalid_status');
  });

  test('complete needs every line finished; verify needs a completed batch and something picked', async () => {
    const [a, b] = [await stockedItem(floor, 10), await stockedItem(floor, 10)];
    const batch = await startedBatch(floor, await releasedOrder(floor, [{ item: a, qty: 1 }, { item: b, qty: 1 }]));
    const [first, second] = batch.Lines;
    await ok(post(floor, `/pick-batches/${batch.ID}/lines/${first.PickBatchLineID}/pick`, { qty_picked: 1 }));
    expectError(await post(floor, `/pick-batches/${batch.ID}/lines/${first.PickBatchLineID}/verify`), 422, 'invalid_status');
    expectError(await post(floor, `/pick-batches/${batch.ID}/complete`), 422, 'invalid_status');
    await ok(post(floor, `/pick-batches/${batch.ID}/lines/${second.PickBatchLineID}/short`, { qty_short: 1, reason: 'none' }));
    const completed = await ok(post(floor, `/pick-batches/${batch.ID}/complete`));
    assert.equal(completed.Status, 'completed');
    assert.deepEqual(completed, await ok(get(`/pick-batches/${batch.ID}`)));
    const stored = await t.db.selectFrom('pick_batches').select(['status', 'completed_at']).where('id', '=', batch.ID).executeTakeFirstOrThrow();
    assert.equal(stored.status, 'completed');
    assert.ok(stored.completed_at);
    const history = await t.db.selectFrom('history').select(['before', 'after']).where('entity_id', '=', batch.ID).where('action', '=', 'completed').execute();
    assert.deepEqual(history, [{ before: { status: 'in_progress' }, after: { status: 'completed' } }]);
    expectError(await post(floor, `/pick-batches/${batch.ID}/lines/${second.PickBatchLineID}/verify`), 422, 'invalid_status');
    expectError(await post(floor, `/pick-batches/${batch.ID}/pack`), 422, 'invalid_status');
    const verified = await ok(post(floor, `/pick-batches/${batch.ID}/lines/${first.PickBatchLineID}/verify`));
    assert.equal(verified.PickBatchLineID, first.PickBatchLineID);
    assert.ok(verified.PackVerifiedAt);
    assert.deepEqual(verified, (await ok(get(`/pick-batches/${batch.ID}`))).Lines.find((l: { PickBatchLineID: string }) => l.PickBatchLineID === first.PickBatchLineID));
    // Verifying again is no error and changes nothing: the same answer, the first stamp kept.
    assert.deepEqual(await ok(post(floor, `/pick-batches/${batch.ID}/lines/${first.PickBatchLineID}/verify`)), verified);
    expectError(await post(floor, `/pick-batches/${batch.ID}/lines/${first.PickBatchLineID}/pick`, { qty_picked: 1 }), 422, 'invalid_status');
  });
});

describe('packing, staging and parcels', () => {
  test('pack files the packing list PDF under the order; include=documents shows it and download returns it', async () => {
    const item = await stockedItem(floor, 10);
    const orderId = await releasedOrder(floor, [{ item, qty: 3 }]);
    const packed = await packedBatch(floor, orderId);
    assert.equal(packed.Status, 'packed');
    const batchRow = await t.db.selectFrom('pick_batches').selectAll().where('id', '=', packed.ID).executeTakeFirstOrThrow();
    assert.ok(batchRow.packed_at);
    const order = await ok(get(`/orders/${orderId}?include=documents,fulfillment`));
    const list = order.documents.packing_list;
    assert.equal(list.entity_type, 'order');
    assert.equal(list.file_type, 'application/pdf');
    assert.deepEqual(list.tags, ['packing_list']);
    assert.equal(order.fulfillment.display_substatus, 'packed');
    assert.equal(order.fulfillment.lifecycle.batch_id, packed.ID);
    assert.ok(order.fulfillment.lifecycle.packed_at);
    const download = await t.app.inject({ method: 'GET', url: `/api/v1/documents/${list.id}/download`, headers: { authorization: `Bearer ${t.adminKey}` } });
    assert.equal(download.statusCode, 200);
    assert.match(download.headers['content-type'] as string, /application\/pdf/);
    assert.equal(download.rawPayload.subarray(0, 5).toString(), '%PDF-');
    assert.equal(download.rawPayload.length, list.file_size);
    assert.equal((await eventsOf(floor, 'pick_batch.packed')).filter((e) => (e.data as { pick_batch_id: string }).pick_batch_id === packed.ID).length, 1);
  });

  test('stage at a staging or shipping location, or hand over directly; other locations are 422', async () => {
    const item = await stockedItem(floor, 10);
    const packed = await packedBatch(floor, await releasedOrder(floor, [{ item, qty: 1 }]));
    expectError(await post(floor, `/pick-batches/${packed.ID}/stage`, { slot: 'A-01-02' }), 422, 'invalid_request');
    expectError(await post(floor, `/pick-batches/${packed.ID}/stage`, { slot: 'NOWHERE' }), 422, 'invalid_request');
    const staged = await ok(post(floor, `/pick-batches/${packed.ID}/stage`, { slot: 'stage-1' }));
    assert.deepEqual([staged.StagedSlot, staged.StagedLocType, typeof staged.StagedAt], ['STAGE-1', 'staging', 'string']);
    const handed = await ok(post(floor, `/pick-batches/${packed.ID}/stage`, { slot: null }));
    assert.deepEqual([handed.StagedSlot, handed.StagedLocType], [null, null]);
    assert.ok(handed.StagedAt);
    expectError(await post(floor, `/pick-batches/${packed.ID}/stage`, {}), 400, 'bad_request');
  });

  test('parcels count up and never reuse a number; the session\'s tracking is the lowest live parcel; labels over 120 characters are 400', async () => {
    const item = await stockedItem(floor, 10);
    const packed = await packedBatch(floor, await releasedOrder(floor, [{ item, qty: 1 }]));
    const url = `/pick-batches/${packed.ID}/parcels`;
    await ok(post(floor, url, { tracking_number: '1Z001', carrier: 'ups' }));
    const two = await ok(post(floor, url, { tracking_number: '1Z002', carrier: 'ups' }));
    assert.deepEqual(two.Parcels.map((p: { ParcelSeq: number }) => p.ParcelSeq), [1, 2]);
    assert.equal(two.TrackingNumber, '1Z001');
    const removed = await ok(call(t.app, 'DELETE', `/api/v1${url}/${two.Parcels[0].ID}`, { key: t.adminKey }));
    assert.equal(removed.TrackingNumber, '1Z002', 'the primary box is now the lowest live one');
    const three = await ok(post(floor, url, { tracking_number: '1Z003', carrier: 'fedex' }));
    assert.deepEqual(three.Parcels.map((p: { ParcelSeq: number }) => p.ParcelSeq), [2, 3]);
    expectError(await post(floor, url, { tracking_number: 'X'.repeat(121), carrier: 'ups' }), 400, 'bad_request');
    expectError(await post(floor, url, { tracking_number: '1Z9', carrier: 'dhl' }), 400, 'bad_request');
    const put = await ok(call(t.app, 'PUT', `/api/v1/pick-batches/${packed.ID}/tracking`, { key: t.adminKey, body: { tracking_number: '1Z777', carrier: 'usps' } }));
    assert.deepEqual([put.TrackingNumber, put.TrackingCarrier, put.Parcels[0].ParcelSeq], ['1Z777', 'usps', 2]);
    const flagged = await ok(post(floor, `/pick-batches/${packed.ID}/flag-tracking`));
    assert.ok(flagged.TrackingFlaggedForOfficeAt);
    const stored = await t.db.selectFrom('pick_batch_parcels').select(['parcel_seq', 'tracking_number']).where('pick_batch_id', '=', packed.ID).orderBy('parcel_seq').execute();
    assert.deepEqual(stored, [{ parcel_seq: 2, tracking_number: '1Z777' }, { parcel_seq: 3, tracking_number: '1Z003' }]);
    expectError(await call(t.app, 'DELETE', `/api/v1${url}/${two.Parcels[0].ID}`, { key: t.adminKey }), 404, 'not_found');
  });
});

describe('shipping', () => {
  test('stock leaves the picked bin: on-hand and committed fall together, shipment movements, order shipped, events', async () => {
    const [a, b] = [await stockedItem(floor, 10), await stockedItem(floor, 7)];
    const orderId = await releasedOrder(floor, [{ item: a, qty: 4 }, { item: b, qty: 2 }]);
    assert.deepEqual(await stockOf(floor, a), { qty_on_hand: 10, qty_committed: 4, qty_available: 6 });
    const packed = await packedBatch(floor, orderId);
    assert.deepEqual(await shippedFigures(packed.ID), { shipped_lines: null, shipped_lines_in_full: null, shipped_units_to_pick: null, shipped_units_picked: null });
    const shipped = await ok(post(floor, `/pick-batches/${packed.ID}/ship`, { tracking_number: '1ZSHIP', carrier: 'ups' }));
    assert.deepEqual([shipped.Status, shipped.TrackingNumber, shipped.TrackingCarrier], ['shipped', '1ZSHIP', 'ups']);
    assert.deepEqual(await stockOf(floor, a), { qty_on_hand: 6, qty_committed: 0, qty_available: 6 });
    assert.deepEqual(await stockOf(floor, b), { qty_on_hand: 5, qty_committed: 0, qty_available: 5 });
    assert.equal(await binOf(floor, a), 6);
    const movements = await t.db.selectFrom('inventory_movements').select(['item_id', 'movement_type', 'quantity', 'balance_after', 'reference_id', 'location_id'])
      .where('reference_id', '=', packed.ID).orderBy('seq').execute();
    assert.deepEqual(movements.map((m) => [m.movement_type, m.quantity, m.balance_after, m.location_id]).sort(),
      [['shipment', -2, 5, floor.bin], ['shipment', -4, 6, floor.bin]].sort());
    const order = await t.db.selectFrom('orders').selectAll().where('id', '=', orderId).executeTakeFirstOrThrow();
    assert.equal(order.status, 'shipped');
    assert.ok(order.shipped_at);
    assert.deepEqual(await shippedFigures(packed.ID), { shipped_lines: 2, shipped_lines_in_full: 2, shipped_units_to_pick: 6, shipped_units_picked: 6 });
    const lines = await t.db.selectFrom('order_lines').select(['qty_shipped', 'qty_committed', 'qty_backordered']).where('order_id', '=', orderId).execute();
    assert.deepEqual(lines.map((l) => [l.qty_shipped, l.qty_committed, l.qty_backordered]).sort(), [[2, 0, 0], [4, 0, 0]]);
    assert.equal((await eventsOf(floor, 'order.shipped')).filter((e) => (e.data as { order_id: string }).order_id === orderId).length, 1);
    assert.equal((await eventsOf(floor, 'pick_batch.shipped')).filter((e) => (e.data as { pick_batch_id: string }).pick_batch_id === packed.ID).length, 1);
    expectError(await post(floor, `/pick-batches/${packed.ID}/ship`), 422, 'invalid_status');
    assert.equal((await t.db.selectFrom('inventory_movements').select('id').where('reference_id', '=', packed.ID).execute()).length, 2, 'shipping twice moved nothing');
    const detail = await ok(get(`/orders/${orderId}?include=shipments,fulfillment`));
    assert.equal(detail.shipments[0].tracking_number, '1ZSHIP');
    assert.equal(detail.fulfillment.lifecycle.shipped_by_name, 'admin');
  });

  test('an open block stops shipping until its exception is reviewed; shorts ship partial and backorder, the next batch picks them', async () => {
    const item = await stockedItem(floor, 10);
    const orderId = await releasedOrder(floor, [{ item, qty: 5 }]);
    const batch = await startedBatch(floor, orderId);
    const lineUrl = `/pick-batches/${batch.ID}/lines/${batch.Lines[0].PickBatchLineID}`;
    await ok(post(floor, `${lineUrl}/pick`, { qty_picked: 3 }));
    await ok(post(floor, `${lineUrl}/short`, { qty_short: 2, reason: 'short in bin' }));
    await ok(post(floor, `/pick-batches/${batch.ID}/complete`));
    await ok(post(floor, `${lineUrl}/verify`));
    await ok(post(floor, `/pick-batches/${batch.ID}/pack`));
    const refused = await post(floor, `/pick-batches/${batch.ID}/ship`);
    expectError(refused, 422, 'invalid_status');
    assert.match(refused.body.error.message, /short_pick block/);
    assert.deepEqual(await stockOf(floor, item), { qty_on_hand: 10, qty_committed: 5, qty_available: 5 }, 'nothing moved');
    const exception = await t.db.selectFrom('pick_exceptions').select('id').where('pick_batch_id', '=', batch.ID).executeTakeFirstOrThrow();
    await ok(post(floor, `/exceptions/${exception.id}/review`, { disposition: 'backorder', note: 'supplier sends more' }));
    await ok(post(floor, `/pick-batches/${batch.ID}/ship`));
    const order = await t.db.selectFrom('orders').select('status').where('id', '=', orderId).executeTakeFirstOrThrow();
    assert.equal(order.status, 'partial');
    const line = await t.db.selectFrom('order_lines').select(['qty_shipped', 'qty_backordered', 'qty_committed']).where('order_id', '=', orderId).executeTakeFirstOrThrow();
    assert.deepEqual(line, { qty_shipped: 3, qty_backordered: 2, qty_committed: 2 });
    assert.deepEqual(await stockOf(floor, item), { qty_on_hand: 7, qty_committed: 2, qty_available: 5 });
    assert.deepEqual(await shippedFigures(batch.ID), { shipped_lines: 1, shipped_lines_in_full: 0, shipped_units_to_pick: 5, shipped_units_picked: 3 });
    const next = await startedBatch(floor, orderId);
    assert.equal(next.Lines[0].QtyToPick, 2, 'the backorder is what the next batch picks');
  });

  test('cancel returns the lines to the order and cancels the blocks the batch opened; a shipped batch cannot be cancelled', async () => {
    const [item, other] = [await stockedItem(floor, 10), await stockedItem(floor, 10)];
    const orderId = await releasedOrder(floor, [{ item, qty: 2 }, { item: other, qty: 1 }]);
    const batch = await startedBatch(floor, orderId);
    const lineOf = (id: string) => batch.Lines.find((l: { ItemID: string }) => l.ItemID === id).PickBatchLineID;
    await ok(post(floor, `/pick-batches/${batch.ID}/lines/${lineOf(item)}/pick`, { qty_picked: 2 }));
    await ok(post(floor, `/pick-batches/${batch.ID}/lines/${lineOf(other)}/quality`, { reason: 'torn' }));
    const cancelled = await ok(post(floor, `/pick-batches/${batch.ID}/cancel`));
    assert.equal(cancelled.Status, 'cancelled');
    const blocks = await t.db.selectFrom('order_blocks').select('status').where('order_id', '=', orderId).execute();
    assert.deepEqual(blocks.map((b) => b.status), ['cancelled']);
    const exception = await t.db.selectFrom('pick_exceptions').select('status').where('pick_batch_id', '=', batch.ID).executeTakeFirstOrThrow();
    assert.equal(exception.status, 'open', 'the exception stays for review');
    const again = await startedBatch(floor, orderId);
    assert.deepEqual(again.Lines.map((l: { QtyToPick: number }) => l.QtyToPick).sort(), [1, 2]);
    await ok(post(floor, `/pick-batches/${again.ID}/cancel`));
    const packed = await packedBatch(floor, await releasedOrder(floor, [{ item, qty: 1 }]));
    assert.equal((await ok(post(floor, `/pick-batches/${packed.ID}/cancel`))).Status, 'cancelled', 'a packed batch that cannot ship can be cancelled');
    const shippedOrder = await releasedOrder(floor, [{ item, qty: 1 }]);
    const shipped = await packedBatch(floor, shippedOrder);
    await ok(post(floor, `/pick-batches/${shipped.ID}/ship`));
    expectError(await post(floor, `/pick-batches/${shipped.ID}/cancel`), 422, 'invalid_status');
    assert.deepEqual(await stockOf(floor, item), { qty_on_hand: 9, qty_committed: 3, qty_available: 6 });
  });

  test('a fully short line backorders all of it; a flag after a partial pick sends the picked units back', async () => {
    const [a, b, c] = [await stockedItem(floor, 10), await stockedItem(floor, 10), await stockedItem(floor, 10)];
    const orderId = await releasedOrder(floor, [{ item: a, qty: 2 }, { item: b, qty: 3 }, { item: c, qty: 4 }]);
    const batch = await startedBatch(floor, orderId);
    const lineOf = (id: string) => `/pick-batches/${batch.ID}/lines/${batch.Lines.find((l: { ItemID: string }) => l.ItemID === id).PickBatchLineID}`;
    await ok(post(floor, `${lineOf(a)}/pick`, { qty_picked: 2 }));
    await ok(post(floor, `${lineOf(b)}/short`, { qty_short: 3, reason: 'none there' }));
    await ok(post(floor, `${lineOf(c)}/pick`, { qty_picked: 1 }));
    const flagged = await ok(post(floor, `${lineOf(c)}/quality`, { reason: 'dented' }));
    assert.deepEqual([flagged.ItemID, flagged.Status, flagged.QtyPicked], [c, 'skipped', 0]);
    await ok(post(floor, `/pick-batches/${batch.ID}/complete`));
    await ok(post(floor, `${lineOf(a)}/verify`));
    await ok(post(floor, `/pick-batches/${batch.ID}/pack`));
    for (const e of await t.db.selectFrom('pick_exceptions').select(['id', 'kind']).where('pick_batch_id', '=', batch.ID).execute()) {
      await ok(post(floor, `/exceptions/${e.kind === 'quality' ? 'quality/' : ''}${e.id}/review`, { disposition: 'backorder' }));
    }
    await ok(post(floor, `/pick-batches/${batch.ID}/ship`));
    const lines = await t.db.selectFrom('order_lines').select(['item_id', 'qty_shipped', 'qty_backordered', 'qty_committed']).where('order_id', '=', orderId).execute();
    const byItem = Object.fromEntries(lines.map((l) => [l.item_id, [l.qty_shipped, l.qty_backordered, l.qty_committed]]));
    assert.deepEqual(byItem, { [a]: [2, 0, 0], [b]: [0, 3, 3], [c]: [0, 4, 4] });
    // Three lines, one in full; the short line and the set-aside one count what they were to pick and nothing picked.
    assert.deepEqual(await shippedFigures(batch.ID), { shipped_lines: 3, shipped_lines_in_full: 1, shipped_units_to_pick: 9, shipped_units_picked: 2 });
    assert.deepEqual(await stockOf(floor, c), { qty_on_hand: 10, qty_committed: 4, qty_available: 6 }, 'nothing of the flagged line left');
  });

  test('the picked units leave their bin first, then the item\'s other bins; with too few in all of them the ship is 422, nothing moved', async () => {
    const item = await stockedItem(floor, 3);
    const spare = await createLocation(t, `SPARE-${Date.now()}`);
    assert.equal((await call(t.app, 'POST', '/api/v1/inventory/adjustments', { key: t.adminKey, body: { item_id: item, quantity: 10, reason: 'spare', location_id: spare } })).status, 201);
    const orderId = await releasedOrder(floor, [{ item, qty: 5 }]);
    const packed = await packedBatch(floor, orderId);
    await ok(post(floor, `/pick-batches/${packed.ID}/ship`));
    const moved = await t.db.selectFrom('inventory_movements').select(['location_id', 'quantity']).where('reference_id', '=', packed.ID).orderBy('seq').execute();
    assert.deepEqual(moved, [{ location_id: floor.bin, quantity: -3 }, { location_id: spare, quantity: -2 }]);

    const short = await stockedItem(floor, 2);
    const order2 = await releasedOrder(floor, [{ item: short, qty: 2 }]);
    const batch2 = await packedBatch(floor, order2);
    // A unit broke after it was picked and was counted away: the bins hold one fewer than the batch packed.
    assert.equal((await call(t.app, 'POST', '/api/v1/inventory/adjustments', { key: t.adminKey, body: { item_id: short, quantity: -1, reason: 'broken', location_id: floor.bin } })).status, 201);
    expectError(await post(floor, `/pick-batches/${batch2.ID}/ship`), 422, 'insufficient_stock');
    assert.equal((await t.db.selectFrom('inventory_movements').select('id').where('reference_id', '=', batch2.ID).execute()).length, 0);
    assert.equal((await t.db.selectFrom('pick_batches').select('status').where('id', '=', batch2.ID).executeTakeFirstOrThrow()).status, 'packed');
  });

  test('a split line picks and backorders only its warehouse part, whenever its direct part ships', async () => {
    const item = await stockedItem(floor, 20);
    const entered = await call(t.app, 'POST', '/api/v1/orders', {
      key: t.adminKey,
      body: { manufacturer_id: floor.partner, customer_id: floor.customer, lines: [{ item_id: item, qty_ordered: 10, fulfillment_source: 'split', qty_warehouse: 6, qty_direct: 4 }] },
    });
    const orderId = entered.body.data.order.id;
    await ok(post(floor, `/orders/${orderId}/release`));
    const lineId = (await t.db.selectFrom('order_lines').select('id').where('order_id', '=', orderId).executeTakeFirstOrThrow()).id;
    await ok(post(floor, `/orders/${orderId}/direct-ship/ship`, { line_ids: [lineId], tracking_number: 'D1', carrier: 'ups' }));
    const batch = await startedBatch(floor, orderId);
    assert.equal(batch.Lines[0].QtyToPick, 6, 'the direct units that shipped are not the warehouse\'s');
    const lineUrl = `/pick-batches/${batch.ID}/lines/${batch.Lines[0].PickBatchLineID}`;
    await ok(post(floor, `${lineUrl}/pick`, { qty_picked: 6 }));
    await ok(post(floor, `/pick-batches/${batch.ID}/complete`));
    await ok(post(floor, `${lineUrl}/verify`));
    await ok(post(floor, `/pick-batches/${batch.ID}/pack`));
    await ok(post(floor, `/pick-batches/${batch.ID}/ship`));
    const line = await t.db.selectFrom('order_lines').select(['qty_shipped', 'qty_backordered', 'qty_committed']).where('id', '=', lineId).executeTakeFirstOrThrow();
    assert.deepEqual(line, { qty_shipped: 10, qty_backordered: 0, qty_committed: 0 });
    assert.equal((await t.db.selectFrom('orders').select('status').where('id', '=', orderId).executeTakeFirstOrThrow()).status, 'shipped');
  });

  test('an order whose direct line ships after its warehouse lines becomes shipped then', async () => {
    const [a, b] = [await stockedItem(floor, 10), await stockedItem(floor, 10)];
    const entered = await call(t.app, 'POST', '/api/v1/orders', {
      key: t.adminKey,
      body: { manufacturer_id: floor.partner, customer_id: floor.customer, lines: [{ item_id: a, qty_ordered: 2 }, { item_id: b, qty_ordered: 3, fulfillment_source: 'direct' }] },
    });
    const orderId = entered.body.data.order.id;
    await ok(post(floor, `/orders/${orderId}/release`));
    const packed = await packedBatch(floor, orderId);
    await ok(post(floor, `/pick-batches/${packed.ID}/ship`));
    assert.equal((await t.db.selectFrom('orders').select('status').where('id', '=', orderId).executeTakeFirstOrThrow()).status, 'partial');
    const direct = (await t.db.selectFrom('order_lines').select('id').where('order_id', '=', orderId).where('item_id', '=', b).executeTakeFirstOrThrow()).id;
    await ok(post(floor, `/orders/${orderId}/direct-ship/ship`, { line_ids: [direct], tracking_number: 'D2', carrier: 'fedex' }));
    assert.equal((await t.db.selectFrom('orders').select('status').where('id', '=', orderId).executeTakeFirstOrThrow()).status, 'shipped');
    assert.equal((await eventsOf(floor, 'order.shipped')).filter((e) => (e.data as { order_id: string }).order_id === orderId).length, 1);
  });

  test('cancelling the order cancels its live batches', async () => {
    const item = await stockedItem(floor, 10);
    const orderId = await releasedOrder(floor, [{ item, qty: 2 }]);
    const batch = await startedBatch(floor, orderId);
    await ok(post(floor, `/orders/${orderId}/cancel`));
    assert.equal((await ok(get(`/pick-batches/${batch.ID}`))).Status, 'cancelled');
    expectError(await post(floor, `/pick-batches/${batch.ID}/lines/${batch.Lines[0].PickBatchLineID}/pick`, { qty_picked: 1 }), 422, 'invalid_status');
    assert.deepEqual(await stockOf(floor, item), { qty_on_hand: 10, qty_committed: 0, qty_available: 10 });
  });

  test('will-call pickup ships the packed order and records who collected it; other orders are 422', async () => {
    const item = await stockedItem(floor, 10);
    const willCall = await releasedOrder(floor, [{ item, qty: 2 }], { ship_via_id: floor.shipVia['WILL-CALL'] });
    const body = { picked_up_by_name: 'Sam Driver', notes: 'blue truck' };
    expectError(await post(floor, `/orders/${willCall}/pickup`, body), 422, 'invalid_status');
    await packedBatch(floor, willCall);
    const picked = await ok(post(floor, `/orders/${willCall}/pickup`, body));
    assert.equal(picked.order.status, 'shipped');
    const order = await t.db.selectFrom('orders').selectAll().where('id', '=', willCall).executeTakeFirstOrThrow();
    assert.deepEqual([order.picked_up_by_name, order.picked_up_notes, order.status], ['Sam Driver', 'blue truck', 'shipped']);
    assert.ok(order.picked_up_at);
    const detail = await ok(get(`/orders/${willCall}?include=fulfillment`));
    assert.equal(detail.fulfillment.lifecycle.picked_up_by_name, 'admin');
    assert.deepEqual(await stockOf(floor, item), { qty_on_hand: 8, qty_committed: 0, qty_available: 8 });
    const [handedOver] = await t.db.selectFrom('pick_batches').select('id').where('order_id', '=', willCall).execute();
    assert.deepEqual(await shippedFigures(handedOver!.id), { shipped_lines: 1, shipped_lines_in_full: 1, shipped_units_to_pick: 2, shipped_units_picked: 2 });
    const parcel = await releasedOrder(floor, [{ item, qty: 1 }], { ship_via_id: floor.shipVia.UPS });
    await packedBatch(floor, parcel);
    expectError(await post(floor, `/orders/${parcel}/pickup`, body), 422, 'invalid_status');
  });
});

describe('the list and the floor\'s own keys', () => {
  test('a warehouse key works a whole order: start, read its lines, pick, pack, stage, label, ship', async () => {
    const item = await stockedItem(floor, 10);
    const orderId = await releasedOrder(floor, [{ item, qty: 2 }]);
    const { key } = await userWithKey(t, 'warehouse');
    const started = await ok(post(floor, '/pick-batches', { order_id: orderId }, key), 201);
    const batch = await ok(get(`/pick-batches/${started.ID}`, key));
    const lineUrl = `/pick-batches/${batch.ID}/lines/${batch.Lines[0].PickBatchLineID}`;
    await ok(post(floor, `${lineUrl}/pick`, { qty_picked: 2 }, key));
    await ok(post(floor, `/pick-batches/${batch.ID}/complete`, undefined, key));
    await ok(post(floor, `${lineUrl}/verify`, undefined, key));
    await ok(post(floor, `/pick-batches/${batch.ID}/pack`, undefined, key));
    await ok(post(floor, `/pick-batches/${batch.ID}/stage`, { slot: 'DOCK-1' }, key));
    await ok(post(floor, `/pick-batches/${batch.ID}/parcels`, { tracking_number: '1ZWH', carrier: 'ups' }, key));
    assert.equal((await ok(post(floor, `/pick-batches/${batch.ID}/ship`, undefined, key))).Status, 'shipped');
    assert.deepEqual((await ok(get(`/pick-batches?order=${orderId}`, key))).map((s: { ID: string }) => s.ID), [batch.ID]);
  });

  test('start, pack and ship answer with the session a read right after shows (start with its line ids empty)', async () => {
    const [a, b] = [await stockedItem(floor, 10), await stockedItem(floor, 6)];
    const orderId = await releasedOrder(floor, [{ item: a, qty: 3 }, { item: b, qty: 2 }]);
    const started = await ok(post(floor, '/pick-batches', { order_id: orderId }), 201);
    const afterStart = await ok(get(`/pick-batches/${started.ID}`));
    assert.deepEqual(started, { ...afterStart, Lines: afterStart.Lines.map((line: { PickBatchLineID: string }) => ({ ...line, PickBatchLineID: '' })) });
    for (const line of afterStart.Lines) await ok(post(floor, `/pick-batches/${started.ID}/lines/${line.PickBatchLineID}/pick`, { qty_picked: line.QtyToPick }));
    await ok(post(floor, `/pick-batches/${started.ID}/complete`));
    for (const line of afterStart.Lines) await ok(post(floor, `/pick-batches/${started.ID}/lines/${line.PickBatchLineID}/verify`));
    const packed = await ok(post(floor, `/pick-batches/${started.ID}/pack`));
    assert.equal(packed.Status, 'packed');
    assert.deepEqual(packed, await ok(get(`/pick-batches/${started.ID}`)));
    await ok(post(floor, `/pick-batches/${started.ID}/parcels`, { tracking_number: '1ZFIRST', carrier: 'ups' }));
    await ok(post(floor, `/pick-batches/${started.ID}/parcels`, { tracking_number: '1ZSECOND', carrier: 'ups' }));
    const shipped = await ok(post(floor, `/pick-batches/${started.ID}/ship`, { tracking_number: '1ZRELABEL', carrier: 'fedex' }));
    assert.deepEqual([shipped.Status, shipped.TrackingNumber, shipped.Parcels.map((p: { TrackingNumber: string }) => p.TrackingNumber)],
      ['shipped', '1ZRELABEL', ['1ZRELABEL', '1ZSECOND']]);
    assert.deepEqual(shipped.Lines.map((line: { QtyOnHand: number }) => line.QtyOnHand), [7, 4], 'the stock as shipping left it');
    assert.deepEqual(shipped, await ok(get(`/pick-batches/${started.ID}`)));
  });

  test('ship takes tracking_number and carrier together or not at all', async () => {
    const item = await stockedItem(floor, 10);
    const packed = await packedBatch(floor, await releasedOrder(floor, [{ item, qty: 1 }]));
    expectError(await post(floor, `/pick-batches/${packed.ID}/ship`, { tracking_number: '1Z1' }), 422, 'invalid_request');
    expectError(await post(floor, `/pick-batches/${packed.ID}/ship`, { carrier: 'ups' }), 422, 'invalid_request');
    const nullBody = await t.app.inject({
      method: 'POST', url: `/api/v1/pick-batches/${packed.ID}/ship`, payload: 'null',
      headers: { authorization: `Bearer ${t.adminKey}`, 'content-type': 'application/json' },
    });
    assert.equal(nullBody.statusCode, 400, 'a body that is sent must be an object; only a missing body reads as {}');
    assert.equal((await t.db.selectFrom('pick_batches').select('status').where('id', '=', packed.ID).executeTakeFirstOrThrow()).status, 'packed');
  });

  test('a mispick names an item of the batch\'s own partner', async () => {
    const [item, foreign] = [await stockedItem(floor, 10), await stockedItem(floor, 10, floor.otherPartner)];
    const batch = await startedBatch(floor, await releasedOrder(floor, [{ item, qty: 1 }]));
    const url = `/pick-batches/${batch.ID}/lines/${batch.Lines[0].PickBatchLineID}/mispick`;
    expectError(await post(floor, url, { actual_item_id: foreign, actual_qty: 1, reason: 'x' }), 422, 'invalid_request');
    assert.equal((await t.db.selectFrom('pick_exceptions').select('id').where('pick_batch_id', '=', batch.ID).execute()).length, 0);
  });

  test('the list filters by status, order and partner, newest first, paged', async () => {
    const item = await stockedItem(floor, 10);
    const first = await startedBatch(floor, await releasedOrder(floor, [{ item, qty: 1 }]));
    const second = await startedBatch(floor, await releasedOrder(floor, [{ item, qty: 1 }]));
    await ok(post(floor, `/pick-batches/${first.ID}/cancel`));
    const cancelled = await call(t.app, 'GET', '/api/v1/pick-batches?status=cancelled&per_page=100', { key: t.adminKey });
    assert.ok(cancelled.body.data.some((s: { ID: string }) => s.ID === first.ID));
    assert.ok(cancelled.body.data.every((s: { Status: string }) => s.Status === 'cancelled'));
    const page = await call(t.app, 'GET', `/api/v1/pick-batches?manufacturer=${floor.partner}&per_page=1`, { key: t.adminKey });
    assert.deepEqual(page.body.data.map((s: { ID: string }) => s.ID), [second.ID], 'newest first');
    assert.ok(page.body.meta.total_count >= 2);
    assert.equal(page.body.meta.per_page, 1);
    assert.deepEqual((await ok(get(`/pick-batches?manufacturer=${floor.otherPartner}`))), []);
    expectError(await get('/pick-batches?status=lost'), 400, 'bad_request');
  });

  test('a page of the list shows each batch exactly as its own read does: its lines in order, verified, short, its parcels', async () => {
    const items = [await stockedItem(floor, 10), await stockedItem(floor, 10), await stockedItem(floor, 10)];
    const packed = await packedBatch(floor, await releasedOrder(floor, items.map((item) => ({ item, qty: 2 }))));
    await ok(post(floor, `/pick-batches/${packed.ID}/parcels`, { tracking_number: '1ZLISTPAGE1', carrier: 'ups' }));
    const shorted = await startedBatch(floor, await releasedOrder(floor, [{ item: items[0]!, qty: 3 }, { item: items[1]!, qty: 1 }]));
    const [shortLine] = shorted.Lines;
    await ok(post(floor, `/pick-batches/${shorted.ID}/lines/${shortLine.PickBatchLineID}/short`, { qty_short: 3, reason: 'empty bin' }));
    const empty = await startedBatch(floor, await releasedOrder(floor, [{ item: items[2]!, qty: 1 }]));
    const page = await ok(get(`/pick-batches?manufacturer=${floor.partner}&per_page=3`));
    assert.deepEqual(page.map((s: { ID: string }) => s.ID), [empty.ID, shorted.ID, packed.ID]);
    for (const listed of page) assert.deepEqual(listed, await ok(get(`/pick-batches/${listed.ID}`)), `batch ${listed.ID}`);
    const [listedPacked, listedShort] = [page[2], page[1]];
    assert.deepEqual(listedPacked.Lines.map((l: { ItemID: string }) => l.ItemID), items, 'lines in order-line order');
    assert.ok(listedPacked.Lines.every((l: { PackVerifiedAt: string }) => /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/.test(l.PackVerifiedAt)));
    const stored = await t.db.selectFrom('pick_batch_lines').select(['id', 'pack_verified_at']).where('pick_batch_id', '=', packed.ID).execute();
    for (const line of listedPacked.Lines) assert.equal(line.PackVerifiedAt, stored.find((row) => row.id === line.PickBatchLineID)!.pack_verified_at);
    assert.equal(listedPacked.Parcels[0].TrackingNumber, '1ZLISTPAGE1');
    assert.deepEqual(listedShort.Lines.map((l: { Status: string; ExceptionStatus: string }) => [l.Status, l.ExceptionStatus]), [['short', 'open'], ['pending', '']]);
  });
});

describe('who may do what', () => {
  test('a consignor key reads its partner\'s batches and exceptions only; picking needs picking.execute, shipping shipping.edit', async () => {
    const item = await stockedItem(floor, 10);
    const orderId = await releasedOrder(floor, [{ item, qty: 1 }]);
    const batch = await startedBatch(floor, orderId);
    const own = await userWithKey(t, 'consignor', { manufacturerId: floor.partner });
    const other = await userWithKey(t, 'consignor', { manufacturerId: floor.otherPartner });
    assert.equal((await get(`/pick-batches/${batch.ID}`, own.key)).status, 200);
    expectError(await get(`/pick-batches/${batch.ID}`, other.key), 404, 'not_found');
    const listed = await ok(get(`/pick-batches?order=${orderId}`, own.key));
    assert.deepEqual(listed.map((s: { ID: string }) => s.ID), [batch.ID]);
    assert.deepEqual(await ok(get(`/pick-batches?order=${orderId}`, other.key)), []);
    expectError(await post(floor, `/pick-batches/${batch.ID}/lines/${batch.Lines[0].PickBatchLineID}/pick`, { qty_picked: 1 }, own.key), 403, 'forbidden');
    const qc = await userWithKey(t, 'qc');
    expectError(await post(floor, `/pick-batches/${batch.ID}/complete`, undefined, qc.key), 403, 'forbidden');
    const office = await userWithKey(t, 'office');
    expectError(await post(floor, `/pick-batches/${batch.ID}/flag-tracking`, undefined, office.key), 403, 'forbidden');
    const picker = await userWithKey(t, 'warehouse', { scopes: ['picking.execute'] });
    for (const [path, body] of [['stage', { slot: null }], ['parcels', { tracking_number: '1Z', carrier: 'ups' }], ['ship', {}], ['flag-tracking', undefined]] as const) {
      expectError(await post(floor, `/pick-batches/${batch.ID}/${path}`, body, picker.key), 403, 'forbidden');
    }
    expectError(await call(t.app, 'PUT', `/api/v1/pick-batches/${batch.ID}/tracking`, { key: picker.key, body: { tracking_number: '1Z', carrier: 'ups' } }), 403, 'forbidden');
    expectError(await post(floor, `/orders/${orderId}/pickup`, { picked_up_by_name: 'X' }, picker.key), 403, 'forbidden');
    const [line] = await t.db.selectFrom('pick_batch_lines').select('qty_picked').where('pick_batch_id', '=', batch.ID).execute();
    assert.equal(line!.qty_picked, 0);
  });
});

test('migration 0044 copies each existing pick line\'s order line number, item number, description and unit onto it', async () => {
  const database = await connectPGlite(null);
  try {
    const { db } = database;
    const [earlier, later] = [listMigrations().filter((m) => m.version < '0044'), listMigrations().filter((m) => m.version >= '0044')];
    await migrate(db, earlier);
    await sql`insert into manufacturers (code, name) values ('OLD', 'Old partner')`.execute(db);
    await sql`insert into customers (account_number, name) values ('C1', 'Old customer')`.execute(db);
    await sql`insert into items (manufacturer_id, item_number_display, item_number_normalized, description)
      select m.id, 'OLD-' || n, 'OLD' || n, 'Old part ' || n from manufacturers m, generate_series(1, 2) n`.execute(db);
    await sql`insert into orders (manufacturer_id, customer_id) select m.id, c.id from manufacturers m, customers c`.execute(db);
    await sql`insert into order_lines (order_id, item_id, line_number, item_number_display, item_description, qty_ordered, qty_warehouse, fulfillment_source, unit_price, extended_price, unit_of_measure)
      select o.id, i.id, row_number() over (order by i.item_number_normalized), i.item_number_display, 'As ordered: ' || i.description, 2, 2, 'warehouse', 1, 2,
        case when i.item_number_normalized = 'OLD1' then 'EA' else 'CS' end
      from orders o, items i`.execute(db);
    await sql`insert into pick_batches (order_id, manufacturer_id, batch_number) select o.id, o.manufacturer_id, 'PB000001' from orders o`.execute(db);
    await sql`insert into pick_batch_lines (pick_batch_id, order_line_id, item_id, qty_to_pick)
      select b.id, l.id, l.item_id, 2 from pick_batches b join order_lines l on l.order_id = b.order_id`.execute(db);
    assert.deepEqual(await migrate(db, later), later.map((m) => m.version));
    const { rows } = await sql<{ copied: unknown[]; ordered: unknown[] }>`
      select array[l.line_number::text, l.item_number_display, l.item_description, l.unit_of_measure] copied,
        array[ol.line_number::text, ol.item_number_display, ol.item_description, ol.unit_of_measure] ordered
      from pick_batch_lines l join order_lines ol on ol.id = l.order_line_id order by ol.line_number`.execute(db);
    assert.deepEqual(rows.map((row) => row.copied), [['1', 'OLD-1', 'As ordered: Old part 1', 'EA'], ['2', 'OLD-2', 'As ordered: Old part 2', 'CS']]);
    assert.deepEqual(rows.map((row) => row.copied), rows.map((row) => row.ordered));
    await assert.rejects(sql`update pick_batch_lines set item_number_display = null`.execute(db), /not-null|null value/);
  } finally {
    await database.close();
  }
});
