// The read cache: a repeated list or search is answered from memory while the database has not changed since the
// answer was made.
//
// "Not changed" is PostgreSQL's own word: pg_current_snapshot() names the transactions a query can see, and two equal
// snapshots see exactly the same committed rows. An answer that depends only on rows, its URL and the caller's partner
// scope (not on the clock) is therefore the same under both. Any transaction that writes, on any instance, moves the
// snapshot on, so there is nothing to invalidate and no list of tables to keep in step with the queries; the price is
// that the cache only pays between writes. A hit still costs one round trip (the snapshot), which is what makes it
// exact across instances with no notification in between.
//
// Why reading the snapshot before the query is enough: the query runs under a snapshot at least as new. If a later
// request reads the same snapshot again, nothing committed in between, so the query saw that very state; if something
// did commit, the later request reads a different snapshot and misses.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { sql, type Kysely } from 'kysely';
import type { DB } from '../db/schema.ts';
import type { App } from './types.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * A GET whose 200 answer depends only on rows, its URL and the caller's partner scope may come from the read cache.
     * `clockParams`: query parameters whose filter is relative to the current time; a request using one is not cached.
     */
    readCache?: { clockParams: string[] };
  }
  interface FastifyRequest {
    /** Set on a cacheable miss: where its answer is stored once serialized. */
    readCacheSlot: { key: string; snapshot: string } | null;
  }
}

export interface ReadCacheStats {
  hits: number;
  misses: number;
  entries: number;
  bytes: number;
}

export interface ReadCache {
  stats(): ReadCacheStats;
}

const JSON_TYPE = 'application/json; charset=utf-8';

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

// What an entry is charged against the budget besides its key and answer (counted in characters: one byte each in V8
// for ASCII, which JSON answers mostly are): the map slot and the strings' headers, roughly.
const ENTRY_OVERHEAD = 100;

/**
 * Adds the cache to every route whose config has `readCache`; `maxBytes` 0 leaves it out. Every entry was made under
 * `latest`, the newest snapshot seen: when a newer one is read, all of them are dropped, since they can never be
 * served again. Within the budget, the oldest entries go first.
 */
export function registerReadCache(app: App, db: Kysely<DB>, maxBytes: number): ReadCache {
  const entries = new Map<string, string>();
  let latest = '';
  let bytes = 0;
  const counts = { hits: 0, misses: 0 };
  const sizeOf = (key: string, body: string) => key.length + body.length + ENTRY_OVERHEAD;

  async function lookup(request: FastifyRequest, reply: FastifyReply) {
    const query = request.query as Record<string, unknown>;
    if (request.routeOptions.config.readCache!.clockParams.some((name) => query[name] !== undefined)) return;
    const snapshot = await currentSnapshot(db);
    if (isNewerSnapshot(snapshot, latest)) {
      entries.clear();
      bytes = 0;
      latest = snapshot;
    }
    // The partner scope is the only thing about the caller that changes an answer (a permission refuses, it never trims).
    const key = `${request.actor?.manufacturerId ?? '*'} ${request.url}`;
    const body = snapshot === latest ? entries.get(key) : undefined;
    if (body !== undefined) {
      counts.hits++;
      return reply.type(JSON_TYPE).send(body);
    }
    counts.misses++;
    // A snapshot older than the newest seen (its reply overtaken by another connection's) answers from the database
    // and keeps nothing.
    if (snapshot === latest) request.readCacheSlot = { key, snapshot };
  }

  const store = (request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (error: null, payload: unknown) => void) => {
    const slot = request.readCacheSlot;
    if (slot && slot.snapshot === latest && reply.statusCode === 200 && typeof payload === 'string') {
      const size = sizeOf(slot.key, payload);
      const previous = entries.get(slot.key);
      if (size <= maxBytes && previous === undefined) {
        entries.set(slot.key, payload);
        bytes += size;
        for (const [key, body] of entries) {
          if (bytes <= maxBytes) break;
          entries.delete(key);
          bytes -= sizeOf(key, body);
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
