// Users: warehouse staff with passwords, consignors by invite, and the guard that keeps one administrator active.
import { sql, type Kysely, type Selectable, type Transaction } from 'kysely';
import { containsPattern } from '../../db/like.ts';
import type { DB, UsersTable } from '../../db/schema.ts';
import { inTransaction } from '../../db/transaction.ts';
import { recordHistory, type Author } from '../../domain/history.ts';
import { ROLE_DEFINITIONS, type Role } from '../../domain/roles.ts';
import { hashPassword, randomBase62, sha256 } from '../../domain/secrets.ts';
import { gone, invalidRequest, notFound } from '../../domain/errors.ts';
import { onePage, type Page } from '../../http/pagination.ts';
import { serializeUser } from './serialize.ts';

type UserRow = Selectable<UsersTable>;

const INVITE_VALIDITY = sql`interval '7 days'`;

export interface UserFilter {
  role?: Role[];
  manufacturer?: string;
  status?: 'active' | 'inactive';
  q?: string;
}

export async function listUsers(db: Kysely<DB>, filter: UserFilter, page: Page) {
  let query = db.selectFrom('users');
  if (filter.role?.length) query = query.where('role', 'in', filter.role);
  if (filter.manufacturer) query = query.where('manufacturer_id', '=', filter.manufacturer);
  if (filter.status) query = query.where('is_active', '=', filter.status === 'active');
  if (filter.q) {
    const pattern = containsPattern(filter.q);
    query = query.where((eb) => eb.or([eb('name', 'ilike', pattern), eb('email', 'ilike', pattern)]));
  }
  const [rows, total] = await Promise.all([
    query.selectAll().orderBy('name').orderBy('id').$call(onePage(page)).execute(),
    query.select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow(),
  ]);
  return { rows: rows.map((row) => serializeUser(row)), total: total.count };
}

export async function getUser(db: Kysely<DB>, id: string) {
  const row = await db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw notFound('user');
  return serializeUser(row);
}

/** A partner-scoped role needs its supply partner, and only such a role may have one. */
async function checkRoleAssignment(tx: Transaction<DB>, role: Role, manufacturerId: string | null): Promise<void> {
  const scoped = ROLE_DEFINITIONS[role].partnerScoped;
  if (scoped && !manufacturerId) throw invalidRequest(`a ${role} user needs manufacturer_id`);
  if (!scoped && manufacturerId) throw invalidRequest(`a ${role} user is not tied to a supply partner; leave manufacturer_id out`);
  if (manufacturerId) {
    const partner = await tx.selectFrom('manufacturers').select('id').where('id', '=', manufacturerId).executeTakeFirst();
    if (!partner) throw invalidRequest('manufacturer_id does not name a supply partner');
  }
}

/** Refuses a change that would leave no active system_admin (locks the admins so two such changes cannot race). */
async function keepOneAdministrator(tx: Transaction<DB>, leaving: string): Promise<void> {
  const admins = await tx
    .selectFrom('users')
    .select('id')
    .where('role', '=', 'system_admin')
    .where('is_active', '=', true)
    .forUpdate()
    .execute();
  if (!admins.some((admin) => admin.id !== leaving)) throw invalidRequest('this is the last active system_admin');
}

async function issueInvite(tx: Transaction<DB>, userId: string, publicUrl: string): Promise<{ row: UserRow; url: string }> {
  const token = randomBase62();
  const row = await tx
    .updateTable('users')
    .set({ invite_token_hash: sha256(token), invite_expires_at: sql`now() + ${INVITE_VALIDITY}`, updated_at: new Date() })
    .where('id', '=', userId)
    .returningAll()
    .executeTakeFirstOrThrow();
  return { row, url: `${publicUrl}/invites/${token}/accept` };
}

export interface NewUser {
  name: string;
  email: string;
  role: Role;
  manufacturer_id?: string;
  password?: string;
}

export async function createUser(db: Kysely<DB>, author: Author, input: NewUser, publicUrl: string) {
  const invited = input.role === 'consignor';
  if (invited && input.password) throw invalidRequest('a consignor is invited and sets their own password; leave password out');
  if (!invited && !input.password) throw invalidRequest(`a ${input.role} user needs a password`);
  const passwordHash = input.password ? await hashPassword(input.password) : null;
  return inTransaction(db, async (tx) => {
    await checkRoleAssignment(tx, input.role, input.manufacturer_id ?? null);
    let row = await tx
      .insertInto('users')
      .values({
        name: input.name.trim(),
        email: input.email.trim().toLowerCase(),
        role: input.role,
        manufacturer_id: input.manufacturer_id ?? null,
        password_hash: passwordHash,
        invite_token_hash: null,
        invite_expires_at: null,
        deactivated_at: null,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    let inviteUrl: string | undefined;
    if (invited) ({ row, url: inviteUrl } = await issueInvite(tx, row.id, publicUrl));
    const user = serializeUser(row);
    await recordHistory(tx, author, { entityType: 'user', entityId: row.id, action: 'created', manufacturerId: row.manufacturer_id, after: user });
    return serializeUser(row, inviteUrl);
  });
}

async function lockUser(tx: Transaction<DB>, id: string): Promise<UserRow> {
  const row = await tx.selectFrom('users').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
  if (!row) throw notFound('user');
  return row;
}

/**
 * A user promoted to administrator loses the keys they had: a manager may have minted one of them (and kept its
 * plaintext), and it would otherwise become an administrator's key. The administrator issues fresh keys.
 */
async function revokeKeysOnPromotion(tx: Transaction<DB>, author: Author, user: UserRow): Promise<void> {
  const revoked = await tx
    .updateTable('api_keys')
    .set({ revoked_at: new Date() })
    .where('user_id', '=', user.id)
    .where('revoked_at', 'is', null)
    .returning(['id', 'revoked_at'])
    .execute();
  for (const key of revoked) {
    await recordHistory(tx, author, { entityType: 'api_key', entityId: key.id, action: 'revoked', manufacturerId: user.manufacturer_id, after: { ...key, reason: 'user promoted to system_admin' } });
  }
}

export interface UserChanges {
  name?: string;
  email?: string | null;
  role?: Role;
  manufacturer_id?: string | null;
  password?: string;
}

export async function updateUser(db: Kysely<DB>, author: Author, id: string, changes: UserChanges) {
  const passwordHash = changes.password ? await hashPassword(changes.password) : undefined;
  return inTransaction(db, async (tx) => {
    const before = await lockUser(tx, id);
    const role = changes.role ?? (before.role as Role);
    // PATCH semantics: an empty string clears a nullable field.
    const manufacturerId = changes.manufacturer_id !== undefined ? changes.manufacturer_id || null : before.manufacturer_id;
    await checkRoleAssignment(tx, role, manufacturerId);
    if (passwordHash && role === 'consignor') throw invalidRequest('a consignor sets their own password through the invite');
    if (before.role === 'system_admin' && role !== 'system_admin' && before.is_active) await keepOneAdministrator(tx, id);
    const after = await tx
      .updateTable('users')
      .set({
        ...(changes.name !== undefined && { name: changes.name.trim() }),
        ...(changes.email !== undefined && { email: changes.email ? changes.email.trim().toLowerCase() : null }),
        role,
        manufacturer_id: manufacturerId,
        ...(passwordHash && { password_hash: passwordHash }),
        updated_at: new Date(),
      })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow();
    if (role === 'system_admin' && before.role !== 'system_admin') await revokeKeysOnPromotion(tx, author, after);
    const user = serializeUser(after);
    await recordHistory(tx, author, {
      entityType: 'user', entityId: id, action: 'updated', manufacturerId: after.manufacturer_id, before: serializeUser(before), after: user,
    });
    return user;
  });
}

/** Deactivation stops the user's keys at once (authentication checks the user on every request). */
export async function setUserActive(db: Kysely<DB>, author: Author, id: string, active: boolean): Promise<void> {
  await inTransaction(db, async (tx) => {
    const before = await lockUser(tx, id);
    if (before.is_active === active) return;
    if (!active && before.role === 'system_admin') await keepOneAdministrator(tx, id);
    const after = await tx
      .updateTable('users')
      .set({ is_active: active, deactivated_at: active ? null : new Date(), updated_at: new Date() })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow();
    await recordHistory(tx, author, {
      entityType: 'user', entityId: id, action: active ? 'reactivated' : 'deactivated', manufacturerId: after.manufacturer_id,
      before: serializeUser(before), after: serializeUser(after),
    });
  });
}

/** A fresh invite for a consignor who has not set a password yet (the earlier link stops working). */
export async function reissueInvite(db: Kysely<DB>, author: Author, id: string, publicUrl: string) {
  return inTransaction(db, async (tx) => {
    const before = await lockUser(tx, id);
    if (before.role !== 'consignor') throw invalidRequest('only consignor users are invited');
    if (before.password_hash) throw invalidRequest('this consignor has already set a password');
    if (!before.is_active) throw invalidRequest('the user is deactivated');
    const { row, url } = await issueInvite(tx, id, publicUrl);
    await recordHistory(tx, author, { entityType: 'user', entityId: id, action: 'invited', manufacturerId: row.manufacturer_id, after: serializeUser(row) });
    return serializeUser(row, url);
  });
}

export async function acceptInvite(db: Kysely<DB>, token: string, password: string) {
  const passwordHash = await hashPassword(password);
  return inTransaction(db, async (tx) => {
    const before = await tx
      .selectFrom('users')
      .selectAll()
      .where('invite_token_hash', '=', sha256(token))
      .where('is_active', '=', true)
      .forUpdate()
      .executeTakeFirst();
    if (!before) throw notFound('invite');
    if (before.invite_expires_at && new Date(before.invite_expires_at).getTime() <= Date.now()) {
      throw gone('this invite has expired; ask an administrator for a new one');
    }
    const after = await tx
      .updateTable('users')
      .set({ password_hash: passwordHash, invite_token_hash: null, invite_expires_at: null, updated_at: new Date() })
      .where('id', '=', before.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    const user = serializeUser(after);
    await recordHistory(tx, { userId: after.id, apiKeyId: null }, {
      entityType: 'user', entityId: after.id, action: 'invite_accepted', manufacturerId: after.manufacturer_id, before: serializeUser(before), after: user,
    });
    return user;
  });
}
