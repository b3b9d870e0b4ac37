// Report targets of issue 15 on the bench data set: every report p99 < 1 s. Each report (and the consignor statement
// of the largest partner) is asked 30 times by 2 clients at once, with its default period and, where a report reads a
// period, over a whole year; the slowest answers are held against the target.
import { sql } from 'kysely';
import { connectPostgres } from '../src/db/connect.ts';
import { percentile } from './stats.ts';

const CLIENTS = 2;
const REQUESTS_PER_CLIENT = 15;
const TARGET_P99_MS = 1000;

export interface ReportRow {
  report: string;
  p50_ms: number;
  p99_ms: number;
  max_ms: number;
  target_ms: number;
  met: boolean;
}

const YEAR = (() => {
  const to = new Date();
  const from = new Date(to.getTime() - 364 * 86_400_000);
  return `from=${from.toISOString().slice(0, 10)}&to=${to.toISOString().slice(0, 10)}`;
})();

async function largestPartner(url: string): Promise<string> {
  const database = connectPostgres(url, { poolSize: 1, statementTimeoutMs: 0 });
  try {
    const { rows: [row] } = await sql<{ manufacturer_id: string }>`select manufacturer_id from items group by 1 order by count(*) desc limit 1`.execute(database.db);
    return row!.manufacturer_id;
  } finally {
    await database.close();
  }
}

export async function measureReports(service: string, headers: Record<string, string>, databaseUrl: string): Promise<ReportRow[]> {
  const partner = await largestPartner(databaseUrl);
  const paths = [
    'inventory-valuation', 'inventory-valuation?group_by=manufacturer', 'inventory-valuation?page=500',
    'stock-status', 'stock-status?below_reorder=1', 'stock-status?page=1000',
    'order-fulfillment', `order-fulfillment?${YEAR}`, 'receiving', `receiving?${YEAR}`,
    'movements', `movements?${YEAR}`, `movements?${YEAR}&manufacturer=${partner}`,
    'cycle-count-accuracy', `cycle-count-accuracy?${YEAR}`, 'exceptions', `exceptions?${YEAR}`,
    'velocity', `velocity?${YEAR}`, `velocity?${YEAR}&bucket=dead`,
  ].map((path) => `/api/v1/reports/${path}`);
  paths.push(`/api/v1/manufacturers/${partner}/statement`, `/api/v1/manufacturers/${partner}/statement?${YEAR}`);
  const rows: ReportRow[] = [];
  for (const path of paths) {
    const times: number[] = [];
    const ask = async () => {
      const started = performance.now();
      const response = await fetch(`${service}${path}`, { headers });
      await response.arrayBuffer();
      if (!response.ok) throw new Error(`${path}: ${response.status}`);
      return performance.now() - started;
    };
    await ask();
    await Promise.all(Array.from({ length: CLIENTS }, async () => {
      for (let i = 0; i < REQUESTS_PER_CLIENT; i++) times.push(await ask());
    }));
    times.sort((a, b) => a - b);
    const p99 = Math.round(percentile(times, 99));
    rows.push({
      report: path.replace('/api/v1/', '').replace(partner, '{largest partner}').replace(YEAR, 'a year'),
      p50_ms: Math.round(percentile(times, 50)), p99_ms: p99, max_ms: Math.round(times.at(-1)!), target_ms: TARGET_P99_MS, met: p99 < TARGET_P99_MS,
    });
  }
  return rows;
}

export function printReports(rows: ReportRow[]): void {
  console.log('\nreports (2 clients, 30 requests each)');
  for (const row of rows) {
    console.log(`  ${row.report.padEnd(74)} p50 ${String(row.p50_ms).padStart(5)} ms  p99 ${String(row.p99_ms).padStart(5)} ms  ${row.met ? 'met' : 'NOT met'} (< ${row.target_ms} ms)`);
  }
}
