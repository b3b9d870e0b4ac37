// Documents: an upload files the bytes in the store and the metadata in the database with a history row; GET answers
// the spec's Document; the download serves the same bytes as an attachment; the type is read from the bytes.
import assert from 'node:assert/strict';
import { readFileSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { call } from './helpers.ts';
import {
  CSV, DOCUMENT_KEYS, DOCX, GIF, JPEG, PNG, XLSX, documentCount, download, handMadeMultipart, postRaw, samplePdf, startDocumentsApp,
  storedFiles, upload,
  type DocumentsApp,
} from './documents-kit.ts';

let d: DocumentsApp;
before(async () => {
  d = await startDocumentsApp();
});
after(() => d.close());

const adminId = async () => (await call(d.t.app, 'GET', '/api/v1/me', { key: d.t.adminKey })).body.data.user.id as string;

describe('uploading', () => {
  test('201 with the Document; the row, the history row and the file with the same bytes exist', async () => {
    const pdf = samplePdf('order paperwork');
    const answer = await upload(d.t, d.t.adminKey, {
      entity_type: 'order', entity_id: d.records.order, description: '  Signed bill of lading  ', tags: ['bol, signed', 'dock', 'bol'],
    }, pdf);
    assert.equal(answer.status, 201, JSON.stringify(answer.body));
    const document = answer.body.data;
    assert.deepEqual(Object.keys(document).sort(), DOCUMENT_KEYS);
    assert.equal(document.entity_type, 'order');
    assert.equal(document.entity_id, d.records.order);
    assert.equal(document.manufacturer_id, d.records.partner, 'the partner comes from the order');
    assert.equal(document.file_name, 'spec sheet.pdf');
    assert.equal(document.file_type, 'application/pdf');
    assert.equal(document.file_size, pdf.bytes.length);
    assert.equal(document.description, 'Signed bill of lading');
    assert.deepEqual(document.tags, ['bol', 'signed', 'dock']);
    assert.equal(document.uploaded_by, await adminId());
    assert.equal(document.uploaded_by_name, 'admin');
    for (const key of ['uploaded_at', 'created_at', 'updated_at']) assert.ok(!Number.isNaN(Date.parse(document[key])), key);
    // The key is the service's own: year/month/id, nothing of the client's file name.
    assert.match(document.storage_key, /^\d{4}\/\d{2}\/[0-9a-f-]{36}$/);
    assert.ok(document.storage_key.endsWith(document.id));
    assert.deepEqual(readFileSync(join(d.dir, document.storage_key)), Buffer.from(pdf.bytes));

    const row = await d.t.db.selectFrom('documents').selectAll().where('id', '=', document.id).executeTakeFirstOrThrow();
    assert.equal(row.storage_key, document.storage_key);
    assert.equal(row.file_size, pdf.bytes.length);
    const history = await d.t.db.selectFrom('history').selectAll().where('entity_id', '=', document.id).execute();
    assert.equal(history.length, 1);
    assert.equal(history[0]!.entity_type, 'document');
    assert.equal(history[0]!.action, 'created');
    assert.equal(history[0]!.manufacturer_id, d.records.partner);
    assert.equal((history[0]!.after as { storage_key: string }).storage_key, document.storage_key);
  });

  test('without description and tags both are null; the partner of each entity type is taken from the record', async () => {
    const cases: Array<[string, string, string | null]> = [
      ['pick_batch', d.records.pickBatch, d.records.partner],
      ['short_pick_exception', d.records.shortPick, d.records.partner],
      ['mispick_exception', d.records.mispick, d.records.partner],
      ['quality_exception', d.records.quality, d.records.partner],
      ['item', d.records.otherItem, d.records.otherPartner],
      ['receiving_batch', d.records.receivingBatch, d.records.partner],
      ['customer', d.records.customer, null],
      ['manufacturer', d.records.otherPartner, d.records.otherPartner],
    ];
    for (const [entityType, entityId, partner] of cases) {
      const answer = await upload(d.t, d.t.adminKey, { entity_type: entityType, entity_id: entityId });
      assert.equal(answer.status, 201, `${entityType}: ${JSON.stringify(answer.body)}`);
      assert.equal(answer.body.data.manufacturer_id, partner, entityType);
      assert.equal(answer.body.data.description, null);
      assert.equal(answer.body.data.tags, null);
    }
  });

  test('the stored type is the one the bytes have; declarations that agree or claim nothing are accepted', async () => {
    const cases: Array<[string, { bytes: Uint8Array; name: string; type?: string }, string]> = [
      ['PNG', { bytes: PNG, name: 'photo.png', type: 'image/png' }, 'image/png'],
      ['JPEG declared as octet-stream', { bytes: JPEG, name: 'damage.jpg', type: 'application/octet-stream' }, 'image/jpeg'],
      ['JPEG declared as image/jpg', { bytes: JPEG, name: 'damage.jpeg', type: 'image/jpg' }, 'image/jpeg'],
      ['GIF without an extension', { bytes: GIF, name: 'scan', type: 'image/gif' }, 'image/gif'],
      ['CSV as Windows declares it', { bytes: CSV, name: 'counts.csv', type: 'application/vnd.ms-excel' }, 'text/csv'],
      ['plain text', { bytes: Buffer.from('Dock 4 closed on Fridays.\r\nCall ahead.\n'), name: 'notes.txt', type: 'text/plain' }, 'text/plain'],
      ['XLSX', { bytes: XLSX(), name: 'receipt.xlsx', type: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet' }, 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet'],
      ['DOCX', { bytes: DOCX(), name: 'letter.docx', type: 'application/octet-stream' }, 'application/vnd.openxmlformats-officedocument.wordprocessingml.document'],
      // A part without Content-Type reaches the service as text/plain, which claims nothing.
      ['PDF without a part Content-Type', { bytes: samplePdf().bytes, name: 'invoice.pdf', type: '' }, 'application/pdf'],
    ];
    for (const [label, file, type] of cases) {
      const answer = await upload(d.t, d.t.adminKey, { entity_type: 'item', entity_id: d.records.item }, file);
      assert.equal(answer.status, 201, `${label}: ${JSON.stringify(answer.body)}`);
      assert.equal(answer.body.data.file_type, type, label);
      assert.deepEqual(readFileSync(join(d.dir, answer.body.data.storage_key)), Buffer.from(file.bytes), label);
    }
  });

  test('a file larger than the JSON body limit (1 MiB) but within the document limit (10 MiB) is accepted', async () => {
    const pdf = samplePdf('big');
    const big = Buffer.concat([pdf.bytes, Buffer.alloc(3 * 1024 * 1024, 0x20)]);
    const answer = await upload(d.t, d.t.adminKey, { entity_type: 'item', entity_id: d.records.item }, { ...pdf, bytes: big });
    assert.equal(answer.status, 201, JSON.stringify(answer.body));
    assert.equal(answer.body.data.file_size, big.length);
    assert.deepEqual(readFileSync(join(d.dir, answer.body.data.storage_key)), big);
  });

  test('the file name loses any folder, control characters and excess length; a nameless file gets one from its type', async () => {
    const body = handMadeMultipart([
      { name: 'entity_type', value: 'item' }, { name: 'entity_id', value: d.records.item },
      { name: 'file', filename: '..\\..\\etc/pass\u0001word\u007f.pdf', type: 'application/pdf', value: samplePdf().bytes },
    ]);
    const answer = await postRaw(d.t, d.t.adminKey, body.payload, body.contentType);
    assert.equal(answer.status, 201, JSON.stringify(answer.body));
    assert.equal(answer.body.data.file_name, 'password.pdf');
    const long = await upload(d.t, d.t.adminKey, { entity_type: 'item', entity_id: d.records.item }, { ...samplePdf(), name: `${'ü'.repeat(300)}.pdf` });
    assert.equal(long.status, 201, JSON.stringify(long.body));
    assert.equal(long.body.data.file_name, `${'ü'.repeat(251)}.pdf`);
    const empty = handMadeMultipart([
      { name: 'entity_type', value: 'item' }, { name: 'entity_id', value: d.records.item },
      { name: 'file', filename: '', type: 'image/png', value: PNG },
    ]);
    const nameless = await postRaw(d.t, d.t.adminKey, empty.payload, empty.contentType);
    assert.equal(nameless.status, 201, JSON.stringify(nameless.body));
    assert.equal(nameless.body.data.file_name, 'document.png');
  });

  test('an Idempotency-Key replays the first upload without a second file; another file under the same key is 422', async () => {
    const headers = { 'idempotency-key': 'doc-upload-1' };
    const fields = { entity_type: 'order', entity_id: d.records.order };
    const rows = await documentCount(d.t);
    const files = storedFiles(d.dir).length;
    const first = await upload(d.t, d.t.adminKey, fields, samplePdf('once'), headers);
    assert.equal(first.status, 201);
    const again = await upload(d.t, d.t.adminKey, fields, samplePdf('once'), headers);
    assert.equal(again.status, 201);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.deepEqual(again.body, first.body);
    const other = await upload(d.t, d.t.adminKey, fields, samplePdf('another file'), headers);
    assert.equal(other.status, 422);
    assert.equal(other.body.error.code, 'idempotency_key_reuse');
    assert.equal(await documentCount(d.t), rows + 1);
    assert.equal(storedFiles(d.dir).length, files + 1);
  });
});

describe('reading', () => {
  let document: any;
  const pdf = samplePdf('for download');
  before(async () => {
    document = (await upload(d.t, d.t.adminKey, { entity_type: 'order', entity_id: d.records.order, tags: 'customs' },
      { ...pdf, name: 'Lieferschein Nr. 5 – “Größe”; 100% (x).pdf' })).body.data;
  });

  test('GET /documents/{id} answers the Document as the upload did', async () => {
    const answer = await call(d.t.app, 'GET', `/api/v1/documents/${document.id}`, { key: d.t.adminKey });
    assert.equal(answer.status, 200);
    assert.deepEqual(answer.body.data, document);
  });

  test('the order lists it under include=documents', async () => {
    const answer = await call(d.t.app, 'GET', `/api/v1/orders/${d.records.order}?include=documents`, { key: d.t.adminKey });
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.deepEqual(answer.body.data.documents.documents.find((listed: { id: string }) => listed.id === document.id), document);
  });

  test('the download is the same bytes, typed, as an attachment with a safe ASCII name and the exact UTF-8 name', async () => {
    const response = await download(d.t, d.t.adminKey, document.id);
    assert.equal(response.statusCode, 200);
    assert.deepEqual(response.rawPayload, Buffer.from(pdf.bytes));
    assert.equal(response.headers['content-type'], 'application/pdf');
    assert.equal(response.headers['content-length'], String(pdf.bytes.length));
    assert.equal(response.headers['content-disposition'],
      'attachment; filename="Lieferschein Nr. 5 _ _Gr__e__ 100_ (x).pdf"; ' +
      'filename*=UTF-8\'\'Lieferschein%20Nr.%205%20%E2%80%93%20%E2%80%9CGr%C3%B6%C3%9Fe%E2%80%9D%3B%20100%25%20%28x%29.pdf');
    assert.equal(response.headers['x-content-type-options'], 'nosniff');
    assert.equal(response.headers['cache-control'], 'private, no-store');
  });

  test('text downloads say their charset', async () => {
    const text = (await upload(d.t, d.t.adminKey, { entity_type: 'item', entity_id: d.records.item }, { bytes: CSV, name: 'c.csv', type: 'text/csv' })).body.data;
    const response = await download(d.t, d.t.adminKey, text.id);
    assert.equal(response.headers['content-type'], 'text/csv; charset=utf-8');
    assert.equal(response.body, CSV.toString());
  });

  test('a missing id is 404, a malformed one 400; a document whose file is gone is 404 on download, not 500', async () => {
    const missing = await call(d.t.app, 'GET', '/api/v1/documents/00000000-0000-4000-8000-000000000000', { key: d.t.adminKey });
    assert.equal(missing.status, 404);
    assert.equal(missing.body.error.code, 'not_found');
    const malformed = await call(d.t.app, 'GET', '/api/v1/documents/not-a-uuid/download', { key: d.t.adminKey });
    assert.equal(malformed.status, 400);
    const lost = (await upload(d.t, d.t.adminKey, { entity_type: 'item', entity_id: d.records.item })).body.data;
    unlinkSync(join(d.dir, lost.storage_key));
    const response = await download(d.t, d.t.adminKey, lost.id);
    assert.equal(response.statusCode, 404);
    assert.equal(JSON.parse(response.body).error.code, 'not_found');
  });
});
