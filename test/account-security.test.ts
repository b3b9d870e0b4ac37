// Account security of the key holder's own account: enroll and confirm a TOTP authenticator (codes computed here with
// node:crypto per RFC 6238, not by the service's library), the step window, replay (also in parallel on the server),
// recovery codes, disabling, the per-account limit on wrong codes, trusted devices, the sealed secret and the history.
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { secretKeyOf } from '../src/db/secret-key.ts';
import { openSecret, sha256 } from '../src/domain/secrets.ts';
import { call, expectError, onPostgres, startApp, userWithKey, type TestApp } from './helpers.ts';

let t: TestApp;
before(async () => {
  t = await startApp();
});
after(() => t.close());

const api = (method: 'GET' | 'POST' | 'DELETE', url: string, key: string, body?: unknown) =>
  call(t.app, method, `/api/v1${url}`, { key, ...(body === undefined ? {} : { body }) });

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

function base32Bytes(secret: string): Buffer {
  let bits = '';
  for (const char of secret.replace(/=+$/, '')) bits += BASE32.indexOf(char).toString(2).padStart(5, '0');
  return Buffer.from(bits.match(/.{8}/g)!.map((byte) => parseInt(byte, 2)));
}

/** RFC 6238 with SHA-1 and 6 digits: HOTP (RFC 4226) of the 30 s time step. */
function totp(secret: string, step: number): string {
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(step));
  const mac = createHmac('sha1', base32Bytes(secret)).update(counter).digest();
  const offset = mac[mac.length - 1]! & 0xf;
  return String((mac.readUInt32BE(offset) & 0x7fffffff) % 1_000_000).padStart(6, '0');
}

/** The current step, once at least 6 s of it remain: the codes a test computes from it stay in their window meanwhile. */
async function steadyStep(): Promise<number> {
  const into = (Date.now() / 1000) % 30;
  if (into > 24) await sleep((30 - into) * 1000 + 50);
  return Math.floor(Date.now() / 1000 / 30);
}

async function enrolledUser() {
  const user = await userWithKey(t, 'warehouse');
  const enrolled = await api('POST', '/account/mfa/enroll', user.key);
  assert.equal(enrolled.status, 200, JSON.stringify(enrolled.body));
  return { ...user, secret: enrolled.body.data.secret as string };
}

/** A user with MFA enabled by the code of step `step - 1`, so the current and next step are still free. */
async function mfaUser(step: number) {
  const user = await enrolledUser();
  const confirmed = await api('POST', '/account/mfa/confirm', user.key, { otp: totp(user.secret, step - 1) });
  assert.equal(confirmed.status, 200, JSON.stringify(confirmed.body));
  return { ...user, codes: confirmed.body.data.recovery_codes as string[] };
}

/** The account-security rows of the user's history (its creation by the administrator is not one). */
const historyOf = (userId: string) =>
  t.db.selectFrom('history').select(['action', 'before', 'after', 'user_id']).where('entity_type', '=', 'user').where('entity_id', '=', userId)
    .where('action', '!=', 'created').orderBy('occurred_at').execute();

test('enroll, confirm: the secret is sealed, MFA is on, ten recovery codes are shown once, history without secrets', async () => {
  const user = await userWithKey(t, 'warehouse');
  assert.deepEqual((await api('GET', '/account/security', user.key)).body.data,
    { mfa_enabled: false, enrolled_at: null, recovery_codes_remaining: 0, trusted_devices: 0 });
  expectError(await api('POST', '/account/mfa/confirm', user.key, { otp: '123456' }), 422, 'invalid_status');

  const first = await api('POST', '/account/mfa/enroll', user.key);
  assert.equal(first.status, 200);
  const replaced = first.body.data.secret as string;
  const enrolled = await api('POST', '/account/mfa/enroll', user.key, {});
  assert.equal(enrolled.status, 200);
  const { secret, otpauth_url: url } = enrolled.body.data;
  assert.match(secret, /^[A-Z2-7]{32}$/);
  assert.notEqual(secret, replaced);
  const uri = new URL(url);
  assert.equal(uri.protocol, 'otpauth:');
  assert.equal(uri.host, 'totp');
  assert.equal(decodeURIComponent(uri.pathname), `/Consignment WMS:${(await api('GET', '/me', user.key)).body.data.user.email}`);
  assert.equal(uri.searchParams.get('secret'), secret);
  assert.equal(uri.searchParams.get('issuer'), 'Consignment WMS');

  const row = await t.db.selectFrom('user_mfa').selectAll().where('user_id', '=', user.userId).executeTakeFirstOrThrow();
  assert.ok(!row.secret_sealed.includes(secret), 'the secret is not stored in plain text');
  assert.equal(openSecret(await secretKeyOf(t.db, t.config), row.secret_sealed), secret);
  assert.equal(row.enabled_at, null);
  assert.equal((await api('GET', '/account/security', user.key)).body.data.mfa_enabled, false, 'pending until confirmed');

  const step = await steadyStep();
  expectError(await api('POST', '/account/mfa/confirm', user.key, { otp: totp(replaced, step) }), 422, 'invalid_otp');
  expectError(await api('POST', '/account/mfa/confirm', user.key, { otp: 'not-a-code' }), 422, 'invalid_otp');
  const confirmed = await api('POST', '/account/mfa/confirm', user.key, { otp: totp(secret, step) });
  assert.equal(confirmed.status, 200, JSON.stringify(confirmed.body));
  const codes: string[] = confirmed.body.data.recovery_codes;
  assert.equal(codes.length, 10);
  assert.equal(new Set(codes).size, 10);
  for (const code of codes) assert.match(code, /^[0-9a-z]{4}-[0-9a-z]{4}-[0-9a-z]{4}$/);
  const stored = await t.db.selectFrom('user_recovery_codes').select('code_hash').where('user_id', '=', user.userId).execute();
  assert.equal(stored.length, 10);
  for (const { code_hash } of stored) assert.ok(!codes.some((code) => code_hash.includes(code) || code_hash.includes(code.replace(/-/g, ''))));

  const security = (await api('GET', '/account/security', user.key)).body.data;
  assert.equal(security.mfa_enabled, true);
  assert.ok(Math.abs(Date.parse(security.enrolled_at) - Date.now()) < 60_000);
  assert.equal(security.recovery_codes_remaining, 10);
  assert.equal(security.trusted_devices, 0);

  expectError(await api('POST', '/account/mfa/enroll', user.key), 422, 'invalid_status');
  expectError(await api('POST', '/account/mfa/confirm', user.key, { otp: totp(secret, step + 1) }), 422, 'invalid_status');
  expectError(await api('POST', '/account/mfa/enroll', user.key, { secret: 'mine' }), 400, 'bad_request');

  const history = await historyOf(user.userId);
  assert.deepEqual(history.map((h) => h.action), ['mfa.enrolled', 'mfa.enrolled', 'mfa.enabled']);
  assert.ok(history.every((h) => h.user_id === user.userId));
  assert.deepEqual(history[2]!.after, { ...security, enrollment_pending: false });
  assert.equal((history[2]!.before as { enrollment_pending: boolean }).enrollment_pending, true);
  const written = JSON.stringify(history);
  for (const value of [secret, replaced, ...codes, ...codes.map((code) => code.replace(/-/g, ''))]) assert.ok(!written.includes(value));
});

test('a code of the previous, current or next step is accepted; two steps away is refused; each step once', async () => {
  const step = await steadyStep();
  const user = await enrolledUser();
  expectError(await api('POST', '/account/mfa/confirm', user.key, { otp: totp(user.secret, step + 2) }), 422, 'invalid_otp');
  expectError(await api('POST', '/account/mfa/confirm', user.key, { otp: totp(user.secret, step - 2) }), 422, 'invalid_otp');
  assert.equal((await api('POST', '/account/mfa/confirm', user.key, { otp: totp(user.secret, step - 1) })).status, 200, 'previous');
  assert.equal((await api('POST', '/account/mfa/recovery-codes', user.key, { otp: totp(user.secret, step) })).status, 200, 'current');
  expectError(await api('POST', '/account/mfa/recovery-codes', user.key, { otp: totp(user.secret, step) }), 422, 'invalid_otp');
  expectError(await api('POST', '/account/mfa/recovery-codes', user.key, { otp: totp(user.secret, step - 1) }), 422, 'invalid_otp');
  assert.equal((await api('POST', '/account/trusted-devices', user.key, { otp: totp(user.secret, step + 1), name: 'Dock tablet' })).status, 201, 'next');
  expectError(await api('POST', '/account/mfa/disable', user.key, { otp: totp(user.secret, step + 1) }), 422, 'invalid_otp');
  const row = await t.db.selectFrom('user_mfa').select('last_otp_step').where('user_id', '=', user.userId).executeTakeFirstOrThrow();
  assert.equal(row.last_otp_step, step + 1);
});

test('parallel requests with the same code or recovery code: exactly one is accepted', { skip: !onPostgres && 'PGlite has one connection' }, async () => {
  const step = await steadyStep();
  const user = await mfaUser(step);
  const inParallel = (url: string, body: object) => Promise.all(Array.from({ length: 3 }, () => api('POST', url, user.key, body)));
  const onlyOne = (answers: Awaited<ReturnType<typeof inParallel>>, status: number) => {
    const accepted = answers.filter((a) => a.status === status);
    assert.equal(accepted.length, 1, JSON.stringify(answers.map((a) => [a.status, a.body])));
    for (const refused of answers.filter((a) => a.status !== status)) expectError(refused, 422, 'invalid_otp');
    return accepted[0]!;
  };
  const renewed = onlyOne(await inParallel('/account/mfa/recovery-codes', { otp: totp(user.secret, step) }), 200);
  const codes: string[] = renewed.body.data.recovery_codes;
  onlyOne(await inParallel('/account/trusted-devices', { otp: codes[0], name: 'Dock' }), 201);
  const security = (await api('GET', '/account/security', user.key)).body.data;
  assert.deepEqual([security.recovery_codes_remaining, security.trusted_devices], [9, 1]);
  // The codes in effect are the accepted answer's: one of the first set no longer works.
  expectError(await api('POST', '/account/mfa/disable', user.key, { otp: user.codes[1] }), 422, 'invalid_otp');
  assert.deepEqual((await historyOf(user.userId)).map((h) => h.action),
    ['mfa.enrolled', 'mfa.enabled', 'mfa.recovery_codes_regenerated', 'trusted_device.added']);
});

test('a recovery code replaces the OTP once; regenerating invalidates the old codes; disable removes everything', async () => {
  const step = await steadyStep();
  const user = await mfaUser(step);
  const [first, second, third] = user.codes as [string, string, string];
  const device = await api('POST', '/account/trusted-devices', user.key, { otp: first.toUpperCase().replace(/-/g, ' '), name: 'Scanner 1' });
  assert.equal(device.status, 201, 'case, dashes and spaces do not matter');
  expectError(await api('POST', '/account/trusted-devices', user.key, { otp: first, name: 'Scanner 2' }), 422, 'invalid_otp');
  assert.equal((await api('GET', '/account/security', user.key)).body.data.recovery_codes_remaining, 9);

  const renewed = await api('POST', '/account/mfa/recovery-codes', user.key, { otp: second });
  assert.equal(renewed.status, 200);
  const codes: string[] = renewed.body.data.recovery_codes;
  assert.equal(codes.length, 10);
  assert.equal((await api('GET', '/account/security', user.key)).body.data.recovery_codes_remaining, 10);
  expectError(await api('POST', '/account/mfa/disable', user.key, { otp: third }), 422, 'invalid_otp');

  expectError(await api('POST', '/account/mfa/disable', user.key, {}), 400, 'bad_request');
  expectError(await api('POST', '/account/mfa/disable', user.key), 400, 'bad_request');
  expectError(await api('POST', '/account/mfa/disable', user.key, { otp: '000000', extra: 1 }), 400, 'bad_request');
  const wrong = totp(user.secret, step) === '000000' ? '000001' : '000000';
  expectError(await api('POST', '/account/mfa/disable', user.key, { otp: wrong }), 422, 'invalid_otp');
  assert.equal((await api('GET', '/account/security', user.key)).body.data.mfa_enabled, true, 'a refused disable changes nothing');

  const disabled = await api('POST', '/account/mfa/disable', user.key, { otp: codes[0] });
  assert.equal(disabled.status, 204);
  assert.deepEqual((await api('GET', '/account/security', user.key)).body.data,
    { mfa_enabled: false, enrolled_at: null, recovery_codes_remaining: 0, trusted_devices: 0 });
  assert.equal((await t.db.selectFrom('user_mfa').select('user_id').where('user_id', '=', user.userId).execute()).length, 0);
  assert.equal((await t.db.selectFrom('user_recovery_codes').select('user_id').where('user_id', '=', user.userId).execute()).length, 0);
  assert.equal((await t.db.selectFrom('trusted_devices').select('id').where('user_id', '=', user.userId).execute()).length, 0);
  assert.deepEqual((await api('GET', '/account/trusted-devices', user.key)).body.data, []);

  expectError(await api('POST', '/account/mfa/disable', user.key, { otp: codes[1] }), 422, 'invalid_status');
  expectError(await api('POST', '/account/mfa/recovery-codes', user.key, { otp: codes[1] }), 422, 'invalid_status');
  expectError(await api('POST', '/account/trusted-devices', user.key, { otp: codes[1], name: 'x' }), 422, 'invalid_status');

  const history = await historyOf(user.userId);
  assert.deepEqual(history.map((h) => h.action),
    ['mfa.enrolled', 'mfa.enabled', 'trusted_device.added', 'mfa.recovery_codes_regenerated', 'mfa.disabled']);
  const off = history.at(-1)!;
  assert.deepEqual(off.before, { mfa_enabled: true, enrollment_pending: false, enrolled_at: (off.before as { enrolled_at: string }).enrolled_at, recovery_codes_remaining: 10, trusted_devices: 1 });
  assert.deepEqual(off.after, { mfa_enabled: false, enrollment_pending: false, enrolled_at: null, recovery_codes_remaining: 0, trusted_devices: 0, verified_with: 'recovery_code' });
  const written = JSON.stringify(history);
  for (const value of [user.secret, ...user.codes, ...codes, device.body.data.token]) assert.ok(!written.includes(value));

  // Enrolling again after disable starts over with a new secret.
  const again = await api('POST', '/account/mfa/enroll', user.key);
  assert.equal(again.status, 200);
  assert.notEqual(again.body.data.secret, user.secret);
});

test('wrong codes are limited per account: the sixth attempt in the window is 429, even with the right code', async () => {
  const step = await steadyStep();
  const user = await mfaUser(step);
  const other = await mfaUser(step);
  const right = totp(user.secret, step);
  const wrong = right === '111111' ? '222222' : '111111';
  for (let i = 0; i < 5; i++) expectError(await api('POST', '/account/mfa/disable', user.key, { otp: i % 2 ? wrong : 'zzzz-zzzz-zzzz' }), 422, 'invalid_otp');
  const locked = await api('POST', '/account/mfa/disable', user.key, { otp: right });
  expectError(locked, 429, 'rate_limited');
  const retryAfter = Number(locked.headers['retry-after']);
  assert.ok(retryAfter > 800 && retryAfter <= 900, `Retry-After ${retryAfter}`);
  expectError(await api('POST', '/account/trusted-devices', user.key, { otp: user.codes[0], name: 'x' }), 429, 'rate_limited');
  assert.equal((await api('GET', '/account/security', user.key)).body.data.mfa_enabled, true);
  assert.equal((await api('POST', '/account/mfa/disable', other.key, { otp: totp(other.secret, step) })).status, 204, 'another account is not limited');
  assert.deepEqual((await historyOf(user.userId)).map((h) => h.action), ['mfa.enrolled', 'mfa.enabled'], 'failures write no history');
});

test('trusted devices: created with a code, token once and hashed, listed, removed; another account\'s is 404', async () => {
  const step = await steadyStep();
  const owner = await mfaUser(step);
  const stranger = await userWithKey(t, 'office');
  expectError(await api('POST', '/account/trusted-devices', owner.key, { otp: totp(owner.secret, step) }), 400, 'bad_request');
  expectError(await api('POST', '/account/trusted-devices', owner.key, { otp: totp(owner.secret, step), name: '   ' }), 400, 'bad_request');
  const created = await api('POST', '/account/trusted-devices', owner.key, { otp: totp(owner.secret, step), name: ' Packing station ' });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const { token, ...device } = created.body.data;
  assert.match(token, /^jwd_[0-9A-Za-z]{40}$/);
  assert.equal(device.name, 'Packing station');
  assert.equal(device.last_used_at, null);
  const days = (Date.parse(device.expires_at) - Date.parse(device.created_at)) / 86_400_000;
  assert.ok(Math.abs(days - 30) < 0.01, `expires after ${days} days`);
  const row = await t.db.selectFrom('trusted_devices').selectAll().where('id', '=', device.id).executeTakeFirstOrThrow();
  assert.equal(row.token_hash, sha256(token));
  assert.ok(!JSON.stringify(row).includes(token));

  const second = await api('POST', '/account/trusted-devices', owner.key, { otp: owner.codes[0], name: 'Office PC' });
  assert.equal(second.status, 201);
  const listed = await api('GET', '/account/trusted-devices', owner.key);
  assert.deepEqual(listed.body.data, [device, { ...second.body.data, token: undefined }].map(({ token: _token, ...d }) => d));
  assert.deepEqual(listed.body.meta, { page: 1, per_page: 50, total_count: 2, total_pages: 1 });
  const page2 = await api('GET', '/account/trusted-devices?per_page=1&page=2', owner.key);
  assert.deepEqual([page2.body.data.map((d: { id: string }) => d.id), page2.body.meta.total_count], [[second.body.data.id], 2]);
  assert.equal((await api('GET', '/account/security', owner.key)).body.data.trusted_devices, 2);
  assert.deepEqual((await api('GET', '/account/trusted-devices', stranger.key)).body.data, []);

  expectError(await api('DELETE', `/account/trusted-devices/${device.id}`, stranger.key), 404, 'not_found');
  expectError(await api('DELETE', '/account/trusted-devices/00000000-0000-4000-8000-000000000000', owner.key), 404, 'not_found');
  expectError(await api('DELETE', '/account/trusted-devices/not-a-uuid', owner.key), 400, 'bad_request');
  assert.equal((await api('DELETE', `/account/trusted-devices/${device.id}`, owner.key)).status, 204);
  expectError(await api('DELETE', `/account/trusted-devices/${device.id}`, owner.key), 404, 'not_found');
  assert.deepEqual((await api('GET', '/account/trusted-devices', owner.key)).body.data.map((d: { id: string }) => d.id), [second.body.data.id]);

  // An expired device is neither listed, counted nor removable, and is cleared when another is trusted.
  await t.db.updateTable('trusted_devices').set({ expires_at: new Date(Date.now() - 1000) }).where('id', '=', second.body.data.id).execute();
  assert.deepEqual((await api('GET', '/account/trusted-devices', owner.key)).body.data, []);
  assert.equal((await api('GET', '/account/security', owner.key)).body.data.trusted_devices, 0);
  expectError(await api('DELETE', `/account/trusted-devices/${second.body.data.id}`, owner.key), 404, 'not_found');
  assert.equal((await api('POST', '/account/trusted-devices', owner.key, { otp: owner.codes[1], name: 'Tablet' })).status, 201);
  assert.equal((await t.db.selectFrom('trusted_devices').select('id').where('user_id', '=', owner.userId).execute()).length, 1);

  const history = await historyOf(owner.userId);
  assert.deepEqual(history.map((h) => h.action),
    ['mfa.enrolled', 'mfa.enabled', 'trusted_device.added', 'trusted_device.added', 'trusted_device.removed', 'trusted_device.added']);
  assert.deepEqual(history[4]!.before, device);
  assert.deepEqual(history[2]!.after, { ...device, verified_with: 'otp' });
});

test('every route needs a key', async () => {
  for (const [method, url] of [['GET', '/account/security'], ['POST', '/account/mfa/enroll'], ['GET', '/account/trusted-devices']] as const) {
    expectError(await call(t.app, method, `/api/v1${url}`), 401, 'unauthorized');
  }
});
