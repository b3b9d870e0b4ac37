import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { verifyPassword } from '../src/domain/secrets.ts';
import { call, createManufacturer, expectError, startApp, type TestApp } from './helpers.ts';

let t: TestApp;
let partner: string;
before(async () => {
  t = await startApp();
  partner = await createManufacturer(t, 'USERSP');
});
after(() => t.close());

const storedUser = (id: string) => t.db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const historyOf = (id: string) =>
  t.db.selectFrom('history').selectAll().where('entity_type', '=', 'user').where('entity_id', '=', id).orderBy('occurred_at').execute();

function acceptPath(inviteUrl: string): string {
  return new URL(inviteUrl).pathname;
}

describe('create users', () => {
  test('staff roles are created with a password, stored as scrypt, and audited', async () => {
    const answer = await call(t.app, 'POST', '/api/v1/admin/users', {
      key: t.adminKey, body: { name: 'Wendy Warehouse', email: 'Wendy@Example.com', role: 'warehouse', password: 'long enough password' },
    });
    assert.equal(answer.status, 201);
    const user = answer.body.data;
    assert.equal(user.email, 'wendy@example.com');
    assert.equal(user.password_set, true);
    assert.equal(user.invite_pending, false);
    assert.equal('invite_url' in user, false);
    const stored = await storedUser(user.id);
    assert.notEqual(stored.password_hash, 'long enough password');
    assert.ok(await verifyPassword('long enough password', stored.password_hash!));
    const history = await historyOf(user.id);
    assert.equal(history.length, 1);
    assert.equal(history[0]!.action, 'created');
    assert.equal(JSON.stringify(history[0]!.after).includes('scrypt'), false, 'no password hash in the audit trail');
    const admin = await call(t.app, 'GET', '/api/v1/me', { key: t.adminKey });
    assert.equal(history[0]!.user_id, admin.body.data.user.id);
    assert.equal(history[0]!.api_key_id, admin.body.data.key.id);
  });

  test('a consignor is invited: no password, manufacturer required, invite_url to accept', async () => {
    const answer = await call(t.app, 'POST', '/api/v1/admin/users', {
      key: t.adminKey, body: { name: 'Carl Consignor', email: 'carl@example.com', role: 'consignor', manufacturer_id: partner },
    });
    assert.equal(answer.status, 201);
    const user = answer.body.data;
    assert.match(user.invite_url, /^http:\/\/wms\.test\/invites\/[0-9A-Za-z]{32}\/accept$/);
    assert.equal(user.password_set, false);
    assert.equal(user.invite_pending, true);
    assert.ok(new Date(user.invite_expires_at).getTime() > Date.now() + 6 * 86_400_000);
    const stored = await storedUser(user.id);
    assert.equal(stored.password_hash, null);
    assert.equal(stored.invite_token_hash?.length, 64, 'only a hash of the token is stored');

    const accepted = await call(t.app, 'POST', acceptPath(user.invite_url), { body: { password: 'my own secret pw' } });
    assert.equal(accepted.status, 200);
    assert.equal(accepted.body.data.password_set, true);
    assert.equal(accepted.body.data.invite_pending, false);
    const after = await storedUser(user.id);
    assert.ok(await verifyPassword('my own secret pw', after.password_hash!));
    assert.equal(after.invite_token_hash, null);
    assert.deepEqual((await historyOf(user.id)).map((h) => h.action), ['created', 'invite_accepted']);

    expectError(await call(t.app, 'POST', acceptPath(user.invite_url), { body: { password: 'another secret pw' } }), 404, 'not_found');
  });

  test('an expired invite is 410 gone; a new invite replaces it', async () => {
    const created = await call(t.app, 'POST', '/api/v1/admin/users', {
      key: t.adminKey, body: { name: 'Late Larry', email: 'larry@example.com', role: 'consignor', manufacturer_id: partner },
    });
    const id = created.body.data.id;
    await t.db.updateTable('users').set({ invite_expires_at: new Date(Date.now() - 1000) }).where('id', '=', id).execute();
    expectError(await call(t.app, 'POST', acceptPath(created.body.data.invite_url), { body: { password: 'too late password' } }), 410, 'gone');

    const reissued = await call(t.app, 'POST', `/api/v1/admin/users/${id}/invite`, { key: t.adminKey });
    assert.equal(reissued.status, 200);
    assert.notEqual(reissued.body.data.invite_url, created.body.data.invite_url);
    expectError(await call(t.app, 'POST', acceptPath(created.body.data.invite_url), { body: { password: 'old link password' } }), 404, 'not_found');
    assert.equal((await call(t.app, 'POST', acceptPath(reissued.body.data.invite_url), { body: { password: 'in time password' } })).status, 200);
    expectError(await call(t.app, 'POST', `/api/v1/admin/users/${id}/invite`, { key: t.adminKey }), 422, 'invalid_request');
  });

  test('invite acceptance validates its input', async () => {
    expectError(await call(t.app, 'POST', '/invites/abc/accept', { body: { password: 'short' } }), 400, 'bad_request');
    expectError(await call(t.app, 'POST', '/invites/not-base62!/accept', { body: { password: 'long enough password' } }), 400, 'bad_request');
    expectError(await call(t.app, 'POST', `/invites/${'A'.repeat(32)}/accept`, { body: { password: 'long enough password' } }), 404, 'not_found');
  });

  test('role and partner rules are 422 and write nothing', async () => {
    const count = async () => Number((await t.db.selectFrom('users').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
    const before = await count();
    const cases = [
      { name: 'x', email: 'a1@example.com', role: 'consignor' },
      { name: 'x', email: 'a2@example.com', role: 'consignor', manufacturer_id: partner, password: 'long enough password' },
      { name: 'x', email: 'a3@example.com', role: 'office' },
      { name: 'x', email: 'a4@example.com', role: 'office', password: 'long enough password', manufacturer_id: partner },
      { name: 'x', email: 'a5@example.com', role: 'partner_portal', password: 'long enough password' },
      { name: 'x', email: 'a6@example.com', role: 'consignor', manufacturer_id: '00000000-0000-4000-8000-000000000000' },
    ];
    for (const body of cases) expectError(await call(t.app, 'POST', '/api/v1/admin/users', { key: t.adminKey, body }), 422, 'invalid_request');
    assert.equal(await count(), before);
  });

  test('bad input is 400', async () => {
    for (const body of [
      { name: 'x', email: 'not-an-email', role: 'office', password: 'long enough password' },
      { name: 'x', email: 'b@example.com', role: 'overlord', password: 'long enough password' },
      { name: 'x', email: 'b@example.com', role: 'office', password: 'short' },
      { email: 'b@example.com', role: 'office', password: 'long enough password' },
      { name: 'x', email: 'b@example.com', role: 'office', password: 'long enough password', is_admin: true },
    ]) {
      expectError(await call(t.app, 'POST', '/api/v1/admin/users', { key: t.adminKey, body }), 400, 'bad_request');
    }
  });

  test('a duplicate email is 409', async () => {
    const body = { name: 'Dup', email: 'dup@example.com', role: 'qc', password: 'long enough password' };
    assert.equal((await call(t.app, 'POST', '/api/v1/admin/users', { key: t.adminKey, body })).status, 201);
    expectError(await call(t.app, 'POST', '/api/v1/admin/users', { key: t.adminKey, body: { ...body, email: 'DUP@example.com' } }), 409, 'conflict');
  });
});

describe('read and change users', () => {
  test('list filters by role, partner and status; get returns one user', async () => {
    const list = await call(t.app, 'GET', `/api/v1/admin/users?role=consignor&manufacturer=${partner}`, { key: t.adminKey });
    assert.equal(list.status, 200);
    assert.ok(list.body.data.length >= 1);
    assert.ok(list.body.data.every((u: { role: string; manufacturer_id: string }) => u.role === 'consignor' && u.manufacturer_id === partner));
    const one = await call(t.app, 'GET', `/api/v1/admin/users/${list.body.data[0].id}`, { key: t.adminKey });
    assert.deepEqual(one.body.data, list.body.data[0]);
    expectError(await call(t.app, 'GET', '/api/v1/admin/users?status=gone', { key: t.adminKey }), 400, 'bad_request');
    expectError(await call(t.app, 'GET', '/api/v1/admin/users/00000000-0000-4000-8000-000000000000', { key: t.adminKey }), 404, 'not_found');
  });

  test('patch changes only the fields sent and records before and after', async () => {
    const created = await call(t.app, 'POST', '/api/v1/admin/users', {
      key: t.adminKey, body: { name: 'Olive Office', email: 'olive@example.com', role: 'office', password: 'long enough password' },
    });
    const id = created.body.data.id;
    const patched = await call(t.app, 'PATCH', `/api/v1/admin/users/${id}`, { key: t.adminKey, body: { name: 'Olive Manager', role: 'manager' } });
    assert.equal(patched.status, 200);
    assert.equal(patched.body.data.name, 'Olive Manager');
    assert.equal(patched.body.data.email, 'olive@example.com');
    assert.equal((await storedUser(id)).role, 'manager');
    const last = (await historyOf(id)).at(-1)!;
    assert.equal(last.action, 'updated');
    assert.equal((last.before as { role: string }).role, 'office');
    assert.equal((last.after as { role: string }).role, 'manager');

    expectError(await call(t.app, 'PATCH', `/api/v1/admin/users/${id}`, { key: t.adminKey, body: { role: 'consignor' } }), 422, 'invalid_request');
    assert.equal((await storedUser(id)).role, 'manager');
  });

  test('an empty string or null clears a nullable field (PATCH semantics)', async () => {
    const created = await call(t.app, 'POST', '/api/v1/admin/users', {
      key: t.adminKey, body: { name: 'Pat Portal', email: 'pat@example.com', role: 'partner_portal', manufacturer_id: partner, password: 'long enough password' },
    });
    const id = created.body.data.id;
    const patched = await call(t.app, 'PATCH', `/api/v1/admin/users/${id}`, { key: t.adminKey, body: { email: '', role: 'office', manufacturer_id: '' } });
    assert.equal(patched.status, 200);
    const stored = await storedUser(id);
    assert.equal(stored.email, null);
    assert.equal(stored.manufacturer_id, null);
    assert.equal(stored.role, 'office');
    expectError(await call(t.app, 'PATCH', `/api/v1/admin/users/${id}`, { key: t.adminKey, body: { email: 'not an email' } }), 400, 'bad_request');
  });

  test('the invite token never reaches the log', async () => {
    const lines: string[] = [];
    const logged = await startApp({ logStream: { write: (line) => void lines.push(line) } });
    try {
      const partnerId = (await call(logged.app, 'POST', '/api/v1/manufacturers', { key: logged.adminKey, body: { code: 'LOGP', name: 'L' } })).body.data.id;
      const created = await call(logged.app, 'POST', '/api/v1/admin/users', {
        key: logged.adminKey, body: { name: 'Log', email: 'log@example.com', role: 'consignor', manufacturer_id: partnerId },
      });
      const token = /invites\/([^/]+)\/accept/.exec(created.body.data.invite_url)![1]!;
      await call(logged.app, 'POST', acceptPath(created.body.data.invite_url), { body: { password: 'short' } });
      await call(logged.app, 'POST', acceptPath(created.body.data.invite_url), { body: { password: 'long enough password' } });
      assert.ok(lines.some((line) => line.includes('/invites/[token]/accept')));
      assert.equal(lines.some((line) => line.includes(token)), false);
    } finally {
      await logged.close();
    }
  });

  test('the last active system_admin cannot be deactivated or demoted', async () => {
    const admin = (await call(t.app, 'GET', '/api/v1/me', { key: t.adminKey })).body.data.user.id;
    expectError(await call(t.app, 'POST', `/api/v1/admin/users/${admin}/deactivate`, { key: t.adminKey }), 422, 'invalid_request');
    expectError(await call(t.app, 'PATCH', `/api/v1/admin/users/${admin}`, { key: t.adminKey, body: { role: 'manager' } }), 422, 'invalid_request');
    assert.equal((await storedUser(admin)).is_active, true);
  });

  test('deactivate and reactivate are 204, stamp the user and are audited', async () => {
    const created = await call(t.app, 'POST', '/api/v1/admin/users', {
      key: t.adminKey, body: { name: 'Quinn QC', email: 'quinn@example.com', role: 'qc', password: 'long enough password' },
    });
    const id = created.body.data.id;
    const off = await call(t.app, 'POST', `/api/v1/admin/users/${id}/deactivate`, { key: t.adminKey });
    assert.equal(off.status, 204);
    assert.equal(off.body, null);
    const stored = await storedUser(id);
    assert.equal(stored.is_active, false);
    assert.ok(stored.deactivated_at);
    assert.equal((await call(t.app, 'POST', `/api/v1/admin/users/${id}/reactivate`, { key: t.adminKey })).status, 204);
    assert.equal((await storedUser(id)).deactivated_at, null);
    assert.deepEqual((await historyOf(id)).map((h) => h.action), ['created', 'deactivated', 'reactivated']);
    expectError(await call(t.app, 'POST', '/api/v1/admin/users/00000000-0000-4000-8000-000000000000/deactivate', { key: t.adminKey }), 404, 'not_found');
  });

  test('roles lists each role with its permissions', async () => {
    const answer = await call(t.app, 'GET', '/api/v1/admin/roles', { key: t.adminKey });
    const byRole = Object.fromEntries(answer.body.data.map((r: { role: string }) => [r.role, r]));
    assert.equal(byRole.consignor.partner_scoped, true);
    assert.ok(byRole.consignor.permissions.includes('webhooks.manage'));
    assert.deepEqual([...byRole.qc.permissions].sort(), ['inventory.view', 'receiving.qc', 'receiving.view']);
    assert.equal(byRole.partner_portal.api_access, false);
    assert.equal(byRole.system_admin.administers, true);
    assert.equal(byRole.manager.administers, false);
    assert.equal(byRole.office.permissions.includes('inventory.edit'), false);
    // A list like every other (spec rules 2 and 8): paged, with its meta.
    const roles = answer.body.data.map((r: { role: string }) => r.role);
    assert.deepEqual(answer.body.meta, { page: 1, per_page: 50, total_count: roles.length, total_pages: 1 });
    const second = await call(t.app, 'GET', '/api/v1/admin/roles?per_page=2&page=2', { key: t.adminKey });
    assert.deepEqual(second.body.data.map((r: { role: string }) => r.role), roles.slice(2, 4));
    assert.deepEqual(second.body.meta, { page: 2, per_page: 2, total_count: roles.length, total_pages: Math.ceil(roles.length / 2) });
    expectError(await call(t.app, 'GET', '/api/v1/admin/roles?page=0', { key: t.adminKey }), 400, 'bad_request');
  });
});
