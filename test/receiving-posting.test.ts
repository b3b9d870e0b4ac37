// Posting and voiding receiving batches: the stored stock, quarantine, ledger, costs, history and events after each,
// a void returning stock exactly to where it was, its refusals, and parallel posts on PostgreSQL.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { adjust, createItem, createLocation, createManufacturer, expectError, onPostgres, startApp, userWithKey, type TestApp } from './helpers.ts';
import { api, assertLedgerChains, batchHistory, bins, eventsOf, item, kit, ledger, newBatch, verifiedBatch } from './receiving-kit.ts';

let t: TestApp;
let partner: string;
let other: string;
let binA: string;
let binB: string;
let quarantine: string;
let adminId: string;
before(async () => {
  t = await startApp();
  partner = await createManufacturer(t, 'RCV');
  other = await createManufacturer(t, 'RCVOTHER');
  Object.assign(kit, { t, partner });
  binA = await createLocation(t, 'R-A-01');
  binB = await createLocation(t, 'R-B-01');
  quarantine = (await t.db.selectFrom('locations').select('id').where('location_code', '=', 'QUARANTINE').executeTakeFirstOrThrow()).id;
  adminId = (await t.db.selectFrom('users').select('id').where('name', '=', 'admin').executeTakeFirstOrThrow()).id;
});
after(() => t.close());

describe('post and void', () => {
  test('post: passed and waived units on hand at the line\'s location, failed ones in quarantine; ledger, costs, dates, history, event', async () => {
    const costly = await createItem(t, partner, 'PST-1');
    await adjust(t, costly, 10, binB);
    await t.db.updateTable('items').set({ average_cost: 2 }).where('id', '=', costly).execute();
    const waived = await createItem(t, partner, 'PST-2');
    const { batchId, lineIds } = await verifiedBatch([
      { body: { item_id: costly, qty_received: 10, new_unit_cost: 5, new_location_id: binA }, inspect: { qty_passed: 6, qty_failed: 4 } },
      { body: { item_id: waived, qty_received: 3, new_location_id: binB }, inspect: 'waive' },
    ]);
    expectError(await api('POST', `/receiving/${batchId}/void`, { reason: 'x' }), 422, 'invalid_status');
    const posted = await api('POST', `/receiving/${batchId}/post`);
    assert.equal(posted.status, 200, JSON.stringify(posted.body));
    assert.equal(posted.body.data.batch.status, 'posted');
    assert.equal(posted.body.data.batch.posted_by, adminId);
    assert.ok(posted.body.data.batch.posted_date);
    assert.equal(posted.body.data.lines.find((l: { id: string }) => l.id === lineIds[0]).item_qty_on_hand, 16);

    const stored = await item(costly);
    assert.equal(stored.qty_on_hand, 16);
    assert.equal(stored.average_cost, 3.125, '(10 x 2 + 6 x 5) / 16');
    assert.equal(stored.last_cost, 5);
    assert.equal(new Date(stored.date_last_received!).toISOString(), '2026-03-02T00:00:00.000Z');
    assert.ok(stored.date_last_movement);
    const byPlace = Object.fromEntries((await bins(costly)).map((b) => [b.location_id, [b.inventory_status, b.qty_on_hand]]));
    assert.deepEqual(byPlace, { [binA]: ['available', 6], [binB]: ['available', 10], [quarantine]: ['quarantine', 4] });
    assert.equal((await item(waived)).qty_on_hand, 3);
    const receipts = (await ledger(costly)).filter((m) => m.movement_type === 'receipt');
    assert.equal(receipts.length, 1);
    assert.deepEqual([receipts[0]!.quantity, receipts[0]!.balance_after, receipts[0]!.reference_id, receipts[0]!.reference_type, receipts[0]!.location_id],
      [6, 16, batchId, 'receiving_batch', binA]);
    await assertLedgerChains(costly);
    await assertLedgerChains(waived);
    assert.equal((await batchHistory(batchId)).at(-1), 'posted');
    const itemHistory = await t.db.selectFrom('history').select('action').where('entity_id', '=', costly).execute();
    assert.ok(itemHistory.some((h) => h.action === 'receipt') && itemHistory.some((h) => h.action === 'quarantined'));
    const [event] = await eventsOf('receiving.posted', batchId);
    assert.equal(event!.manufacturer_id, partner);
    assert.deepEqual([(event!.data as any).qty_on_hand, (event!.data as any).qty_quarantined], [9, 4]);
    expectError(await api('POST', `/receiving/${batchId}/post`), 422, 'invalid_status');
    expectError(await api('POST', `/receiving/${batchId}/reopen`), 422, 'invalid_status');
  });

  test('post refuses a pending line (422 pending_qc) and a line with no location when the item has no primary bin (422), changing nothing', async () => {
    const thing = await createItem(t, partner, 'PST-3');
    const pending = await verifiedBatch([{ body: { item_id: thing, qty_received: 2 }, inspect: 'pass' }, { body: { item_id: thing, qty_received: 1 } }]);
    expectError(await api('POST', `/receiving/${pending.batchId}/post`), 422, 'pending_qc');
    const unplaced = await verifiedBatch([{ body: { item_id: thing, qty_received: 2 }, inspect: 'pass' }]);
    const refused = await api('POST', `/receiving/${unplaced.batchId}/post`);
    expectError(refused, 422, 'invalid_request');
    assert.match(refused.body.error.message, /PST-3/);
    for (const id of [pending.batchId, unplaced.batchId]) assert.equal((await api('GET', `/receiving/${id}`)).body.data.batch.status, 'verified');
    assert.equal((await item(thing)).qty_on_hand, 0);
    assert.equal((await ledger(thing)).length, 0);
    assert.equal((await eventsOf('receiving.posted', unplaced.batchId)).length, 0);
  });

  test('without a line location the item\'s primary bin takes the units; an all-failed line moves only quarantine and last_cost', async () => {
    const thing = await createItem(t, partner, 'PST-4');
    await adjust(t, thing, 1, binB);
    await adjust(t, thing, -1, binB);
    const { batchId } = await verifiedBatch([
      { body: { item_id: thing, qty_received: 4 }, inspect: 'pass' },
      { body: { item_id: thing, qty_received: 2, new_unit_cost: 9 }, inspect: { qty_passed: 0, qty_failed: 2 } },
    ]);
    assert.equal((await api('POST', `/receiving/${batchId}/post`)).status, 200);
    const stored = await item(thing);
    assert.deepEqual([stored.qty_on_hand, stored.average_cost, stored.last_cost], [4, null, 9]);
    const byPlace = Object.fromEntries((await bins(thing)).map((b) => [b.location_id, b.qty_on_hand]));
    assert.deepEqual(byPlace, { [binB]: 4, [quarantine]: 2 });
    await assertLedgerChains(thing);
  });

  test('void: stock, quarantine and on-hand return exactly to where they were; average cost stays; compensating movements and event', async () => {
    const thing = await createItem(t, partner, 'VOID-1');
    await adjust(t, thing, 5, binA);
    const before = { bins: await bins(thing), onHand: (await item(thing)).qty_on_hand };
    const { batchId } = await verifiedBatch([
      { body: { item_id: thing, qty_received: 9, new_unit_cost: 4, new_location_id: binB }, inspect: { qty_passed: 7, qty_failed: 2 } },
      { body: { item_id: thing, qty_received: 3 }, inspect: 'pass' },
    ]);
    await api('POST', `/receiving/${batchId}/post`);
    const costAfterPost = (await item(thing)).average_cost;
    assert.equal((await item(thing)).qty_on_hand, 15);
    expectError(await api('POST', `/receiving/${batchId}/void`, { reason: '  ' }), 400, 'bad_request');
    expectError(await api('POST', `/receiving/${batchId}/void`, {}), 400, 'bad_request');
    const voided = await api('POST', `/receiving/${batchId}/void`, { reason: 'wrong supplier' });
    assert.equal(voided.status, 200, JSON.stringify(voided.body));
    assert.equal(voided.body.data.batch.status, 'voided');
    assert.deepEqual(await bins(thing), before.bins);
    assert.equal((await item(thing)).qty_on_hand, before.onHand);
    assert.equal((await item(thing)).average_cost, costAfterPost);
    const receipts = (await ledger(thing)).filter((m) => m.movement_type === 'receipt').map((m) => m.quantity).sort((a, b) => a - b);
    assert.deepEqual(receipts, [-7, -3, 3, 7]);
    await assertLedgerChains(thing);
    assert.equal((await batchHistory(batchId)).at(-1), 'voided');
    const [event] = await eventsOf('receiving.voided', batchId);
    assert.equal((event!.data as { reason: string }).reason, 'wrong supplier');
    expectError(await api('POST', `/receiving/${batchId}/void`, { reason: 'again' }), 422, 'invalid_status');
    const qc = await userWithKey(t, 'qc');
    expectError(await api('POST', `/receiving/${batchId}/void`, { reason: 'x' }, qc.key), 403, 'forbidden');
  });

  test('void is refused (422 insufficient_stock, nothing changed) when the units left the bin or orders committed them', async () => {
    const thing = await createItem(t, partner, 'VOID-2');
    const { batchId } = await verifiedBatch([{ body: { item_id: thing, qty_received: 5, new_location_id: binA }, inspect: { qty_passed: 4, qty_failed: 1 } }]);
    await api('POST', `/receiving/${batchId}/post`);
    await adjust(t, thing, -2, binA);
    const snapshot = { bins: await bins(thing), ledger: (await ledger(thing)).length };
    const refused = await api('POST', `/receiving/${batchId}/void`, { reason: 'mistake' });
    expectError(refused, 422, 'insufficient_stock');
    assert.match(refused.body.error.message, /VOID-2/);
    assert.deepEqual(await bins(thing), snapshot.bins);
    assert.equal((await ledger(thing)).length, snapshot.ledger);
    assert.equal((await api('GET', `/receiving/${batchId}`)).body.data.batch.status, 'posted');

    await adjust(t, thing, 2, binA);
    await t.db.updateTable('items').set({ qty_committed: 1 }).where('id', '=', thing).execute();
    expectError(await api('POST', `/receiving/${batchId}/void`, { reason: 'mistake' }), 422, 'insufficient_stock');
    assert.equal((await item(thing)).qty_on_hand, 4);
    await t.db.updateTable('items').set({ qty_committed: 0 }).where('id', '=', thing).execute();
    await t.db.updateTable('item_locations').set({ qty_on_hand: 0 }).where('item_id', '=', thing).where('inventory_status', '=', 'quarantine').execute();
    expectError(await api('POST', `/receiving/${batchId}/void`, { reason: 'mistake' }), 422, 'insufficient_stock');
    assert.equal((await item(thing)).qty_on_hand, 4);
  });

  test('a consignor reads and builds its own batches but cannot post them', async () => {
    const consignor = await userWithKey(t, 'consignor', { manufacturerId: partner });
    const thing = await createItem(t, partner, 'CON-1');
    const batchId = await newBatch({}, consignor.key);
    assert.equal((await api('POST', `/receiving/${batchId}/lines`, { item_id: thing, qty_received: 1 }, consignor.key)).status, 201);
    expectError(await api('POST', `/receiving/${batchId}/verify`, undefined, consignor.key), 403, 'forbidden');
    const theirs = (await api('POST', '/receiving', { manufacturer_id: other })).body.data.batch.id;
    expectError(await api('POST', `/receiving/${theirs}/lines`, { item_id: thing, qty_received: 1 }, consignor.key), 404, 'not_found');
    expectError(await api('DELETE', `/receiving/${theirs}`, undefined, consignor.key), 404, 'not_found');
  });
});

describe('concurrency', { skip: onPostgres ? false : 'needs TEST_DATABASE_URL (PGlite runs one transaction at a time)' }, () => {
  test('the same batch posted twice at once: exactly one succeeds, the stock moves once', async () => {
    const thing = await createItem(t, partner, 'RACE-1');
    const { batchId } = await verifiedBatch([{ body: { item_id: thing, qty_received: 5, new_location_id: binA }, inspect: 'pass' }]);
    const answers = await Promise.all([0, 1, 2, 3].map(() => api('POST', `/receiving/${batchId}/post`)));
    assert.equal(answers.filter((a) => a.status === 200).length, 1);
    for (const answer of answers.filter((a) => a.status !== 200)) expectError(answer, 422, 'invalid_status');
    assert.equal((await item(thing)).qty_on_hand, 5);
    assert.equal((await ledger(thing)).length, 1);
    assert.equal((await eventsOf('receiving.posted', batchId)).length, 1);
  });

  test('batches over the same items posted at once end at the exact sum with a ledger that chains', async () => {
    const one = await createItem(t, partner, 'RACE-2');
    const two = await createItem(t, partner, 'RACE-3');
    const batches = [];
    for (let i = 0; i < 6; i++) {
      const lines = i % 2 ? [one, two] : [two, one];
      batches.push((await verifiedBatch(lines.map((id) => ({ body: { item_id: id, qty_received: i + 1, new_location_id: binB }, inspect: 'pass' as const })))).batchId);
    }
    const answers = await Promise.all(batches.map((id) => api('POST', `/receiving/${id}/post`)));
    assert.ok(answers.every((a) => a.status === 200), JSON.stringify(answers.map((a) => a.body.error)));
    assert.equal((await item(one)).qty_on_hand, 21);
    await assertLedgerChains(one);
    await assertLedgerChains(two);
  });
});
