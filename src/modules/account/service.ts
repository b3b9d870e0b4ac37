// Account security of the key holder's own account: a TOTP authenticator (enroll, confirm), recovery codes, disabling,
// and trusted devices. Every change writes a history row (entity user) in its transaction, never a secret or a code.
import { sql, type Kysely, type Selectable, type Transaction } from 'kysely';
import type { DB, UserMfaTable } from '../../db/schema.ts';
import { secretKeyOf } from '../../db/secret-key.ts';
import { inTransaction } from '../../db/transaction.ts';
import { invalidStatus, notFound } from '../../domain/errors.ts';
import { recordHistory, type HistoryEntry } from '../../domain/history.ts';
import { openSecret, randomBase62, sealSecret, sha256 } from '../../domain/secrets.ts';
import type { Actor } from '../../http/auth.ts';
import { onePage, type Page } from '../../http/pagination.ts';
import type { ModuleDeps } from '../../http/types.ts';
import {
  acceptedStep, countWrongCode, isTotpCode, isWrongCode, newRecoveryCodes, newTotpSecret, otpauthUrl, recoveryCodeHash,
  refuseWhenLockedOut, wrongCode,
} from './second-factor.ts';

type Deps = Pick<ModuleDeps, 'db' | 'config' | 'counters'>;
type Mfa = Selectable<UserMfaTable>;
type VerifiedWith = 'otp' | 'recovery_code';

const DEVICE_TRUST_MS = 30 * 24 * 60 * 60_000;

/** The account's security as the history records it: the public summary and whether an enrollment awaits its code. */
async function stateOf(db: Kysely<DB>, userId: string) {
  const row = await db.selectFrom('users as u').where('u.id', '=', userId).select((eb) => [
    eb.selectFrom('user_mfa as m').select('m.enabled_at').whereRef('m.user_id', '=', 'u.id').as('enabled_at'),
    eb.exists(eb.selectFrom('user_mfa as m').select('m.user_id').whereRef('m.user_id', '=', 'u.id').where('m.enabled_at', 'is', null)).as('pending'),
    eb.selectFrom('user_recovery_codes as c').select((c) => c.fn.countAll<number>().as('n')).whereRef('c.user_id', '=', 'u.id').as('codes'),
    eb.selectFrom('trusted_devices as d').select((d) => d.fn.countAll<number>().as('n')).whereRef('d.user_id', '=', 'u.id')
      .where('d.expires_at', '>', sql<string>`now()`).as('devices'),
  ]).executeTakeFirstOrThrow();
  return {
    mfa_enabled: row.enabled_at !== null,
    enrollment_pending: Boolean(row.pending),
    enrolled_at: row.enabled_at,
    recovery_codes_remaining: Number(row.codes ?? 0),
    trusted_devices: Number(row.devices ?? 0),
  };
}

export async function readSecurity(db: Kysely<DB>, userId: string) {
  const { enrollment_pending: _pending, ...summary } = await stateOf(db, userId);
  return summary;
}

const lockMfa = (tx: Transaction<DB>, userId: string) =>
  tx.selectFrom('user_mfa').selectAll().where('user_id', '=', userId).forUpdate().executeTakeFirst();

async function lockEnabledMfa(tx: Transaction<DB>, userId: string): Promise<Mfa> {
  const mfa = await lockMfa(tx, userId);
  if (!mfa?.enabled_at) throw invalidStatus('MFA is not enabled on this account');
  return mfa;
}

/**
 * Work that a code must unlock, in one transaction: refused while the account is locked out; a wrong code rolls the
 * work back and counts against the account (in the shared counters, so across instances). The check and the count
 * happen while the account's MFA row is locked, so parallel guesses are counted one after another, never all let in.
 */
async function withCode<T>({ db, counters }: Deps, userId: string, work: (tx: Transaction<DB>) => Promise<T>): Promise<T> {
  return inTransaction(db, async (tx) => {
    await lockMfa(tx, userId);
    await refuseWhenLockedOut(counters, userId);
    try {
      return await work(tx);
    } catch (error) {
      if (isWrongCode(error)) await countWrongCode(counters, userId);
      throw error;
    }
  });
}

/** Accepts a TOTP code of a step later than the last accepted one, and marks its step as used. */
async function acceptTotp(tx: Transaction<DB>, key: Buffer, mfa: Mfa, code: string): Promise<void> {
  const secret = openSecret(key, mfa.secret_sealed);
  if (secret === null) throw invalidStatus('the authenticator secret cannot be opened: the service key (WMS_SECRET_KEY) changed; use a recovery code');
  const step = await acceptedStep(secret, code, mfa.last_otp_step);
  if (step === null) throw wrongCode();
  // Guarded: of two requests with the same code, only the one whose update lands first accepts it.
  const taken = await tx.updateTable('user_mfa').set({ last_otp_step: step, updated_at: new Date() }).where('user_id', '=', mfa.user_id)
    .where((eb) => eb.or([eb('last_otp_step', 'is', null), eb('last_otp_step', '<', step)]))
    .returning('user_id').executeTakeFirst();
  if (!taken) throw wrongCode();
}

/** A TOTP code, or an unused recovery code, which is used up by this. */
async function acceptCode(tx: Transaction<DB>, key: Buffer, mfa: Mfa, code: string): Promise<VerifiedWith> {
  if (isTotpCode(code)) {
    await acceptTotp(tx, key, mfa, code);
    return 'otp';
  }
  const hash = recoveryCodeHash(mfa.user_id, code);
  const used = hash && await tx.deleteFrom('user_recovery_codes').where('user_id', '=', mfa.user_id).where('code_hash', '=', hash)
    .returning('user_id').executeTakeFirst();
  if (!used) throw wrongCode();
  return 'recovery_code';
}

async function replaceRecoveryCodes(tx: Transaction<DB>, userId: string): Promise<string[]> {
  const codes = newRecoveryCodes();
  await tx.deleteFrom('user_recovery_codes').where('user_id', '=', userId).execute();
  await tx.insertInto('user_recovery_codes').values(codes.map((code) => ({ user_id: userId, code_hash: recoveryCodeHash(userId, code)! }))).execute();
  return codes;
}

const historyOf = (actor: Actor, action: string, entry: Pick<HistoryEntry, 'before' | 'after'>): HistoryEntry =>
  ({ entityType: 'user', entityId: actor.userId, action, manufacturerId: actor.manufacturerId, ...entry });

/** A new secret, pending until confirmed; enrolling again while pending replaces it. */
export async function enrollMfa({ db, config }: Deps, actor: Actor) {
  const key = await secretKeyOf(db, config);
  const secret = newTotpSecret();
  await inTransaction(db, async (tx) => {
    const current = await lockMfa(tx, actor.userId);
    if (current?.enabled_at) throw invalidStatus('MFA is already enabled; disable it before enrolling another authenticator');
    const before = await stateOf(tx, actor.userId);
    const now = new Date();
    // The where keeps a concurrent confirm (committed after the lock above found no row) from being overwritten.
    const stored = await tx.insertInto('user_mfa')
      .values({ user_id: actor.userId, secret_sealed: sealSecret(key, secret), enabled_at: null, last_otp_step: null, created_at: now, updated_at: now })
      .onConflict((oc) => oc.column('user_id').doUpdateSet({ secret_sealed: (eb) => eb.ref('excluded.secret_sealed'), last_otp_step: null, created_at: now, updated_at: now })
        .where('user_mfa.enabled_at', 'is', null))
      .returning('user_id').executeTakeFirst();
    if (!stored) throw invalidStatus('MFA is already enabled; disable it before enrolling another authenticator');
    await recordHistory(tx, actor, historyOf(actor, 'mfa.enrolled', { before, after: await stateOf(tx, actor.userId) }));
  });
  return { secret, otpauth_url: otpauthUrl(secret, actor.email ?? actor.userName) };
}

/** The first code of the pending authenticator enables MFA and answers the recovery codes, once. */
export async function confirmMfa(deps: Deps, actor: Actor, otp: string) {
  const key = await secretKeyOf(deps.db, deps.config);
  return withCode(deps, actor.userId, async (tx) => {
    const mfa = await lockMfa(tx, actor.userId);
    if (!mfa) throw invalidStatus('no enrollment to confirm; enroll first');
    if (mfa.enabled_at) throw invalidStatus('MFA is already enabled');
    const before = await stateOf(tx, actor.userId);
    await acceptTotp(tx, key, mfa, otp);
    await tx.updateTable('user_mfa').set({ enabled_at: new Date(), updated_at: new Date() }).where('user_id', '=', actor.userId).execute();
    const codes = await replaceRecoveryCodes(tx, actor.userId);
    await recordHistory(tx, actor, historyOf(actor, 'mfa.enabled', { before, after: await stateOf(tx, actor.userId) }));
    return { recovery_codes: codes };
  });
}

/** Ten new recovery codes; every earlier one stops working. */
export async function regenerateRecoveryCodes(deps: Deps, actor: Actor, otp: string) {
  const key = await secretKeyOf(deps.db, deps.config);
  return withCode(deps, actor.userId, async (tx) => {
    const mfa = await lockEnabledMfa(tx, actor.userId);
    const before = await stateOf(tx, actor.userId);
    const verifiedWith = await acceptCode(tx, key, mfa, otp);
    const codes = await replaceRecoveryCodes(tx, actor.userId);
    await recordHistory(tx, actor, historyOf(actor, 'mfa.recovery_codes_regenerated', { before, after: { ...(await stateOf(tx, actor.userId)), verified_with: verifiedWith } }));
    return { recovery_codes: codes };
  });
}

/** MFA off: the secret, the recovery codes and the trusted devices go. */
export async function disableMfa(deps: Deps, actor: Actor, otp: string) {
  const key = await secretKeyOf(deps.db, deps.config);
  await withCode(deps, actor.userId, async (tx) => {
    const mfa = await lockEnabledMfa(tx, actor.userId);
    const before = await stateOf(tx, actor.userId);
    const verifiedWith = await acceptCode(tx, key, mfa, otp);
    await tx.deleteFrom('trusted_devices').where('user_id', '=', actor.userId).execute();
    await tx.deleteFrom('user_mfa').where('user_id', '=', actor.userId).execute();
    await recordHistory(tx, actor, historyOf(actor, 'mfa.disabled', { before, after: { ...(await stateOf(tx, actor.userId)), verified_with: verifiedWith } }));
  });
}

const DEVICE_COLUMNS = ['id', 'name', 'created_at', 'last_used_at', 'expires_at'] as const;

/** A device trusted for 30 days, with its token shown once; the account's expired devices are cleared meanwhile. */
export async function trustDevice(deps: Deps, actor: Actor, input: { otp: string; name: string }) {
  const key = await secretKeyOf(deps.db, deps.config);
  const token = `jwd_${randomBase62(40)}`;
  return withCode(deps, actor.userId, async (tx) => {
    const mfa = await lockEnabledMfa(tx, actor.userId);
    const verifiedWith = await acceptCode(tx, key, mfa, input.otp);
    await tx.deleteFrom('trusted_devices').where('user_id', '=', actor.userId).where('expires_at', '<=', sql<string>`now()`).execute();
    const device = await tx.insertInto('trusted_devices').values({
      user_id: actor.userId, name: input.name.trim(), token_hash: sha256(token), last_used_at: null, expires_at: new Date(Date.now() + DEVICE_TRUST_MS),
    }).returning(DEVICE_COLUMNS).executeTakeFirstOrThrow();
    await recordHistory(tx, actor, historyOf(actor, 'trusted_device.added', { after: { ...device, verified_with: verifiedWith } }));
    return { ...device, token };
  });
}

export async function listTrustedDevices(db: Kysely<DB>, userId: string, page: Page) {
  const query = db.selectFrom('trusted_devices').where('user_id', '=', userId).where('expires_at', '>', sql<string>`now()`);
  const [rows, total] = await Promise.all([
    query.select(DEVICE_COLUMNS).orderBy('created_at').orderBy('id').$call(onePage(page)).execute(),
    query.select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: total.count };
}

/** Another account's device, or an expired one, is not found. */
export async function removeTrustedDevice(db: Kysely<DB>, actor: Actor, id: string) {
  await inTransaction(db, async (tx) => {
    const device = await tx.deleteFrom('trusted_devices').where('id', '=', id).where('user_id', '=', actor.userId).where('expires_at', '>', sql<string>`now()`)
      .returning(DEVICE_COLUMNS).executeTakeFirst();
    if (!device) throw notFound('trusted device');
    await recordHistory(tx, actor, historyOf(actor, 'trusted_device.removed', { before: device }));
  });
}
