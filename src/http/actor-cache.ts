// Actors of recently used keys, so that authenticating a request costs no database round trip. Correctness rests on
// invalidation: a trigger on users and api_keys NOTIFYs AUTH_CHANNEL on every change, and each instance empties its
// cache when it hears it. An instance that is not listening (connection lost) caches nothing until it listens again.
import type { Actor } from './auth.ts';

export const AUTH_CHANNEL = 'wms_auth_changed';

export interface ActorCache {
  /** The cached actor of a key hash, or the loaded one (kept only if nothing changed while it was loading). */
  lookup(keyHash: string, load: () => Promise<Actor>): Promise<Actor>;
  /** Users or keys changed: forget every actor. */
  clear(): void;
  /** Whether changes reach this instance (its listener is connected); off empties the cache and stops caching. */
  setListening(on: boolean): void;
}

export function actorCache(options: { ttlMs: number; maxEntries: number }): ActorCache {
  const entries = new Map<string, { actor: Actor; until: number }>();
  let listening = false;
  // Bumped by every clear: a load that began before a change must not put the old actor back after it.
  let generation = 0;

  const clear = () => {
    generation++;
    entries.clear();
  };

  return {
    async lookup(keyHash, load) {
      const hit = entries.get(keyHash);
      if (hit && hit.until > Date.now()) return hit.actor;
      const startedAt = generation;
      const actor = await load();
      if (listening && startedAt === generation) {
        // A bound on memory; a full cache simply starts over.
        if (entries.size >= options.maxEntries) entries.clear();
        entries.set(keyHash, { actor, until: Date.now() + options.ttlMs });
      }
      return actor;
    },
    clear,
    setListening(on) {
      listening = on;
      clear();
    },
  };
}
