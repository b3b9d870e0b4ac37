// The poll stream: each tenant (the warehouse, each supply partner) sees its events until it acknowledges them,
// oldest first; acknowledgements are per tenant; each kind's data has the documented shape.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { sql } from 'kysely';
import { EVENT_DATA } from '../src/modules/events/schemas.ts';
import { call, createLocation, expectError, startApp, userWithKey, type TestApp } from './helpers.ts';
import { ok, packedBatch, post, releasedOrder, setUpFloor, startedBatch, stockedItem, type Floor } from './picking-kit.ts';

let t: TestApp;
let floor: Floor;
let consignor: string;
let otherConsignor: string;
let office: string;

const poll = (query = '', key = t.adminKey) => call(t.app, 'GET', `/api/v1/shipments/events${query}`, { key });
const ack = (ids: string[], key = t.adminKey) => call(t.app, 'POST', '/api/v1/shipments/events/ack', { key, body: { ids } });
const inbox = (tenant: string) => t.db.selectFrom('event_inbox').select('event_seq').where('tenant', '=', tenant).orderBy('event_seq').execute();

before(async () => {
  t = await startApp();
  floor = await setUpFloor(t);
  consignor = (await userWithKey(t, 'consignor', { manufacturerId: floor.partner })).key;
  otherConsignor = (await userWithKey(t, 'consignor', { manufacturerId: floor.otherPartner })).key;
  office = (await userWithKey(t, 'office')).key;
});
after(() => t.close());

describe('the poll stream', () => {
  test('every kind of a floor\'s day arrives oldest first, each with its kind\'s data shape, and is written with its change', async () => {
    // Stock, an order through pick, pack and ship with tracking, a short with its review, a relocation, an order
    // cancelled, one billed and closed.
    const item = await stockedItem(floor, 30);
    const shortItem = await stockedItem(floor, 30);
    const orderId = await releasedOrder(floor, [{ item, qty: 2 }], { priority: 'rush' });
    const packed = await packedBatch(floor, orderId);
    await ok(post(floor, `/pick-batches/${packed.ID}/ship`, { tracking_number: '1ZEVENTS', carrier: 'ups' }));
    await ok(post(floor, `/orders/${orderId}/bill`));
    await ok(post(floor, `/orders/${orderId}/close`));
    const shortOrder = await releasedOrder(floor, [{ item: shortItem, qty: 2 }]);
    const batch = await startedBatch(floor, shortOrder);
    await ok(post(floor, `/pick-batches/${batch.ID}/lines/${batch.Lines[0].PickBatchLineID}/short`, { qty_short: 2, reason: 'gone' }));
    const exception = await t.db.selectFrom('pick_exceptions').select('id').where('order_id', '=', shortOrder).executeTakeFirstOrThrow();
    await ok(post(floor, `/exceptions/${exception.id}/review`, { disposition: 'recount', note: 'found none' }));
    await ok(post(floor, `/orders/${shortOrder}/cancel`));
    await createLocation(t, 'EV-TO');
    await ok(post(floor, `/locations/${floor.bin}/relocate`, { item_id: item, qty: 1, to_location_code: 'EV-TO' }));

    const seen = [];
    for (let page = 1; ; page++) {
      const answer = await poll(`?per_page=100&page=${page}`);
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      seen.push(...answer.body.data);
      if (page >= answer.body.meta.total_pages) break;
    }
    const stored = await t.db.selectFrom('outbox_events').select(['id', 'kind']).orderBy('seq').execute();
    assert.deepEqual(seen.map((event) => event.id), stored.map((event) => event.id), 'the warehouse sees every event, oldest first');
    const kinds = new Set(seen.map((event) => event.kind));
    for (const kind of ['order.created', 'order.released', 'order.priority_changed', 'order.shipped', 'order.billed', 'order.closed', 'order.cancelled',
      'pick_batch.started', 'pick_batch.packed', 'pick_batch.shipped', 'shipment.tracking_updated', 'exception.opened', 'exception.reviewed',
      'inventory.adjusted', 'inventory.relocated']) assert.ok(kinds.has(kind), `${kind} was emitted`);

    const ajv = new Ajv({ strict: false });
    (addFormatsModule as unknown as (a: Ajv) => Ajv)(ajv);
    for (const event of seen) {
      const validate = ajv.compile(EVENT_DATA[event.kind as keyof typeof EVENT_DATA]);
      assert.ok(validate(event.data), `${event.kind}: ${ajv.errorsText(validate.errors)} in ${JSON.stringify(event.data)}`);
    }
    const shipped = seen.find((event) => event.kind === 'pick_batch.shipped');
    assert.deepEqual([shipped.data.tracking_number, shipped.data.carrier, shipped.manufacturer_id], ['1ZEVENTS', 'ups', floor.partner]);
  });

  test('a partner\'s key sees its partner\'s events only; the kind filter; a partner\'s ack leaves the warehouse\'s stream as it was', async () => {
    const otherItem = await stockedItem(floor, 5, floor.otherPartner);
    const own = await poll('', consignor);
    assert.equal(own.status, 200);
    assert.ok(own.body.data.length > 0);
    assert.ok(own.body.data.every((event: { manufacturer_id: string }) => event.manufacturer_id === floor.partner));
    const others = (await poll('?kind=inventory.adjusted', otherConsignor)).body.data;
    assert.deepEqual(others.map((event: { data: { item_id: string } }) => event.data.item_id), [otherItem]);

    const adjusted = (await poll('?kind=inventory.adjusted', consignor)).body;
    assert.ok(adjusted.data.every((event: { kind: string }) => event.kind === 'inventory.adjusted'));
    assert.equal(adjusted.meta.total_count, adjusted.data.length);
    const warehouseBefore = await inbox('warehouse');
    assert.equal((await ack(adjusted.data.map((event: { id: string }) => event.id), consignor)).status, 204);
    assert.equal((await poll('?kind=inventory.adjusted', consignor)).body.meta.total_count, 0, 'acknowledged events leave the stream');
    assert.deepEqual(await inbox('warehouse'), warehouseBefore, 'the warehouse still has them');
    // Acknowledging again changes nothing and is no error.
    assert.equal((await ack(adjusted.data.map((event: { id: string }) => event.id), consignor)).status, 204);
  });

  test('ids that name no event of the stream are 422 with the ids, and nothing is acknowledged', async () => {
    const mine = (await poll('?per_page=2', consignor)).body.data.map((event: { id: string }) => event.id);
    const theirs = (await poll('?per_page=1', otherConsignor)).body.data[0].id;
    const before = await inbox(floor.partner);
    const refused = await ack([...mine, theirs, '00000000-0000-4000-8000-000000000000'], consignor);
    expectError(refused, 422, 'invalid_request');
    assert.deepEqual(refused.body.error.details.ids.sort(), [theirs, '00000000-0000-4000-8000-000000000000'].sort());
    assert.deepEqual(await inbox(floor.partner), before);
    // The warehouse may acknowledge any event; its ack leaves the partner's stream as it was.
    assert.equal((await ack([theirs])).status, 204);
    assert.equal((await poll('?per_page=1', otherConsignor)).body.data[0].id, theirs);
  });

  test('totals are the streams\' kept counts: exact through parallel writes and acknowledgements, per kind, and past the last page', async () => {
    // Every stream and kind: the counts kept in list_counts (migration 0026) against a count of the inbox itself.
    const kept = async () => (await sql<{ stream: string; kind: string; n: number }>`
      select manufacturer_id::text as stream, status as kind, sum(n)::int as n from list_counts where list = 'events'
      group by 1, 2 having sum(n) <> 0 order by 1, 2`.execute(t.db)).rows;
    const counted = async () => (await sql<{ stream: string; kind: string; n: number }>`
      select event_stream_key(tenant)::text as stream, kind, count(*)::int as n from event_inbox group by 1, 2 order by 1, 2`.execute(t.db)).rows;
    const ids = async (key: string) => (await poll('?per_page=100', key)).body.data.map((event: { id: string }) => event.id) as string[];

    await Promise.all(Array.from({ length: 8 }, (_, i) => stockedItem(floor, 3 + i, i % 2 ? floor.partner : floor.otherPartner)));
    const partnerIds = await ids(consignor);
    const warehouseIds = await ids(t.adminKey);
    // Acknowledgements at once: disjoint ones, the same ids twice, and writes beside them.
    await Promise.all([
      ack(partnerIds.slice(0, 3), consignor), ack(partnerIds.slice(0, 3), consignor), ack(partnerIds.slice(3, 6), consignor),
      ack(warehouseIds.slice(0, 5)), ack(warehouseIds.slice(2, 7)),
      stockedItem(floor, 4), stockedItem(floor, 4, floor.otherPartner),
    ]);
    assert.deepEqual(await kept(), await counted());

    for (const [key, tenant] of [[t.adminKey, 'warehouse'], [consignor, floor.partner], [otherConsignor, floor.otherPartner]] as const) {
      const all = await t.db.selectFrom('event_inbox').select(['kind']).where('tenant', '=', tenant).execute();
      assert.equal((await poll('?per_page=1', key)).body.meta.total_count, all.length, tenant);
      const adjusted = all.filter((row) => row.kind === 'inventory.adjusted').length;
      assert.equal((await poll('?per_page=1&kind=inventory.adjusted', key)).body.meta.total_count, adjusted, `${tenant}, one kind`);
      const past = (await poll('?per_page=1&page=100000', key)).body;
      assert.deepEqual([past.data, past.meta.total_count], [[], all.length], `${tenant}, past the last page`);
    }
  });

  test('bad input is 400; the stream needs webhooks.manage', async () => {
    expectError(await poll('?kind=order.exploded'), 400, 'bad_request');
    expectError(await poll('?per_page=0'), 400, 'bad_request');
    expectError(await ack([]), 400, 'bad_request');
    expectError(await ack(['not-a-uuid']), 400, 'bad_request');
    expectError(await call(t.app, 'POST', '/api/v1/shipments/events/ack', { key: t.adminKey, body: { ids: Array.from({ length: 1001 }, () => '00000000-0000-4000-8000-000000000000') } }), 400, 'bad_request');
    expectError(await call(t.app, 'POST', '/api/v1/shipments/events/ack', { key: t.adminKey, body: null }), 400, 'bad_request');
    expectError(await poll('', office), 403, 'forbidden');
    expectError(await ack(['00000000-0000-4000-8000-000000000000'], office), 403, 'forbidden');
  });
});
