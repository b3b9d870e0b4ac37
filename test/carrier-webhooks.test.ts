// Inbound carrier webhooks: registered by the system admin (token and secret shown once, the secret sealed at rest),
// messages signed with Carrier-Signature (checked here against Stripe's implementation of the same scheme), drift,
// 410 for unknown or deleted tokens, the parcel added to its batch, and the same message twice changing nothing.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Stripe from 'stripe';
import { call, expectError, startApp, userWithKey, type TestApp } from './helpers.ts';
import { eventsOf, packedOneLine, parcelsOf, releasedOrder, setUpFloor, startedBatch, stockedItem, type Floor } from './picking-kit.ts';

let t: TestApp;
let floor: Floor;
let hook: { id: string; token: string; secret: string; url_path: string };
const stripe = new Stripe('sk_test_unused');

/** Signed by Stripe's own header generator: t=<unix>,v1=<HMAC-SHA256 of "<t>.<body>">. */
const sign = (body: string, secret = hook.secret, timestamp = Math.floor(Date.now() / 1000)) =>
  stripe.webhooks.generateTestHeaderString({ payload: body, secret, timestamp });

async function send(body: unknown, options: { signature?: string | null; token?: string; type?: string } = {}) {
  const raw = typeof body === 'string' ? body : JSON.stringify(body);
  const headers: Record<string, string> = { 'content-type': options.type ?? 'application/json' };
  const signature = options.signature === undefined ? sign(raw) : options.signature;
  if (signature !== null) headers['carrier-signature'] = signature;
  const response = await t.app.inject({ method: 'POST', url: `/webhooks/carrier/${options.token ?? hook.token}`, headers, payload: raw });
  return { status: response.statusCode, body: response.body ? JSON.parse(response.body) : null, headers: response.headers };
}


before(async () => {
  t = await startApp();
  floor = await setUpFloor(t);
  const created = await call(t.app, 'POST', '/api/v1/carrier-webhooks', { key: t.adminKey, body: { name: 'UPS feed', carrier: 'ups' } });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  hook = created.body.data;
});
after(() => t.close());

describe('registering carrier webhooks', () => {
  test('the token and secret are shown once; the secret is sealed at rest and the token kept as a hash; only the system admin manages them', async () => {
    assert.match(hook.token, /^cwh_/);
    assert.equal(hook.url_path, `/webhooks/carrier/${hook.token}`);
    const stored = await t.db.selectFrom('carrier_webhooks').selectAll().where('id', '=', hook.id).executeTakeFirstOrThrow();
    assert.ok(!stored.secret_sealed.includes(hook.secret) && stored.secret_sealed.startsWith('v1.'), 'the secret is not stored in clear');
    assert.notEqual(stored.token_hash, hook.token);
    const list = await call(t.app, 'GET', '/api/v1/carrier-webhooks', { key: t.adminKey });
    assert.equal(list.status, 200);
    const listed = list.body.data.find((row: { id: string }) => row.id === hook.id);
    assert.equal(listed.token, undefined);
    assert.equal(listed.secret, undefined);
    assert.ok(!JSON.stringify(list.body).includes(hook.secret) && !JSON.stringify(list.body).includes(hook.token));
    // Paged like every list, oldest first, counted from the table.
    const registered = Number((await t.db.selectFrom('carrier_webhooks').select((eb) => eb.fn.countAll().as('n')).where('deleted_at', 'is', null).executeTakeFirstOrThrow()).n);
    assert.deepEqual(list.body.meta, { page: 1, per_page: 50, total_count: registered, total_pages: 1 });
    const last = await call(t.app, 'GET', `/api/v1/carrier-webhooks?per_page=1&page=${registered}`, { key: t.adminKey });
    assert.deepEqual([last.body.data.map((row: { id: string }) => row.id), last.body.meta.total_pages], [[hook.id], registered]);

    const manager = await userWithKey(t, 'manager');
    expectError(await call(t.app, 'GET', '/api/v1/carrier-webhooks', { key: manager.key }), 403, 'forbidden');
    expectError(await call(t.app, 'POST', '/api/v1/carrier-webhooks', { key: manager.key, body: { name: 'x', carrier: 'ups' } }), 403, 'forbidden');
    expectError(await call(t.app, 'POST', '/api/v1/carrier-webhooks', { key: t.adminKey, body: { name: 'x', carrier: 'dhl' } }), 400, 'bad_request');
    expectError(await call(t.app, 'DELETE', '/api/v1/carrier-webhooks/00000000-0000-4000-8000-000000000000', { key: t.adminKey }), 404, 'not_found');
  });
});

describe('a carrier\'s messages', () => {
  test('a signed message adds the parcel to the batch (by batch or order number) and emits tracking_updated; the same event id again changes nothing', async () => {
    const batch = await packedOneLine(floor);
    const before = (await eventsOf(floor, 'shipment.tracking_updated')).length;
    const first = await send({ event_id: 'evt-1', tracking_number: '1ZCARRIER1', batch_number: batch.batchNumber.toLowerCase(), status: 'label created' });
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.deepEqual(first.body.data, { duplicate: false, pick_batch_id: batch.id, batch_number: batch.batchNumber, changed: true });
    assert.deepEqual(await parcelsOf(floor, batch.id), [{ parcel_seq: 1, tracking_number: '1ZCARRIER1', carrier: 'ups' }]);
    const tracking = await t.db.selectFrom('pick_batches').select('tracking_number').where('id', '=', batch.id).executeTakeFirstOrThrow();
    assert.equal(tracking.tracking_number, '1ZCARRIER1', 'the first box is the primary');
    assert.equal((await eventsOf(floor, 'shipment.tracking_updated')).length, before + 1);
    const history = await t.db.selectFrom('history').select('after').where('entity_id', '=', batch.id).where('action', '=', 'parcel_added').executeTakeFirstOrThrow();
    assert.equal((history.after as { carrier_event_id: string }).carrier_event_id, 'evt-1');

    // The carrier retries the same message: answered, nothing changes.
    const again = await send({ event_id: 'evt-1', tracking_number: '1ZCARRIER1', batch_number: batch.batchNumber });
    assert.equal(again.status, 200);
    assert.deepEqual(again.body.data, { duplicate: true, pick_batch_id: batch.id, batch_number: batch.batchNumber, changed: false });
    // A second box by order number; a label the batch already has changes nothing.
    assert.equal((await send({ event_id: 'evt-2', tracking_number: '1ZCARRIER2', order_number: batch.orderNumber })).body.data.changed, true);
    assert.equal((await send({ event_id: 'evt-3', tracking_number: '1ZCARRIER2', order_number: batch.orderNumber })).body.data.changed, false);
    assert.deepEqual((await parcelsOf(floor, batch.id)).map((p) => p.tracking_number), ['1ZCARRIER1', '1ZCARRIER2']);
    assert.equal((await eventsOf(floor, 'shipment.tracking_updated')).length, before + 2);
  });

  test('bad, missing, stale or future signatures are 401; unknown and deleted tokens 410; nothing is recorded', async () => {
    const batch = await packedOneLine(floor);
    const body = JSON.stringify({ event_id: 'evt-sig', tracking_number: '1ZSIG', batch_number: batch.batchNumber });
    const now = Math.floor(Date.now() / 1000);
    expectError(await send(body, { signature: null }), 401, 'unauthorized');
    expectError(await send(body, { signature: 'v1=abc' }), 401, 'unauthorized');
    expectError(await send(body, { signature: sign(body, 'cws_wrong_secret') }), 401, 'unauthorized');
    expectError(await send(body, { signature: sign(body.replace('1ZSIG', '1ZSIH')) }), 401, 'unauthorized');
    // 5 minutes and 5 seconds off: the service reads the clock later than `now` above, so a second boundary in between
    // made now + 301 exactly 300 seconds ahead of it (seen once on a slow machine).
    expectError(await send(body, { signature: sign(body, hook.secret, now - 305) }), 401, 'unauthorized');
    expectError(await send(body, { signature: sign(body, hook.secret, now + 305) }), 401, 'unauthorized');
    assert.deepEqual(await parcelsOf(floor, batch.id), []);
    assert.equal((await t.db.selectFrom('carrier_webhook_events').select('event_id').where('event_id', '=', 'evt-sig').execute()).length, 0);
    // Within the window either way it is accepted.
    assert.equal((await send(body, { signature: sign(body, hook.secret, now - 240) })).status, 200);

    expectError(await send(body, { token: 'cwh_unknown' }), 410, 'gone');
    const other = (await call(t.app, 'POST', '/api/v1/carrier-webhooks', { key: t.adminKey, body: { name: 'FedEx feed', carrier: 'fedex' } })).body.data;
    assert.equal((await call(t.app, 'DELETE', `/api/v1/carrier-webhooks/${other.id}`, { key: t.adminKey })).status, 204);
    expectError(await send(body, { token: other.token, signature: sign(body, other.secret) }), 410, 'gone');
    assert.ok(!(await call(t.app, 'GET', '/api/v1/carrier-webhooks', { key: t.adminKey })).body.data.some((row: { id: string }) => row.id === other.id));
  });

  test('malformed bodies are 400, unknown or unpicked batches 422, both changing nothing; a body over the limit is 413', async () => {
    expectError(await send('{"event_id":'), 400, 'bad_request');
    expectError(await send({ event_id: 'x', tracking_number: '' , batch_number: 'PB1' }), 400, 'bad_request');
    expectError(await send({ event_id: 'x', tracking_number: '1Z', batch_number: 'PB1', extra: 1 }), 400, 'bad_request');
    expectError(await send({ event_id: 'evt-none', tracking_number: '1Z' }), 422, 'invalid_request');
    expectError(await send({ event_id: 'evt-unknown', tracking_number: '1Z', batch_number: 'PB999999' }), 422, 'invalid_request');
    const started = await startedBatch(floor, await releasedOrder(floor, [{ item: await stockedItem(floor, 3), qty: 1 }]));
    const number = (await t.db.selectFrom('pick_batches').select('batch_number').where('id', '=', started.ID).executeTakeFirstOrThrow()).batch_number;
    expectError(await send({ event_id: 'evt-early', tracking_number: '1Z', batch_number: number }), 422, 'invalid_request');
    assert.equal((await t.db.selectFrom('carrier_webhook_events').select('event_id').where('event_id', 'in', ['evt-none', 'evt-unknown', 'evt-early']).execute()).length, 0,
      'a refused message is not remembered: the carrier may send it again once the batch exists');
    expectError(await send({ event_id: 'x', tracking_number: '1Z', batch_number: 'PB1' }, { type: 'text/plain' }), 415, 'unsupported_media_type');
    expectError(await send(JSON.stringify({ event_id: 'big', tracking_number: '1Z', batch_number: 'PB1', status: 'x'.repeat(70_000) })), 413, 'payload_too_large');
  });
});
