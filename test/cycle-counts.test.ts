// Cycle counts: generate, start, count, approve (cycle_count_correction through the stock mover), complete, cancel.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { adjust, call, createItem, createLocation, createManufacturer, expectError, insertKey, onPostgres, startApp, userWithKey, type TestApp } from './helpers.ts';

let t: TestApp;
let partner: string;
let binA: string;
let binB: string;
let split: string;
let single: string;
before(async () => {
  t = await startApp();
  partner = await createManufacturer(t, 'CYC');
  binA = await createLocation(t, 'C-A-01');
  binB = await createLocation(t, 'C-B-01');
  // Before any stock exists, a sample has nothing to count.
  expectError(await call(t.app, 'POST', '/api/v1/cycle-counts', { key: t.adminKey, body: {} }), 422, 'invalid_request');
  split = await createItem(t, partner, 'CYC-1');
  await adjust(t, split, 10, binA);
  await adjust(t, split, 4, binB);
  single = await createItem(t, partner, 'CYC-2');
  await adjust(t, single, 6, binB);
  await createItem(t, partner, 'CYC-EMPTY');
});
after(() => t.close());

const api = (method: 'GET' | 'POST', path: string, body?: unknown, key = t.adminKey) =>
  call(t.app, method, `/api/v1${path}`, { key, ...(body !== undefined ? { body } : {}) });

const item = (id: string) => t.db.selectFrom('items').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const bin = (itemId: string, locationId: string) => t.db.selectFrom('item_locations').select('qty_on_hand')
  .where('item_id', '=', itemId).where('location_id', '=', locationId).executeTakeFirst().then((b) => b?.qty_on_hand ?? 0);

async function generated(numItems = 10) {
  const answer = await api('POST', '/cycle-counts', { num_items: numItems });
  assert.equal(answer.status, 201, JSON.stringify(answer.body));
  const batch = answer.body.data.batch;
  return { batch, lines: (await api('GET', `/cycle-counts/${batch.id}`)).body.data.lines as { id: string; item_id: string; location_id: string; system_qty: number }[] };
}

const lineOf = (lines: { id: string; item_id: string; location_id: string }[], itemId: string, locationId: string) =>
  lines.find((l) => l.item_id === itemId && l.location_id === locationId)!.id;

describe('generate and read', () => {
  test('a draft over items with stock, one line per available bin with system_qty; items without stock never sampled', async () => {
    const { batch, lines } = await generated();
    assert.match(batch.batch_number, /^CC-\d{8}-[A-Z0-9]{6}$/);
    assert.deepEqual([batch.status, batch.triggered_by, batch.assigned_to, batch.started_at, batch.line_count, batch.counted_count], ['draft', 'manual', null, null, 3, 0]);
    const shape = lines.map((l) => [l.item_id, l.location_id, l.system_qty]).sort();
    assert.deepEqual(shape, [[split, binA, 10], [split, binB, 4], [single, binB, 6]].sort());
    const full = (await api('GET', `/cycle-counts/${batch.id}`)).body.data.lines.find((l: { item_id: string }) => l.item_id === single);
    assert.deepEqual([full.item_number_display, full.item_description, full.location_code, full.status, full.counted_qty, full.variance], ['CYC-2', 'Item CYC-2', 'C-B-01', 'pending', null, null]);
    const one = await generated(1);
    assert.ok(one.lines.every((l) => l.item_id === one.lines[0]!.item_id));
    assert.equal(((await api('POST', '/cycle-counts')).status), 201, 'num_items defaults to 10');
    for (const body of [{ num_items: 0 }, { num_items: 'ten' }, { num_items: 501 }, { size: 3 }]) expectError(await api('POST', '/cycle-counts', body), 400, 'bad_request');
    // Leaving the body out is the default sample; a body that is sent must be an object, JSON null included.
    const before = (await t.db.selectFrom('cycle_count_batches').select('id').execute()).length;
    for (const payload of ['null', '[]', '7']) {
      const refused = await t.app.inject({ method: 'POST', url: '/api/v1/cycle-counts', payload, headers: { authorization: `Bearer ${t.adminKey}`, 'content-type': 'application/json' } });
      assert.equal(refused.statusCode, 400, `${payload}: ${refused.body}`);
      assert.equal(JSON.parse(refused.body).error.code, 'bad_request');
    }
    assert.equal((await t.db.selectFrom('cycle_count_batches').select('id').execute()).length, before, 'no batch from a refused body');
    expectError(await api('GET', '/cycle-counts/00000000-0000-4000-8000-000000000000'), 404, 'not_found');
  });

  test('list newest first, filtered by status', async () => {
    const older = (await generated()).batch.id;
    const newer = (await generated()).batch.id;
    await api('POST', `/cycle-counts/${newer}/start`);
    const all = (await api('GET', '/cycle-counts?per_page=100')).body.data.map((b: { id: string }) => b.id);
    assert.ok(all.indexOf(newer) < all.indexOf(older));
    const running = (await api('GET', '/cycle-counts?status=in_progress&per_page=100')).body;
    assert.ok(running.data.every((b: { status: string }) => b.status === 'in_progress') && running.data.some((b: { id: string }) => b.id === newer));
    expectError(await api('GET', '/cycle-counts?status=open'), 400, 'bad_request');

    // Paged: each page counts its own batches' lines, and every page (one past the last too) carries the total.
    const { rows: [stored] } = await sql<{ batches: number }>`select count(*)::int as batches from cycle_count_batches`.execute(t.db);
    const last = await api('GET', `/cycle-counts?per_page=1&page=${stored!.batches}`);
    const beyond = await api('GET', `/cycle-counts?per_page=1&page=${stored!.batches + 1}`);
    assert.deepEqual([last.body.meta.total_count, beyond.body.meta.total_count, beyond.body.data.length], [stored!.batches, stored!.batches, 0]);
    const { rows: [oldest] } = await sql<{ id: string; lines: number }>`select b.id, (select count(*)::int from cycle_count_lines l where l.batch_id = b.id) as lines
      from cycle_count_batches b order by b.created_at, b.id desc limit 1`.execute(t.db);
    assert.deepEqual([last.body.data[0].id, last.body.data[0].line_count], [oldest!.id, oldest!.lines]);
    assert.ok(oldest!.lines > 0);
  });

  test('a partner-scoped key is refused on every route (403) by the scope rule, whatever its scopes; warehouse counts but does not approve; office cannot count', async () => {
    const { batch, lines } = await generated();
    const consignor = await userWithKey(t, 'consignor', { manufacturerId: partner });
    // The consignor role holds no cycle_counts.* permission, so the API will not issue such a key: written directly.
    const scopedEverything = await insertKey(t, consignor.userId, ['cycle_counts.view', 'cycle_counts.count', 'cycle_counts.approve', 'inventory.view']);
    for (const key of [consignor.key, scopedEverything.key]) {
      for (const [method, path, body] of [
        ['GET', '/cycle-counts'], ['POST', '/cycle-counts', {}], ['GET', `/cycle-counts/${batch.id}`], ['POST', `/cycle-counts/${batch.id}/start`],
        ['POST', `/cycle-counts/${batch.id}/counts`, { line_id: lines[0]!.id, counted_qty: 1 }], ['POST', `/cycle-counts/${batch.id}/lines/${lines[0]!.id}/approve`],
        ['POST', `/cycle-counts/${batch.id}/complete`], ['POST', `/cycle-counts/${batch.id}/cancel`],
      ] as const) {
        const answer = await api(method, path, body, key);
        expectError(answer, 403, 'forbidden');
        // The scope rule's answer, not the missing permission's.
        assert.match(answer.body.error.message, /partner-scoped keys are refused/, `${method} ${path}`);
      }
    }
    assert.equal((await api('GET', `/cycle-counts/${batch.id}`)).body.data.batch.status, 'draft');
    const warehouse = await userWithKey(t, 'warehouse');
    assert.equal((await api('POST', `/cycle-counts/${batch.id}/start`, undefined, warehouse.key)).status, 200);
    assert.equal((await api('POST', `/cycle-counts/${batch.id}/counts`, { line_id: lines[0]!.id, counted_qty: 1 }, warehouse.key)).status, 204);
    expectError(await api('POST', `/cycle-counts/${batch.id}/lines/${lines[0]!.id}/approve`, undefined, warehouse.key), 403, 'forbidden');
    const office = await userWithKey(t, 'office');
    expectError(await api('POST', '/cycle-counts', {}, office.key), 403, 'forbidden');
    await api('POST', `/cycle-counts/${batch.id}/cancel`);
  });
});

describe('counting', () => {
  test('start, count, recount, approve (a correction with cycle_count_batch_id), complete; every refusal along the way', async () => {
    const { batch, lines } = await generated();
    const a = lineOf(lines, split, binA);
    const b = lineOf(lines, split, binB);
    const c = lineOf(lines, single, binB);
    expectError(await api('POST', `/cycle-counts/${batch.id}/counts`, { line_id: a, counted_qty: 8 }), 422, 'invalid_status');
    expectError(await api('POST', `/cycle-counts/${batch.id}/complete`), 422, 'invalid_status');
    const started = await api('POST', `/cycle-counts/${batch.id}/start`);
    assert.equal(started.status, 200);
    assert.equal(started.body.data.batch.status, 'in_progress');
    assert.ok(started.body.data.batch.started_at && started.body.data.batch.assigned_to);
    expectError(await api('POST', `/cycle-counts/${batch.id}/start`), 422, 'invalid_status');

    for (const body of [{ line_id: a, counted_qty: -1 }, { line_id: a }, { line_id: 'x', counted_qty: 1 }]) {
      expectError(await api('POST', `/cycle-counts/${batch.id}/counts`, body), 400, 'bad_request');
    }
    expectError(await api('POST', `/cycle-counts/${batch.id}/counts`, { line_id: '00000000-0000-4000-8000-000000000000', counted_qty: 1 }), 404, 'not_found');
    expectError(await api('POST', `/cycle-counts/${batch.id}/lines/${a}/approve`), 422, 'invalid_status');
    const counted = await api('POST', `/cycle-counts/${batch.id}/counts`, { line_id: a, counted_qty: 9 });
    assert.equal(counted.status, 204);
    assert.equal(counted.body, null);
    // Stock moved after generation: the count compares with the bin as it is when counted.
    await adjust(t, split, -2, binA);
    assert.equal((await api('POST', `/cycle-counts/${batch.id}/counts`, { line_id: a, counted_qty: 7 })).status, 204);
    await api('POST', `/cycle-counts/${batch.id}/counts`, { line_id: b, counted_qty: 4 });
    expectError(await api('POST', `/cycle-counts/${batch.id}/complete`), 422, 'invalid_status');
    await api('POST', `/cycle-counts/${batch.id}/counts`, { line_id: c, counted_qty: 7 });
    const read = (await api('GET', `/cycle-counts/${batch.id}`)).body.data;
    const lineA = read.lines.find((l: { id: string }) => l.id === a);
    assert.deepEqual([lineA.system_qty, lineA.counted_qty, lineA.variance, lineA.status], [8, 7, -1, 'counted']);
    assert.ok(lineA.counted_by && lineA.counted_at);
    assert.equal(read.batch.counted_count, 3);

    const before = (await item(split)).qty_on_hand;
    assert.equal((await api('POST', `/cycle-counts/${batch.id}/lines/${a}/approve`)).status, 204);
    assert.equal((await item(split)).qty_on_hand, before - 1);
    assert.equal(await bin(split, binA), 7);
    const [correction] = await t.db.selectFrom('inventory_movements').selectAll().where('cycle_count_batch_id', '=', batch.id).execute();
    assert.deepEqual([correction!.movement_type, correction!.quantity, correction!.item_id, correction!.location_id, correction!.reference_type, correction!.reference_id],
      ['cycle_count_correction', -1, split, binA, 'cycle_count', a]);
    const ledger = await t.db.selectFrom('inventory_movements').select(['quantity', 'balance_after']).where('item_id', '=', split).orderBy('seq').execute();
    let balance = 0;
    for (const row of ledger) assert.equal(row.balance_after, (balance += row.quantity));
    assert.equal(balance, (await item(split)).qty_on_hand);
    const adjustments = (await api('GET', `/inventory/adjustments?item=${split}`)).body.data;
    assert.equal(adjustments[0].cycle_count_batch_id, batch.id);

    assert.equal((await api('POST', `/cycle-counts/${batch.id}/lines/${b}/approve`)).status, 204, 'no variance: approved without a movement');
    expectError(await api('POST', `/cycle-counts/${batch.id}/lines/${b}/approve`), 422, 'invalid_status');
    expectError(await api('POST', `/cycle-counts/${batch.id}/counts`, { line_id: b, counted_qty: 5 }), 422, 'invalid_status');
    assert.equal((await t.db.selectFrom('inventory_movements').select('id').where('cycle_count_batch_id', '=', batch.id).execute()).length, 1);

    const completed = await api('POST', `/cycle-counts/${batch.id}/complete`);
    assert.equal(completed.status, 200);
    assert.equal(completed.body.data.batch.status, 'completed');
    assert.ok(completed.body.data.batch.completed_at);
    assert.equal(completed.body.data.lines.length, 3);
    assert.equal(await bin(single, binB), 6, 'a variance not approved is not applied');
    const events = await t.db.selectFrom('outbox_events').selectAll().where('kind', '=', 'cycle_count.completed').execute();
    const event = events.find((e) => (e.data as { batch_id: string }).batch_id === batch.id);
    assert.deepEqual([(event!.data as any).line_count, (event!.data as any).lines_with_variance, (event!.data as any).approved], [3, 2, 2]);
    expectError(await api('POST', `/cycle-counts/${batch.id}/lines/${c}/approve`), 422, 'invalid_status');
    expectError(await api('POST', `/cycle-counts/${batch.id}/cancel`), 422, 'invalid_status');
    const history = await t.db.selectFrom('history').select('action').where('entity_id', '=', batch.id).orderBy('occurred_at').execute();
    assert.deepEqual(history.map((h) => h.action), ['generated', 'started', 'counted', 'counted', 'counted', 'counted', 'approved', 'approved', 'completed']);
  });

  test('approving a shortage the bin no longer holds is 422 insufficient_stock; cancel keeps approved corrections', async () => {
    const { batch, lines } = await generated();
    const a = lineOf(lines, single, binB);
    await api('POST', `/cycle-counts/${batch.id}/start`);
    await api('POST', `/cycle-counts/${batch.id}/counts`, { line_id: a, counted_qty: 1 });
    await adjust(t, single, -5, binB);
    expectError(await api('POST', `/cycle-counts/${batch.id}/lines/${a}/approve`), 422, 'insufficient_stock');
    await adjust(t, single, 5, binB);
    assert.equal((await api('POST', `/cycle-counts/${batch.id}/lines/${a}/approve`)).status, 204);
    const cancelled = await api('POST', `/cycle-counts/${batch.id}/cancel`);
    assert.equal(cancelled.body.data.batch.status, 'cancelled');
    assert.equal(await bin(single, binB), 1);
    expectError(await api('POST', `/cycle-counts/${batch.id}/start`), 422, 'invalid_status');
    const draft = (await generated()).batch.id;
    assert.equal((await api('POST', `/cycle-counts/${draft}/cancel`)).body.data.batch.status, 'cancelled');
  });
});

describe('concurrency', { skip: onPostgres ? false : 'needs TEST_DATABASE_URL (PGlite runs one transaction at a time)' }, () => {
  test('one line approved four times at once: exactly one approval, one correction, the bin and the ledger exact', async () => {
    const { batch, lines } = await generated();
    const a = lineOf(lines, split, binA);
    await api('POST', `/cycle-counts/${batch.id}/start`);
    const [binBefore, onHandBefore] = [await bin(split, binA), (await item(split)).qty_on_hand];
    assert.equal((await api('POST', `/cycle-counts/${batch.id}/counts`, { line_id: a, counted_qty: binBefore - 2 })).status, 204);
    const answers = await Promise.all([0, 1, 2, 3].map(() => api('POST', `/cycle-counts/${batch.id}/lines/${a}/approve`)));
    assert.equal(answers.filter((x) => x.status === 204).length, 1, JSON.stringify(answers.map((x) => x.body?.error)));
    for (const answer of answers.filter((x) => x.status !== 204)) expectError(answer, 422, 'invalid_status');
    assert.equal(await bin(split, binA), binBefore - 2);
    assert.equal((await item(split)).qty_on_hand, onHandBefore - 2);
    const corrections = await t.db.selectFrom('inventory_movements').select('quantity').where('reference_id', '=', a).execute();
    assert.deepEqual(corrections.map((c) => c.quantity), [-2]);
    const ledger = await t.db.selectFrom('inventory_movements').select(['quantity', 'balance_after']).where('item_id', '=', split).orderBy('seq').execute();
    let balance = 0;
    for (const row of ledger) assert.equal(row.balance_after, (balance += row.quantity));
    assert.equal(balance, (await item(split)).qty_on_hand);
    await api('POST', `/cycle-counts/${batch.id}/cancel`);
  });
});
