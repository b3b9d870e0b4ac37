// The typed client (client/: openapi-typescript types, openapi-fetch calls) against the running service: its types are
// what the document says today (else: npm run client), and it drives a whole flow — partner, item, stock, customer,
// order, release, pick, pack, ship — with the subscriber's webhook received. The type check of this file (npm test
// runs tsc first) fails when a request here no longer matches the document; the calls fail when the document no
// longer matches the service.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { after, before, test } from 'node:test';
import { TYPES_FILE, typesOf } from '../client/generate.ts';
import { wmsClient } from '../client/index.ts';
import { startDeliveryWorker, type DeliveryWorker } from '../src/workers/webhook-delivery.ts';
import { waitFor } from './fault-kit.ts';
import { startApp, type TestApp } from './helpers.ts';

let t: TestApp;
let url: string;
let receiver: Server;
let worker: DeliveryWorker;
const received: { kind: string; body: { data: Record<string, unknown> } }[] = [];

before(async () => {
  process.env.WMS_ALLOW_PRIVATE_WEBHOOK_URLS = '1';
  t = await startApp();
  url = await t.app.listen({ host: '127.0.0.1', port: 0 });
  receiver = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk) => chunks.push(chunk));
    request.on('end', () => {
      received.push({ kind: String(request.headers['x-service-event-kind']), body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  worker = startDeliveryWorker(t.db, t.config, { warn: () => {} }, { timeoutMs: 1000 });
});
after(async () => {
  await worker?.stop(2000);
  receiver?.closeAllConnections();
  receiver?.close();
  await t?.close();
  delete process.env.WMS_ALLOW_PRIVATE_WEBHOOK_URLS;
});

/** The answer's data, or a failure that shows the service's error. */
function dataOf<T>(answer: { data?: T; error?: unknown; response: Response }, status: number): T {
  assert.equal(answer.response.status, status, JSON.stringify(answer.error));
  return answer.data!;
}

test('the committed client types are what the service\'s document produces (else: npm run client)', async () => {
  const document = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
  assert.ok(readFileSync(TYPES_FILE, 'utf8') === await typesOf(document), 'client/wms-api.d.ts is stale: run npm run client');
});

test('a whole flow through the typed client: partner to shipment, and the webhook of the shipment arrives', { timeout: 60_000 }, async () => {
  const wms = wmsClient(url, t.adminKey);
  const port = (receiver.address() as { port: number }).port;
  dataOf(await wms.POST('/api/v1/webhooks', { body: { url: `http://127.0.0.1:${port}/hooks`, event_kinds: ['order.shipped'] } }), 201);

  const partner = dataOf(await wms.POST('/api/v1/manufacturers', { body: { code: 'CLIENT', name: 'Client Tools' } }), 201);
  const item = dataOf(await wms.POST('/api/v1/items', {
    body: { manufacturer_id: partner.data.id, item_number_display: 'CL-100', description: 'Typed hinge', selling_uom: 'EA' },
  }), 201).data.item;
  // A list without its paging parameters: they have defaults, so the types let them out.
  assert.equal(dataOf(await wms.GET('/api/v1/manufacturers'), 200).data.length, 1);
  const bin = dataOf(await wms.POST('/api/v1/locations', { body: { location_code: 'C-01-01' } }), 201).data;
  dataOf(await wms.POST('/api/v1/inventory/adjustments', { body: { item_id: item.id, quantity: 10, reason: 'opening count', location_id: bin.id } }), 201);
  const customer = dataOf(await wms.POST('/api/v1/customers', {
    body: { account_number: 'CL-1', name: 'Typed Supply', address_line_1: '1 Main St', city: 'Springfield', state: 'IL', zip_code: '62701' },
  }), 201).data;

  const order = dataOf(await wms.POST('/api/v1/orders', {
    body: { manufacturer_id: partner.data.id, customer_id: customer.id, lines: [{ item_id: item.id, qty_ordered: 3, unit_price: 5 }] },
  }), 201).data.order;
  dataOf(await wms.POST('/api/v1/orders/{id}/release', { params: { path: { id: order.id } } }), 200);

  const started = dataOf(await wms.POST('/api/v1/pick-batches', { body: { order_id: order.id } }), 201).data;
  const batch = dataOf(await wms.GET('/api/v1/pick-batches/{id}', { params: { path: { id: started.ID } } }), 200).data;
  const path = (lineId: string) => ({ path: { id: batch.ID, lineId } });
  for (const line of batch.Lines ?? []) {
    dataOf(await wms.POST('/api/v1/pick-batches/{id}/lines/{lineId}/pick', { params: path(line.PickBatchLineID), body: { qty_picked: line.QtyToPick } }), 200);
  }
  dataOf(await wms.POST('/api/v1/pick-batches/{id}/complete', { params: { path: { id: batch.ID } } }), 200);
  for (const line of batch.Lines ?? []) dataOf(await wms.POST('/api/v1/pick-batches/{id}/lines/{lineId}/verify', { params: path(line.PickBatchLineID) }), 200);
  dataOf(await wms.POST('/api/v1/pick-batches/{id}/pack', { params: { path: { id: batch.ID } } }), 200);
  const shipped = dataOf(await wms.POST('/api/v1/pick-batches/{id}/ship', { params: { path: { id: batch.ID } }, body: { tracking_number: '1Z999', carrier: 'ups' } }), 200).data;
  assert.equal(shipped.Status, 'shipped');

  const after = dataOf(await wms.GET('/api/v1/orders/{id}', { params: { path: { id: order.id } } }), 200).data;
  assert.equal(after.order.status, 'shipped');
  const stock = await t.db.selectFrom('items').select(['qty_on_hand', 'qty_committed']).where('id', '=', item.id).executeTakeFirstOrThrow();
  assert.deepEqual(stock, { qty_on_hand: 7, qty_committed: 0 });

  await waitFor(() => received.length > 0, 10_000, 'the order.shipped webhook');
  assert.equal(received[0]!.kind, 'order.shipped');
  assert.equal(received[0]!.body.data.order_id, order.id);
});
