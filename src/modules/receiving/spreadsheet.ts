// Reads an uploaded receiving file (CSV or XLSX) into rows of cells, refusing anything that could cost the service
// more than the file is worth: archives that inflate past a limit, sheets wider or longer than a receipt, formulas
// (their value is whatever the authoring tool cached, or nothing) and oversized cells.
import { CsvError, parse } from 'csv-parse/sync';
import { unzipSync } from 'fflate';
import { readSheet } from 'read-excel-file/universal';
import { ApiError, badRequest } from '../../domain/errors.ts';

export type Cell = string | number | boolean | null;
export type FileKind = 'csv' | 'xlsx';

export const CSV_TYPE = 'text/csv';
export const XLSX_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
export const MAX_UPLOAD_BYTES = 5 * 1024 * 1024;
/** Data rows below the header: a receipt is never longer. */
export const MAX_DATA_ROWS = 10_000;
export const MAX_CELL_CHARS = 1_000;
// The XML inside an XLSX may inflate to this much in total (zip bombs declare, and are held to, their sizes).
const MAX_INFLATED_BYTES = 40 * 1024 * 1024;
const MAX_COLUMNS = 100;
const MAX_SHEET_ROWS = 12_000;

const ZIP_MAGIC = [0x50, 0x4b, 0x03, 0x04];
const isZip = (bytes: Uint8Array) => ZIP_MAGIC.every((b, i) => bytes[i] === b);
// Every part the reader could open (it reads the .xml and .xml.rels parts, wherever the relationships put them).
const isXmlPart = (name: string) => name.endsWith('.xml') || name.endsWith('.rels');

// The reader drops namespace prefixes from element and attribute names (`<x:c x:r="...">` is a cell to it), so this
// matches a `<c>` or `<row>` start tag with any prefix.
const CELL_OR_ROW_TAG = /<(?:[^\s<>/:]*:)?(c|row)(?=[\s/>])/g;
const CELL_ADDRESS = /^([A-Z]{1,3})([1-9][0-9]*)$/;
const ROW_NUMBER = /^[1-9][0-9]*$/;
const SHEET_DATA = /<(?:[^\s<>/:]*:)?sheetData[\s/>]/;
const FORMULA = /<(?:[^\s<>/:]*:)?f[\s/>]/;

function columnNumber(letters: string): number {
  let n = 0;
  for (const ch of letters) n = n * 26 + (ch.charCodeAt(0) - 64);
  return n;
}

const shown = (text: string) => (text.length > 20 ? `${text.slice(0, 20)}...` : text);
const isSpace = (ch: string | undefined) => ch === ' ' || ch === '\t' || ch === '\n' || ch === '\r';

/**
 * The attributes of the start tag whose name ends before `at`, read strictly (whitespace, a name, `=`, a value in
 * double or single quotes) up to its `>`; null when the tag is anything else, which is refused rather than guessed at.
 * A loop, not a regular expression: a tag padded with a megabyte of spaces must not make matching quadratic.
 */
function tagAttributes(xml: string, at: number): [string, string][] | null {
  const attributes: [string, string][] = [];
  let i = at;
  for (;;) {
    const start = i;
    while (isSpace(xml[i])) i++;
    if (xml[i] === '>' || (xml[i] === '/' && xml[i + 1] === '>')) return attributes;
    if (i === start) return null;
    const nameStart = i;
    while (i < xml.length && !isSpace(xml[i]) && !'=/>"\'<'.includes(xml[i]!)) i++;
    if (i === nameStart || xml[i] !== '=') return null;
    const quote = xml[i + 1];
    if (quote !== '"' && quote !== "'") return null;
    const end = xml.indexOf(quote, i + 2);
    if (end < 0) return null;
    const value = xml.slice(i + 2, end);
    if (value.includes('<')) return null;
    attributes.push([xml.slice(nameStart, i), value]);
    i = end + 1;
  }
}

/**
 * Every `r` of every cell and row in the part must be a plain reference inside a receipt's range: the reader computes
 * a column from any characters' codes (`zzz2` is column 40,774), reads a row from any number, and fills the gap up to
 * them with empty cells, so one far or malformed address would cost gigabytes.
 */
function checkAddresses(part: string, xml: string): void {
  for (const tag of xml.matchAll(CELL_OR_ROW_TAG)) {
    const element = tag[1]!;
    const attributes = tagAttributes(xml, tag.index + tag[0].length);
    if (!attributes) throw badRequest(`the workbook has a <${element}> element that cannot be read safely (in ${part})`);
    for (const [name, value] of attributes) {
      if (name.split(':').pop() !== 'r') continue;
      if (element === 'row') {
        if (!ROW_NUMBER.test(value)) throw badRequest(`the workbook has a row numbered "${shown(value)}", not a plain row number (in ${part})`);
        if (Number(value) > MAX_SHEET_ROWS) throw badRequest(`the workbook has cells beyond column ${MAX_COLUMNS} or row ${MAX_SHEET_ROWS} (row ${shown(value)})`);
        continue;
      }
      const address = CELL_ADDRESS.exec(value);
      if (!address) throw badRequest(`the workbook has a cell addressed "${shown(value)}", not a plain reference like B7 (in ${part})`);
      if (columnNumber(address[1]!) > MAX_COLUMNS || Number(address[2]) > MAX_SHEET_ROWS) {
        throw badRequest(`the workbook has cells beyond column ${MAX_COLUMNS} or row ${MAX_SHEET_ROWS} (cell ${shown(value)})`);
      }
    }
  }
}

/**
 * Checks the archive before the reader inflates it: the declared sizes of its XML parts (fflate inflates a part into
 * a buffer of its declared size, so a part cannot grow past it) and no two parts of one name; then every XML part,
 * wherever it is stored (the workbook relationships may put a sheet anywhere), for cells and rows addressed outside a
 * receipt's range, and every part holding sheet data for formulas.
 */
function inspectWorkbook(bytes: Uint8Array): void {
  let inflated = 0;
  let parts: Record<string, Uint8Array>;
  const names = new Set<string>();
  let duplicate = false;
  try {
    unzipSync(bytes, {
      filter: (file) => {
        if (names.has(file.name)) duplicate = true;
        names.add(file.name);
        if (isXmlPart(file.name)) inflated += file.originalSize;
        return false;
      },
    });
    if (inflated > MAX_INFLATED_BYTES) throw badRequest(`the workbook inflates to more than ${MAX_INFLATED_BYTES / 1024 / 1024} MB`);
    // Which copy the reader would take is not defined.
    if (duplicate) throw badRequest('the workbook holds two parts of the same name');
    parts = unzipSync(bytes, { filter: (file) => isXmlPart(file.name) });
  } catch (error) {
    if (error instanceof ApiError) throw error;
    throw badRequest('the file is not a readable XLSX workbook');
  }
  const decoder = new TextDecoder();
  for (const [name, part] of Object.entries(parts)) {
    const xml = decoder.decode(part);
    // Only sheet data holds cells; charts keep their series references in <c:f> elements, which are not formulas of cells.
    if (SHEET_DATA.test(xml) && FORMULA.test(xml)) throw badRequest('the workbook contains formulas; paste the values instead');
    checkAddresses(name, xml);
  }
}

async function readXlsx(bytes: Buffer, sheetName: string | null): Promise<Sheet> {
  if (!isZip(bytes)) throw badRequest('the file is not an XLSX workbook');
  inspectWorkbook(bytes);
  const buffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  try {
    const rows = (await readSheet(buffer, sheetName ?? 1, { trim: true }))
      .map((row) => row.map((cell) => (cell instanceof Date ? cell.toISOString().slice(0, 10) : (cell as Cell))));
    // The reader keeps empty rows, so row i is the sheet's row i + 1.
    return { rows, lines: rows.map((_, i) => i + 1) };
  } catch (error) {
    const name = (error as Error).name;
    if (name === 'SheetNotFoundError') throw badRequest(`the workbook has no sheet named "${sheetName}"`);
    throw badRequest('the file is not a readable XLSX workbook');
  }
}

/** The file line each CSV record starts on (from the byte offsets of the record starts): a quoted cell may hold line breaks. */
function lineNumbers(bytes: Buffer, starts: number[]): number[] {
  let line = 1;
  let at = 0;
  return starts.map((start) => {
    for (; at < start; at++) {
      // \r\n, \n and a lone \r each end one line.
      if (bytes[at] === 0x0a || (bytes[at] === 0x0d && bytes[at + 1] !== 0x0a)) line++;
    }
    return line;
  });
}

function readCsv(bytes: Buffer): Sheet {
  if (isZip(bytes) || bytes.includes(0)) throw badRequest('the file is not a CSV text file');
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw badRequest('the CSV file is not UTF-8 text');
  }
  let records: { record: string[]; info: { bytes: number } }[];
  try {
    // Parsed from the bytes, so info.bytes (where each record ends) are offsets into them. (info.lines is not used: it
    // counts a quoted \r\n as two lines.)
    records = parse(bytes, { bom: true, relax_column_count: true, trim: true, max_record_size: 64 * 1024, info: true }) as unknown as typeof records;
  } catch (error) {
    if (error instanceof CsvError) throw badRequest(`the CSV file cannot be read: ${error.message}`);
    throw error;
  }
  // A record starts where the one before it ended.
  return { rows: records.map((r) => r.record), lines: lineNumbers(bytes, records.map((_, i) => (i === 0 ? 0 : records[i - 1]!.info.bytes))) };
}

/** The rows of a file, each an array of cells (empty cells as null or ''), and the file row or line each starts on. */
export interface Sheet {
  rows: Cell[][];
  lines: number[];
}

/** The file's rows with the size rules applied. */
export async function readRows(bytes: Buffer, kind: FileKind, sheetName: string | null): Promise<Sheet> {
  if (bytes.length === 0) throw badRequest('the file is empty');
  const sheet = kind === 'csv' ? readCsv(bytes) : await readXlsx(bytes, sheetName);
  const { rows, lines } = sheet;
  if (rows.length === 0) throw badRequest('the file holds no rows');
  if (rows.length > MAX_SHEET_ROWS) throw badRequest(`the file has more than ${MAX_SHEET_ROWS} rows`);
  rows.forEach((row, r) => row.forEach((cell, c) => {
    if (typeof cell === 'string' && cell.length > MAX_CELL_CHARS) {
      throw badRequest(`row ${lines[r]}, column ${c + 1}: a cell holds more than ${MAX_CELL_CHARS} characters`);
    }
  }));
  return sheet;
}
