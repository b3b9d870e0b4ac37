// The read cache: a repeated GET is answered from memory while what it was made from has not changed since.
//
// "Not changed" is PostgreSQL's own word: pg_current_snapshot() names the transactions a query can see, and two equal
// snapshots see exactly the same committed rows, so a list or search answer that depends only on rows, its URL and the
// caller's partner scope (not on the clock) is the same under both. Any transaction that writes, on any instance,
// moves the snapshot on, so there is nothing to invalidate and no list of tables to keep in step with the queries; the
// price is that these answers only pay between writes. A hit costs one short round trip, which is what keeps it exact
// across instances with no notification. (The item read is not here: it is made of its rows' kept text, checked
// against their version on every read, which costs the same round trip and serves under writes too: http/row-texts.ts.)
//
// Why reading the snapshot before the query is enough: the query runs later, so it sees that state or a newer one. A
// later request that reads the same snapshot again means nothing committed in between; if something did, it misses.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { sql, type Kysely } from 'kysely';
import type { DB } from '../db/schema.ts';
import { CSV, JSON_TYPE, preferredRepresentation } from './representations.ts';
import type { App } from './types.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * A GET (a list or a search) whose 200 answer may come from the read cache, versioned by the database snapshot; it
     * must depend only on rows, its URL and the caller's partner scope. A request using one of `clockParams` (a filter
     * relative to the current time) is not cached.
     */
    readCache?: { clockParams: string[] };
  }
  interface FastifyRequest {
    /** Set on a cacheable miss: where its answer is stored once serialized, and under which snapshot. */
    readCacheSlot: { key: string; version: string } | null;
  }
}

export interface ReadCacheStats {
  hits: number;
  misses: number;
  /** Requests of a route that skipped the cache while its lookups hit too seldom under writes (SNAPSHOT_ROUND). */
  bypassed: number;
  entries: number;
  bytes: number;
}

export interface ReadCache {
  stats(): ReadCacheStats;
}

const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';
// Says whether a cacheable answer came from memory: for operators, and for the benchmark's hit rate under writes.
const CACHE_HEADER = 'x-read-cache';

async function currentSnapshot(db: Kysely<DB>): Promise<string> {
  const { rows } = await sql<{ snapshot: string }>`select pg_current_snapshot()::text as snapshot`.execute(db);
  return rows[0]!.snapshot;
}

/**
 * Whether snapshot `a` sees more than `b` (text form xmin:xmax:xip,...). Transaction ids below xmax only ever finish,
 * so of two snapshots the newer has the greater xmax or, with the same xmax, fewer transactions still in progress.
 */
export function isNewerSnapshot(a: string, b: string): boolean {
  if (b === '') return true;
  const [, aMax, aRunning = ''] = a.split(':');
  const [, bMax, bRunning = ''] = b.split(':');
  const byMax = BigInt(aMax!) - BigInt(bMax!);
  if (byMax !== 0n) return byMax > 0n;
  const count = (running: string) => (running === '' ? 0 : running.split(',').length);
  return count(aRunning) < count(bRunning);
}

// A snapshot lookup costs a round trip, a miss also the storing of an answer that the next write drops. Where writes
// keep moving the snapshot between two requests for the same answer (a warehouse writing all day, a search seldom
// repeated), that is a loss: searches were answered ~10% slower with the cache than without it while another
// connection committed 100 times a second (docs/decisions.md, Read cache). So each route counts its snapshot lookups:
// when fewer than 5 of a round of 100 hit and the snapshot moved on at least 5 of them, the route skips the cache (no
// snapshot read, nothing stored) for 2 s, then tries again. Misses with a still snapshot (answers not asked for yet:
// a cache warming up, an integrator paging) do not count against it: once asked again, they hit.
const SNAPSHOT_ROUND = 100;
const SNAPSHOT_MIN_HITS = 5;
const SNAPSHOT_MIN_MOVES = 5;
const SNAPSHOT_BYPASS_MS = 2_000;

// What an entry is charged against the budget besides its key and answer (counted in characters: one byte each in V8
// for ASCII, which JSON answers mostly are): the map slot, the strings' headers and the version, roughly.
const ENTRY_OVERHEAD = 100;

interface Entry {
  /** The snapshot the answer was made under. */
  version: string;
  body: string;
}

/**
 * Adds the cache to every route whose config has `readCache`; `maxBytes` 0 leaves it out. The entries were all made
 * under `latest`, the newest snapshot seen: when a newer one is read, they are dropped, since they can never be served
 * again. Within the budget the least recently used entries go first.
 */
export function registerReadCache(app: App, db: Kysely<DB>, maxBytes: number): ReadCache {
  // In order of use: a hit moves its entry to the end, eviction takes from the front.
  const entries = new Map<string, Entry>();
  let latest = '';
  let bytes = 0;
  const counts = { hits: 0, misses: 0, bypassed: 0 };
  // Per route (its URL pattern): this round's snapshot lookups, hits and moves (a lookup that found another snapshot
  // than the route's lookup before it), and until when the route skips the cache.
  const rounds = new Map<string, { lookups: number; hits: number; moves: number; lastSnapshot: string; skipUntil: number }>();
  const sizeOf = (key: string, entry: Entry) => key.length + entry.body.length + ENTRY_OVERHEAD;

  function drop(key: string) {
    const entry = entries.get(key);
    if (!entry) return;
    entries.delete(key);
    bytes -= sizeOf(key, entry);
  }

  function roundOf(request: FastifyRequest) {
    const route = request.routeOptions.url ?? '';
    let round = rounds.get(route);
    if (!round) rounds.set(route, (round = { lookups: 0, hits: 0, moves: 0, lastSnapshot: '', skipUntil: 0 }));
    return round;
  }

  /** Counts a snapshot lookup; a round that hit too seldom while writes moved the snapshot skips the cache a while. */
  function countSnapshotLookup(request: FastifyRequest, snapshot: string, hit: boolean) {
    const round = roundOf(request);
    round.lookups++;
    if (hit) round.hits++;
    if (snapshot !== round.lastSnapshot) round.moves++;
    round.lastSnapshot = snapshot;
    if (round.lookups < SNAPSHOT_ROUND) return;
    if (round.hits < SNAPSHOT_MIN_HITS && round.moves >= SNAPSHOT_MIN_MOVES) round.skipUntil = Date.now() + SNAPSHOT_BYPASS_MS;
    round.lookups = 0;
    round.hits = 0;
    round.moves = 0;
  }

  /**
   * The snapshot the answer would be made under now; null when it is not to be cached, 'bypass' when its route skips
   * the cache for now.
   */
  async function snapshotToServe(request: FastifyRequest): Promise<string | 'bypass' | null> {
    const config = request.routeOptions.config.readCache!;
    const query = request.query as Record<string, unknown>;
    if (config.clockParams.some((name) => query[name] !== undefined)) return null;
    // The route's lookups, under writes, hit too seldom of late to be worth their round trip.
    if (roundOf(request).skipUntil > Date.now()) return 'bypass';
    const snapshot = await currentSnapshot(db);
    if (isNewerSnapshot(snapshot, latest)) {
      entries.clear();
      bytes = 0;
      latest = snapshot;
    }
    // A snapshot older than the newest seen (its reply overtaken by another connection's) answers from the database
    // and keeps nothing.
    return snapshot === latest ? snapshot : null;
  }

  async function lookup(request: FastifyRequest, reply: FastifyReply) {
    // Only JSON answers are kept: an export (Accept: text/csv) is read afresh.
    if (preferredRepresentation(request, [JSON_TYPE, CSV]) !== JSON_TYPE) return;
    const current = await snapshotToServe(request);
    if (!current) return;
    if (current === 'bypass') {
      counts.bypassed++;
      return void reply.header(CACHE_HEADER, 'bypass');
    }
    // The partner scope is the only thing about the caller that changes an answer (a permission refuses, it never trims).
    const key = `${request.actor?.manufacturerId ?? '*'} ${request.url}`;
    const entry = entries.get(key);
    const hit = entry !== undefined && entry.version === current;
    countSnapshotLookup(request, current, hit);
    if (hit) {
      counts.hits++;
      entries.delete(key);
      entries.set(key, entry);
      return reply.header(CACHE_HEADER, 'hit').type(JSON_CONTENT_TYPE).send(entry.body);
    }
    counts.misses++;
    reply.header(CACHE_HEADER, 'miss');
    request.readCacheSlot = { key, version: current };
  }

  const store = (request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (error: null, payload: unknown) => void) => {
    const slot = request.readCacheSlot;
    if (slot && slot.version === latest && reply.statusCode === 200 && typeof payload === 'string') {
      const entry = { version: slot.version, body: payload };
      const size = sizeOf(slot.key, entry);
      if (size <= maxBytes) {
        drop(slot.key);
        entries.set(slot.key, entry);
        bytes += size;
        for (const key of entries.keys()) {
          if (bytes <= maxBytes) break;
          drop(key);
        }
      }
    }
    done(null, payload);
  };

  app.decorateRequest('readCacheSlot', null);
  if (maxBytes > 0) {
    app.addHook('onRoute', (route) => {
      if (!route.config?.readCache) return;
      route.preHandler = [...[route.preHandler ?? []].flat(), lookup] as typeof route.preHandler;
      route.onSend = [...[route.onSend ?? []].flat(), store] as typeof route.onSend;
    });
  }
  return { stats: () => ({ ...counts, entries: entries.size, bytes }) };
}
