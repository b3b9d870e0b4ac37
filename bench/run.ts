// npm run bench: a fresh wms_bench database with generated data, the real service and the floor server as child
// processes, and autocannon (in this process) against each endpoint in turn; prints a table, writes results/latest.json.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { sql } from 'kysely';
import pg from 'pg';
import { createAdminKey } from '../src/bootstrap.ts';
import { connectPostgres } from '../src/db/connect.ts';
import { generate, ITEMS, LARGE, logSubscription, MOVEMENTS, ORDERS, sampleItems, sampleOrders, type Generated, type SampleItem } from './generate.ts';
import { ORDER_LINES, orderBodies } from './orders.ts';
import { cpuMeter, type CpuFigures, type CpuMeter } from './cpu.ts';
import { measureMixed, printMixed, type MixedRead, type ReadFigures } from './mixed.ts';
import { measurePicking, printPicking } from './picking.ts';
import { measureReceiving, partnerItems, printReceiving } from './receiving.ts';
import { measureReports, printReports } from './reports.ts';
import { measurePlans, printPlans } from './plans.ts';
import { measureTooling, printTooling } from './tooling.ts';
import { measureWebhooks, printWebhooks } from './webhooks.ts';

function int(name: string, fallback: number): number {
  const value = Number(process.env[name] || fallback);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer`);
  return value;
}

const ROOT = new URL('../', import.meta.url);
const RESULTS = new URL('./results/', import.meta.url);
const SERVER_URL = process.env.BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
// The large data set has a database of its own, so that neither run throws the other's data away.
const DB_NAME = LARGE ? 'wms_bench_large' : 'wms_bench';
const SERVICE_PORT = int('BENCH_SERVICE_PORT', 18181);
const FLOOR_PORT = int('BENCH_FLOOR_PORT', 18182);
const UNCACHED_PORT = int('BENCH_UNCACHED_PORT', 18183);
const DURATION = int('BENCH_DURATION', 10);
const WARMUP = int('BENCH_WARMUP', 2);
// 10 connections keep both cores busy (server + PostgreSQL) without queueing so deep that p99 only measures the queue.
const CONNECTIONS = int('BENCH_CONNECTIONS', 10);
// As docs/operations.md sizes it for a database server of this machine's cores (Connection pool): more connections
// than that make PostgreSQL spend a quarter to half more CPU on each write, the backends crowding the cores.
const POOL_SIZE = int('BENCH_POOL_SIZE', 2 * availableParallelism());
const SAMPLES = 1000;
// Reuse skips the minute of generation when wms_bench is left from an earlier run (BENCH_KEEP=1), and keeps it again.
const REUSE = process.env.BENCH_REUSE === '1';
const KEEP = process.env.BENCH_KEEP === '1' || REUSE;
const documentsDir = mkdtempSync(join(tmpdir(), 'wms-bench-documents-'));
const ONLY = process.env.BENCH_ONLY?.split(',').map((s) => s.trim()).filter(Boolean) ?? [];

/** A section of targets of its own (reports, receiving, ...): measured and printed when BENCH_ONLY selects it, else []. */
async function section<R>(name: string, what: string, print: (rows: R[]) => void, measure: () => Promise<R[]>): Promise<R[]> {
  if (ONLY.length > 0 && !ONLY.some((word) => name.includes(word))) return [];
  process.stdout.write(`  ${name} (${what}) ...`);
  const rows = await measure();
  console.log(' done');
  print(rows);
  return rows;
}

interface Endpoint {
  name: string;
  base: string;
  paths: string[];
  /** POST bodies, one per request in turn (JSON); GET when absent. */
  bodies?: string[];
  /** Minimum requests/s as a fraction of the floor's; null for the floor itself. */
  minRatio: number | null;
  /** Minimum requests/s in absolute terms (write targets). */
  minRps?: number;
  maxP99Ms: number | null;
  /** Served by the read cache: measured again on an instance without it, so the figures show what the query costs. */
  cached?: boolean;
}

interface Row {
  endpoint: string;
  requests_per_s: number;
  p50_ms: number;
  p99_ms: number;
  ratio_to_floor: number | null;
  /** The floor the ratio is taken to: measured right before this endpoint. */
  floor_rps: number | null;
  non_2xx: number;
  errors: number;
  target: string;
  met: boolean | null;
  /** CPU per request over the timed run; null when nothing was timed. */
  cpu: CpuFigures | null;
  note?: string;
}

const benchUrl = (() => {
  const url = new URL(SERVER_URL);
  url.pathname = `/${DB_NAME}`;
  return url.toString();
})();

/** Runs `work` on a connection to the server's maintenance database (bench databases are made and dropped there). */
async function onServer<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: SERVER_URL });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

const autovacuumRuns = () => onServer(async (client) => (await client.query('show autovacuum')).rows[0].autovacuum === 'on');

const benchDatabaseExists = () => onServer(async (client) => (await client.query('select 1 from pg_database where datname = $1', [DB_NAME])).rowCount === 1);

async function regenerate(): Promise<Generated> {
  await onServer(async (client) => {
    await client.query(`drop database if exists ${DB_NAME} with (force)`);
    await client.query(`create database ${DB_NAME}`);
  });
  return generate(benchUrl);
}

// The data of an earlier run (with the orders its writes added) and a new key for its admin.
async function reuse(): Promise<Generated> {
  console.log('  reusing the data of an earlier run (BENCH_REUSE=1)');
  const database = connectPostgres(benchUrl, { poolSize: 1, statementTimeoutMs: 0 });
  try {
    // As a generation ends: the earlier runs' writes leave dead rows and stale statistics (on a server without
    // autovacuum, all of them), which the next run would measure instead of the service.
    await sql`vacuum analyze`.execute(database.db);
    return { adminKey: await createAdminKey(database.db), timings: [], totalSeconds: 0 };
  } finally {
    await database.close();
  }
}

const children: ChildProcess[] = [];

// Each child's output goes to results/<name>.log: the service's warnings stay readable after the run.
function startChild(name: string, script: string, env: Record<string, string>): ChildProcess {
  const log = createWriteStream(new URL(`${name}.log`, RESULTS));
  const child = spawn(process.execPath, [script], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.pipe(log);
  child.stderr!.pipe(log);
  children.push(child);
  return child;
}

async function stopChildren(): Promise<void> {
  await Promise.all(children.splice(0).map((child) => new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    // A graceful stop closes the pools before the database is dropped; SIGKILL if it hangs.
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    child.once('exit', () => { clearTimeout(timer); resolve(); });
    child.kill('SIGTERM');
  })));
}

async function waitReady(name: string, child: ChildProcess, url: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode}: see bench/results/${name}.log`);
    const ok = await fetch(url).then((r) => r.ok, () => false);
    if (ok) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${name} did not answer ${url} within 60 s`);
}

// A real number with two differing adjacent digits swapped: a typo, so search has to fall through to fuzzy matching.
function misspell(number: string): string {
  const chars = [...number];
  for (let i = chars.length - 2; i > 0; i--) {
    if (/\d/.test(chars[i]!) && /\d/.test(chars[i + 1]!) && chars[i] !== chars[i + 1]) {
      [chars[i], chars[i + 1]] = [chars[i + 1]!, chars[i]!];
      return chars.join('');
    }
  }
  return chars.reverse().join('');
}

/** The reads the targets name (issue 16: the item read >= 0.5x the floor; lists and search >= 0.25x with p99 < 50 ms). */
function targetReads(items: SampleItem[]): MixedRead[] {
  const q = (value: string) => encodeURIComponent(value);
  // Four digits from inside the number: matches a few dozen items by substring, none by description.
  const substring = (n: string) => n.replace(/^\D+/, '').slice(1, 5);
  const search = (values: string[]) => values.map((v) => `/api/v1/items/search?q=${q(v)}`);
  return [
    { name: 'GET /items/{id}', paths: items.map((i) => `/api/v1/items/${i.id}`), minRatio: 0.5, maxP99Ms: null },
    { name: 'GET /items filter=below_reorder', paths: ['/api/v1/items?per_page=50&filter=below_reorder'], minRatio: 0.25, maxP99Ms: 50 },
    { name: 'GET /items q=<substring>', paths: items.map((i) => `/api/v1/items?q=${q(substring(i.item_number_normalized))}`), minRatio: 0.25, maxP99Ms: 50 },
    { name: 'search exact', paths: search(items.map((i) => i.item_number_display)), minRatio: 0.25, maxP99Ms: 50 },
    { name: 'search prefix (5 chars)', paths: search(items.map((i) => i.item_number_display.slice(0, 5))), minRatio: 0.25, maxP99Ms: 50 },
    { name: 'search misspelled', paths: search(items.map((i) => misspell(i.item_number_display))), minRatio: 0.25, maxP99Ms: 50 },
    { name: 'GET /orders status=open', paths: ['/api/v1/orders?status=open&per_page=25'], minRatio: 0.25, maxP99Ms: 50 },
  ];
}

/**
 * The floor's and the office's lists that have no read cache of their own, at the bench data's size (issue 16: lists
 * p99 < 50 ms): pick batches, receipts, exceptions, bins, customers, the items by velocity (never cached: the year
 * moves with the clock) and a subscription's delivery log (null: a database from before the bench generated one).
 */
function officeLists(base: string, logSubscription: string | null): Endpoint[] {
  const list = (name: string, path: string): Endpoint => ({ name, base, paths: [path], minRatio: null, maxP99Ms: 50 });
  return [
    list('GET /pick-batches', '/api/v1/pick-batches'),
    list('GET /receiving', '/api/v1/receiving'),
    list('GET /receiving page=100', '/api/v1/receiving?page=100'),
    list('GET /exceptions', '/api/v1/exceptions'),
    list('GET /exceptions status=open', '/api/v1/exceptions?status=open'),
    list('GET /exceptions page=50', '/api/v1/exceptions?page=50'),
    list('GET /exceptions awaiting_supply_partner=0', '/api/v1/exceptions?awaiting_supply_partner=0'),
    list('GET /locations', '/api/v1/locations?per_page=50'),
    list('GET /locations page=5', '/api/v1/locations?per_page=50&page=5'),
    list('GET /customers q=', '/api/v1/customers?q=ab'),
    list('GET /items velocity=fast', '/api/v1/items?velocity=fast'),
    list('GET /items velocity=slow', '/api/v1/items?velocity=slow'),
    list('GET /items velocity=dead', '/api/v1/items?velocity=dead'),
    ...(logSubscription ? [
      list('GET /webhooks/{id}/deliveries', `/api/v1/webhooks/${logSubscription}/deliveries`),
      list('GET /webhooks/{id}/deliveries status=dead', `/api/v1/webhooks/${logSubscription}/deliveries?status=dead`),
    ] : []),
  ];
}

function endpoints(items: SampleItem[], bodies: string[], logSubscription: string | null): Endpoint[] {
  const service = `http://127.0.0.1:${SERVICE_PORT}`;
  const uncached = `http://127.0.0.1:${UNCACHED_PORT}`;
  const list: Endpoint[] = [
    { name: 'floor GET /floor', base: `http://127.0.0.1:${FLOOR_PORT}`, paths: ['/floor'], minRatio: null, maxP99Ms: null },
    ...targetReads(items).map((read) => ({ ...read, base: service, cached: true })),
    // Writes last, so the rows they add do not move the read figures.
    { name: `POST /orders (${ORDER_LINES} lines)`, base: service, paths: ['/api/v1/orders'], bodies, minRatio: null, minRps: 300, maxP99Ms: 100 },
  ];
  // The targets are measured on a warm read cache: nothing writes while the reads run. The same reads on an instance
  // with WMS_READ_CACHE_MB=0 show the cost of the query itself; when what an answer was made from has changed (the
  // snapshot for lists, the item's row for the item read), a cached route pays that plus one short version round trip
  // (src/http/read-cache.ts). Issue 16 holds these to the same targets: a warehouse writes all day, so the uncached
  // figure is what its users feel.
  const misses = list.filter((e) => e.cached).map((e) => ({ ...e, name: `${e.name} (no read cache)`, base: uncached, cached: false }));
  const writes = list.filter((e) => e.bodies);
  return [...list.filter((e) => !e.bodies), ...misses, ...officeLists(uncached, logSubscription), ...writes]
    .filter((e) => ONLY.length === 0 || e.name === 'floor GET /floor' || ONLY.some((word) => e.name.includes(word)));
}

// Every request picks the next path of a shared rotation, so the connections do not march over the same ids in step.
// `onHeaders` sees each response's raw headers (name, value, name, value, ...).
async function drive(endpoint: Endpoint, headers: Record<string, string>, duration: number, onHeaders?: (raw: string[]) => void) {
  let next = 0;
  const { bodies } = endpoint;
  const setupRequest = (request: { path?: string }) => {
    const n = next++;
    return { ...request, path: endpoint.paths[n % endpoint.paths.length], ...(bodies ? { body: bodies[n % bodies.length] } : {}) };
  };
  const method = bodies ? 'POST' : 'GET';
  const allHeaders = bodies ? { ...headers, 'content-type': 'application/json' } : headers;
  return autocannon({
    url: endpoint.base, connections: CONNECTIONS, duration, timeout: 10, headers: allHeaders, requests: [{ method, setupRequest }],
    ...(onHeaders ? { setupClient: (client) => client.on('headers', (response) => onHeaders(response.headers)) } : {}),
  });
}

/** The CPU meter and the process behind each base url, set once the children run. */
const meters: { cpu?: CpuMeter; pidOf: Map<string, number> } = { pidOf: new Map() };

async function measure(endpoint: Endpoint, headers: Record<string, string>, floorRps: number | null): Promise<Row> {
  const target = [endpoint.minRatio && `>= ${endpoint.minRatio}x floor`, endpoint.minRps && `>= ${endpoint.minRps}/s`, endpoint.maxP99Ms && `p99 < ${endpoint.maxP99Ms} ms`]
    .filter(Boolean).join(', ');
  const empty = { endpoint: endpoint.name, requests_per_s: 0, p50_ms: 0, p99_ms: 0, ratio_to_floor: null, floor_rps: floorRps, non_2xx: 0, errors: 0, target, met: null, cpu: null };
  const sample = await fetch(endpoint.base + endpoint.paths[0], endpoint.bodies
    ? { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: endpoint.bodies.at(-1) }
    : { headers });
  if (sample.status !== (endpoint.bodies ? 201 : 200)) {
    return { ...empty, met: endpoint.minRatio ? false : null, note: `sample answered ${sample.status}: ${(await sample.text()).slice(0, 120)}` };
  }
  await drive(endpoint, headers, WARMUP);
  const stop = await meters.cpu!.start(meters.pidOf.get(endpoint.base)!);
  const r = await drive(endpoint, headers, DURATION);
  const cpu = await stop(r.requests.total);
  const ratio = floorRps ? r.requests.average / floorRps : null;
  const met = endpoint.minRatio === null && endpoint.maxP99Ms === null && !endpoint.minRps ? null
    : (endpoint.minRatio === null || (ratio ?? 0) >= endpoint.minRatio) && (endpoint.maxP99Ms === null || r.latency.p99 < endpoint.maxP99Ms)
      && (!endpoint.minRps || r.requests.average >= endpoint.minRps);
  return { ...empty, ...figuresOf(r), ratio_to_floor: ratio === null ? null : Math.round(ratio * 100) / 100, met, cpu };
}

/** The figures every table prints, from one autocannon run. */
function figuresOf(r: Awaited<ReturnType<typeof autocannon>>) {
  return { requests_per_s: Math.round(r.requests.average), p50_ms: r.latency.p50, p99_ms: r.latency.p99, non_2xx: r.non2xx, errors: r.errors + r.timeouts };
}

/** One read of the mixed load after its warm-up, counting the answers the read cache gave (X-Read-Cache). */
async function measureCounted(endpoint: Endpoint, headers: Record<string, string>): Promise<ReadFigures> {
  let hits = 0;
  let misses = 0;
  const countCache = (raw: string[]) => {
    for (let i = 0; i < raw.length; i += 2) {
      if (raw[i]!.toLowerCase() !== 'x-read-cache') continue;
      if (raw[i + 1] === 'hit') hits++;
      else misses++;
    }
  };
  await drive(endpoint, headers, WARMUP);
  const r = await drive(endpoint, headers, DURATION, countCache);
  return { ...figuresOf(r), cache_hits: hits, cache_misses: misses };
}

function printTable(rows: Row[]): void {
  const header = ['endpoint', 'req/s', 'p50 ms', 'p99 ms', 'floor', 'x floor', 'service µs', 'pg µs', 'non-2xx', 'errors', 'target', ''];
  const cells = rows.map((r) => [
    r.endpoint, String(r.requests_per_s), String(r.p50_ms), String(r.p99_ms), r.ratio_to_floor === null ? '-' : String(r.floor_rps),
    r.ratio_to_floor?.toFixed(2) ?? '-', String(r.cpu?.service_us ?? '-'), String(r.cpu?.postgres_us ?? '-'), String(r.non_2xx), String(r.errors),
    r.target || '-', r.met === null ? '' : r.met ? 'ok' : 'MISS',
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (c: string[]) => c.map((v, i) => (i === 0 || i >= 10 ? v.padEnd(widths[i]!) : v.padStart(widths[i]!))).join('  ');
  console.log(`\n${line(header)}\n${widths.map((w) => '-'.repeat(w)).join('  ')}`);
  for (const c of cells) console.log(line(c));
  for (const r of rows) if (r.note) console.log(`  ${r.endpoint}: ${r.note}`);
}

async function main(): Promise<void> {
  mkdirSync(RESULTS, { recursive: true });
  console.log(`bench database ${DB_NAME} on ${new URL(SERVER_URL).host}: generating ${ITEMS} items, ${MOVEMENTS} movements, ${ORDERS} orders`);
  const generated: Generated = REUSE && await benchDatabaseExists() ? await reuse() : await regenerate();
  if (!await autovacuumRuns()) {
    console.log('  note: the server runs without autovacuum: the writes of a long section leave their dead rows in place ' +
      '(the service vacuums only its list totals itself), so later reads of the same run pay for them');
  }
  const items = await sampleItems(benchUrl, SAMPLES);
  const bodies = await orderBodies(benchUrl, SAMPLES);

  const pool = String(POOL_SIZE);
  const serviceEnv = (port: number) => ({
    DATABASE_URL: benchUrl, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', WMS_DB_POOL_SIZE: pool,
    // Far above what 10 s of load can send: the bench measures the service, not its limiter.
    WMS_RATE_LIMIT_PER_KEY: '100000000', REDIS_URL: '', WMS_BOOTSTRAP_ADMIN_KEY: '',
    // The packing lists the picking targets file go to a directory of the run's own.
    WMS_DOCUMENTS_DIR: documentsDir,
    // The webhook targets deliver to a receiver on this machine.
    WMS_ALLOW_PRIVATE_WEBHOOK_URLS: '1',
  });
  const service = startChild('service', 'src/main.ts', serviceEnv(SERVICE_PORT));
  const withoutCache = startChild('service-uncached', 'src/main.ts', { ...serviceEnv(UNCACHED_PORT), WMS_READ_CACHE_MB: '0' });
  const floor = startChild('floor', 'bench/floor.ts', { FLOOR_DATABASE_URL: benchUrl, PORT: String(FLOOR_PORT), WMS_DB_POOL_SIZE: pool });
  await Promise.all([
    waitReady('service', service, `http://127.0.0.1:${SERVICE_PORT}/healthz`),
    waitReady('service-uncached', withoutCache, `http://127.0.0.1:${UNCACHED_PORT}/healthz`),
    waitReady('floor', floor, `http://127.0.0.1:${FLOOR_PORT}/floor`),
  ]);
  meters.cpu = await cpuMeter(benchUrl);
  for (const [port, child] of [[SERVICE_PORT, service], [UNCACHED_PORT, withoutCache], [FLOOR_PORT, floor]] as const) {
    meters.pidOf.set(`http://127.0.0.1:${port}`, child.pid!);
  }

  const headers = { authorization: `Bearer ${generated.adminKey}` };
  const rows: Row[] = [];
  let floorRps: number | null = null;
  const all = endpoints(items, bodies, await logSubscription(benchUrl));
  const floorEndpoint = all.find((endpoint) => endpoint.base.endsWith(`:${FLOOR_PORT}`))!;
  for (const [i, endpoint] of all.entries()) {
    // The machine's speed drifts within a run (a shared host: the floor measured 5,000-9,000 req/s in one session), so
    // each read with a ratio target is held against the floor measured right before it, as the mixed section does.
    if (i > 0 && endpoint.minRatio) floorRps = (await measure(floorEndpoint, headers, null)).requests_per_s || floorRps;
    process.stdout.write(`  ${endpoint.name} ...`);
    const row = await measure(endpoint, headers, floorRps);
    if (endpoint === floorEndpoint) floorRps = row.requests_per_s || null;
    rows.push(row);
    console.log(row.note ? ` ${row.note}` : ` ${row.requests_per_s} req/s`);
  }
  printTable(rows);
  const serviceUrl = `http://127.0.0.1:${SERVICE_PORT}`;
  const reports = await section('reports', 'each report and the consignor statement', printReports,
    () => measureReports(`http://127.0.0.1:${UNCACHED_PORT}`, headers, benchUrl));
  const plans = await section('plans', 'the plan of every list, search, ledger and report query on this data set', printPlans,
    () => measurePlans(benchUrl, generated.adminKey));
  const tooling = await section('tooling', 'CSV export of every item, /docs in headless Chromium', printTooling,
    () => measureTooling(`http://127.0.0.1:${UNCACHED_PORT}`, headers, withoutCache.pid!));
  // The write targets run after the reads, so their new rows do not move the read figures.
  const receiving = await section('receiving', '200-line post, 5,000-row CSV import', printReceiving, () => measureReceiving(serviceUrl, headers, benchUrl));
  const picking = await section('picking', 'full pick-pack-ship cycle, packing list PDF', printPicking, () => measurePicking(serviceUrl, headers, benchUrl, () => meters.cpu!.start(service.pid!)));
  const mixed = await section('mixed', 'reads while orders, adjustments, receipts, floor cycles and deliveries run', (results) => results.forEach(printMixed),
    async () => [await measureMixed(serviceUrl, `http://127.0.0.1:${UNCACHED_PORT}`, headers, {
      orderBodies: bodies,
      partner: await partnerItems(benchUrl).then(({ manufacturerId, items: partnerItems }) => ({ id: manufacturerId, items: partnerItems.map((item) => item.id) })),
      reads: [...targetReads(items), { name: 'GET /orders/{id}', paths: (await sampleOrders(benchUrl, SAMPLES)).map((id) => `/api/v1/orders/${id}`), minRatio: null, maxP99Ms: null }],
      floorRps,
      floor: `http://127.0.0.1:${FLOOR_PORT}`,
      measureRead: (base, read) => measureCounted({ ...read, base }, headers),
    })]);
  // Both service instances run delivery workers.
  const webhooks = await section('webhooks', 'fan-out to a local receiver, event write, poll', printWebhooks, () => measureWebhooks(serviceUrl, headers, benchUrl, 2));

  const report = {
    date: new Date().toISOString(),
    cpus: availableParallelism(),
    cpu_model: cpus()[0]?.model ?? null,
    node: process.version,
    data: { items: ITEMS, movements: MOVEMENTS, orders: ORDERS, generation_seconds: Math.round(generated.totalSeconds * 10) / 10, steps: generated.timings },
    settings: { connections: CONNECTIONS, duration_s: DURATION, warmup_s: WARMUP, db_pool_size: POOL_SIZE, sampled_items: items.length },
    results: rows,
    reports,
    plans,
    tooling,
    receiving,
    picking,
    mixed: mixed[0] ?? null,
    webhooks,
  };
  writeFileSync(new URL('latest.json', RESULTS), `${JSON.stringify(report, null, 2)}\n`);
  console.log('\nwritten: bench/results/latest.json');
  // A failed sample or any non-2xx makes the figures meaningless: the run fails; missed targets are only reported.
  const mixedFailed = mixed.some((m) => m.reads.some((r) => r.errors > 0) || m.writers.some((w) => w.failed > 0));
  if (rows.some((r) => r.note || r.non_2xx > 0 || r.errors > 0) || mixedFailed) process.exitCode = 1;
}

async function cleanup(): Promise<void> {
  await meters.cpu?.close();
  await stopChildren();
  rmSync(documentsDir, { recursive: true, force: true });
  if (KEEP) console.log(`kept database ${DB_NAME} (BENCH_KEEP=1): ${benchUrl}`);
  else await onServer((client) => client.query(`drop database if exists ${DB_NAME} with (force)`)).catch((e: Error) => console.error(`drop failed: ${e.message}`));
}

// Ctrl-C (or a CI timeout's SIGTERM) mid-run still stops the children and drops the database.
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void cleanup().finally(() => process.exit(130)));

try {
  await main();
} catch (error) {
  console.error(error);
  process.exitCode = 1;
} finally {
  await cleanup();
}
