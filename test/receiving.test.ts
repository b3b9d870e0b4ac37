// Receiving batches: create, list, delete, lines, QC, verify and reopen, permissions per operation.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { localDate } from '../src/domain/numbers.ts';
import { createItem, createLocation, createManufacturer, expectError, userWithKey, type TestApp } from './helpers.ts';
import { addLine, api, batchHistory, newBatch, startReceiving, verifiedBatch } from './receiving-kit.ts';

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

describe('batches', () => {
  test('create: draft, RB-YYYYMMDD-XXXXXX, today by default, created_by null and no joined keys on the answer; get has them', async () => {
    const answer = await api('POST', '/receiving', { manufacturer_id: partner, notes: ' dock 3 ' });
    assert.equal(answer.status, 201);
    const batch = answer.body.data.batch;
    assert.match(batch.batch_number, new RegExp(`^RB-${localDate().replaceAll('-', '')}-[A-Z0-9]{6}$`));
    assert.equal(batch.status, 'draft');
    assert.equal(batch.received_date, `${localDate()}T00:00:00.000Z`);
    assert.equal(batch.notes, 'dock 3');
    assert.equal(batch.created_by, null);
    assert.equal(batch.updated_by, null);
    assert.equal(batch.posted_date, null);
    for (const key of ['manufacturer_code', 'manufacturer_name', 'line_count', 'total_qty']) assert.equal(key in batch, false, key);
    const read = (await api('GET', `/receiving/${batch.id}`)).body.data;
    assert.equal(read.batch.created_by, adminId);
    assert.equal(read.batch.manufacturer_code, 'RCV');
    assert.equal(read.batch.manufacturer_name, 'RCV Inc.');
    assert.equal('line_count' in read.batch, false);
    assert.deepEqual(read.lines, []);
    assert.deepEqual(await batchHistory(batch.id), ['created']);
  });

  test('create refuses a bad body (400), an unknown partner (422), another partner for a scoped key (403), a key without receiving.create (403)', async () => {
    for (const body of [{}, { manufacturer_id: 'nope' }, { manufacturer_id: partner, received_date: '2026-13-01' }, { manufacturer_id: partner, colour: 'red' }]) {
      expectError(await api('POST', '/receiving', body), 400, 'bad_request');
    }
    expectError(await api('POST', '/receiving', { manufacturer_id: '00000000-0000-4000-8000-000000000000' }), 422, 'invalid_request');
    const consignor = await userWithKey(t, 'consignor', { manufacturerId: partner });
    expectError(await api('POST', '/receiving', { manufacturer_id: other }, consignor.key), 403, 'forbidden');
    assert.equal((await api('POST', '/receiving', { manufacturer_id: partner }, consignor.key)).status, 201);
    const office = await userWithKey(t, 'office');
    expectError(await api('POST', '/receiving', { manufacturer_id: partner }, office.key), 403, 'forbidden');
  });

  test('list: newest first, status repeatable, partner, from/to inclusive, line_count and total_qty; a scoped key sees its own only', async () => {
    const lister = await createManufacturer(t, 'RCVLIST');
    const thing = await createItem(t, lister, 'LST-1');
    const make = async (date: string) => {
      const id = (await api('POST', '/receiving', { manufacturer_id: lister, received_date: date })).body.data.batch.id;
      await api('POST', `/receiving/${id}/lines`, { item_id: thing, qty_received: 4 });
      await api('POST', `/receiving/${id}/lines`, { item_id: thing, qty_received: 6 });
      return id;
    };
    const jan = await make('2026-01-10');
    const feb = await make('2026-02-10');
    const mar = await make('2026-03-10');
    await api('POST', `/receiving/${feb}/verify`);
    const list = await api('GET', `/receiving?manufacturer=${lister}`);
    assert.deepEqual(list.body.data.map((b: { id: string }) => b.id), [mar, feb, jan]);
    assert.equal(list.body.data[0].line_count, 2);
    assert.equal(list.body.data[0].total_qty, 10);
    assert.equal(list.body.data[0].manufacturer_code, 'RCVLIST');
    assert.equal(list.body.meta.total_count, 3);
    const ids = async (query: string) => (await api('GET', `/receiving?manufacturer=${lister}&${query}`)).body.data.map((b: { id: string }) => b.id);
    assert.deepEqual(await ids('status=verified'), [feb]);
    assert.deepEqual(await ids('status=verified&status=draft'), [mar, feb, jan]);
    assert.deepEqual(await ids('from=2026-02-10&to=2026-03-10'), [mar, feb]);
    assert.deepEqual(await ids('to=2026-02-10'), [feb, jan]);
    assert.deepEqual(await ids('per_page=1&page=2'), [feb]);
    // The total, kept (partner and status) or counted (dates), on every page and past the last.
    for (const [query, expected] of [['', 3], ['status=verified', 1], ['status=draft&status=verified', 3], ['from=2026-02-01', 2]] as const) {
      const totals = await Promise.all([1, 2, 3, 4].map(async (n) => (await api('GET', `/receiving?manufacturer=${lister}&${query}&per_page=1&page=${n}`)).body.meta.total_count));
      assert.deepEqual(totals, [expected, expected, expected, expected], query);
    }
    for (const query of ['status=open', 'from=yesterday', 'page=0', 'per_page=x', 'manufacturer=1']) {
      expectError(await api('GET', `/receiving?${query}`), 400, 'bad_request');
    }
    const consignor = await userWithKey(t, 'consignor', { manufacturerId: partner });
    const scoped = await api('GET', `/receiving?manufacturer=${lister}&per_page=100`, undefined, consignor.key);
    assert.ok(scoped.body.data.length > 0 && scoped.body.data.every((b: { manufacturer_id: string }) => b.manufacturer_id === partner));
    const own = await t.db.selectFrom('receiving_batches').select((eb) => eb.fn.countAll<number>().as('n')).where('manufacturer_id', '=', partner).executeTakeFirstOrThrow();
    assert.equal(scoped.body.meta.total_count, Number(own.n), 'a scoped key\'s total is its own partner\'s');
    expectError(await api('GET', `/receiving/${jan}`, undefined, consignor.key), 404, 'not_found');
  });

  test('delete: a draft goes with its lines (204); any other status is 422 invalid_status; unknown 404, malformed 400', async () => {
    const thing = await createItem(t, partner, 'DEL-1');
    const draft = await newBatch();
    await addLine(draft, { item_id: thing, qty_received: 1 });
    assert.equal((await api('DELETE', `/receiving/${draft}`)).status, 204);
    assert.equal((await t.db.selectFrom('receiving_lines').select('id').where('batch_id', '=', draft).execute()).length, 0);
    expectError(await api('GET', `/receiving/${draft}`), 404, 'not_found');
    assert.deepEqual(await batchHistory(draft), ['created', 'line_added', 'deleted']);
    const verified = await newBatch();
    await addLine(verified, { item_id: thing, qty_received: 1 });
    await api('POST', `/receiving/${verified}/verify`);
    expectError(await api('DELETE', `/receiving/${verified}`), 422, 'invalid_status');
    expectError(await api('DELETE', '/receiving/00000000-0000-4000-8000-000000000000'), 404, 'not_found');
    expectError(await api('DELETE', '/receiving/nope'), 400, 'bad_request');
  });
});

describe('lines', () => {
  test('add: snapshots of number, description, average cost and free-text location; QC fields null, joined keys absent', async () => {
    const thing = await createItem(t, partner, 'LIN-1', { warehouse_location: 'OLD SHELF' });
    await t.db.updateTable('items').set({ average_cost: 3.25 }).where('id', '=', thing).execute();
    const batchId = await newBatch();
    const answer = await api('POST', `/receiving/${batchId}/lines`, {
      item_id: thing, qty_received: 12, reference_number: 'PO-77', reference_type: 'purchase_order', new_unit_cost: 4, new_location_id: binA,
    });
    assert.equal(answer.status, 201);
    const line = answer.body.data.line;
    assert.equal(line.item_number_display, 'LIN-1');
    assert.equal(line.item_description, 'Item LIN-1');
    assert.equal(line.old_unit_cost, 3.25);
    assert.equal(line.old_location, 'OLD SHELF');
    assert.equal(line.qty_expected, null);
    assert.equal(line.inspection_status, 'pending');
    for (const key of ['qty_passed', 'qty_failed', 'inspection_notes', 'inspected_by', 'inspected_at', 'item_qty_on_hand',
      'stock_order_line_id', 'new_price', 'old_price', 'created_by', 'updated_by']) assert.equal(line[key], null, key);
    assert.equal('location_code' in line, false);
    assert.equal('inspected_by_name' in line, false);
    const read = (await api('GET', `/receiving/${batchId}`)).body.data.lines[0];
    assert.equal(read.location_code, 'R-A-01');
    assert.equal(read.inspected_by_name, '');
    assert.equal(read.item_qty_on_hand, 0);
  });

  test('add refuses another partner\'s item (422 manufacturer_mismatch), unknown items and unusable locations (422), bad values (400)', async () => {
    const batchId = await newBatch();
    const foreign = await createItem(t, other, 'LIN-X');
    expectError(await api('POST', `/receiving/${batchId}/lines`, { item_id: foreign, qty_received: 1 }), 422, 'manufacturer_mismatch');
    expectError(await api('POST', `/receiving/${batchId}/lines`, { item_id: '00000000-0000-4000-8000-000000000000', qty_received: 1 }), 422, 'invalid_request');
    const thing = await createItem(t, partner, 'LIN-2');
    const retired = await createLocation(t, 'R-RETIRED');
    await api('POST', `/locations/${retired}/retire`);
    for (const location of [retired, quarantine, '00000000-0000-4000-8000-000000000000']) {
      expectError(await api('POST', `/receiving/${batchId}/lines`, { item_id: thing, qty_received: 1, new_location_id: location }), 422, 'invalid_request');
    }
    for (const body of [
      { item_id: thing, qty_received: 0 }, { item_id: thing, qty_received: 1.5 }, { item_id: thing, qty_received: '2' },
      { item_id: thing }, { item_id: thing, qty_received: 1, reference_type: 'gift' }, { item_id: thing, qty_received: 1, new_unit_cost: -1 },
    ]) expectError(await api('POST', `/receiving/${batchId}/lines`, body), 400, 'bad_request');
    assert.deepEqual((await api('GET', `/receiving/${batchId}`)).body.data.lines, []);
  });

  test('edit (omitted keep, "" and null clear), delete, and the location of all lines; each answers {batch, lines}', async () => {
    const one = await createItem(t, partner, 'LIN-3');
    const two = await createItem(t, partner, 'LIN-4');
    const batchId = await newBatch();
    const first = await addLine(batchId, { item_id: one, qty_received: 5, reference_number: 'PO-1', new_unit_cost: 2 });
    const second = await addLine(batchId, { item_id: two, qty_received: 7 });
    const edited = await api('PATCH', `/receiving/${batchId}/lines/${first}`, { qty_received: 6, reference_number: '' });
    assert.equal(edited.status, 200);
    assert.equal(edited.body.data.batch.id, batchId);
    const line = edited.body.data.lines.find((l: { id: string }) => l.id === first);
    assert.equal(line.qty_received, 6);
    assert.equal(line.reference_number, null);
    assert.equal(line.new_unit_cost, 2);
    assert.equal((await api('PATCH', `/receiving/${batchId}/lines/${first}`, { qty_received: 6, new_unit_cost: null })).body.data.lines[0].new_unit_cost, null);
    expectError(await api('PATCH', `/receiving/${batchId}/lines/${first}`, { reference_number: 'x' }), 400, 'bad_request');
    expectError(await api('PATCH', `/receiving/${batchId}/lines/${first}`, { qty_received: 1, reference_type: 'other' }), 400, 'bad_request');
    const located = await api('POST', `/receiving/${batchId}/location`, { location_id: binB });
    assert.deepEqual(located.body.data.lines.map((l: { location_code: string }) => l.location_code), ['R-B-01', 'R-B-01']);
    expectError(await api('POST', `/receiving/${batchId}/location`, { location_id: quarantine }), 422, 'invalid_request');
    assert.equal((await api('DELETE', `/receiving/${batchId}/lines/${second}`)).status, 204);
    expectError(await api('DELETE', `/receiving/${batchId}/lines/${second}`), 404, 'not_found');
    const elsewhere = await newBatch();
    expectError(await api('PATCH', `/receiving/${elsewhere}/lines/${first}`, { qty_received: 1 }), 404, 'not_found');
    assert.deepEqual(await batchHistory(batchId), ['created', 'line_added', 'line_added', 'line_updated', 'line_updated', 'location_set', 'line_deleted']);
  });

  test('lines change only on a draft batch (422 invalid_status)', async () => {
    const thing = await createItem(t, partner, 'LIN-5');
    const batchId = await newBatch();
    const line = await addLine(batchId, { item_id: thing, qty_received: 1 });
    await api('POST', `/receiving/${batchId}/verify`);
    expectError(await api('POST', `/receiving/${batchId}/lines`, { item_id: thing, qty_received: 1 }), 422, 'invalid_status');
    expectError(await api('PATCH', `/receiving/${batchId}/lines/${line}`, { qty_received: 2 }), 422, 'invalid_status');
    expectError(await api('DELETE', `/receiving/${batchId}/lines/${line}`), 422, 'invalid_status');
    expectError(await api('POST', `/receiving/${batchId}/location`, { location_id: binA }), 422, 'invalid_status');
  });
});

describe('QC, verify and reopen', () => {
  test('verify needs a line (422 batch_empty); QC needs a verified batch; counts must sum (400); passed, failed, partial', async () => {
    const thing = await createItem(t, partner, 'QC-1');
    const empty = await newBatch();
    expectError(await api('POST', `/receiving/${empty}/verify`), 422, 'batch_empty');
    const batchId = await newBatch();
    const lines = [];
    for (const qty of [10, 10, 10]) lines.push(await addLine(batchId, { item_id: thing, qty_received: qty }));
    expectError(await api('POST', `/receiving/${batchId}/lines/${lines[0]}/inspection`, { qty_passed: 10, qty_failed: 0 }), 422, 'invalid_status');
    const verified = await api('POST', `/receiving/${batchId}/verify`);
    assert.equal(verified.body.data.batch.status, 'verified');
    expectError(await api('POST', `/receiving/${batchId}/verify`), 422, 'invalid_status');
    expectError(await api('POST', `/receiving/${batchId}/lines/${lines[0]}/inspection`, { qty_passed: 6, qty_failed: 3 }), 400, 'bad_request');
    expectError(await api('POST', `/receiving/${batchId}/lines/${lines[0]}/inspection`, { qty_passed: -1, qty_failed: 11 }), 400, 'bad_request');
    const results = [];
    for (const [i, counts] of [[10, 0], [0, 10], [7, 3]].entries()) {
      const answer = await api('POST', `/receiving/${batchId}/lines/${lines[i]}/inspection`, { qty_passed: counts[0], qty_failed: counts[1], inspection_notes: 'dented' });
      results.push(answer.body.data.lines[i]);
    }
    assert.deepEqual(results.map((l) => l.inspection_status), ['passed', 'failed', 'partial']);
    assert.equal(results[2].qty_passed, 7);
    assert.equal(results[2].qty_failed, 3);
    assert.equal(results[2].inspection_notes, 'dented');
    assert.equal(results[2].inspected_by, adminId);
    assert.equal(results[2].inspected_by_name, 'admin');
    assert.ok(results[2].inspected_at);
  });

  test('mark passed toggles (a fully passed line goes back to pending); waive clears earlier counts; reopen clears everything', async () => {
    const thing = await createItem(t, partner, 'QC-2');
    const { batchId, lineIds: [line] } = await verifiedBatch([{ body: { item_id: thing, qty_received: 8 } }]);
    const passed = (await api('POST', `/receiving/${batchId}/lines/${line}/pass`)).body.data.lines[0];
    assert.deepEqual([passed.inspection_status, passed.qty_passed, passed.qty_failed], ['passed', 8, 0]);
    const reverted = (await api('POST', `/receiving/${batchId}/lines/${line}/pass`)).body.data.lines[0];
    assert.deepEqual([reverted.inspection_status, reverted.qty_passed, reverted.inspected_by, reverted.inspected_by_name], ['pending', null, null, '']);
    await api('POST', `/receiving/${batchId}/lines/${line}/inspection`, { qty_passed: 5, qty_failed: 3, inspection_notes: 'wet' });
    const waived = (await api('POST', `/receiving/${batchId}/lines/${line}/waive`)).body.data.lines[0];
    assert.deepEqual([waived.inspection_status, waived.qty_passed, waived.qty_failed, waived.inspection_notes], ['waived', null, null, null]);
    assert.equal(waived.inspected_by, adminId);
    expectError(await api('POST', `/receiving/${batchId}/lines/00000000-0000-4000-8000-000000000000/pass`), 404, 'not_found');
    const reopened = await api('POST', `/receiving/${batchId}/reopen`);
    assert.equal(reopened.body.data.batch.status, 'draft');
    const cleared = reopened.body.data.lines[0];
    assert.deepEqual([cleared.inspection_status, cleared.qty_passed, cleared.inspected_by, cleared.inspected_at], ['pending', null, null, null]);
    expectError(await api('POST', `/receiving/${batchId}/reopen`), 422, 'invalid_status');
    expectError(await api('POST', `/receiving/${batchId}/lines/${line}/waive`), 422, 'invalid_status');
    assert.deepEqual((await batchHistory(batchId)).slice(-5), ['line_passed', 'line_pass_reverted', 'inspection_recorded', 'line_waived', 'reopened']);
  });

  test('permissions per operation: warehouse verifies but does no QC; qc inspects but does not verify or post; office only reads', async () => {
    const thing = await createItem(t, partner, 'QC-3');
    const warehouse = await userWithKey(t, 'warehouse');
    const qc = await userWithKey(t, 'qc');
    const office = await userWithKey(t, 'office');
    const batchId = await newBatch();
    const line = await addLine(batchId, { item_id: thing, qty_received: 2, new_location_id: binA });
    expectError(await api('POST', `/receiving/${batchId}/verify`, undefined, qc.key), 403, 'forbidden');
    assert.equal((await api('POST', `/receiving/${batchId}/verify`, undefined, warehouse.key)).status, 200);
    expectError(await api('POST', `/receiving/${batchId}/lines/${line}/pass`, undefined, warehouse.key), 403, 'forbidden');
    assert.equal((await api('POST', `/receiving/${batchId}/lines/${line}/pass`, undefined, qc.key)).status, 200);
    expectError(await api('POST', `/receiving/${batchId}/post`, undefined, qc.key), 403, 'forbidden');
    expectError(await api('POST', `/receiving/${batchId}/reopen`, undefined, office.key), 403, 'forbidden');
    assert.equal((await api('GET', `/receiving/${batchId}`, undefined, office.key)).status, 200);
    assert.equal((await api('POST', `/receiving/${batchId}/post`, undefined, warehouse.key)).status, 200);
  });
});
