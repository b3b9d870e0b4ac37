// Fixed-window request counters: per API key, and per client address for failed keys. In memory for one instance;
// in Redis when REDIS_URL is set, so that every instance counts against the same limit (and in memory again while
// Redis cannot be reached).
import type { FastifyBaseLogger } from 'fastify';
import { Redis } from 'ioredis';

export interface Hit {
  count: number;
  /** Milliseconds until the window starts over. */
  resetMs: number;
}

/** Where counts are kept now: this instance's memory (no Redis configured), Redis, or memory because Redis is down. */
export type CounterHealth = 'memory' | 'redis' | 'degraded';

export interface CounterStore {
  /** Counts one more request in the bucket's current window. */
  hit(bucket: string, windowMs: number): Promise<Hit>;
  /** The bucket's count without adding to it (count 0 when no window is open). */
  peek(bucket: string): Promise<Hit>;
  health(): CounterHealth;
  close(): Promise<void>;
}

export function memoryCounterStore(): CounterStore {
  const windows = new Map<string, { count: number; resetAt: number }>();
  // Expired windows are dropped every minute so the map stays as large as the set of active clients.
  const sweeper = setInterval(() => {
    const now = Date.now();
    for (const [bucket, window] of windows) if (window.resetAt <= now) windows.delete(bucket);
  }, 60_000);
  sweeper.unref();
  return {
    async hit(bucket, windowMs) {
      const now = Date.now();
      let window = windows.get(bucket);
      if (!window || window.resetAt <= now) {
        window = { count: 0, resetAt: now + windowMs };
        windows.set(bucket, window);
      }
      window.count++;
      return { count: window.count, resetMs: window.resetAt - now };
    },
    async peek(bucket) {
      const now = Date.now();
      const window = windows.get(bucket);
      return window && window.resetAt > now ? { count: window.count, resetMs: window.resetAt - now } : { count: 0, resetMs: 0 };
    },
    health: () => 'memory',
    async close() {
      clearInterval(sweeper);
    },
  };
}

// INCR and the first PEXPIRE run as one script so a window can never be left without its expiry.
const HIT_SCRIPT = `
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return {count, redis.call('PTTL', KEYS[1])}`;

export interface RedisStoreOptions {
  /** Key prefix, so that tests can share a server. */
  prefix?: string;
  log: Pick<FastifyBaseLogger, 'warn' | 'info'>;
  /** How long one command may take before the request falls back to this instance's memory. */
  commandTimeoutMs?: number;
}

const PROBE_EVERY_MS = 500;

/**
 * Counters in Redis, shared by every instance, that never make a request wait on Redis for longer than one command
 * timeout (100 ms): commands are not queued while Redis is offline, and once a command fails or times out the store
 * counts in this instance's memory at once (limits then hold per instance), pinging Redis until it answers again.
 */
export function redisCounterStore(url: string, options: RedisStoreOptions): CounterStore {
  const { prefix = 'wms:rl:', log, commandTimeoutMs = 100 } = options;
  const local = memoryCounterStore();
  let redis: Redis;
  try {
    redis = new Redis(url, {
      commandTimeout: commandTimeoutMs,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      autoResendUnfulfilledCommands: false,
      connectTimeout: 1000,
      retryStrategy: (attempt) => Math.min(attempt * 100, 2000),
    });
  } catch (error) {
    log.warn({ err: error }, 'REDIS_URL is unusable: rate limits are counted per instance');
    return { ...local, health: () => 'degraded' };
  }

  let up = false;
  let closed = false;
  let outageLogged = false;
  let probe: NodeJS.Timeout | undefined;
  const down = (error: unknown) => {
    if (closed) return;
    if (!outageLogged) log.warn({ err: error }, 'Redis unavailable: rate limits are counted per instance until it answers again');
    outageLogged = true;
    up = false;
    probe ??= setInterval(() => void redis.ping().then(back, () => {}), PROBE_EVERY_MS).unref();
  };
  const back = () => {
    if (outageLogged) log.info('Redis answers again: rate limits are shared again');
    outageLogged = false;
    up = true;
    clearInterval(probe);
    probe = undefined;
  };
  redis.on('ready', back);
  redis.on('error', down);

  async function shared<T>(work: () => Promise<T>, fallback: () => Promise<T>): Promise<T> {
    if (!up) return fallback();
    try {
      return await work();
    } catch (error) {
      down(error);
      return fallback();
    }
  }

  return {
    hit: (bucket, windowMs) => shared(async () => {
      const [count, ttl] = (await redis.eval(HIT_SCRIPT, 1, prefix + bucket, windowMs)) as [number, number];
      return { count, resetMs: ttl > 0 ? ttl : windowMs };
    }, () => local.hit(bucket, windowMs)),
    peek: (bucket) => shared(async () => {
      const [count, ttl] = await Promise.all([redis.get(prefix + bucket), redis.pttl(prefix + bucket)]);
      return { count: Number(count ?? 0), resetMs: Math.max(0, ttl) };
    }, () => local.peek(bucket)),
    // Also 'degraded' in the moment before the first connection is ready: counts start in memory.
    health: () => (up ? 'redis' : 'degraded'),
    async close() {
      closed = true;
      clearInterval(probe);
      redis.disconnect();
      await local.close();
    },
  };
}
