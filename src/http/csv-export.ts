// Exports: `Accept: text/csv` on a list or a report answers every row its filters match, not a page, written to the
// client while it is read.
import { PassThrough, Readable } from 'node:stream';
import { CompiledQuery, type Compilable, type Kysely } from 'kysely';
import type { FastifyReply } from 'fastify';
import type { DB } from '../db/schema.ts';
import { inReadSnapshot } from '../db/transaction.ts';
import { unavailable } from '../domain/errors.ts';
import { CSV, csvOf, sendFile } from './representations.ts';

/** Rows per FETCH and per CSV chunk: what an export holds in memory at a time. */
const BATCH_ROWS = 250;
/**
 * Exports running at once in this process. Each holds a database connection for its whole transfer; the rest of the
 * pool stays for the warehouse's requests (one more export is 503 with Retry-After).
 */
const MAX_RUNNING = 3;
/** A client that stops reading for this long is cut off, so its connection does not stay taken. */
const STALLED_MS = 30_000;
let running = 0;

/** Resolves true once the stream takes more, false when the client went away or stopped reading (the stream is closed). */
function written(body: PassThrough, text: string): Promise<boolean> | boolean {
  if (body.destroyed) return false;
  if (body.write(text)) return true;
  return new Promise((resolve) => {
    const settle = (more: boolean) => () => {
      clearTimeout(stalled);
      body.off('drain', onDrain).off('close', onClose);
      resolve(more);
    };
    const onDrain = settle(true);
    const onClose = settle(false);
    const stalled = setTimeout(() => body.destroy(new Error(`the client read nothing for ${STALLED_MS / 1000} s`)), STALLED_MS);
    body.once('drain', onDrain).once('close', onClose);
  });
}

/**
 * Every row of the query as CSV, read through a server-side cursor in one read-only snapshot (the rows agree with
 * each other while the warehouse writes) and sent batch by batch, so memory stays at one batch however many rows match.
 * The first batch is read before the answer starts: a query that fails at once is still answered in the error
 * envelope; one that fails later cuts the transfer short (the client sees an incomplete body, never a wrong one).
 */
export async function sendCsvExport<Row>(
  reply: FastifyReply,
  db: Kysely<DB>,
  { query, columns, fileName, toRow }: { query: Compilable<Row>; columns: readonly string[]; fileName: string; toRow: (row: Row) => Record<string, unknown> },
) {
  if (running >= MAX_RUNNING) throw unavailable(`${MAX_RUNNING} exports are running; send the request again in a moment`);
  running++;
  const compiled = query.compile();
  const body = new PassThrough();
  let firstBatchRead!: () => void;
  let firstBatchFailed!: (error: unknown) => void;
  const firstBatch = new Promise<void>((resolve, reject) => ([firstBatchRead, firstBatchFailed] = [resolve, reject]));
  let answering = false;
  inReadSnapshot(db, async (tx) => {
    await tx.executeQuery(CompiledQuery.raw(`declare wms_export no scroll cursor for ${compiled.sql}`, [...compiled.parameters]));
    for (let batch = 0; ; batch++) {
      const { rows } = await tx.executeQuery<Row>(CompiledQuery.raw(`fetch forward ${BATCH_ROWS} from wms_export`));
      const text = csvOf(rows.map(toRow), columns, { header: batch === 0 });
      if (batch === 0) firstBatchRead();
      // The client went away: the transaction ends and gives its connection back.
      if (!(await written(body, text))) return;
      if (rows.length < BATCH_ROWS) return;
    }
  }).finally(() => running--).then(() => body.end(), (error: unknown) => {
    firstBatchFailed(error);
    // Once the reply has the stream, Fastify sees the error and cuts the connection; before, nobody listens for it.
    if (answering) body.destroy(error as Error);
    else body.destroy();
  });
  await firstBatch;
  answering = true;
  return sendFile(reply, CSV, fileName, body);
}

/** Rows already computed (a report's, in one snapshot) as CSV, written in batches rather than one string. */
export function sendCsvRows(reply: FastifyReply, fileName: string, rows: readonly Record<string, unknown>[], columns: readonly string[]) {
  function* batches() {
    for (let start = 0; start === 0 || start < rows.length; start += BATCH_ROWS) {
      yield csvOf(rows.slice(start, start + BATCH_ROWS), columns, { header: start === 0 });
    }
  }
  return sendFile(reply, CSV, fileName, Readable.from(batches()));
}
