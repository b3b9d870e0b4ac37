// Picking under parallel requests on the real PostgreSQL: pickers racing on one line, two ships of one batch, batches
// started together for one order, and shipping while the order is cancelled.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { onPostgres, startApp, type TestApp } from './helpers.ts';
import { packedBatch, post, releasedOrder, setUpFloor, startedBatch, stockedItem, stockOf, type Floor } from './picking-kit.ts';

describe('picking under parallel requests', { skip: onPostgres ? false : 'needs TEST_DATABASE_URL (PGlite runs one transaction at a time)' }, () => {
  let t: TestApp;
  let floor: Floor;
  before(async () => {
    t = await startApp();
    floor = await setUpFloor(t);
  });
  after(() => t?.close());

  test('ten pickers picking the whole line at once: exactly one succeeds, the line holds QtyToPick', async () => {
    const item = await stockedItem(floor, 10);
    const batch = await startedBatch(floor, await releasedOrder(floor, [{ item, qty: 4 }]));
    const url = `/pick-batches/${batch.ID}/lines/${batch.Lines[0].PickBatchLineID}/pick`;
    const answers = await Promise.all(Array.from({ length: 10 }, () => post(floor, url, { qty_picked: 4 })));
    assert.deepEqual(answers.map((a) => a.status).sort(), [200, ...Array(9).fill(422)]);
    assert.ok(answers.filter((a) => a.status === 422).every((a) => ['invalid_status', 'invalid_request'].includes(a.body.error.code)));
    const [line] = await t.db.selectFrom('pick_batch_lines').select(['qty_picked', 'status']).where('pick_batch_id', '=', batch.ID).execute();
    assert.deepEqual(line, { qty_picked: 4, status: 'picked' });
  });

  test('eight pickers each picking one unit of a line of five: five succeed, never more than QtyToPick', async () => {
    const item = await stockedItem(floor, 10);
    const batch = await startedBatch(floor, await releasedOrder(floor, [{ item, qty: 5 }]));
    const url = `/pick-batches/${batch.ID}/lines/${batch.Lines[0].PickBatchLineID}/pick`;
    const answers = await Promise.all(Array.from({ length: 8 }, () => post(floor, url, { qty_picked: 1 })));
    assert.equal(answers.filter((a) => a.status === 200).length, 5);
    const [line] = await t.db.selectFrom('pick_batch_lines').select(['qty_picked', 'status']).where('pick_batch_id', '=', batch.ID).execute();
    assert.deepEqual(line, { qty_picked: 5, status: 'picked' });
  });

  test('two ships of one batch: exactly one ships, stock moves once', async () => {
    const item = await stockedItem(floor, 10);
    const orderId = await releasedOrder(floor, [{ item, qty: 3 }]);
    const packed = await packedBatch(floor, orderId);
    const answers = await Promise.all([post(floor, `/pick-batches/${packed.ID}/ship`), post(floor, `/pick-batches/${packed.ID}/ship`)]);
    assert.deepEqual(answers.map((a) => a.status).sort(), [200, 422]);
    assert.deepEqual(await stockOf(floor, item), { qty_on_hand: 7, qty_committed: 0, qty_available: 7 });
    const movements = await t.db.selectFrom('inventory_movements').select('quantity').where('reference_id', '=', packed.ID).execute();
    assert.deepEqual(movements.map((m) => m.quantity), [-3]);
  });

  test('batches started together for one order: one gets the lines, the others find nothing left', async () => {
    const item = await stockedItem(floor, 10);
    const orderId = await releasedOrder(floor, [{ item, qty: 2 }]);
    const answers = await Promise.all(Array.from({ length: 5 }, () => post(floor, '/pick-batches', { order_id: orderId })));
    assert.deepEqual(answers.map((a) => a.status).sort(), [201, 422, 422, 422, 422]);
    const lines = await t.db.selectFrom('pick_batch_lines as l').innerJoin('pick_batches as b', 'b.id', 'l.pick_batch_id')
      .select('l.qty_to_pick').where('b.order_id', '=', orderId).execute();
    assert.deepEqual(lines.map((l) => l.qty_to_pick), [2]);
  });

  test('shipping while the order is cancelled: one of them wins whole, and stock matches the winner', async () => {
    for (let round = 0; round < 4; round++) {
      const item = await stockedItem(floor, 10);
      const orderId = await releasedOrder(floor, [{ item, qty: 2 }]);
      const packed = await packedBatch(floor, orderId);
      const [shipped, cancelled] = await Promise.all([
        post(floor, `/pick-batches/${packed.ID}/ship`),
        post(floor, `/orders/${orderId}/cancel`),
      ]);
      assert.deepEqual([shipped.status, cancelled.status].sort(), [200, 422], JSON.stringify([shipped.body, cancelled.body]));
      const order = await t.db.selectFrom('orders').select('status').where('id', '=', orderId).executeTakeFirstOrThrow();
      const batch = await t.db.selectFrom('pick_batches').select('status').where('id', '=', packed.ID).executeTakeFirstOrThrow();
      if (shipped.status === 200) {
        assert.deepEqual([order.status, batch.status], ['shipped', 'shipped']);
        assert.deepEqual(await stockOf(floor, item), { qty_on_hand: 8, qty_committed: 0, qty_available: 8 });
      } else {
        assert.deepEqual([order.status, batch.status], ['cancelled', 'cancelled']);
        assert.deepEqual(await stockOf(floor, item), { qty_on_hand: 10, qty_committed: 0, qty_available: 10 });
      }
    }
  });
});
