// Posting and voiding receiving batches: the stored stock, quarantine, ledger, costs, history and events after each,
// a void returning stock exactly to where it was, its refusals, and parallel posts on PostgreSQL.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import {
  adjust, call, createItem, createLocation, createManufacturer, expectError, freshDatabase, onPostgres, startApp, userWithKey, type TestApp,
} from './helpers.ts';
import { api, assertLedgerChains, batchHistory, bins, eventsOf, item, ledger, newBatch, onHandLedger, startReceiving, verifiedBatch } from './receiving-kit.ts';

let t: TestApp;
let partner: string;
let other: string;
let binA: string;
let binB: string;
let quarantine: string;
let adminId: string;
before(async () => {
  ({ t, partner, other, binA, binB, quarantine, adminId } = await startReceiving());
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
    assert.deepEqual(receipts.map((m) => [m.inventory_status, m.quantity, m.balance_after, m.reference_id, m.reference_type, m.location_id]), [
      ['available', 6, 16, batchId, 'receiving_batch', binA],
      ['quarantine', 4, 16, batchId, 'receiving_batch', quarantine],
    ], 'the failed units are in the ledger too, on-hand unchanged by them');
    const listed = (await api('GET', `/inventory/movements?item=${costly}&movement_type=receipt`)).body.data;
    assert.deepEqual(listed.map((m: { inventory_status: string; quantity: number }) => [m.inventory_status, m.quantity]).sort(), [['available', 6], ['quarantine', 4]]);
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
    const receipts = (await ledger(thing)).filter((m) => m.movement_type === 'receipt').map((m) => [m.inventory_status, m.quantity]).sort();
    assert.deepEqual(receipts, [['available', -3], ['available', -7], ['available', 3], ['available', 7], ['quarantine', -2], ['quarantine', 2]]);
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

  test('a primary bin at a retired location takes no units: the post is refused as having no primary bin, not as a retired location', async () => {
    const thing = await createItem(t, partner, 'PST-5');
    const gone = await createLocation(t, 'R-GONE-01');
    await adjust(t, thing, 1, gone);
    await adjust(t, thing, -1, gone);
    assert.equal((await api('POST', `/locations/${gone}/retire`)).status, 200);
    const { batchId } = await verifiedBatch([{ body: { item_id: thing, qty_received: 2 }, inspect: 'pass' }]);
    const refused = await api('POST', `/receiving/${batchId}/post`);
    expectError(refused, 422, 'invalid_request');
    assert.match(refused.body.error.message, /^PST-5: no location on the line and no primary bin at an active location/);
    assert.equal((await item(thing)).qty_on_hand, 0);
    assert.equal((await api('GET', `/receiving/${batchId}`)).body.data.batch.status, 'verified');
  });

  test('past int4: the list totals a batch of 2.2 billion units exactly; a post that would take an item (or its quarantine bin) past 2,147,483,647 is 422 naming it, nothing changed', async () => {
    const big = await createItem(t, partner, 'BIG-1');
    const lines = Array.from({ length: 22 }, () => ({ item_id: big, qty_received: 100_000_000, new_location_id: binA }));
    const batches = [];
    for (const inspect of [{ qty_passed: 100_000_000, qty_failed: 0 }, { qty_passed: 0, qty_failed: 100_000_000 }]) {
      const imported = await api('POST', '/receiving/import', { manufacturer_id: partner, lines });
      assert.equal(imported.status, 201, JSON.stringify(imported.body));
      const batchId = imported.body.data.batch.id;
      assert.equal((await api('POST', `/receiving/${batchId}/verify`)).status, 200);
      for (const line of imported.body.data.lines) {
        assert.equal((await api('POST', `/receiving/${batchId}/lines/${line.id}/inspection`, inspect)).status, 200);
      }
      batches.push(batchId);
    }
    const listed = await api('GET', `/receiving?manufacturer=${partner}&per_page=100`);
    assert.equal(listed.status, 200, JSON.stringify(listed.body));
    for (const id of batches) {
      const row = listed.body.data.find((b: { id: string }) => b.id === id);
      assert.deepEqual([row.line_count, row.total_qty], [22, 2_200_000_000]);
    }
    const [onHand, quarantined] = [await api('POST', `/receiving/${batches[0]}/post`), await api('POST', `/receiving/${batches[1]}/post`)];
    expectError(onHand, 422, 'invalid_request');
    assert.match(onHand.body.error.message, /^BIG-1: on-hand would be 2200000000, more than the 2147483647 units/);
    assert.deepEqual(onHand.body.error.details, { item_id: big });
    expectError(quarantined, 422, 'invalid_request');
    assert.match(quarantined.body.error.message, /^BIG-1: the quarantine bin would be 2200000000/);
    for (const id of batches) assert.equal((await api('GET', `/receiving/${id}`)).body.data.batch.status, 'verified');
    assert.equal((await item(big)).qty_on_hand, 0);
    assert.deepEqual(await bins(big), []);
    assert.equal((await ledger(big)).length, 0);
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

describe('dates', () => {
  test('date_last_received is midnight UTC of received_date even when the database session runs in another time zone', async () => {
    const ny = await startApp({ database: await freshDatabase({ timeZone: 'America/New_York' }) });
    try {
      const zone = await sql<{ TimeZone: string }>`show timezone`.execute(ny.db);
      assert.equal(zone.rows[0]!.TimeZone, 'America/New_York');
      const send = (path: string, body?: unknown) => call(ny.app, 'POST', `/api/v1${path}`, { key: ny.adminKey, ...(body !== undefined ? { body } : {}) });
      const supplier = await createManufacturer(ny, 'TZ');
      const bin = await createLocation(ny, 'TZ-A-01');
      const thing = await createItem(ny, supplier, 'TZ-1');
      const batch = await send('/receiving', { manufacturer_id: supplier, received_date: '2026-03-02' });
      const batchId = batch.body.data.batch.id;
      const line = await send(`/receiving/${batchId}/lines`, { item_id: thing, qty_received: 1, new_location_id: bin });
      await send(`/receiving/${batchId}/verify`);
      await send(`/receiving/${batchId}/lines/${line.body.data.line.id}/pass`);
      assert.equal((await send(`/receiving/${batchId}/post`)).status, 200);
      const stored = await ny.db.selectFrom('items').select('date_last_received').where('id', '=', thing).executeTakeFirstOrThrow();
      assert.equal(new Date(stored.date_last_received!).toISOString(), '2026-03-02T00:00:00.000Z');
    } finally {
      await ny.close();
    }
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

  test('post and void of one batch at once: one post wins, a void counts only after it, and the stock matches the order they took', async () => {
    for (let round = 0; round < 4; round++) {
      const thing = await createItem(t, partner, `RACE-V${round}`);
      const { batchId } = await verifiedBatch([{ body: { item_id: thing, qty_received: 5, new_location_id: binA }, inspect: { qty_passed: 4, qty_failed: 1 } }]);
      const answers = await Promise.all([
        api('POST', `/receiving/${batchId}/void`, { reason: 'race' }), api('POST', `/receiving/${batchId}/post`),
        api('POST', `/receiving/${batchId}/void`, { reason: 'race' }), api('POST', `/receiving/${batchId}/post`),
      ]);
      const [voids, posts] = [[answers[0]!, answers[2]!], [answers[1]!, answers[3]!]];
      assert.equal(posts.filter((a) => a.status === 200).length, 1, JSON.stringify(answers.map((a) => a.body.error)));
      for (const answer of answers.filter((a) => a.status !== 200)) expectError(answer, 422, 'invalid_status');
      const voided = voids.filter((a) => a.status === 200).length;
      assert.ok(voided <= 1);
      const status = (await api('GET', `/receiving/${batchId}`)).body.data.batch.status;
      assert.equal(status, voided ? 'voided' : 'posted');
      assert.equal((await item(thing)).qty_on_hand, voided ? 0 : 4);
      const stock = (await bins(thing)).map((b) => [b.location_id, b.inventory_status, b.qty_on_hand]);
      assert.deepEqual(stock, voided ? [] : [[binA, 'available', 4], [quarantine, 'quarantine', 1]].sort((a, b) => (a[0]! < b[0]! ? -1 : 1)));
      assert.deepEqual((await onHandLedger(thing)).map((m) => m.quantity), voided ? [4, -4] : [4]);
      assert.deepEqual((await ledger(thing)).filter((m) => m.inventory_status === 'quarantine').map((m) => m.quantity), voided ? [1, -1] : [1]);
      await assertLedgerChains(thing);
    }
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
