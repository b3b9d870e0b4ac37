// Fixed-window request counters: per API key, and per client address for failed keys. In memory for one instance;
// in Redis when REDIS_URL is set, so that every instance counts against the same limit.
import { Redis } from 'ioredis';

export interface Hit {
  count: number;
  /** Milliseconds until the window starts over. */
  resetMs: number;
}

export interface CounterStore {
  /** Counts one more request in the bucket's current window. */
  hit(bucket: string, windowMs: number): Promise<Hit>;
  /** The bucket's count without adding to it (count 0 when no window is open). */
  peek(bucket: string): Promise<Hit>;
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

export function redisCounterStore(url: string, prefix = 'wms:rl:'): CounterStore {
  // A command fails after one retry while Redis is unreachable instead of waiting for it indefinitely.
  const redis = new Redis(url, { maxRetriesPerRequest: 1, connectTimeout: 2000 });
  redis.on('error', () => {});
  return {
    async hit(bucket, windowMs) {
      const [count, ttl] = (await redis.eval(HIT_SCRIPT, 1, prefix + bucket, windowMs)) as [number, number];
      return { count, resetMs: ttl > 0 ? ttl : windowMs };
    },
    async peek(bucket) {
      const [count, ttl] = await Promise.all([redis.get(prefix + bucket), redis.pttl(prefix + bucket)]);
      return { count: Number(count ?? 0), resetMs: Math.max(0, ttl) };
    },
    async close() {
      redis.disconnect();
    },
  };
}
