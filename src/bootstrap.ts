// First start: an empty database gets user `admin` (system_admin) with one key, so a newcomer can log in at all.
import { sql, type Kysely, type Transaction } from 'kysely';
import { ADVISORY_LOCKS } from './db/advisory-locks.ts';
import type { DB } from './db/schema.ts';
import { inTransaction } from './db/transaction.ts';
import { recordHistory } from './domain/history.ts';
import { PERMISSIONS } from './domain/roles.ts';
import { generateApiKey, keyPrefix, sha256 } from './domain/secrets.ts';

async function insertAdminKey(tx: Transaction<DB>, userId: string, key: string, name: string): Promise<void> {
  const row = await tx
    .insertInto('api_keys')
    .values({
      user_id: userId, name, key_hash: sha256(key), key_prefix: keyPrefix(key), scopes: [...PERMISSIONS],
      expires_at: null, revoked_at: null, created_by: null,
    })
    .returning(['id', 'name', 'key_prefix', 'scopes'])
    .executeTakeFirstOrThrow();
  await recordHistory(tx, { userId: null, apiKeyId: null }, { entityType: 'api_key', entityId: row.id, action: 'created', after: row });
}

async function createAdminUser(tx: Transaction<DB>): Promise<string> {
  const user = await tx
    .insertInto('users')
    .values({
      name: 'admin', email: null, role: 'system_admin', manufacturer_id: null, password_hash: null,
      invite_token_hash: null, invite_expires_at: null, deactivated_at: null,
    })
    .returning(['id', 'name', 'role'])
    .executeTakeFirstOrThrow();
  await recordHistory(tx, { userId: null, apiKeyId: null }, { entityType: 'user', entityId: user.id, action: 'created', after: user });
  return user.id;
}

/**
 * With no users at all, creates `admin` owning `bootstrapKey` (WMS_BOOTSTRAP_ADMIN_KEY) or a fresh key.
 * Returns the plaintext key when it generated one (to be printed once), otherwise null.
 */
export async function ensureFirstAdmin(db: Kysely<DB>, bootstrapKey: string | null): Promise<{ created: boolean; generatedKey: string | null }> {
  return inTransaction(db, async (tx) => {
    await sql`select pg_advisory_xact_lock(${ADVISORY_LOCKS.bootstrap})`.execute(tx);
    const anyUser = await tx.selectFrom('users').select('id').limit(1).executeTakeFirst();
    if (anyUser) return { created: false, generatedKey: null };
    const userId = await createAdminUser(tx);
    const key = bootstrapKey ?? generateApiKey();
    await insertAdminKey(tx, userId, key, 'bootstrap');
    return { created: true, generatedKey: bootstrapKey ? null : key };
  });
}

/** CLI create-admin-key: a new full-scope key for the oldest active system_admin (created if there is none). */
export async function createAdminKey(db: Kysely<DB>): Promise<string> {
  return inTransaction(db, async (tx) => {
    await sql`select pg_advisory_xact_lock(${ADVISORY_LOCKS.bootstrap})`.execute(tx);
    const admin = await tx
      .selectFrom('users')
      .select('id')
      .where('role', '=', 'system_admin')
      .where('is_active', '=', true)
      .orderBy('created_at')
      .limit(1)
      .executeTakeFirst();
    const userId = admin?.id ?? (await createAdminUser(tx));
    const key = generateApiKey();
    await insertAdminKey(tx, userId, key, `cli ${new Date().toISOString()}`);
    return key;
  });
}
