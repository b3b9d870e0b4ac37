// Reads an uploaded receiving file (CSV or XLSX) into rows of cells, refusing anything that could cost the service
// more than the file is worth: archives that inflate past a limit, sheets wider or longer than a receipt, formulas
// (their value is whatever the authoring tool cached, or nothing) and oversized cells.
import { CsvError, parse } from 'csv-parse/sync';
import { unzipSync } from 'fflate';
import { readSheet } from 'read-excel-file/universal';
import { ApiError, badRequest } from '../../http/errors.ts';

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
const isXmlPart = (name: string) => name.endsWith('.xml') || name.endsWith('.rels');
const isWorksheet = (name: string) => /^xl\/worksheets\/[^/]+\.xml$/.test(name);

function columnNumber(letters: string): number {
  let n = 0;
  for (const ch of letters) n = n * 26 + (ch.charCodeAt(0) - 64);
  return n;
}

/**
 * Checks the archive before the reader inflates it: the declared sizes of its XML parts (fflate inflates a part into
 * a buffer of its declared size, so a part cannot grow past it), then every worksheet for formulas and for cells
 * addressed far outside a receipt's range (the reader would fill the gap up to them).
 */
function inspectWorkbook(bytes: Uint8Array): void {
  let inflated = 0;
  let worksheets: Record<string, Uint8Array>;
  try {
    unzipSync(bytes, {
      filter: (file) => {
        if (isXmlPart(file.name)) inflated += file.originalSize;
        return false;
      },
    });
    if (inflated > MAX_INFLATED_BYTES) throw badRequest(`the workbook inflates to more than ${MAX_INFLATED_BYTES / 1024 / 1024} MB`);
    worksheets = unzipSync(bytes, { filter: (file) => isWorksheet(file.name) });
  } catch (error) {
    if (error instanceof ApiError) throw error;
    throw badRequest('the file is not a readable XLSX workbook');
  }
  const decoder = new TextDecoder();
  for (const part of Object.values(worksheets)) {
    const xml = decoder.decode(part);
    if (/<(?:[A-Za-z_][\w.-]*:)?f[\s>/]/.test(xml)) throw badRequest('the workbook contains formulas; paste the values instead');
    for (const [, letters, row] of xml.matchAll(/<(?:[A-Za-z_][\w.-]*:)?c\b[^>]*?\br="([A-Z]{1,3})(\d+)"/g)) {
      if (columnNumber(letters!) > MAX_COLUMNS || Number(row) > MAX_SHEET_ROWS) {
        throw badRequest(`the workbook has cells beyond column ${MAX_COLUMNS} or row ${MAX_SHEET_ROWS} (cell ${letters}${row})`);
      }
    }
  }
}

async function readXlsx(bytes: Buffer, sheetName: string | null): Promise<Cell[][]> {
  if (!isZip(bytes)) throw badRequest('the file is not an XLSX workbook');
  inspectWorkbook(bytes);
  const buffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  try {
    const rows = await readSheet(buffer, sheetName ?? 1, { trim: true });
    return rows.map((row) => row.map((cell) => (cell instanceof Date ? cell.toISOString().slice(0, 10) : (cell as Cell))));
  } catch (error) {
    const name = (error as Error).name;
    if (name === 'SheetNotFoundError') throw badRequest(`the workbook has no sheet named "${sheetName}"`);
    throw badRequest('the file is not a readable XLSX workbook');
  }
}

function readCsv(bytes: Buffer): Cell[][] {
  if (isZip(bytes) || bytes.includes(0)) throw badRequest('the file is not a CSV text file');
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw badRequest('the CSV file is not UTF-8 text');
  }
  try {
    return parse(text, { bom: true, relax_column_count: true, trim: true, max_record_size: 64 * 1024 }) as string[][];
  } catch (error) {
    if (error instanceof CsvError) throw badRequest(`the CSV file cannot be read: ${error.message}`);
    throw error;
  }
}

/** The file's rows, each an array of cells (empty cells as null or ''), with the size rules applied. */
export async function readRows(bytes: Buffer, kind: FileKind, sheetName: string | null): Promise<Cell[][]> {
  if (bytes.length === 0) throw badRequest('the file is empty');
  const rows = kind === 'csv' ? readCsv(bytes) : await readXlsx(bytes, sheetName);
  if (rows.length === 0) throw badRequest('the file holds no rows');
  if (rows.length > MAX_SHEET_ROWS) throw badRequest(`the file has more than ${MAX_SHEET_ROWS} rows`);
  rows.forEach((row, r) => row.forEach((cell, c) => {
    if (typeof cell === 'string' && cell.length > MAX_CELL_CHARS) {
      throw badRequest(`row ${r + 1}, column ${c + 1}: a cell holds more than ${MAX_CELL_CHARS} characters`);
    }
  }));
  return rows;
}
