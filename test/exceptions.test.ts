// Pick exceptions and order blocks: the list and its filters, the three detail paths, review and
// await-supply-partner, partner scope, and what an open block stops (release, shipping) and what an open exception
// stops (new warehouse lines of its item).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { call, expectError, startApp, userWithKey, type TestApp } from './helpers.ts';
import { eventsOf, ok, post, releasedOrder, setUpFloor, startedBatch, stockedItem, type Floor } from './picking-kit.ts';

let t: TestApp;
let floor: Floor;
let orderId: string;
let item: string;
let wrongItem: string;
const ids: Record<'short' | 'mispick' | 'quality', string> = { short: '', mispick: '', quality: '' };

const get = (url: string, key = t.adminKey) => call(t.app, 'GET', `/api/v1${url}`, { key });

before(async () => {
  t = await startApp();
  floor = await setUpFloor(t);
  [item, wrongItem] = [await stockedItem(floor, 20), await stockedItem(floor, 20)];
  const other = await stockedItem(floor, 20);
  const third = await stockedItem(floor, 20);
  orderId = await releasedOrder(floor, [{ item, qty: 3 }, { item: other, qty: 1 }, { item: third, qty: 1 }]);
  const batch = await startedBatch(floor, orderId);
  const lineOf = (itemId: string) => `/pick-batches/${batch.ID}/lines/${batch.Lines.find((l: { ItemID: string }) => l.ItemID === itemId).PickBatchLineID}`;
  await ok(post(floor, `${lineOf(item)}/pick`, { qty_picked: 1 }));
  await ok(post(floor, `${lineOf(item)}/short`, { qty_short: 2, reason: 'two missing' }));
  await ok(post(floor, `${lineOf(other)}/mispick`, { actual_item_id: wrongItem, actual_qty: 1, reason: 'wrong bin' }));
  await ok(post(floor, `${lineOf(third)}/quality`, { reason: 'wet carton' }));
  const rows = await t.db.selectFrom('pick_exceptions').select(['id', 'kind']).where('order_id', '=', orderId).execute();
  for (const row of rows) ids[row.kind === 'short_pick' ? 'short' : row.kind] = row.id;
});
after(() => t.close());

describe('reading exceptions', () => {
  test('one row shape for all kinds; the other kinds\' fields are zero', async () => {
    const rows = await ok(get(`/exceptions?order=${orderId}`));
    assert.equal(rows.length, 3);
    const byKind = Object.fromEntries(rows.map((row: { kind: string }) => [row.kind, row]));
    assert.deepEqual(
      [byKind.short_pick.qty_short, byKind.short_pick.short_reason, byKind.short_pick.flag_reason, byKind.short_pick.actual_qty, byKind.short_pick.actual_item_id],
      [2, 'two missing', '', 0, null]);
    assert.deepEqual(
      [byKind.mispick.qty_short, byKind.mispick.short_reason, byKind.mispick.flag_reason, byKind.mispick.actual_qty, byKind.mispick.actual_item_id],
      [0, '', 'wrong bin', 1, wrongItem]);
    assert.deepEqual([byKind.quality.qty_short, byKind.quality.flag_reason, byKind.quality.actual_item_number_display], [0, 'wet carton', '']);
    assert.ok(rows.every((row: { status: string; awaiting_supply_partner: boolean; batch_number: string }) =>
      row.status === 'open' && row.awaiting_supply_partner === false && /^PB\d{6}$/.test(row.batch_number)));
    assert.deepEqual((await ok(get(`/exceptions?order=${orderId}&kind=mispick`))).map((r: { id: string }) => r.id), [ids.mispick]);
    assert.deepEqual((await ok(get(`/exceptions?item=${item}`))).map((r: { id: string }) => r.id), [ids.short]);
    // Newest first, page by page; every page, one past the last too, carries the total of the exceptions stored.
    const stored = await t.db.selectFrom('pick_exceptions').select(['id']).orderBy('created_at', 'desc').orderBy('id', 'desc').execute();
    const pages = await Promise.all([1, 2, 3, 4].map((n) => get(`/exceptions?per_page=1&page=${n}`)));
    assert.deepEqual(pages.map((p) => p.body.meta.total_count), [3, 3, 3, 3]);
    assert.deepEqual(pages.map((p) => p.body.data.map((r: { id: string }) => r.id)), [...stored.map((r) => [r.id]), []]);
    expectError(await get('/exceptions?kind=lost'), 400, 'bad_request');
    expectError(await get('/exceptions?awaiting_supply_partner=yes'), 400, 'bad_request');
  });

  test('each kind has its own detail path; another kind\'s id there is 404', async () => {
    const short = await ok(get(`/exceptions/${ids.short}`));
    assert.equal(short.kind, 'short_pick');
    assert.equal(short.block.status, 'open');
    assert.equal(short.block.exception, null, 'the summary is null on the detail (spec)');
    assert.equal((await ok(get(`/exceptions/mispicks/${ids.mispick}`))).kind, 'mispick');
    assert.equal((await ok(get(`/exceptions/quality/${ids.quality}`))).kind, 'quality');
    expectError(await get(`/exceptions/${ids.mispick}`), 404, 'not_found');
    expectError(await get(`/exceptions/quality/${ids.short}`), 404, 'not_found');
  });

  test('the order shows its open blocks with their exception summaries', async () => {
    const order = await ok(get(`/orders/${orderId}?include=blocks`));
    assert.equal(order.blocks.length, 3);
    const short = order.blocks.find((b: { kind: string }) => b.kind === 'short_pick');
    assert.deepEqual([short.exception.id, short.exception.qty_short, short.exception.short_reason, short.exception.status], [ids.short, 2, 'two missing', 'open']);
  });

  test('partner scope: a consignor reads its own partner\'s exceptions and may not review them; another partner\'s are 404', async () => {
    const own = await userWithKey(t, 'consignor', { manufacturerId: floor.partner });
    const other = await userWithKey(t, 'consignor', { manufacturerId: floor.otherPartner });
    assert.equal((await ok(get(`/exceptions?order=${orderId}`, own.key))).length, 3);
    assert.deepEqual(await ok(get(`/exceptions?order=${orderId}`, other.key)), []);
    expectError(await get(`/exceptions/${ids.short}`, other.key), 404, 'not_found');
    expectError(await post(floor, `/exceptions/${ids.short}/review`, { disposition: 'ok' }, own.key), 403, 'forbidden');
    const warehouse = await userWithKey(t, 'warehouse');
    expectError(await post(floor, `/exceptions/${ids.short}/review`, { disposition: 'ok' }, warehouse.key), 403, 'forbidden');
  });
});

describe('what open exceptions and blocks stop', () => {
  test('a new warehouse line of an item with an open exception needs acknowledge_exception (422 exception_blocked)', async () => {
    const entered = await call(t.app, 'POST', '/api/v1/orders', {
      key: t.adminKey, body: { manufacturer_id: floor.partner, customer_id: floor.customer, lines: [{ item_id: item, qty_ordered: 1 }] },
    });
    expectError(entered, 422, 'exception_blocked');
    const acknowledged = await call(t.app, 'POST', '/api/v1/orders', {
      key: t.adminKey, body: { manufacturer_id: floor.partner, customer_id: floor.customer, lines: [{ item_id: item, qty_ordered: 1, acknowledge_exception: true }] },
    });
    assert.equal(acknowledged.status, 201);
  });
});

describe('the office\'s actions', () => {
  test('await-supply-partner marks the open block; the awaiting filter finds it; the exception stays open', async () => {
    const marked = await ok(post(floor, `/exceptions/quality/${ids.quality}/await-supply-partner`, { note: 'asked ACME for a credit' }));
    assert.equal(marked.status, 'open');
    assert.equal(marked.awaiting_supply_partner, true);
    assert.equal(marked.block.awaiting_supply_partner_note, 'asked ACME for a credit');
    const block = await t.db.selectFrom('order_blocks').selectAll().where('quality_exception_id', '=', ids.quality).executeTakeFirstOrThrow();
    assert.ok(block.awaiting_supply_partner_at);
    assert.deepEqual((await ok(get(`/exceptions?order=${orderId}&awaiting_supply_partner=1`))).map((r: { id: string }) => r.id), [ids.quality]);
    assert.equal((await ok(get(`/exceptions?order=${orderId}&awaiting_supply_partner=0`))).length, 2);
    // Each page, one past the last too, carries the filter's whole total.
    const paged = await Promise.all([1, 2, 3].map((n) => get(`/exceptions?order=${orderId}&awaiting_supply_partner=0&per_page=1&page=${n}`)));
    assert.deepEqual(paged.map((p) => [p.body.data.length, p.body.meta.total_count]), [[1, 2], [1, 2], [0, 2]]);
    assert.notEqual(paged[0]!.body.data[0].id, paged[1]!.body.data[0].id);
    // Over every exception (the kept total less the ones waiting; its pages past the last too) and by status.
    const stored = (await t.db.selectFrom('pick_exceptions').select(['id', 'status']).execute());
    const others = stored.filter((row) => row.id !== ids.quality);
    const totals = await Promise.all(['', '&page=9', '&status=open', '&status=reviewed'].map((query) => get(`/exceptions?awaiting_supply_partner=0${query}`)));
    assert.deepEqual(totals.map((p) => p.body.meta.total_count),
      [others.length, others.length, others.filter((row) => row.status === 'open').length, others.filter((row) => row.status === 'reviewed').length]);
    assert.deepEqual(totals[0]!.body.data.map((r: { id: string }) => r.id).sort(), others.map((row) => row.id).sort());
    const waiting = await get('/exceptions?awaiting_supply_partner=1&status=open');
    assert.deepEqual([waiting.body.meta.total_count, waiting.body.data.map((r: { id: string }) => r.id)], [1, [ids.quality]]);
    // The note is optional, and so is the body: marking again without one keeps the exception open and marked.
    const again = await ok(post(floor, `/exceptions/quality/${ids.quality}/await-supply-partner`));
    assert.deepEqual([again.status, again.awaiting_supply_partner], ['open', true]);
  });

  test('review resolves the block with the disposition; a reviewed exception cannot be reviewed again', async () => {
    const reviewed = await ok(post(floor, `/exceptions/${ids.short}/review`, { disposition: 'backorder', note: 'more next week' }));
    assert.deepEqual([reviewed.status, reviewed.block.status, reviewed.block.resolution_disposition, reviewed.block.resolution_note], ['reviewed', 'resolved', 'backorder', 'more next week']);
    const stored = await t.db.selectFrom('pick_exceptions').select(['status', 'reviewed_at', 'reviewed_by']).where('id', '=', ids.short).executeTakeFirstOrThrow();
    assert.equal(stored.status, 'reviewed');
    assert.ok(stored.reviewed_at && stored.reviewed_by);
    const block = await t.db.selectFrom('order_blocks').select(['status', 'resolved_at']).where('short_pick_exception_id', '=', ids.short).executeTakeFirstOrThrow();
    assert.equal(block.status, 'resolved');
    assert.ok(block.resolved_at);
    expectError(await post(floor, `/exceptions/${ids.short}/review`, { disposition: 'again' }), 422, 'invalid_status');
    expectError(await post(floor, `/exceptions/${ids.short}/await-supply-partner`, { note: 'late' }), 422, 'invalid_status');
    assert.deepEqual((await ok(get(`/exceptions?order=${orderId}&status=reviewed`))).map((r: { id: string }) => r.id), [ids.short]);
    assert.equal((await ok(get(`/exceptions?order=${orderId}&status=open`))).length, 2);
    expectError(await post(floor, `/exceptions/${ids.short}/review`, { disposition: '' }), 400, 'bad_request');
    expectError(await post(floor, `/exceptions/mispicks/${ids.short}/review`, { disposition: 'x' }), 404, 'not_found');
    const events = (await eventsOf(floor, 'exception.reviewed')).filter((e) => (e.data as { exception_id: string }).exception_id === ids.short);
    assert.equal(events.length, 1);
    const history = await t.db.selectFrom('history').select('action').where('entity_id', '=', ids.short).orderBy('occurred_at').execute();
    assert.deepEqual(history.map((h) => h.action), ['opened', 'reviewed']);
    const order = await ok(get(`/orders/${orderId}?include=blocks`));
    assert.deepEqual(order.blocks.map((b: { kind: string }) => b.kind).sort(), ['mispick', 'quality'], 'only open blocks are listed');
  });
});
