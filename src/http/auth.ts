// Bearer-key authentication, per-request permissions and partner scope for every /api/v1 route.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { sql, type Kysely } from 'kysely';
import type { DB } from '../db/schema.ts';
import type { ActorCache } from './actor-cache.ts';
import { effectivePermissions, isRole, ROLE_DEFINITIONS, type Permission, type Role } from '../domain/roles.ts';
import { API_KEY_PATTERN, sha256 } from '../domain/secrets.ts';
import { ApiError, forbidden, unauthorized } from '../domain/errors.ts';
import type { CounterStore } from './rate-limit.ts';

export interface Actor {
  userId: string;
  userName: string;
  email: string | null;
  role: Role;
  /** The supply partner a scoped key is confined to; null for warehouse staff. */
  manufacturerId: string | null;
  apiKeyId: string;
  keyName: string;
  scopes: string[];
  expiresAt: Date | null;
  permissions: ReadonlySet<Permission>;
}

declare module 'fastify' {
  interface FastifyRequest {
    actor: Actor | null;
  }
  interface FastifyContextConfig {
    /** Permission the key must hold. */
    permission?: Permission;
    /** Permissions of which the key must hold at least one (a record several roles read, each by its own permission). */
    anyPermission?: readonly Permission[];
    /** Only a system_admin whose key holds admin.api_keys (administration of users and reference data). */
    administers?: boolean;
    /** Warehouse staff only: a partner-scoped key is refused (403) before its permissions are looked at. */
    staffOnly?: boolean;
    /** Changes users or keys: this instance forgets cached actors before answering (others hear the NOTIFY). */
    changesActors?: boolean;
  }
}

export const API_PREFIX = '/api/v1';

export interface AuthOptions {
  db: Kysely<DB>;
  actors: ActorCache;
  counters: CounterStore;
  perKeyLimit: number;
  failedPerAddressLimit: number;
  windowMs: number;
}

/** The actor of a request behind the auth hook; routes under /api/v1 always have one. */
export function actorOf(request: FastifyRequest): Actor {
  if (!request.actor) throw new Error('route is outside the authenticated API');
  return request.actor;
}

export function hasPermission(actor: Actor, permission: Permission): boolean {
  return actor.permissions.has(permission);
}

export function requirePermission(actor: Actor, permission: Permission): void {
  if (!actor.permissions.has(permission)) throw forbidden(`this key lacks the ${permission} permission`);
}

/** Administration (users, reference data) needs the system_admin role and a key that holds admin.api_keys. */
export function canAdminister(actor: Actor): boolean {
  return ROLE_DEFINITIONS[actor.role].administers && actor.permissions.has('admin.api_keys');
}

/**
 * Confines a query to the actor's supply partner: `column` is the manufacturer_id column of the scoped table.
 * Another partner's row then cannot be told from a missing one.
 */
export function inPartnerScope<QB extends { where: (...args: any[]) => any }>(qb: QB, actor: Pick<Actor, 'manufacturerId'>, column: string): QB {
  return actor.manufacturerId ? (qb.where(sql.ref(column), '=', actor.manufacturerId) as QB) : qb;
}

async function findActor(db: Kysely<DB>, keyHash: string): Promise<Actor> {
  const row = await db
    .selectFrom('api_keys as k')
    .innerJoin('users as u', 'u.id', 'k.user_id')
    .select([
      'k.id as key_id', 'k.name as key_name', 'k.scopes', 'k.expires_at', 'k.revoked_at',
      'u.id as user_id', 'u.name as user_name', 'u.email', 'u.role', 'u.manufacturer_id', 'u.is_active',
    ])
    .where('k.key_hash', '=', keyHash)
    .executeTakeFirst();
  if (!row) throw unauthorized('API key is not valid');
  if (row.revoked_at) throw unauthorized('API key has been revoked');
  if (!row.is_active) throw unauthorized('the key’s user is deactivated');
  if (!isRole(row.role)) throw unauthorized('the key’s user has an unknown role');
  return {
    userId: row.user_id,
    userName: row.user_name,
    email: row.email,
    role: row.role,
    manufacturerId: row.manufacturer_id,
    apiKeyId: row.key_id,
    keyName: row.key_name,
    scopes: row.scopes,
    expiresAt: row.expires_at ? new Date(row.expires_at) : null,
    permissions: new Set(effectivePermissions(row.scopes, row.role)),
  };
}

function bearerKey(request: FastifyRequest): string {
  const header = request.headers.authorization;
  if (!header) throw unauthorized('API key required');
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match) throw unauthorized('Authorization must be "Bearer <API key>"');
  if (!API_KEY_PATTERN.test(match[1]!)) throw unauthorized('API key is malformed');
  return match[1]!;
}

function rateLimited(resetMs: number, message: string): ApiError {
  return new ApiError(429, 'rate_limited', message, { headers: { 'retry-after': String(Math.max(1, Math.ceil(resetMs / 1000))) } });
}

/**
 * Registers authentication on the /api/v1 plugin (its routes and its 404 handler), so that it follows the route the
 * router matched, not the raw URL (which may be percent-encoded or absolute).
 */
export function registerAuth(api: FastifyInstance, options: AuthOptions): void {
  const { db, actors, counters, perKeyLimit, failedPerAddressLimit, windowMs } = options;

  api.addHook('onRequest', async (request, reply) => {
    const failBucket = `fail:${request.ip}`;
    let keyHash: string | null = null;
    let keyError: ApiError | null = null;
    try {
      keyHash = sha256(bearerKey(request));
    } catch (error) {
      keyError = error as ApiError;
    }
    // An address over its failed-key limit is refused before any key is looked at: otherwise guessing would go on.
    const [failures, used] = await Promise.all([
      counters.peek(failBucket),
      keyHash ? counters.hit(`key:${keyHash}`, windowMs) : null,
    ]);
    if (failures.count >= failedPerAddressLimit) throw rateLimited(failures.resetMs, 'too many failed API key attempts');

    let actor: Actor;
    try {
      if (keyError) throw keyError;
      actor = await actors.lookup(keyHash!, () => findActor(db, keyHash!));
      // Checked on every request, cached or not: expiry needs no change to the key to take effect.
      if (actor.expiresAt && actor.expiresAt.getTime() <= Date.now()) throw unauthorized('API key has expired');
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      const failed = await counters.hit(failBucket, windowMs);
      if (failed.count > failedPerAddressLimit) throw rateLimited(failed.resetMs, 'too many failed API key attempts');
      throw error;
    }
    request.actor = actor;
    if (!ROLE_DEFINITIONS[actor.role].apiAccess) throw forbidden('supply-partner portal users cannot use the API');

    if (used) {
      reply.header('ratelimit-limit', perKeyLimit);
      reply.header('ratelimit-remaining', Math.max(0, perKeyLimit - used.count));
      reply.header('ratelimit-reset', Math.ceil(used.resetMs / 1000));
      if (used.count > perKeyLimit) throw rateLimited(used.resetMs, 'too many requests for this API key');
    }

    const { permission, anyPermission, administers, staffOnly } = request.routeOptions.config;
    if (staffOnly && actor.manufacturerId) throw forbidden('only warehouse staff may do this; partner-scoped keys are refused whatever their scopes');
    if (permission) requirePermission(actor, permission);
    if (anyPermission && !anyPermission.some((p) => actor.permissions.has(p))) throw forbidden(`this key holds none of ${anyPermission.join(', ')}`);
    if (administers && !canAdminister(actor)) throw forbidden('only a system_admin key holding admin.api_keys may do this');
  });

  // Before the answer leaves: the caller's next request must already see the change (other instances hear the NOTIFY).
  // Only on the routes that change users or keys, so no other request pays for the hook.
  const forgetActors = (_request: unknown, _reply: unknown, payload: unknown, done: (error: null, payload: unknown) => void) => {
    actors.clear();
    done(null, payload);
  };
  api.addHook('onRoute', (route) => {
    if (route.config?.changesActors) route.onSend = [...[route.onSend ?? []].flat(), forgetActors] as typeof route.onSend;
  });
}
