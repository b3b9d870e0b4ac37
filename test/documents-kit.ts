// Documents tests: an app whose document store is a temporary directory, records of two partners to file documents
// under, multipart requests built with FormData, and sample files of each kind.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { strToU8, zipSync } from 'fflate';
import { adjust, call, createItem, createLocation, createManufacturer, startApp, type Answer, type TestApp } from './helpers.ts';
import { xlsxFile } from './xlsx.ts';

export interface Records {
  partner: string;
  otherPartner: string;
  item: string;
  otherItem: string;
  customer: string;
  order: string;
  otherOrder: string;
  pickBatch: string;
  shortPick: string;
  mispick: string;
  quality: string;
  receivingBatch: string;
}

export interface DocumentsApp {
  t: TestApp;
  dir: string;
  records: Records;
  close(): Promise<void>;
}

async function created(t: TestApp, path: string, body: unknown): Promise<any> {
  const answer = await call(t.app, 'POST', `/api/v1${path}`, { key: t.adminKey, body });
  assert.equal(answer.status, 201, `${path}: ${JSON.stringify(answer.body)}`);
  return answer.body.data;
}

async function orderOf(t: TestApp, partner: string, customer: string, item: string): Promise<string> {
  return (await created(t, '/orders', { manufacturer_id: partner, customer_id: customer, lines: [{ item_id: item, qty_ordered: 1 }] })).order.id;
}

/** The app with its store in a fresh temporary directory, and one record of each entity type (partner A unless "other"). */
export async function startDocumentsApp(env: Record<string, string> = {}): Promise<DocumentsApp> {
  const dir = mkdtempSync(join(tmpdir(), 'wms-documents-'));
  const t = await startApp({ env: { WMS_DOCUMENTS_DIR: dir, ...env } });
  const partner = await createManufacturer(t, 'DOCA');
  const otherPartner = await createManufacturer(t, 'DOCB');
  const bin = await createLocation(t, 'DOC-01');
  const item = await createItem(t, partner, 'DOC-ITEM');
  const otherItem = await createItem(t, otherPartner, 'DOC-OTHER');
  for (const id of [item, otherItem]) assert.equal((await adjust(t, id, 10, bin)).status, 201);
  const customer = (await created(t, '/customers', { account_number: 'DOC-C', name: 'Lakeside Supply' })).id;
  const order = await orderOf(t, partner, customer, item);
  const otherOrder = await orderOf(t, otherPartner, customer, otherItem);
  // Pick batches and exceptions are written straight into their tables: these tests are about documents, not picking.
  const pickBatch = (await t.db.insertInto('pick_batches')
    .values({ order_id: order, manufacturer_id: partner, batch_number: 'PB-DOC-1' })
    .returning('id').executeTakeFirstOrThrow()).id;
  const exception = async (kind: 'short_pick' | 'mispick' | 'quality') => (await t.db.insertInto('pick_exceptions')
    .values({ kind, manufacturer_id: partner, item_id: item, order_id: order, pick_batch_id: pickBatch })
    .returning('id').executeTakeFirstOrThrow()).id;
  const receivingBatch = (await created(t, '/receiving', { manufacturer_id: partner })).batch.id;
  const records: Records = {
    partner, otherPartner, item, otherItem, customer, order, otherOrder, pickBatch,
    shortPick: await exception('short_pick'), mispick: await exception('mispick'), quality: await exception('quality'), receivingBatch,
  };
  return {
    t, dir, records,
    close: async () => {
      await t.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface FilePart {
  bytes: Uint8Array;
  name?: string;
  type?: string;
}

/** A multipart body as a browser sends it: FormData encoded by fetch's Response, with its boundary. */
export async function multipart(fields: Record<string, string | string[]>, files: Record<string, FilePart> = {}) {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) for (const one of [value].flat()) form.append(name, one);
  for (const [name, file] of Object.entries(files)) {
    form.append(name, new Blob([new Uint8Array(file.bytes)], file.type !== undefined ? { type: file.type } : {}), file.name ?? 'upload.bin');
  }
  const encoded = new Response(form);
  return { payload: Buffer.from(await encoded.arrayBuffer()), contentType: encoded.headers.get('content-type')! };
}

/** A multipart body written by hand, for what FormData would encode away (quotes, control characters in a name). */
export function handMadeMultipart(parts: Array<{ name: string; filename?: string; type?: string; value: Uint8Array | string }>) {
  const boundary = 'wms-test-boundary-7d3f';
  const chunks = parts.flatMap((part) => [
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"` +
      `${part.filename !== undefined ? `; filename="${part.filename}"` : ''}\r\n${part.type ? `Content-Type: ${part.type}\r\n` : ''}\r\n`, 'utf8'),
    Buffer.from(part.value),
    Buffer.from('\r\n'),
  ]);
  return { payload: Buffer.concat([...chunks, Buffer.from(`--${boundary}--\r\n`)]), contentType: `multipart/form-data; boundary=${boundary}` };
}

function answerOf(response: { statusCode: number; body: string; headers: Answer['headers'] }): Answer {
  return { status: response.statusCode, body: response.body ? JSON.parse(response.body) : null, headers: response.headers };
}

/** POST /documents with raw bytes and a content type of the test's choosing. */
export async function postRaw(t: TestApp, key: string, payload: Buffer | string, contentType?: string, headers: Record<string, string> = {}): Promise<Answer> {
  const response = await t.app.inject({
    method: 'POST', url: '/api/v1/documents', payload,
    headers: { authorization: `Bearer ${key}`, ...(contentType ? { 'content-type': contentType } : {}), ...headers },
  });
  return answerOf(response);
}

/** POST /documents with the fields and, unless null, one file in the field "file". */
export async function upload(t: TestApp, key: string, fields: Record<string, string | string[]>, file: FilePart | null = samplePdf(), headers: Record<string, string> = {}) {
  const body = await multipart(fields, file ? { file } : {});
  return postRaw(t, key, body.payload, body.contentType, headers);
}

export async function download(t: TestApp, key: string, id: string) {
  return t.app.inject({ method: 'GET', url: `/api/v1/documents/${id}/download`, headers: { authorization: `Bearer ${key}` } });
}

/** Every file under the store's directory, as keys (yyyy/mm/uuid). */
export function storedFiles(dir: string): string[] {
  return (readdirSync(dir, { recursive: true, withFileTypes: true }) as import('node:fs').Dirent[])
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name).slice(dir.length + 1))
    .sort();
}

export const documentCount = async (t: TestApp) =>
  Number((await t.db.selectFrom('documents').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);

// Sample files: real headers of each format, enough for the sniffer.
export const samplePdf = (text = 'hello'): FilePart => ({ bytes: Buffer.from(`%PDF-1.4\n%${text}\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n`), name: 'spec sheet.pdf', type: 'application/pdf' });
export const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8cfc0f01f0005000201a2e4b1fc0000000049454e44ae426082', 'hex');
export const JPEG = Buffer.from('ffd8ffe000104a46494600010100000100010000ffdb004300' + '08'.repeat(64) + 'ffd9', 'hex');
export const GIF = Buffer.from('474946383961010001000000002c00000000010001000002024401003b', 'hex');
export const EXE = Buffer.concat([Buffer.from('MZ\x90\x00\x03\x00\x00\x00\x04\x00\x00\x00\xff\xff\x00\x00', 'latin1'), Buffer.alloc(64)]);
export const HTML = Buffer.from('<!DOCTYPE html><html><body><script>alert(1)</script></body></html>\n');
export const SVG = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>\n');
export const CSV = Buffer.from('item,qty\nHINGE-1,4\n');
export const XLSX = () => xlsxFile({ Sheet1: [['item', 'qty'], ['HINGE-1', 4]] });
export const DOCX = () => Buffer.from(zipSync({
  '[Content_Types].xml': strToU8('<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">' +
    '<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>'),
  'word/document.xml': strToU8('<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"/>'),
}));
export const XLSM = () => Buffer.from(zipSync({
  '[Content_Types].xml': strToU8('<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">' +
    '<Override PartName="/xl/workbook.xml" ContentType="application/vnd.ms-excel.sheet.macroEnabled.main+xml"/></Types>'),
  'xl/workbook.xml': strToU8('<workbook/>'),
}));
export const ZIP = () => Buffer.from(zipSync({ 'notes.txt': strToU8('hello') }));

export const DOCUMENT_KEYS = [
  'id', 'entity_type', 'entity_id', 'manufacturer_id', 'file_name', 'file_type', 'storage_key', 'file_size', 'description',
  'uploaded_by', 'uploaded_at', 'created_at', 'updated_at', 'tags', 'uploaded_by_name',
].sort();
