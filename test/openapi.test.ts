// /openapi.json is a valid OpenAPI 3.0.3 document of every route with its schemas; /docs renders it.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { call, startApp, type TestApp } from './helpers.ts';

// The CLI the README and CI use, run with this Node (its bin is a script).
const REDOCLY = createRequire(import.meta.url).resolve('@redocly/cli/bin/cli.js');

let t: TestApp;
let doc: any;
before(async () => {
  t = await startApp();
  doc = (await call(t.app, 'GET', '/openapi.json')).body;
});
after(() => t.close());

test('is a valid OpenAPI 3.0.3 document, version 1.0.0-dev', async () => {
  assert.equal(doc.openapi, '3.0.3');
  assert.equal(doc.info.version, '1.0.0-dev');
  const result = await new Validator().validate(doc);
  assert.equal(result.valid, true, JSON.stringify(result.errors, null, 1));
});

test('documents every route the app serves, each with responses, and a body schema on every write', () => {
  const expected = [
    'get /api/v1/me', 'get /api/v1/account/security', 'post /api/v1/account/mfa/enroll', 'post /api/v1/account/mfa/confirm',
    'post /api/v1/account/mfa/recovery-codes', 'post /api/v1/account/mfa/disable', 'get /api/v1/account/trusted-devices',
    'post /api/v1/account/trusted-devices', 'delete /api/v1/account/trusted-devices/{id}',
    'get /api/v1/admin/users', 'post /api/v1/admin/users', 'get /api/v1/admin/users/{id}',
    'patch /api/v1/admin/users/{id}', 'post /api/v1/admin/users/{id}/deactivate', 'post /api/v1/admin/users/{id}/reactivate',
    'post /api/v1/admin/users/{id}/invite', 'get /api/v1/admin/roles', 'post /invites/{token}/accept',
    'post /api/v1/api-keys', 'get /api/v1/api-keys', 'delete /api/v1/api-keys/{id}',
    'get /api/v1/manufacturers', 'post /api/v1/manufacturers', 'get /api/v1/manufacturers/{id}', 'patch /api/v1/manufacturers/{id}',
    'get /api/v1/warehouses', 'post /api/v1/warehouses', 'get /api/v1/ship-via', 'post /api/v1/ship-via',
    'get /api/v1/items', 'post /api/v1/items', 'get /api/v1/items/search', 'get /api/v1/items/{id}', 'patch /api/v1/items/{id}',
    'post /api/v1/items/{id}/discontinue', 'post /api/v1/items/{id}/reactivate', 'get /api/v1/items/{id}/locations',
    'get /api/v1/items/{id}/aliases', 'post /api/v1/items/{id}/aliases', 'delete /api/v1/items/{id}/aliases/{aliasId}',
    'post /api/v1/inventory/adjustments', 'get /api/v1/inventory/adjustments', 'get /api/v1/inventory/movements',
    'get /api/v1/locations', 'post /api/v1/locations', 'get /api/v1/locations/{id}', 'patch /api/v1/locations/{id}',
    'post /api/v1/locations/{id}/retire', 'post /api/v1/locations/{id}/reactivate', 'get /api/v1/locations/{id}/stock',
    'post /api/v1/locations/{id}/relocate', 'post /api/v1/locations/{id}/move-all',
    'get /api/v1/customers', 'post /api/v1/customers', 'get /api/v1/customers/{id}', 'patch /api/v1/customers/{id}',
    'get /api/v1/customers/{id}/drop-ship-locations', 'post /api/v1/customers/{id}/drop-ship-locations',
    'patch /api/v1/customers/{id}/drop-ship-locations/{locationId}', 'post /api/v1/customers/{id}/drop-ship-locations/{locationId}/hide',
    'get /api/v1/customers/{id}/third-party-payers', 'post /api/v1/customers/{id}/third-party-payers',
    'patch /api/v1/customers/{id}/third-party-payers/{payerId}', 'post /api/v1/customers/{id}/third-party-payers/{payerId}/hide',
    'get /api/v1/contacts/{entityType}/{entityID}', 'post /api/v1/contacts/{entityType}/{entityID}',
    'get /api/v1/contacts/{id}', 'patch /api/v1/contacts/{id}', 'post /api/v1/contacts/{id}/deactivate',
    'put /api/v1/contacts/{id}/associations/{entityType}/{entityID}', 'delete /api/v1/contacts/{id}/associations/{entityType}/{entityID}',
    'get /api/v1/orders', 'post /api/v1/orders', 'get /api/v1/orders/{id}', 'patch /api/v1/orders/{id}',
    'post /api/v1/orders/{id}/release', 'post /api/v1/orders/{id}/cancel', 'post /api/v1/orders/{id}/bill', 'post /api/v1/orders/{id}/close',
    'post /api/v1/orders/{id}/priority', 'put /api/v1/orders/{id}/ltl-freight', 'post /api/v1/orders/{id}/lines',
    'delete /api/v1/orders/{id}/lines/{lineId}', 'post /api/v1/orders/{id}/direct-ship/notify',
    'post /api/v1/orders/{id}/direct-ship/notify-out-of-band', 'post /api/v1/orders/{id}/direct-ship/ship',
    'get /api/v1/orders/{orderID}/pick-batches',
    'get /api/v1/receiving', 'post /api/v1/receiving', 'post /api/v1/receiving/import', 'post /api/v1/receiving/import-file',
    'get /api/v1/receiving/import-profiles/{manufacturerId}', 'put /api/v1/receiving/import-profiles/{manufacturerId}',
    'delete /api/v1/receiving/import-profiles/{manufacturerId}', 'get /api/v1/receiving/{id}', 'delete /api/v1/receiving/{id}',
    'post /api/v1/receiving/{id}/lines', 'patch /api/v1/receiving/{id}/lines/{lineId}', 'delete /api/v1/receiving/{id}/lines/{lineId}',
    'post /api/v1/receiving/{id}/location', 'post /api/v1/receiving/{id}/lines/{lineId}/inspection',
    'post /api/v1/receiving/{id}/lines/{lineId}/pass', 'post /api/v1/receiving/{id}/lines/{lineId}/waive',
    'post /api/v1/receiving/{id}/verify', 'post /api/v1/receiving/{id}/reopen', 'post /api/v1/receiving/{id}/post',
    'post /api/v1/receiving/{id}/void',
    'get /api/v1/cycle-counts', 'post /api/v1/cycle-counts', 'get /api/v1/cycle-counts/{id}', 'post /api/v1/cycle-counts/{id}/start',
    'post /api/v1/cycle-counts/{id}/counts', 'post /api/v1/cycle-counts/{id}/lines/{lineId}/approve',
    'post /api/v1/cycle-counts/{id}/complete', 'post /api/v1/cycle-counts/{id}/cancel',
    'post /api/v1/documents', 'get /api/v1/documents/{id}', 'get /api/v1/documents/{id}/download',
    'post /api/v1/pick-batches', 'get /api/v1/pick-batches', 'get /api/v1/pick-batches/{id}',
    'post /api/v1/pick-batches/{id}/lines/{lineId}/pick', 'post /api/v1/pick-batches/{id}/lines/{lineId}/short',
    'post /api/v1/pick-batches/{id}/lines/{lineId}/mispick', 'post /api/v1/pick-batches/{id}/lines/{lineId}/quality',
    'post /api/v1/pick-batches/{id}/lines/{lineId}/verify', 'post /api/v1/pick-batches/{id}/complete', 'post /api/v1/pick-batches/{id}/pack',
    'post /api/v1/pick-batches/{id}/cancel', 'post /api/v1/pick-batches/{id}/stage', 'post /api/v1/pick-batches/{id}/parcels',
    'delete /api/v1/pick-batches/{id}/parcels/{parcelId}', 'put /api/v1/pick-batches/{id}/tracking',
    'post /api/v1/pick-batches/{id}/flag-tracking', 'post /api/v1/pick-batches/{id}/ship', 'post /api/v1/orders/{id}/pickup',
    'get /api/v1/exceptions', 'get /api/v1/exceptions/{id}', 'get /api/v1/exceptions/mispicks/{id}', 'get /api/v1/exceptions/quality/{id}',
    'post /api/v1/exceptions/{id}/review', 'post /api/v1/exceptions/mispicks/{id}/review', 'post /api/v1/exceptions/quality/{id}/review',
    'post /api/v1/exceptions/{id}/await-supply-partner', 'post /api/v1/exceptions/mispicks/{id}/await-supply-partner',
    'post /api/v1/exceptions/quality/{id}/await-supply-partner',
    'get /api/v1/shipments/events', 'post /api/v1/shipments/events/ack', 'post /api/v1/shipments/tracking-import',
    'get /api/v1/carrier-webhooks', 'post /api/v1/carrier-webhooks', 'delete /api/v1/carrier-webhooks/{id}', 'post /webhooks/carrier/{tenantToken}',
    'get /api/v1/webhooks', 'post /api/v1/webhooks', 'get /api/v1/webhooks/{id}', 'patch /api/v1/webhooks/{id}', 'delete /api/v1/webhooks/{id}',
    'post /api/v1/webhooks/{id}/rotate-secret', 'post /api/v1/webhooks/{id}/ping', 'get /api/v1/webhooks/{id}/deliveries',
    'post /api/v1/webhooks/{id}/deliveries/{deliveryId}/retry', 'post /api/v1/webhooks/{id}/deliveries/retry-dead',
    'get /api/v1/history', 'get /api/v1/manufacturers/{id}/statement', 'get /healthz', 'get /readyz',
    ...['inventory-valuation', 'stock-status', 'order-fulfillment', 'receiving', 'movements', 'cycle-count-accuracy', 'exceptions', 'velocity']
      .map((report) => `get /api/v1/reports/${report}`),
  ];
  const documented = Object.entries(doc.paths).flatMap(([path, methods]) => Object.keys(methods as object).map((m) => `${m} ${path}`));
  assert.deepEqual([...documented].sort(), [...expected].sort());
  for (const [path, methods] of Object.entries<any>(doc.paths)) {
    for (const [method, op] of Object.entries<any>(methods)) {
      const success = Object.keys(op.responses).filter((status) => /^2/.test(status));
      assert.equal(success.length, 1, `${method} ${path} documents one success response`);
      assert.ok(op.responses['4XX'] ?? op.responses['4xx'], `${method} ${path} documents its errors`);
      // Actions without input (verify, post, start, hide, ...) take no body; the file import and the document upload take a file.
      if (['post', 'patch', 'put'].includes(method) && !/deactivate|reactivate|invite$|retire$|hide$|release$|bill$|close$|\/(pass|waive|verify|reopen|post|start|complete|cancel|approve|pack|flag-tracking|rotate-secret|ping|retry|retry-dead)$|import-file$|tracking-import$|\/documents$/.test(path)) {
        assert.ok(op.requestBody?.content?.['application/json']?.schema, `${method} ${path} has a request body schema`);
      }
      if (path.startsWith('/api/v1/')) assert.deepEqual(op.security, [{ bearerAuth: [] }]);
    }
  }
  // A body that may be left out (read as {}) is not required; every other body is.
  const optional = Object.entries<any>(doc.paths).flatMap(([path, methods]) => Object.entries<any>(methods)
    .filter(([, op]) => op.requestBody && op.requestBody.required === false).map(([method]) => `${method} ${path}`));
  assert.deepEqual(optional.sort(), [
    'post /api/v1/account/mfa/enroll', 'post /api/v1/cycle-counts', 'post /api/v1/exceptions/mispicks/{id}/await-supply-partner',
    'post /api/v1/exceptions/quality/{id}/await-supply-partner', 'post /api/v1/exceptions/{id}/await-supply-partner',
    'post /api/v1/items/{id}/discontinue', 'post /api/v1/items/{id}/reactivate', 'post /api/v1/pick-batches/{id}/ship',
  ]);
});

test('every operation has a unique operationId, a summary, a described area and its error answers; every JSON body an example that its schema accepts', () => {
  const ids = new Set<string>();
  const ajv = new Ajv({ strict: false, allErrors: true });
  (addFormatsModule as unknown as (ajv: Ajv) => Ajv)(ajv);
  const areas = new Set(doc.tags.map((tag: any) => tag.name));
  for (const [path, methods] of Object.entries<any>(doc.paths)) {
    for (const [method, op] of Object.entries<any>(methods)) {
      const name = `${method} ${path}`;
      assert.match(op.operationId, /^[a-z][A-Za-z0-9]+$/, name);
      assert.ok(!ids.has(op.operationId), `${name}: operationId ${op.operationId} is unique`);
      ids.add(op.operationId);
      assert.ok(op.summary, `${name} has a summary`);
      assert.ok(op.tags?.length && op.tags.every((tag: string) => areas.has(tag)), `${name} belongs to a described area`);
      assert.ok(op.responses['503'], `${name} documents 503`);
      if (path.startsWith('/api/v1/')) for (const status of ['401', '403', '406', '429']) assert.ok(op.responses[status], `${name} documents ${status}`);
      if (path.includes('{')) assert.ok(op.responses['404'], `${name} documents 404`);
      if (method !== 'get') assert.ok(op.responses['422'], `${name} documents 422`);
      const json = op.requestBody?.content?.['application/json'];
      if (json) {
        assert.notEqual(json.example, undefined, `${name} has a body example`);
        assert.ok(ajv.validate(json.schema, json.example), `${name}: its example ${JSON.stringify(json.example)} is valid: ${ajv.errorsText()}`);
      }
    }
  }
  for (const tag of doc.tags) assert.ok(tag.description && tag.description !== tag.name, `the area ${tag.name} is described`);
  for (const [name, response] of Object.entries<any>(doc.components.responses)) {
    assert.match(response.description, /Codes: `[a-z_]+`/, `${name} names its codes`);
  }
  for (const name of ['Error429', 'Error503']) assert.ok(doc.components.responses[name].headers['Retry-After'], `${name} declares Retry-After`);
  assert.equal(doc.paths['/api/v1/pick-batches/{id}/ship'].post.operationId, 'postPickBatchesByIdShip');
  assert.deepEqual(doc.paths['/invites/{token}/accept'].post.security, [], 'the invite is accepted without a key');
  // A parameter with a default may be left out; the examples carry only what is required, so they are sendable as they are.
  const listParameters = doc.paths['/api/v1/items'].get.parameters;
  assert.equal(listParameters.find((p: { name: string }) => p.name === 'page').required, false);
  assert.equal(listParameters.find((p: { name: string }) => p.name === 'per_page').required, false);
  assert.deepEqual(doc.paths['/api/v1/orders'].post.requestBody.content['application/json'].example.lines[0].qty_warehouse, undefined);
});

test('@redocly/cli lint finds no errors in the document', () => {
  const dir = mkdtempSync(join(tmpdir(), 'wms-openapi-'));
  try {
    writeFileSync(join(dir, 'openapi.json'), JSON.stringify(doc));
    const lint = spawnSync(process.execPath, [REDOCLY, 'lint', '--config', join(process.cwd(), 'redocly.yaml'), '--format', 'summary', join(dir, 'openapi.json')], {
      encoding: 'utf8', env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
    });
    assert.equal(lint.status, 0, `${lint.stdout}\n${lint.stderr}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the tracking import takes text/csv; the carrier message is JSON read after its signature; the poll documents every kind\'s data', () => {
  const tracking = doc.paths['/api/v1/shipments/tracking-import'].post.requestBody.content;
  assert.deepEqual(Object.keys(tracking), ['text/csv']);
  const message = doc.paths['/webhooks/carrier/{tenantToken}'].post;
  assert.deepEqual(message.requestBody.content['application/json'].schema.required, ['event_id', 'tracking_number']);
  assert.deepEqual(message.security, [], 'signed, not keyed');
  const event = doc.paths['/api/v1/shipments/events'].get.responses['200'].content['application/json'].schema.properties.data.items;
  assert.equal(event.properties.data.anyOf.length, event.properties.kind.enum.length, 'one data schema per kind');
});

test('the file import takes text/csv or XLSX, not JSON', () => {
  const content = doc.paths['/api/v1/receiving/import-file'].post.requestBody.content;
  assert.deepEqual(Object.keys(content).sort(), ['application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', 'text/csv']);
  assert.deepEqual(content['text/csv'].schema, { type: 'string', format: 'binary' });
});

test('the document upload is a multipart form with one binary file; the download is binary', () => {
  const content = doc.paths['/api/v1/documents'].post.requestBody.content;
  assert.deepEqual(Object.keys(content), ['multipart/form-data']);
  assert.deepEqual(content['multipart/form-data'].schema.properties.file, { type: 'string', format: 'binary', description: 'The one file, with its file name.' });
  assert.deepEqual(content['multipart/form-data'].schema.required, ['entity_type', 'entity_id', 'file']);
  const download = doc.paths['/api/v1/documents/{id}/download'].get.responses['200'].content;
  assert.deepEqual(download['application/pdf'].schema, { type: 'string', format: 'binary' });
});

test('tells the permission a route checks', () => {
  assert.match(doc.paths['/api/v1/manufacturers'].post.description, /manufacturers\.edit/);
  assert.match(doc.paths['/api/v1/admin/users'].get.description, /system_admin/);
  assert.match(doc.paths['/api/v1/customers'].post.description, /customers\.edit/);
  assert.match(doc.paths['/api/v1/orders'].post.description, /orders\.create.*orders\.edit/s);
  assert.match(doc.paths['/api/v1/orders/{id}/release'].post.description, /orders\.release/);
  // Contact routes check the permission of the entity named in the path or linked to the contact.
  assert.match(doc.paths['/api/v1/contacts/{entityType}/{entityID}'].get.description, /manufacturers\.view.*customers\.view/);
  assert.match(doc.paths['/api/v1/contacts/{id}'].patch.description, /manufacturers\.edit.*customers\.edit/);
});

test('/docs is the interactive reference, its script served by the service itself (no CDN)', async () => {
  const redirect = await t.app.inject({ method: 'GET', url: '/docs' });
  assert.equal(redirect.statusCode, 301);
  assert.equal(redirect.headers.location, '/docs/');
  const page = await t.app.inject({ method: 'GET', url: '/docs/' });
  assert.equal(page.statusCode, 200);
  assert.match(page.headers['content-type'] as string, /text\/html/);
  const scripts = [...page.body.matchAll(/<script[^>]*src="([^"]+)"/g)].map((m) => m[1]);
  assert.deepEqual(scripts, ['js/scalar.js']);
  assert.doesNotMatch(page.body, /https?:\/\//, 'nothing is loaded from another host');
  assert.match(page.body, /"url": "\/openapi.json"/);
  const script = await t.app.inject({ method: 'GET', url: '/docs/js/scalar.js' });
  assert.equal(script.statusCode, 200);
  assert.match(script.headers['content-type'] as string, /javascript/);
  assert.ok(script.body.length > 100_000);
});

test('health endpoints answer without a key', async () => {
  assert.deepEqual((await call(t.app, 'GET', '/healthz')).body, { data: { status: 'ok' } });
  // Without REDIS_URL the limits are counted in memory, which is not a fault.
  assert.deepEqual((await call(t.app, 'GET', '/readyz')).body, { data: { status: 'ready', database: 'ok', redis: 'memory' } });
  // Documented for whoever configures the probes: no key, the 503 a readiness probe acts on.
  for (const path of ['/healthz', '/readyz']) {
    assert.deepEqual(doc.paths[path].get.security, [], `${path} needs no key`);
    assert.ok(doc.paths[path].get.responses['503'], `${path} documents 503`);
  }
  assert.deepEqual(doc.paths['/readyz'].get.responses['200'].content['application/json'].schema.properties.data.properties.redis.enum, ['memory', 'redis', 'degraded']);
});
