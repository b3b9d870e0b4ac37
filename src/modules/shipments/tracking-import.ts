// Tracking in bulk, from a carrier's manifest or the office's spreadsheet: CSV rows that each name a batch
// (batch_number) or an order (order_number, when exactly one of its batches can take tracking) with the tracking
// number and carrier of its primary box. All rows apply in one transaction, or none: every row that cannot be applied
// is named in the 422's details with why.
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Carrier } from '../../db/column-types.ts';
import type { DB } from '../../db/schema.ts';
import { inTransaction } from '../../db/transaction.ts';
import { invalidRequest } from '../../domain/errors.ts';
import { inPartnerScope, type Actor } from '../../http/auth.ts';
import { CARRIERS } from '../picking/schemas.ts';
import { captureTracking } from '../picking/shipping.ts';
import { lockBatch } from '../picking/queries.ts';
import { readRows } from '../receiving/spreadsheet.ts';

export const MAX_TRACKING_ROWS = 5_000;
const MAX_TRACKING_CHARS = 120;
// Tracking is known once the batch is picked, and often only after it left (the carrier's manifest).
const TRACKABLE = ['completed', 'packed', 'shipped'];

/** Why a batch cannot take tracking now, or null when it can. */
export const untrackable = (batch: { batch_number: string; status: string }) =>
  (TRACKABLE.includes(batch.status) ? null : `batch ${batch.batch_number} is ${batch.status}; tracking goes on a completed, packed or shipped batch`);

/** How a row names its batch: by number, or as the one batch of an order that can take tracking. */
export interface BatchNames {
  batchNumber: string | null;
  orderNumber: number | null;
}

interface Wanted extends BatchNames {
  row: number;
  tracking: { tracking_number: string; carrier: Carrier };
}

export interface RowProblem {
  row: number;
  reason: string;
}

type Candidate = Awaited<ReturnType<typeof candidates>>[number];

const text = (cell: unknown) => (cell === null || cell === undefined ? '' : String(cell).trim());

/** The rows of the file, checked one by one; `row` is the file's line number the row starts on (the header is 1). */
async function readTrackingRows(bytes: Buffer): Promise<{ wanted: Wanted[]; problems: RowProblem[] }> {
  const sheet = await readRows(bytes, 'csv', null);
  if (sheet.rows.length === 0) throw invalidRequest('the file is empty: send a header row (order_number or batch_number, tracking_number, carrier) and a row per batch');
  const header = sheet.rows[0]!.map((cell) => text(cell).toLowerCase());
  const column = (name: string) => header.indexOf(name);
  const missing = ['tracking_number', 'carrier'].filter((name) => column(name) < 0);
  if (column('order_number') < 0 && column('batch_number') < 0) missing.unshift('order_number or batch_number');
  if (missing.length) throw invalidRequest(`the header row lacks ${missing.join(', ')}`, { missing_columns: missing });
  const wanted: Wanted[] = [];
  const problems: RowProblem[] = [];
  const cell = (cells: unknown[], name: string) => (column(name) < 0 ? '' : text(cells[column(name)]));
  sheet.rows.slice(1).forEach((cells, index) => {
    const row = sheet.lines[index + 1]!;
    if (cells.every((value) => text(value) === '')) return;
    const batchNumber = cell(cells, 'batch_number').toUpperCase();
    const orderText = cell(cells, 'order_number');
    const trackingNumber = cell(cells, 'tracking_number');
    const carrier = cell(cells, 'carrier').toLowerCase();
    if (!batchNumber && !orderText) return void problems.push({ row, reason: 'names neither a batch_number nor an order_number' });
    if (orderText && !/^[1-9][0-9]{0,9}$/.test(orderText)) return void problems.push({ row, reason: `order_number ${orderText} is not an order number` });
    if (!trackingNumber || trackingNumber.length > MAX_TRACKING_CHARS) return void problems.push({ row, reason: `tracking_number must be 1 to ${MAX_TRACKING_CHARS} characters` });
    if (!(CARRIERS as readonly string[]).includes(carrier)) return void problems.push({ row, reason: `carrier must be one of ${CARRIERS.join(', ')}` });
    wanted.push({ row, batchNumber: batchNumber || null, orderNumber: orderText ? Number(orderText) : null, tracking: { tracking_number: trackingNumber, carrier: carrier as Carrier } });
  });
  if (wanted.length + problems.length === 0) throw invalidRequest('the file has a header row but no rows');
  if (wanted.length + problems.length > MAX_TRACKING_ROWS) throw invalidRequest(`at most ${MAX_TRACKING_ROWS} rows per file`);
  return { wanted, problems };
}

/** The batches the rows name, by batch number or by order number, in the key's partner scope. */
function candidates(db: Kysely<DB> | Transaction<DB>, actor: Pick<Actor, 'manufacturerId'>, wanted: BatchNames[]) {
  const batchNumbers = wanted.flatMap((w) => (w.batchNumber ? [w.batchNumber] : []));
  const orderNumbers = wanted.flatMap((w) => (w.orderNumber ? [w.orderNumber] : []));
  return inPartnerScope(db.selectFrom('pick_batches as b').innerJoin('orders as o', 'o.id', 'b.order_id')
    .select(['b.id', 'b.batch_number', 'b.status', 'b.order_id', 'o.order_number', 'b.tracking_number', 'b.tracking_carrier'])
    .where((eb) => eb.or([
      eb('b.batch_number', '=', sql<string>`any(${batchNumbers}::text[])`),
      eb('o.order_number', '=', sql<number>`any(${orderNumbers}::int[])`),
    ])), actor, 'b.manufacturer_id').orderBy('b.created_at').execute();
}

/** The batch a row names, or why it names none. */
function resolve(want: BatchNames, found: Candidate[]): Candidate | string {
  if (want.batchNumber) {
    const batch = found.find((b) => b.batch_number === want.batchNumber);
    if (!batch) return `batch ${want.batchNumber} not found`;
    if (want.orderNumber && batch.order_number !== want.orderNumber) return `batch ${want.batchNumber} is not a batch of order ${want.orderNumber}`;
    return batch;
  }
  const ofOrder = found.filter((b) => b.order_number === want.orderNumber && TRACKABLE.includes(b.status));
  if (ofOrder.length === 0) return `order ${want.orderNumber} has no completed, packed or shipped batch`;
  if (ofOrder.length > 1) return `ambiguous: order ${want.orderNumber} has ${ofOrder.length} batches (${ofOrder.map((b) => b.batch_number).join(', ')}); name the batch_number`;
  return ofOrder[0]!;
}

/** The batch a carrier's message names (as a file's row would), or why it names none. */
export async function batchToTrack(tx: Transaction<DB>, names: BatchNames) {
  return resolve(names, await candidates(tx, { manufacturerId: null }, [names]));
}

const sameTracking = (batch: { tracking_number: string | null; tracking_carrier: string | null }, want: Wanted) =>
  batch.tracking_number === want.tracking.tracking_number && batch.tracking_carrier === want.tracking.carrier;

export async function importTracking(db: Kysely<DB>, actor: Actor, bytes: Buffer, confirmOverwrite: boolean) {
  const { wanted, problems } = await readTrackingRows(bytes);
  return inTransaction(db, async (tx) => {
    const found = await candidates(tx, actor, wanted);
    const planned: { want: Wanted; batch: Candidate }[] = [];
    const rowOfBatch = new Map<string, number>();
    for (const want of wanted) {
      const batch = resolve(want, found);
      const earlier = typeof batch === 'string' ? undefined : rowOfBatch.get(batch.id);
      if (typeof batch === 'string') problems.push({ row: want.row, reason: batch });
      else if (earlier !== undefined) problems.push({ row: want.row, reason: `batch ${batch.batch_number} is on row ${earlier} too` });
      else {
        rowOfBatch.set(batch.id, want.row);
        planned.push({ want, batch });
      }
    }
    // Each batch locked as every batch action locks it (its order, then it), in one order for all: no deadlock. The
    // checks that depend on its state are made on the locked row.
    planned.sort((a, b) => (a.batch.order_id + a.batch.id < b.batch.order_id + b.batch.id ? -1 : 1));
    const locked = [];
    for (const { want, batch } of planned) {
      const row = await lockBatch(tx, actor, batch.id);
      const refusal = untrackable(row);
      if (refusal) problems.push({ row: want.row, reason: refusal });
      else if (row.tracking_number !== null && !sameTracking(row, want) && !confirmOverwrite) {
        problems.push({ row: want.row, reason: `would overwrite tracking ${row.tracking_number} (${row.tracking_carrier}) of batch ${row.batch_number}; send confirm_overwrite=true` });
      } else locked.push({ want, batch, row });
    }
    if (problems.length) {
      problems.sort((a, b) => a.row - b.row);
      throw invalidRequest(`${problems.length} row(s) cannot be applied, so none was`, problems);
    }
    const applied = [];
    for (const { want, batch, row } of locked) {
      // The same tracking again changes nothing (a manifest sent twice).
      const changed = !sameTracking(row, want);
      if (changed) await captureTracking(tx, actor, row, want.tracking);
      applied.push({
        row: want.row, batch_id: batch.id, batch_number: batch.batch_number, order_id: batch.order_id, order_number: batch.order_number,
        tracking_number: want.tracking.tracking_number, carrier: want.tracking.carrier, changed,
      });
    }
    return { rows: applied.sort((a, b) => a.row - b.row), changed: applied.filter((row) => row.changed).length };
  });
}
