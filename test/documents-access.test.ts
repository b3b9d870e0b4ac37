// Who reaches which document: partner scope (another partner's document, or record, is 404 like a missing one) and the
// permissions of the record's area (403).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { call, expectError, userWithKey } from './helpers.ts';
import { documentCount, download, startDocumentsApp, storedFiles, upload, type DocumentsApp } from './documents-kit.ts';

let d: DocumentsApp;
const keys: Record<string, string> = {};
const docs: Record<string, string> = {};

before(async () => {
  d = await startDocumentsApp();
  const { partner, otherPartner } = d.records;
  keys.consignorA = (await userWithKey(d.t, 'consignor', { manufacturerId: partner })).key;
  keys.consignorB = (await userWithKey(d.t, 'consignor', { manufacturerId: otherPartner })).key;
  for (const role of ['office', 'warehouse', 'qc']) keys[role] = (await userWithKey(d.t, role)).key;
  keys.historyOnly = (await userWithKey(d.t, 'office', { scopes: ['history.view'] })).key;
  const file = async (entityType: string, entityId: string) => {
    const answer = await upload(d.t, d.t.adminKey, { entity_type: entityType, entity_id: entityId });
    assert.equal(answer.status, 201, JSON.stringify(answer.body));
    return answer.body.data.id as string;
  };
  docs.orderA = await file('order', d.records.order);
  docs.orderB = await file('order', d.records.otherOrder);
  docs.itemA = await file('item', d.records.item);
  docs.customer = await file('customer', d.records.customer);
  docs.pickBatch = await file('pick_batch', d.records.pickBatch);
  docs.quality = await file('quality_exception', d.records.quality);
});
after(() => d.close());

const get = (key: string, id: string) => call(d.t.app, 'GET', `/api/v1/documents/${id}`, { key });
const MISSING = '00000000-0000-4000-8000-000000000000';

describe('partner scope', () => {
  test('a partner-scoped key reads its own partner\'s documents, and gets 404 for another partner\'s, as for a missing one', async () => {
    assert.equal((await get(keys.consignorA!, docs.orderA!)).status, 200);
    assert.equal((await download(d.t, keys.consignorA!, docs.orderA!)).statusCode, 200);
    const missing = await get(keys.consignorA!, MISSING);
    expectError(missing, 404, 'not_found');
    for (const id of [docs.orderB!, docs.customer!]) {
      const answer = await get(keys.consignorA!, id);
      expectError(answer, 404, 'not_found');
      assert.deepEqual(answer.body, missing.body, 'another partner\'s document cannot be told from a missing one');
      const file = await download(d.t, keys.consignorA!, id);
      assert.equal(file.statusCode, 404);
      assert.deepEqual(JSON.parse(file.body), missing.body);
    }
    expectError(await get(keys.consignorB!, docs.orderA!), 404, 'not_found');
  });

  test('uploading to another partner\'s record is 404 and stores nothing; to its own it files under its partner', async () => {
    const rows = await documentCount(d.t);
    const files = storedFiles(d.dir);
    const missing = await upload(d.t, keys.consignorA!, { entity_type: 'order', entity_id: MISSING });
    for (const [entityType, entityId] of [['order', d.records.otherOrder], ['item', d.records.otherItem]] as const) {
      const answer = await upload(d.t, keys.consignorA!, { entity_type: entityType, entity_id: entityId });
      expectError(answer, 404, 'not_found');
      assert.equal(answer.body.error.message, entityType === 'order' ? missing.body.error.message : 'item not found');
    }
    assert.equal(await documentCount(d.t), rows);
    assert.deepEqual(storedFiles(d.dir), files);
    const own = await upload(d.t, keys.consignorA!, { entity_type: 'order', entity_id: d.records.order });
    assert.equal(own.status, 201, JSON.stringify(own.body));
    assert.equal(own.body.data.manufacturer_id, d.records.partner);
  });
});

describe('permissions', () => {
  test('uploading needs the edit permission of the record\'s area', async () => {
    const cases: Array<[string, string, string, number]> = [
      ['office', 'order', d.records.order, 201],
      ['office', 'pick_batch', d.records.pickBatch, 403],
      ['office', 'quality_exception', d.records.quality, 403],
      ['warehouse', 'order', d.records.order, 403],
      ['warehouse', 'pick_batch', d.records.pickBatch, 201],
      // The picker who flags a problem photographs it.
      ['warehouse', 'quality_exception', d.records.quality, 201],
      ['qc', 'item', d.records.item, 403],
      ['qc', 'receiving_batch', d.records.receivingBatch, 201],
      ['consignorA', 'item', d.records.item, 201],
      ['consignorA', 'customer', d.records.customer, 403],
      ['consignorA', 'pick_batch', d.records.pickBatch, 403],
    ];
    for (const [who, entityType, entityId, status] of cases) {
      const rows = await documentCount(d.t);
      const answer = await upload(d.t, keys[who]!, { entity_type: entityType, entity_id: entityId });
      assert.equal(answer.status, status, `${who} on ${entityType}: ${JSON.stringify(answer.body)}`);
      if (status === 403) {
        expectError(answer, 403, 'forbidden');
        assert.equal(await documentCount(d.t), rows);
      }
    }
  });

  test('a key that could file under no record is 403 before its body is read', async () => {
    const answer = await upload(d.t, keys.historyOnly!, { entity_type: 'order', entity_id: d.records.order });
    expectError(answer, 403, 'forbidden');
    assert.match(answer.body.error.message, /filing documents needs one of .*orders\.edit/);
    // The body is not even looked at: a request that is not multipart gets the same answer.
    expectError(await call(d.t.app, 'POST', '/api/v1/documents', { key: keys.historyOnly!, body: {} }), 403, 'forbidden');
  });

  test('reading needs the view permission of the record\'s area; packers read order documents with shipping.edit', async () => {
    const cases: Array<[string, string, number]> = [
      ['warehouse', 'orderA', 200],
      ['warehouse', 'itemA', 200],
      ['warehouse', 'customer', 403],
      ['warehouse', 'quality', 200],
      ['qc', 'orderA', 403],
      ['qc', 'itemA', 200],
      ['qc', 'pickBatch', 403],
      ['office', 'pickBatch', 200],
      ['office', 'customer', 200],
      ['consignorA', 'pickBatch', 200],
      ['consignorA', 'quality', 200],
    ];
    for (const [who, doc, status] of cases) {
      assert.equal((await get(keys[who]!, docs[doc]!)).status, status, `${who} reads ${doc}`);
      assert.equal((await download(d.t, keys[who]!, docs[doc]!)).statusCode, status, `${who} downloads ${doc}`);
    }
  });

  test('a key that can read no document is 403 at once, for any id', async () => {
    expectError(await get(keys.historyOnly!, docs.orderA!), 403, 'forbidden');
    expectError(await get(keys.historyOnly!, MISSING), 403, 'forbidden');
    assert.equal((await download(d.t, keys.historyOnly!, docs.orderA!)).statusCode, 403);
  });

  test('the API document states the permissions of each route', async () => {
    const doc = (await call(d.t.app, 'GET', '/openapi.json')).body;
    assert.match(doc.paths['/api/v1/documents'].post.description, /order: `orders\.edit`.*pick_batch: `shipping\.edit`.*`exceptions\.review`/s);
    assert.match(doc.paths['/api/v1/documents/{id}'].get.description, /order: `orders\.view` or `shipping\.edit`/);
    assert.match(doc.paths['/api/v1/documents/{id}/download'].get.description, /404/);
  });
});
