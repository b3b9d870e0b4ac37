// Refused uploads: every error code in the envelope, and nothing stored after any of them (no row, no file, no history).
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import { expectError, type Answer } from './helpers.ts';
import {
  CSV, EXE, HTML, JPEG, PNG, SVG, XLSM, ZIP, documentCount, handMadeMultipart, multipart, postRaw, samplePdf, startDocumentsApp, storedFiles,
  upload, type DocumentsApp,
} from './documents-kit.ts';

const LIMIT = 64 * 1024;
let d: DocumentsApp;
before(async () => {
  d = await startDocumentsApp({ WMS_DOCUMENT_MAX_BYTES: String(LIMIT) });
});
after(() => d.close());

const historyCount = async () =>
  Number((await d.t.db.selectFrom('history').select((eb) => eb.fn.countAll().as('n')).where('entity_type', '=', 'document').executeTakeFirstOrThrow()).n);

// Every test here is a refusal: the store, the table and the history stay as they were.
let baseline: { rows: number; files: string[]; history: number };
beforeEach(async () => {
  baseline = { rows: await documentCount(d.t), files: storedFiles(d.dir), history: await historyCount() };
});
afterEach(async () => {
  assert.equal(await documentCount(d.t), baseline.rows, 'no document row was added');
  assert.deepEqual(storedFiles(d.dir), baseline.files, 'no file was left in the store');
  assert.equal(await historyCount(), baseline.history, 'no history row was added');
});

const onItem = () => ({ entity_type: 'item', entity_id: d.records.item });
const refused = (answer: Answer, status: number, code: string, message?: RegExp) => {
  expectError(answer, status, code);
  if (message) assert.match(answer.body.error.message, message);
};

describe('the type comes from the bytes', () => {
  test('an executable, HTML or a PNG declared as a PDF is 415', async () => {
    for (const bytes of [EXE, HTML, PNG]) {
      refused(await upload(d.t, d.t.adminKey, onItem(), { bytes, name: 'invoice.pdf', type: 'application/pdf' }), 415, 'unsupported_media_type');
    }
  });

  test('types outside the list are 415 whatever they are declared as: HTML, SVG, archives, macros, old Office, unknown binary', async () => {
    const cases = [
      { bytes: HTML, name: 'page.htm', type: 'text/html' },
      { bytes: HTML, name: 'notes.txt', type: 'text/plain' },
      { bytes: SVG, name: 'logo.png', type: 'image/png' },
      { bytes: ZIP(), name: 'photos.zip', type: 'application/zip' },
      { bytes: XLSM(), name: 'macros.xlsx', type: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet' },
      { bytes: Buffer.concat([Buffer.from('d0cf11e0a1b11ae1', 'hex'), Buffer.alloc(504)]), name: 'old.xls', type: 'application/vnd.ms-excel' },
      { bytes: Buffer.from([0x00, 0x01, 0x02, 0xfe, 0xff, 0x10, 0x80]), name: 'blob.dat', type: 'application/octet-stream' },
      { bytes: Buffer.from([0xc3, 0x28, 0x61]), name: 'broken.txt', type: 'text/plain' },
    ];
    for (const file of cases) refused(await upload(d.t, d.t.adminKey, onItem(), file), 415, 'unsupported_media_type');
  });

  test('a name or declared type that contradicts the bytes is 415; a dangerous extension is 415 even on good bytes', async () => {
    refused(await upload(d.t, d.t.adminKey, onItem(), { ...samplePdf(), name: 'photo.png' }), 415, 'unsupported_media_type', /named \.png/);
    refused(await upload(d.t, d.t.adminKey, onItem(), { bytes: JPEG, name: 'scan.jpg', type: 'image/png' }), 415, 'unsupported_media_type', /declared as image\/png/);
    refused(await upload(d.t, d.t.adminKey, onItem(), { bytes: CSV, name: 'data.csv', type: 'application/pdf' }), 415, 'unsupported_media_type');
    refused(await upload(d.t, d.t.adminKey, onItem(), { ...samplePdf(), name: 'invoice.pdf.exe' }), 415, 'unsupported_media_type', /\.exe/);
  });
});

describe('size', () => {
  test('a file over the limit is 413 payload_too_large', async () => {
    const big = Buffer.concat([samplePdf().bytes, Buffer.alloc(LIMIT, 0x20)]);
    refused(await upload(d.t, d.t.adminKey, onItem(), { bytes: big, name: 'big.pdf', type: 'application/pdf' }), 413, 'payload_too_large');
  });

  test('a file of exactly the limit is accepted (and removed again for the baseline)', async () => {
    const pdf = samplePdf().bytes;
    const exact = Buffer.concat([pdf, Buffer.alloc(LIMIT - pdf.length, 0x20)]);
    const answer = await upload(d.t, d.t.adminKey, onItem(), { bytes: exact, name: 'exact.pdf', type: 'application/pdf' });
    assert.equal(answer.status, 201, JSON.stringify(answer.body));
    assert.equal(answer.body.data.file_size, LIMIT);
    await d.t.db.deleteFrom('history').where('entity_id', '=', answer.body.data.id).execute();
    await d.t.db.deleteFrom('documents').where('id', '=', answer.body.data.id).execute();
    rmSync(join(d.dir, answer.body.data.storage_key));
  });
});

describe('malformed requests are 400 or 415, never 500', () => {
  test('a body that is not multipart is 415: JSON, plain text, form-urlencoded, none', async () => {
    refused(await postRaw(d.t, d.t.adminKey, JSON.stringify(onItem()), 'application/json'), 415, 'unsupported_media_type', /multipart/);
    refused(await postRaw(d.t, d.t.adminKey, 'hello', 'text/plain'), 415, 'unsupported_media_type', /multipart/);
    refused(await postRaw(d.t, d.t.adminKey, 'entity_type=item', 'application/x-www-form-urlencoded'), 415, 'unsupported_media_type');
    refused(await postRaw(d.t, d.t.adminKey, ''), 415, 'unsupported_media_type');
  });

  test('a missing file, an empty file, two files or a file in another field is 400', async () => {
    refused(await upload(d.t, d.t.adminKey, onItem(), null), 400, 'bad_request', /file is required/);
    refused(await upload(d.t, d.t.adminKey, onItem(), { bytes: Buffer.alloc(0), name: 'empty.pdf', type: 'application/pdf' }), 400, 'bad_request', /empty/);
    const two = await multipart(onItem(), { file: samplePdf(), file2: samplePdf() });
    refused(await postRaw(d.t, d.t.adminKey, two.payload, two.contentType), 400, 'bad_request', /one file/);
    const twice = handMadeMultipart([
      { name: 'entity_type', value: 'item' }, { name: 'entity_id', value: d.records.item },
      { name: 'file', filename: 'a.pdf', type: 'application/pdf', value: samplePdf().bytes },
      { name: 'file', filename: 'b.pdf', type: 'application/pdf', value: samplePdf().bytes },
    ]);
    refused(await postRaw(d.t, d.t.adminKey, twice.payload, twice.contentType), 400, 'bad_request', /one file/);
    const elsewhere = await multipart(onItem(), { attachment: samplePdf() });
    refused(await postRaw(d.t, d.t.adminKey, elsewhere.payload, elsewhere.contentType), 400, 'bad_request', /field "file"/);
  });

  test('missing or unknown entity_type, a malformed entity_id, an unknown or repeated field, overlong values are 400', async () => {
    const cases: Array<[Record<string, string | string[]>, RegExp]> = [
      [{ entity_id: d.records.item }, /entity_type is required/],
      [{ entity_type: 'invoice', entity_id: d.records.item }, /entity_type must be one of/],
      [{ entity_type: 'item' }, /entity_id is required/],
      [{ entity_type: 'item', entity_id: 'not-a-uuid' }, /entity_id/],
      [{ ...onItem(), colour: 'red' }, /colour is not a field/],
      [{ ...onItem(), entity_type: ['item', 'order'] }, /entity_type was sent 2 times/],
      [{ ...onItem(), description: 'x'.repeat(2001) }, /description/],
      [{ ...onItem(), tags: Array.from({ length: 21 }, (_, i) => `t${i}`).join(',') }, /tags/],
      [{ ...onItem(), tags: 'x'.repeat(51) }, /tags/],
      [{ ...onItem(), description: 'x'.repeat(9000) }, /description is too long/],
    ];
    for (const [fields, message] of cases) refused(await upload(d.t, d.t.adminKey, fields), 400, 'bad_request', message);
  });

  test('a broken multipart body is 400: no boundary, a wrong boundary, cut short', async () => {
    const body = await multipart(onItem(), { file: samplePdf() });
    refused(await postRaw(d.t, d.t.adminKey, body.payload, 'multipart/form-data'), 400, 'bad_request', /multipart/);
    refused(await postRaw(d.t, d.t.adminKey, body.payload, 'multipart/form-data; boundary=nothing-like-it'), 400, 'bad_request');
    refused(await postRaw(d.t, d.t.adminKey, body.payload.subarray(0, body.payload.length - 60), body.contentType), 400, 'bad_request');
  });
});

describe('the record must exist', () => {
  test('a missing record, or an exception of another kind, is 404', async () => {
    refused(await upload(d.t, d.t.adminKey, { entity_type: 'order', entity_id: '00000000-0000-4000-8000-000000000000' }), 404, 'not_found', /order/);
    refused(await upload(d.t, d.t.adminKey, { entity_type: 'mispick_exception', entity_id: d.records.shortPick }), 404, 'not_found', /mispick/);
    refused(await upload(d.t, d.t.adminKey, { entity_type: 'item', entity_id: d.records.order }), 404, 'not_found', /item/);
  });
});
