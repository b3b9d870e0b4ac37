// Tracking from a CSV file: rows name a batch or an order, apply as the batch's primary box in one transaction or not
// at all, with every bad row named; overwrites need confirm_overwrite=true; each change emits shipment.tracking_updated.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { call, expectError, startApp, userWithKey, type TestApp } from './helpers.ts';
import { eventsOf, ok, packedOneLine, post, parcelsOf, releasedOrder, setUpFloor, startedBatch, stockedItem, type Floor } from './picking-kit.ts';

let t: TestApp;
let floor: Floor;

const upload = (csv: string | Buffer, query = '', key = t.adminKey, type = 'text/csv') =>
  call(t.app, 'POST', `/api/v1/shipments/tracking-import${query}`, { key, body: csv, headers: { 'content-type': type } });
const trackingOf = (batchId: string) =>
  t.db.selectFrom('pick_batches').select(['tracking_number', 'tracking_carrier']).where('id', '=', batchId).executeTakeFirstOrThrow();


before(async () => {
  t = await startApp();
  floor = await setUpFloor(t);
});
after(() => t.close());

describe('tracking import', () => {
  test('rows by batch number and by order number set the primary box, emit tracking_updated, and survive a BOM, quotes and CRLF', async () => {
    const [a, b] = [await packedOneLine(floor), await packedOneLine(floor)];
    const shipped = await packedOneLine(floor);
    await ok(post(floor, `/pick-batches/${shipped.id}/ship`));
    const events = (await eventsOf(floor, 'shipment.tracking_updated')).length;
    const csv = '\uFEFFbatch_number,order_number,tracking_number,carrier\r\n' +
      `${a.batchNumber.toLowerCase()},,"1Z,A",UPS\r\n` +
      `,${b.orderNumber},1ZB,fedex\r\n` +
      `${shipped.batchNumber},${shipped.orderNumber},9400SHIPPED,usps\r\n\r\n`;
    const answer = await upload(csv);
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.deepEqual(answer.body.data.rows.map((r: { row: number; batch_id: string; changed: boolean }) => [r.row, r.batch_id, r.changed]),
      [[2, a.id, true], [3, b.id, true], [4, shipped.id, true]]);
    assert.equal(answer.body.data.changed, 3);
    assert.deepEqual(await trackingOf(a.id), { tracking_number: '1Z,A', tracking_carrier: 'ups' });
    assert.deepEqual(await trackingOf(b.id), { tracking_number: '1ZB', tracking_carrier: 'fedex' });
    assert.deepEqual(await parcelsOf(floor, shipped.id), [{ parcel_seq: 1, tracking_number: '9400SHIPPED', carrier: 'usps' }], 'a shipped batch takes its tracking too');
    assert.equal((await eventsOf(floor, 'shipment.tracking_updated')).length, events + 3);

    // The same file again changes nothing and emits nothing.
    const again = await upload(csv);
    assert.equal(again.status, 200);
    assert.equal(again.body.data.changed, 0);
    assert.equal((await eventsOf(floor, 'shipment.tracking_updated')).length, events + 3);
  });

  test('unknown, ambiguous, repeated and unconfirmed-overwrite rows are 422 with each row and why; nothing is applied', async () => {
    const [a, b] = [await packedOneLine(floor), await packedOneLine(floor)];
    await ok(post(floor, `/pick-batches/${a.id}/parcels`, { tracking_number: 'OLD-1', carrier: 'ups' }));
    // An order with two batches (the first shipped short, the second picks the backorder) is ambiguous by order number.
    const item = await stockedItem(floor, 10);
    const twoBatches = await releasedOrder(floor, [{ item, qty: 4 }]);
    const first = await startedBatch(floor, twoBatches);
    const line = `/pick-batches/${first.ID}/lines/${first.Lines[0].PickBatchLineID}`;
    await ok(post(floor, `${line}/pick`, { qty_picked: 2 }));
    await ok(post(floor, `${line}/short`, { qty_short: 2, reason: 'later' }));
    await ok(post(floor, `/pick-batches/${first.ID}/complete`));
    await ok(post(floor, `${line}/verify`));
    await ok(post(floor, `/pick-batches/${first.ID}/pack`));
    const exception = await t.db.selectFrom('pick_exceptions').select('id').where('order_id', '=', twoBatches).executeTakeFirstOrThrow();
    await ok(post(floor, `/exceptions/${exception.id}/review`, { disposition: 'backorder' }));
    await ok(post(floor, `/pick-batches/${first.ID}/ship`));
    const second = await startedBatch(floor, twoBatches);
    await ok(post(floor, `/pick-batches/${second.ID}/lines/${second.Lines[0].PickBatchLineID}/pick`, { qty_picked: 2 }));
    await ok(post(floor, `/pick-batches/${second.ID}/complete`));
    const orderNumber = (await t.db.selectFrom('orders').select('order_number').where('id', '=', twoBatches).executeTakeFirstOrThrow()).order_number;
    const inProgress = await startedBatch(floor, await releasedOrder(floor, [{ item: await stockedItem(floor, 3), qty: 1 }]));
    const inProgressNumber = (await t.db.selectFrom('pick_batches').select('batch_number').where('id', '=', inProgress.ID).executeTakeFirstOrThrow()).batch_number;

    const before = { a: await parcelsOf(floor, a.id), b: await trackingOf(b.id), events: (await eventsOf(floor, 'shipment.tracking_updated')).length };
    const csv = ['batch_number,order_number,tracking_number,carrier',
      `${b.batchNumber},,NEW-B,ups`,
      `${a.batchNumber},,NEW-A,ups`,
      `PB999999,,X1,ups`,
      `,${orderNumber},X2,ups`,
      `${b.batchNumber},,NEW-B2,ups`,
      `${inProgressNumber},,X3,ups`,
      `,99999999,X4,ups`,
      `${b.batchNumber},${a.orderNumber},X5,ups`,
      `,,X6,ups`,
      `${b.batchNumber},,${'x'.repeat(121)},ups`,
      `${b.batchNumber},,X7,dhl`].join('\n');
    const refused = await upload(csv);
    expectError(refused, 422, 'invalid_request');
    const reasons = Object.fromEntries(refused.body.error.details.map((d: { row: number; reason: string }) => [d.row, d.reason]));
    assert.match(reasons[3], /would overwrite tracking OLD-1/);
    assert.match(reasons[4], /PB999999 not found/);
    assert.match(reasons[5], /ambiguous: order \d+ has 2 batches/);
    assert.match(reasons[6], /is on row 2 too/);
    assert.match(reasons[7], /is in_progress/);
    assert.match(reasons[8], /has no completed, packed or shipped batch/);
    assert.match(reasons[9], /is not a batch of order/);
    assert.match(reasons[10], /neither a batch_number nor an order_number/);
    assert.match(reasons[11], /1 to 120 characters/);
    assert.match(reasons[12], /carrier must be one of/);
    assert.equal(reasons[2], undefined, 'the good row is not named');
    assert.deepEqual(await parcelsOf(floor, a.id), before.a);
    assert.deepEqual(await trackingOf(b.id), before.b, 'the good row was not applied either');
    assert.equal((await eventsOf(floor, 'shipment.tracking_updated')).length, before.events);

    // Confirmed, the overwrite applies.
    const confirmed = await upload(`batch_number,tracking_number,carrier\n${a.batchNumber},NEW-A,ups\n`, '?confirm_overwrite=true');
    assert.equal(confirmed.status, 200, JSON.stringify(confirmed.body));
    assert.deepEqual(await parcelsOf(floor, a.id), [{ parcel_seq: 1, tracking_number: 'NEW-A', carrier: 'ups' }]);
  });

  test('a file without its columns, empty, unreadable or not CSV is refused; the route needs shipping.edit', async () => {
    const missing = await upload('batch_number,tracking\nPB1,1Z\n');
    expectError(missing, 422, 'invalid_request');
    assert.deepEqual(missing.body.error.details.missing_columns, ['tracking_number', 'carrier']);
    expectError(await upload('tracking_number,carrier\n1Z,ups\n'), 422, 'invalid_request');
    expectError(await upload(''), 400, 'bad_request');
    expectError(await upload('batch_number,tracking_number,carrier\n'), 422, 'invalid_request');
    expectError(await upload(Buffer.from([0xff, 0xfe, 0x00, 0x41])), 400, 'bad_request');
    expectError(await upload('batch_number,tracking_number,carrier\n"PB1,1Z,ups\n'), 400, 'bad_request');
    expectError(await upload('{"rows":[]}', '', t.adminKey, 'application/json'), 415, 'unsupported_media_type');
    expectError(await upload('batch_number,tracking_number,carrier\n', '?confirm_overwrite=maybe'), 400, 'bad_request');

    const office = await userWithKey(t, 'office');
    expectError(await upload('batch_number,tracking_number,carrier\n', '', office.key), 403, 'forbidden');
  });
});
