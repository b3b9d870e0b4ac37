// API keys: minted for a user within what both the caller and the user's role may do; revoked at once.
import { sql, type Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { inTransaction } from '../../db/transaction.ts';
import { recordHistory } from '../../domain/history.ts';
import { ROLE_DEFINITIONS, isRole, type Permission } from '../../domain/roles.ts';
import { generateApiKey, keyPrefix, sha256 } from '../../domain/secrets.ts';
import { canAdminister, type Actor } from '../../http/auth.ts';
import { badRequest, forbidden, invalidRequest, notFound } from '../../domain/errors.ts';
import { onePage, type Page } from '../../http/pagination.ts';

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const LAST_EXPIRY = Date.UTC(9999, 11, 31);
const DATE_TIME = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/** True when YYYY-MM-DD at the start of `value` is a real calendar day (Date would roll 02-30 over to March). */
function isCalendarDay(value: string): boolean {
  const [year, month, day] = value.slice(0, 10).split('-').map(Number) as [number, number, number];
  const probe = new Date(Date.UTC(year, month - 1, day));
  return probe.getUTCFullYear() === year && probe.getUTCMonth() === month - 1 && probe.getUTCDate() === day;
}

function parseExpiry(value: string | undefined): Date | null {
  if (value === undefined) return null;
  const dateOnly = DATE_ONLY.test(value);
  const at = new Date(dateOnly ? `${value}T00:00:00Z` : value);
  if (!(dateOnly || DATE_TIME.test(value)) || !isCalendarDay(value) || Number.isNaN(at.getTime())) {
    throw badRequest('body/expires_at must be an RFC 3339 date-time or YYYY-MM-DD');
  }
  if (at.getTime() >= LAST_EXPIRY) throw badRequest('body/expires_at must be before 9999-12-31');
  if (at.getTime() <= Date.now()) throw invalidRequest('expires_at is in the past');
  return at;
}

export interface NewApiKey {
  user_id: string;
  name: string;
  scopes: Permission[];
  expires_at?: string;
}

/** The keys of an administrator can only be handled by an administrator: otherwise a manager could mint admin power. */
function assertMayHandleKeysOf(actor: Actor, role: string): void {
  if (isRole(role) && ROLE_DEFINITIONS[role].administers && !canAdminister(actor)) {
    throw forbidden('only an administrator may handle an administrator\'s keys');
  }
}

export async function createApiKey(db: Kysely<DB>, actor: Actor, input: NewApiKey): Promise<{ id: string; key: string }> {
  const expiresAt = parseExpiry(input.expires_at);
  const beyondCaller = input.scopes.filter((scope) => !actor.permissions.has(scope));
  if (beyondCaller.length) throw forbidden(`scopes beyond this key's own permissions: ${beyondCaller.join(', ')}`);
  return inTransaction(db, async (tx) => {
    const user = await tx.selectFrom('users').select(['id', 'role', 'is_active', 'manufacturer_id']).where('id', '=', input.user_id).executeTakeFirst();
    if (!user) throw invalidRequest('user_id does not name a user');
    if (!user.is_active) throw invalidRequest('the user is deactivated');
    assertMayHandleKeysOf(actor, user.role);
    const rolePermissions = isRole(user.role) ? ROLE_DEFINITIONS[user.role].permissions : [];
    const beyondRole = input.scopes.filter((scope) => !rolePermissions.includes(scope));
    if (beyondRole.length) throw invalidRequest(`scopes outside the ${user.role} role: ${beyondRole.join(', ')}`);
    const key = generateApiKey();
    const row = await tx
      .insertInto('api_keys')
      .values({
        user_id: user.id,
        name: input.name.trim(),
        key_hash: sha256(key),
        key_prefix: keyPrefix(key),
        scopes: input.scopes,
        expires_at: expiresAt,
        revoked_at: null,
        created_by: actor.userId,
      })
      .returning(['id', 'user_id', 'name', 'key_prefix', 'scopes', 'expires_at', 'created_at'])
      .executeTakeFirstOrThrow();
    await recordHistory(tx, actor, { entityType: 'api_key', entityId: row.id, action: 'created', manufacturerId: user.manufacturer_id, after: row });
    return { id: row.id, key };
  });
}

function keysQuery(db: Kysely<DB>, actor: Actor) {
  let query = db.selectFrom('api_keys as k').innerJoin('users as u', 'u.id', 'k.user_id');
  if (!canAdminister(actor)) query = query.where('u.role', '!=', 'system_admin');
  return query;
}

const STATUS = sql<'active' | 'revoked' | 'expired'>`case when k.revoked_at is not null then 'revoked'
  when k.expires_at is not null and k.expires_at <= now() then 'expired' else 'active' end`;

export async function listApiKeys(db: Kysely<DB>, actor: Actor, filter: { user_id?: string; status?: string }, page: Page) {
  let query = keysQuery(db, actor);
  if (filter.user_id) query = query.where('k.user_id', '=', filter.user_id);
  if (filter.status) query = query.where(STATUS, '=', filter.status as 'active');
  const [rows, total] = await Promise.all([
    query
      .select([
        'k.id', 'k.name', 'k.user_id', 'u.name as user_name', 'k.key_prefix', 'k.scopes', STATUS.as('status'),
        'k.expires_at', 'k.revoked_at', 'k.created_by', 'k.created_at',
      ])
      .orderBy('k.created_at', 'desc')
      .orderBy('k.id')
      .$call(onePage(page))
      .execute(),
    query.select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: total.count };
}

/** Idempotent: revoking a revoked key changes nothing. */
export async function revokeApiKey(db: Kysely<DB>, actor: Actor, id: string): Promise<void> {
  await inTransaction(db, async (tx) => {
    const key = await tx
      .selectFrom('api_keys as k')
      .innerJoin('users as u', 'u.id', 'k.user_id')
      .select(['k.id', 'k.revoked_at', 'u.role', 'u.manufacturer_id'])
      .where('k.id', '=', id)
      .forUpdate('k')
      .executeTakeFirst();
    if (!key) throw notFound('API key');
    assertMayHandleKeysOf(actor, key.role);
    if (key.revoked_at) return;
    const after = await tx.updateTable('api_keys').set({ revoked_at: new Date() }).where('id', '=', id).returning(['id', 'revoked_at']).executeTakeFirstOrThrow();
    await recordHistory(tx, actor, { entityType: 'api_key', entityId: id, action: 'revoked', manufacturerId: key.manufacturer_id, after });
  });
}
