// Issue 16's query-plan check on the data set of the run (meant for BENCH_SCALE=large): every list, filter, search and
// ledger query reads its page through an index, never a big table whole; the dated ledger and reports read only the
// months of their range; every report's plan is printed with what it reads whole. The app runs in this process on a
// handle that records its queries, which are then explained with the values they ran with.
import { sql, type Kysely } from 'kysely';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { connectPostgres } from '../src/db/connect.ts';
import { containsPattern } from '../src/db/like.ts';
import type { DB } from '../src/db/schema.ts';
import { memoryCounterStore } from '../src/http/rate-limit.ts';
import { functionPlans, ITEM_MATCHES_FUNCTION, MONTH_SUFFIX, pagedReads, plansOfRecorded, queryRecorder, relationsOf, SEARCH_FUNCTION, seqScans } from './plan-check.ts';

export interface PlanRow {
  url: string;
  ms: number;
  /** Big tables (or their months, but for months of few rows) read whole. */
  seq_scans: string[];
  /** Months of the ledger read outside the range asked for (dated ledger and reports). */
  months_outside: string[];
  /**
   * What the plan is held to: `page` (lists, searches, ledgers: an index, no big table whole), `months` (dated
   * ledger and reports: only the months of the range; a report may read the catalogue whole), `shown` (reports).
   */
  rule: 'page' | 'months' | 'shown';
}

const REPORTS = ['inventory-valuation', 'stock-status', 'order-fulfillment', 'receiving', 'movements', 'cycle-count-accuracy', 'exceptions', 'velocity'];

const day = (daysAgo: number) => new Date(Date.now() - daysAgo * 86_400_000).toISOString().slice(0, 10);

export async function measurePlans(databaseUrl: string, adminKey: string): Promise<PlanRow[]> {
  const database = connectPostgres(databaseUrl, { poolSize: 2, statementTimeoutMs: 0 });
  const recorder = queryRecorder();
  const app = await buildApp({
    config: loadConfig({ DATABASE_URL: databaseUrl, WMS_READ_CACHE_MB: '0' }), db: database.db.withPlugin(recorder.plugin),
    counters: memoryCounterStore(), logger: false,
  });
  try {
    const { rows: [ids] } = await sql<{ partner: string; customer: string; subscription: string | null }>`select
      (select manufacturer_id from items group by 1 order by count(*) desc limit 1) as partner,
      (select customer_id from orders order by order_number desc limit 1) as customer,
      (select subscription_id from webhook_deliveries group by 1 order by count(*) desc limit 1) as subscription`.execute(database.db);
    const [from, to] = [day(45), day(35)];
    const months = new Set([from, to].map((date) => `inventory_movements_${date.slice(0, 4)}_${date.slice(5, 7)}`));
    const dated = [
      `/api/v1/inventory/movements?from=${from}&to=${to}`, `/api/v1/inventory/movements?manufacturer=${ids!.partner}&from=${from}&to=${to}`,
      `/api/v1/reports/movements?from=${from}&to=${to}`, `/api/v1/reports/velocity?from=${from}&to=${to}`,
    ];
    // The delivery log of the subscription with the most deliveries (the generated one).
    const log = ids!.subscription ? ['', '?status=dead', '?page=100'].map((query) => `/api/v1/webhooks/${ids!.subscription}/deliveries${query}`) : [];
    const urls = [...pagedReads(ids!.partner, ids!.customer), ...log, ...dated, ...REPORTS.map((name) => `/api/v1/reports/${name}`)];
    const rows: PlanRow[] = [];
    for (const url of urls) {
      recorder.captured.length = 0;
      const started = performance.now();
      const answer = await app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${adminKey}` } });
      const ms = Math.round(performance.now() - started);
      if (answer.statusCode !== 200) throw new Error(`${url} answered ${answer.statusCode}: ${answer.body.slice(0, 300)}`);
      const plans = await plansOfRecorded(database.db, recorder.captured);
      const read = plans.flatMap(({ plan }) => relationsOf(plan)).filter((name) => name.startsWith('inventory_movements_'));
      rows.push({
        url, ms,
        seq_scans: await withoutSmallMonths(database.db, [...new Set(plans.flatMap(({ plan }) => seqScans(plan)))]),
        months_outside: dated.includes(url) ? [...new Set(read)].filter((name) => !months.has(name)) : [],
        rule: dated.includes(url) ? 'months' : url.startsWith('/api/v1/reports/') ? 'shown' : 'page',
      });
    }
    // Search and the q= page's matches run inside SQL functions, whose statements an EXPLAIN of the call does not show:
    // their generic plans, for a number of the data set, its prefix, and the number with its last character changed
    // (for its partner); for four of its digits. The time is that of the calls themselves, run after.
    const { rows: [sample] } = await sql<{ number: string }>`select item_number_normalized as number from items
      where length(item_number_normalized) >= 8 order by id limit 1`.execute(database.db);
    const number = sample!.number;
    const digits = number.replace(/\D/g, '').slice(0, 4);
    const searches: [string, string | null][] = [[number, null], [number.slice(0, 4), null], [`${number.slice(0, -1)}${number.endsWith('9') ? '8' : '9'}`, ids!.partner]];
    const functions = [
      { url: `search_item_numbers: ${searches.map(([q]) => q).join(', ')}`, plans: () => functionPlans(database.db, SEARCH_FUNCTION, searches),
        calls: searches.map(([q, partner]) => sql`select count(*) from search_item_numbers(${q}, ${partner}::uuid)`) },
      { url: `item_matches: q=${digits}`, plans: () => functionPlans(database.db, ITEM_MATCHES_FUNCTION, [[digits, digits]]),
        calls: [sql`select count(*) from item_matches(${digits}, ${containsPattern(digits)})`] },
    ];
    for (const { url, plans, calls } of functions) {
      const seq = [...new Set((await plans()).flatMap((plan) => seqScans(plan)))];
      const started = performance.now();
      for (const call of calls) await call.execute(database.db);
      rows.push({ url, ms: Math.round(performance.now() - started), seq_scans: seq, months_outside: [], rule: 'page' });
    }
    return rows;
  } finally {
    await app.close();
    await database.close();
  }
}

/**
 * Months of a partitioned table that hold few rows are rightly read whole (a read of their index would cost more), as
 * the current month early in it: on the 2nd of a month the bench's current month held 1,714 movements, and the
 * partner ledger's plan read it whole beside its other months' indexes. Few is under 10,000 by the table's statistics.
 */
async function withoutSmallMonths(db: Kysely<DB>, relations: string[]): Promise<string[]> {
  const months = relations.filter((name) => MONTH_SUFFIX.test(name));
  if (!months.length) return relations;
  const { rows } = await sql<{ name: string }>`select relname as name from pg_class
    where relname = any(${months}) and reltuples between 0 and 9999`.execute(db);
  return relations.filter((name) => !rows.some((small) => small.name === name));
}

const missed = (row: PlanRow) => row.months_outside.length > 0 || (row.rule === 'page' && row.seq_scans.length > 0);

export function printPlans(rows: PlanRow[]): void {
  const held = rows.filter((row) => row.rule !== 'shown');
  const failed = held.filter(missed);
  console.log(`  ${held.length} list, search, ledger and dated queries checked: ${failed.length ? `${failed.length} MISS` : 'every plan reads its page or its months ok'}`);
  for (const row of failed) console.log(`    MISS ${row.url}: reads ${[...row.seq_scans, ...row.months_outside].join(', ')} (${row.ms} ms)`);
  for (const row of rows.filter((r) => r.rule === 'shown')) {
    console.log(`    report ${row.url.replace('/api/v1/reports/', '')}: ${row.ms} ms${row.seq_scans.length ? `, reads whole: ${row.seq_scans.join(', ')}` : ''}`);
  }
}
