// Receiving targets of issue 6 on the bench data set: posting a 200-line batch (< 2 s) and importing a 5,000-row CSV
// file (< 5 s), each timed end to end through the API, a few runs each; the worst run is held against the target.
import { sql } from 'kysely';
import { connectPostgres } from '../src/db/connect.ts';

const POST_LINES = 200;
const CSV_ROWS = 5000;
const RUNS = 3;

export interface ReceivingRow {
  operation: string;
  runs_ms: number[];
  worst_ms: number;
  target_ms: number;
  met: boolean;
}

interface PartnerItem {
  id: string;
  item_number_display: string;
}

/** The partner with the most active items, and those items (every partner has a primary bin per item). */
export async function partnerItems(url: string): Promise<{ manufacturerId: string; items: PartnerItem[] }> {
  const database = connectPostgres(url, { poolSize: 1, statementTimeoutMs: 0 });
  try {
    const { rows: [partner] } = await sql<{ manufacturer_id: string }>`select manufacturer_id from items where status = 'active'
      group by manufacturer_id order by count(*) desc, manufacturer_id limit 1`.execute(database.db);
    const { rows } = await sql<PartnerItem>`select id, item_number_display from items
      where manufacturer_id = ${partner!.manufacturer_id} and status = 'active' order by item_number_normalized`.execute(database.db);
    return { manufacturerId: partner!.manufacturer_id, items: rows };
  } finally {
    await database.close();
  }
}

export async function measureReceiving(service: string, headers: Record<string, string>, databaseUrl: string): Promise<ReceivingRow[]> {
  const { manufacturerId, items } = await partnerItems(databaseUrl);
  const call = async (method: string, path: string, body?: unknown, contentType = 'application/json') => {
    const response = await fetch(`${service}/api/v1${path}`, {
      method, headers: { ...headers, ...(body === undefined ? {} : { 'content-type': contentType }) },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text.slice(0, 300)}`);
    return JSON.parse(text) as { data: any };
  };
  const timed = async (work: () => Promise<unknown>) => {
    const started = performance.now();
    await work();
    return Math.round(performance.now() - started);
  };

  // A verified batch of 200 lines, every tenth with one unit failed (quarantine), the rest passed: only the post is timed.
  const postRuns: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    const lines = items.slice(run * POST_LINES, (run + 1) * POST_LINES).map((item, i) => ({ item_id: item.id, qty_received: 5 + (i % 7), new_unit_cost: 3 + (i % 11) }));
    const { data } = await call('POST', '/receiving/import', { manufacturer_id: manufacturerId, lines });
    const batchId = data.batch.id as string;
    await call('POST', `/receiving/${batchId}/verify`);
    for (const [i, line] of (data.lines as { id: string; qty_received: number }[]).entries()) {
      if (i % 10 === 0) await call('POST', `/receiving/${batchId}/lines/${line.id}/inspection`, { qty_passed: line.qty_received - 1, qty_failed: 1 });
      else await call('POST', `/receiving/${batchId}/lines/${line.id}/pass`);
    }
    postRuns.push(await timed(() => call('POST', `/receiving/${batchId}/post`)));
  }

  // 5,000 rows over the partner's item numbers, written as people type them (lowercase, no dashes on every third).
  await call('PUT', `/receiving/import-profiles/${manufacturerId}`, { header_row: 1, column_map: { item: 'Item number', qty: 'Qty', ref: 'PO', cost: 'Unit cost' } });
  const csv = ['Item number,Qty,PO,Unit cost', ...Array.from({ length: CSV_ROWS }, (_, i) => {
    const number = items[i % items.length]!.item_number_display;
    return `${i % 3 === 0 ? number.toLowerCase().replaceAll('-', '') : number},${1 + (i % 40)},PO-${1000 + (i % 50)},${(2 + (i % 13) / 4).toFixed(2)}`;
  })].join('\n');
  const importRuns: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    importRuns.push(await timed(async () => {
      const { data } = await call('POST', `/receiving/import-file?manufacturer_id=${manufacturerId}`, csv, 'text/csv');
      if (data.added !== CSV_ROWS) throw new Error(`the CSV import added ${data.added} of ${CSV_ROWS} rows`);
    }));
  }

  const row = (operation: string, runs: number[], target: number): ReceivingRow => {
    const worst = Math.max(...runs);
    return { operation, runs_ms: runs, worst_ms: worst, target_ms: target, met: worst < target };
  };
  return [row(`post a ${POST_LINES}-line batch`, postRuns, 2000), row(`import a ${CSV_ROWS}-row CSV file`, importRuns, 5000)];
}

export function printReceiving(rows: ReceivingRow[]): void {
  console.log('\nreceiving                        runs (ms)          worst    target');
  for (const r of rows) {
    console.log(`${r.operation.padEnd(32)} ${r.runs_ms.join(', ').padEnd(18)} ${String(r.worst_ms).padStart(5)}  < ${r.target_ms}  ${r.met ? 'ok' : 'MISS'}`);
  }
}
