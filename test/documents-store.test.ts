// The document store and storeDocument, as other modules use them: keys the service makes, files written whole, and no
// file left behind by a transaction that does not commit.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { text } from 'node:stream/consumers';
import { after, before, describe, test } from 'node:test';
import { inTransaction } from '../src/db/transaction.ts';
import { discardUncommittedFiles, inTransactionWithDocuments, storeDocument, type NewDocument } from '../src/modules/documents/service.ts';
import { directoryStore, storageKeyOf, type DocumentStore } from '../src/modules/documents/storage.ts';
import { call } from './helpers.ts';
import { startDocumentsApp, storedFiles, type DocumentsApp } from './documents-kit.ts';

describe('the directory store', () => {
  const dir = mkdtempSync(join(tmpdir(), 'wms-store-'));
  const store = directoryStore(dir);
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('keys are year/month/id in UTC; anything else is refused before the disk is touched', async () => {
    const id = '3f0c9a52-8d1e-4b7a-9c2d-5e6f7a8b9c0d';
    assert.equal(storageKeyOf(id, new Date('2025-01-31T23:30:00-05:00')), `2025/02/${id}`);
    assert.throws(() => storageKeyOf('../../etc/passwd'));
    for (const key of ['../x', '/etc/passwd', `2025/02/${id}/../../x`, `2025/2/${id}`, '']) {
      await assert.rejects(store.put(key, Buffer.from('x')), /not a storage key/);
      await assert.rejects(store.get(key), /not a storage key/);
    }
    assert.deepEqual(readdirSync(dir), []);
  });

  test('put writes the whole file (no partial file left), get streams it with its size, delete removes it', async () => {
    const key = storageKeyOf('9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d');
    await store.put(key, Buffer.from('dock receipt'));
    assert.deepEqual(storedFiles(dir), [key]);
    const stored = await store.get(key);
    assert.equal(stored!.size, 12);
    assert.equal(await text(stored!.stream), 'dock receipt');
    await store.delete(key);
    assert.equal(await store.get(key), null);
    await store.delete(key);
    assert.deepEqual(storedFiles(dir), []);
  });
});

describe('storeDocument', () => {
  let d: DocumentsApp;
  let store: DocumentStore;
  let author: { userId: string; userName: string; apiKeyId: string | null };
  const generated = (): NewDocument => ({
    entityType: 'order', entityId: d.records.order, manufacturerId: d.records.partner, fileName: 'packing-list.pdf',
    fileType: 'application/pdf', bytes: Buffer.from('%PDF-1.7 generated'), description: 'Packing list', tags: ['packing_list'],
  });
  const rowsOf = (key: string) => d.t.db.selectFrom('documents').selectAll().where('storage_key', '=', key).execute();

  before(async () => {
    d = await startDocumentsApp();
    store = directoryStore(d.dir);
    const me = (await call(d.t.app, 'GET', '/api/v1/me', { key: d.t.adminKey })).body.data;
    author = { userId: me.user.id, userName: me.user.name, apiKeyId: me.key.id };
  });
  after(() => d.close());

  test('inside the caller\'s transaction: the file, the row and a history row; the order lists it as its packing list', async () => {
    const document = await inTransaction(d.t.db, (tx) => storeDocument(tx, store, author, generated()));
    assert.equal(document.uploaded_by_name, 'admin');
    assert.deepEqual(document.tags, ['packing_list']);
    assert.equal(readFileSync(join(d.dir, document.storage_key)).toString(), '%PDF-1.7 generated');
    assert.equal((await rowsOf(document.storage_key)).length, 1);
    const history = await d.t.db.selectFrom('history').select(['action', 'api_key_id', 'after']).where('entity_id', '=', document.id).execute();
    assert.deepEqual(history, [{ action: 'created', api_key_id: author.apiKeyId, after: JSON.parse(JSON.stringify(document)) }]);
    // The row as written is the document the history keeps (its times included).
    const [row] = await rowsOf(document.storage_key);
    assert.equal(new Date(row!.created_at).toISOString(), new Date(document.created_at).toISOString());
    const order = await call(d.t.app, 'GET', `/api/v1/orders/${d.records.order}?include=documents`, { key: d.t.adminKey });
    assert.equal(order.body.data.documents.packing_list.id, document.id);
  });

  test('an insert that fails removes the file it had written', async () => {
    const before = storedFiles(d.dir);
    await assert.rejects(inTransaction(d.t.db, (tx) =>
      storeDocument(tx, store, { userId: '00000000-0000-4000-8000-000000000000', userName: 'nobody', apiKeyId: null }, generated())));
    assert.deepEqual(storedFiles(d.dir), before);
  });

  test('inTransactionWithDocuments: work that fails after storing leaves neither row nor file', async () => {
    const before = storedFiles(d.dir);
    let key = '';
    await assert.rejects(inTransactionWithDocuments(d.t.db, store, async (tx) => {
      key = (await storeDocument(tx, store, author, generated())).storage_key;
      assert.ok(existsSync(join(d.dir, key)));
      throw new Error('the pack failed after the packing list was filed');
    }), /the pack failed/);
    assert.deepEqual(storedFiles(d.dir), before);
    assert.deepEqual(await rowsOf(key), []);
  });

  test('inTransactionWithDocuments: a retried attempt removes the first attempt\'s file and keeps its own', async () => {
    const before = storedFiles(d.dir);
    const keys: string[] = [];
    const document = await inTransactionWithDocuments(d.t.db, store, async (tx) => {
      const stored = await storeDocument(tx, store, author, generated());
      keys.push(stored.storage_key);
      if (keys.length === 1) throw Object.assign(new Error('could not serialize access'), { code: '40001' });
      return stored;
    });
    assert.equal(keys.length, 2);
    assert.deepEqual(storedFiles(d.dir), [...before, document.storage_key].sort());
    assert.equal((await rowsOf(document.storage_key)).length, 1);
  });

  test('discardUncommittedFiles removes files no row names and keeps the others', async () => {
    const committed = await inTransaction(d.t.db, (tx) => storeDocument(tx, store, author, generated()));
    const orphan = storageKeyOf('0f1e2d3c-4b5a-4697-8877-665544332211');
    await store.put(orphan, Buffer.from('left behind'));
    await discardUncommittedFiles(d.t.db, store, [committed.storage_key, orphan]);
    assert.ok(existsSync(join(d.dir, committed.storage_key)));
    assert.ok(!existsSync(join(d.dir, orphan)));
  });
});
