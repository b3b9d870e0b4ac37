// The mixed load of issue 16: the reads a warehouse's screens and integrations make, measured while writers run at a
// steady rate the whole time (order entry, stock adjustments, receiving posts, full pick-pack-ship cycles, and the
// webhook deliveries all of them cause, to a receiver on this machine). Each read runs against the service with its
// read cache (what users get: the cache pays only between writes) and against one without it.
import { apiClient, countingReceiver } from './client.ts';
import { floorCycle } from './picking.ts';
import { percentile } from './stats.ts';

// Writes per second of each writer (a busy warehouse at its peak, times BENCH_MIXED_WRITE_SCALE); a writer never has more
// than MAX_IN_FLIGHT operations open.
const SCALE = Number(process.env.BENCH_MIXED_WRITE_SCALE ?? 1);
const RATES = { orders: 20 * SCALE, adjustments: 20 * SCALE, receiving: 1 * SCALE, cycles: 4 * SCALE };
const MAX_IN_FLIGHT = 4;
const RECEIVING_LINES = 10;

export interface MixedRead {
  name: string;
  paths: string[];
  minRatio: number | null;
  maxP99Ms: number | null;
}

/** One read measured under the writers: figures as the main table has them, and the share answered from the cache. */
export interface ReadFigures {
  requests_per_s: number;
  p50_ms: number;
  p99_ms: number;
  non_2xx: number;
  errors: number;
  cache_hits: number;
  cache_misses: number;
}

export interface MixedRow {
  read: string;
  instance: 'read cache' | 'no read cache';
  requests_per_s: number;
  p50_ms: number;
  p99_ms: number;
  /** To the floor measured before the writers started. */
  ratio_to_floor: number | null;
  /** The floor measured under the writes right before this read (both instances of a read share it). */
  floor_under_writes_rps: number;
  /** To that floor: the targets are held against this one. */
  ratio_to_floor_under_writes: number | null;
  cache_hit_rate: number | null;
  errors: number;
  target: string;
  met: boolean | null;
}

export interface WriterRow {
  writer: string;
  rate_per_s: number;
  achieved_per_s: number;
  p50_ms: number;
  p99_ms: number;
  failed: number;
}

export interface MixedResult {
  reads: MixedRow[];
  writers: WriterRow[];
  deliveries: { delivered: number; per_s: number };
}

interface Work {
  orderBodies: string[];
  /** The items adjustments and receiving change: active items of one partner. */
  partner: { id: string; items: string[] };
  reads: MixedRead[];
  floorRps: number | null;
  /** The floor server's base url: measured again under the writers, before each read. */
  floor: string;
  /** Runs one read for the measuring duration against the base url (the bench's autocannon driver). */
  measureRead(base: string, read: MixedRead): Promise<ReadFigures>;
}

/** A writer: starts `operation` rate times a second (skipping a tick while MAX_IN_FLIGHT are open) until stopped. */
function steadyWriter(name: string, rate: number, operation: (n: number) => Promise<unknown>) {
  const durations: number[] = [];
  const failures: string[] = [];
  let inFlight = 0;
  let n = 0;
  let begun = 0;
  let timer: NodeJS.Timeout | undefined;
  const tick = () => {
    if (inFlight >= MAX_IN_FLIGHT) return;
    inFlight++;
    const started = performance.now();
    operation(n++).then(
      () => durations.push(performance.now() - started),
      (error: Error) => failures.push(error.message),
    ).finally(() => inFlight--);
  };
  return {
    start() {
      begun = performance.now();
      timer = setInterval(tick, 1000 / rate);
    },
    async stop(): Promise<WriterRow> {
      clearInterval(timer);
      const seconds = (performance.now() - begun) / 1000;
      while (inFlight > 0) await new Promise((resolve) => setTimeout(resolve, 20));
      if (failures.length) console.log(`\n  ${name}: ${failures.length} failed, first: ${failures[0]}`);
      const round = (ms: number) => Math.round(ms * 10) / 10;
      return {
        writer: name, rate_per_s: rate, achieved_per_s: Math.round((durations.length / seconds) * 10) / 10,
        p50_ms: durations.length ? round(percentile(durations, 50)) : 0, p99_ms: durations.length ? round(percentile(durations, 99)) : 0,
        failed: failures.length,
      };
    },
  };
}

export async function measureMixed(service: string, uncached: string, headers: Record<string, string>, work: Work): Promise<MixedResult> {
  const { call, close } = apiClient(service, headers, 16);
  const receiver = await countingReceiver(200);
  const subscription = (await call('POST', '/webhooks', { url: receiver.url('/mixed'), event_kinds: ['*'], description: 'bench mixed load' }))!.data;

  const { items } = work.partner;
  const entered: string[] = [];
  const writers = [
    steadyWriter('order entry (10 lines)', RATES.orders, async (n) => {
      const { data } = (await call('POST', '/orders', work.orderBodies[n % work.orderBodies.length]))!;
      entered.push(data.order.id);
    }),
    // One unit in, then the same unit out again, item after item: no item goes below the stock it started with (an
    // item without stock would refuse a -1 first). Each pair is two adjustments.
    steadyWriter('stock adjustments (+1, then -1)', RATES.adjustments / 2, async (n) => {
      for (const quantity of [1, -1]) await call('POST', '/inventory/adjustments', { item_id: items[n % items.length], quantity, reason: 'bench mixed load' });
    }),
    steadyWriter(`receiving post (${RECEIVING_LINES} lines)`, RATES.receiving, async (n) => {
      const lines = Array.from({ length: RECEIVING_LINES }, (_, i) => ({ item_id: items[(n * RECEIVING_LINES + i) % items.length], qty_received: 5 }));
      const { data } = (await call('POST', '/receiving/import', { manufacturer_id: work.partner.id, lines }))!;
      await call('POST', `/receiving/${data.batch.id}/verify`);
      for (const line of data.lines as { id: string }[]) await call('POST', `/receiving/${data.batch.id}/lines/${line.id}/pass`);
      await call('POST', `/receiving/${data.batch.id}/post`);
    }),
    steadyWriter('pick-pack-ship cycle', RATES.cycles, async () => {
      const orderId = entered.shift();
      if (!orderId) return;
      await call('POST', `/orders/${orderId}/release`);
      await floorCycle(call, orderId);
    }),
  ];

  const reads: MixedRow[] = [];
  let writerRows: WriterRow[] = [];
  let deliveries = { delivered: 0, per_s: 0 };
  const began = performance.now();
  for (const writer of writers) writer.start();
  try {
    const ratioTo = (rps: number, floorRps: number | null) => (floorRps ? Math.round((rps / floorRps) * 100) / 100 : null);
    for (const read of work.reads) {
      // The writers' load is not even over minutes (a receipt's ten passes, a cycle's packing list, the deliveries they
      // cause), so each read is held against the floor measured just before it rather than one from minutes earlier.
      const floor = await work.measureRead(work.floor, { name: 'floor', paths: ['/floor'], minRatio: null, maxP99Ms: null });
      for (const [instance, base] of [['read cache', service], ['no read cache', uncached]] as const) {
        const figures = await work.measureRead(base, read);
        const ratio = ratioTo(figures.requests_per_s, floor.requests_per_s || null);
        const lookups = figures.cache_hits + figures.cache_misses;
        reads.push({
          read: read.name, instance, requests_per_s: figures.requests_per_s, p50_ms: figures.p50_ms, p99_ms: figures.p99_ms,
          ratio_to_floor: ratioTo(figures.requests_per_s, work.floorRps),
          floor_under_writes_rps: floor.requests_per_s,
          ratio_to_floor_under_writes: ratio,
          cache_hit_rate: lookups ? Math.round((figures.cache_hits / lookups) * 100) / 100 : null,
          errors: figures.errors + figures.non_2xx,
          target: [read.minRatio && `>= ${read.minRatio}x floor`, read.maxP99Ms && `p99 < ${read.maxP99Ms} ms`].filter(Boolean).join(', '),
          met: read.minRatio === null && read.maxP99Ms === null ? null
            : (read.minRatio === null || (ratio ?? 0) >= read.minRatio) && (read.maxP99Ms === null || figures.p99_ms < read.maxP99Ms),
        });
      }
    }
  } finally {
    writerRows = await Promise.all(writers.map((writer) => writer.stop()));
    const seconds = (performance.now() - began) / 1000;
    deliveries = { delivered: receiver.received(), per_s: Math.round((receiver.received() / seconds) * 10) / 10 };
    await call('DELETE', `/webhooks/${subscription.id}`);
    await close();
    receiver.close();
  }
  return { reads, writers: writerRows, deliveries };
}

export function printMixed(result: MixedResult): void {
  const header = ['read', 'instance', 'req/s', 'p50 ms', 'p99 ms', 'x floor', 'loaded floor', 'x loaded floor', 'hits', 'errors', 'target', ''];
  const cells = result.reads.map((r) => [
    r.read, r.instance, String(r.requests_per_s), String(r.p50_ms), String(r.p99_ms), r.ratio_to_floor?.toFixed(2) ?? '-',
    String(r.floor_under_writes_rps), r.ratio_to_floor_under_writes?.toFixed(2) ?? '-',
    r.cache_hit_rate === null ? '-' : `${Math.round(r.cache_hit_rate * 100)}%`, String(r.errors), r.target || '-',
    r.met === null ? '' : r.met ? 'ok' : 'MISS',
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (c: string[]) => c.map((v, i) => (i < 2 || i >= 10 ? v.padEnd(widths[i]!) : v.padStart(widths[i]!))).join('  ');
  console.log('\nmixed load: reads while the writers below run; each read against the floor measured under the same writes ' +
    `just before it (loaded floor, req/s), the targets' reference\n${line(header)}\n${widths.map((w) => '-'.repeat(w)).join('  ')}`);
  for (const c of cells) console.log(line(c));
  console.log('\nwriters                              rate/s  achieved/s  p50 ms  p99 ms  failed');
  for (const w of result.writers) {
    console.log(`${w.writer.padEnd(36)} ${String(w.rate_per_s).padStart(6)}  ${String(w.achieved_per_s).padStart(10)}  ${String(w.p50_ms).padStart(6)}  ${String(w.p99_ms).padStart(6)}  ${String(w.failed).padStart(6)}`);
  }
  console.log(`webhook deliveries received: ${result.deliveries.delivered} (${result.deliveries.per_s}/s)`);
}
