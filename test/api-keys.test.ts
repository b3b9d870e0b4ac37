import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sha256 } from '../src/domain/secrets.ts';
import { call, createManufacturer, expectError, startApp, userWithKey, type TestApp } from './helpers.ts';

let t: TestApp;
let officeUser: string;
before(async () => {
  t = await startApp();
  officeUser = (await userWithKey(t, 'office', { scopes: ['orders.view'] })).userId;
});
after(() => t.close());

const keyCount = async () => Number((await t.db.selectFrom('api_keys').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);

describe('create', () => {
  test('returns the plaintext key once and stores only its hash', async () => {
    const answer = await call(t.app, 'POST', '/api/v1/api-keys', {
      key: t.adminKey, body: { user_id: officeUser, name: 'ERP', scopes: ['orders.view', 'orders.create'], expires_at: '2099-01-31' },
    });
    assert.equal(answer.status, 201);
    assert.deepEqual(Object.keys(answer.body.data).sort(), ['id', 'key']);
    const { id, key } = answer.body.data;
    assert.match(key, /^jwc_[0-9A-Za-z]{32}$/);
    const stored = await t.db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    assert.equal(stored.key_hash, sha256(key));
    assert.equal(JSON.stringify(stored).includes(key), false);
    assert.deepEqual(stored.scopes, ['orders.view', 'orders.create']);
    assert.equal(new Date(stored.expires_at!).toISOString(), '2099-01-31T00:00:00.000Z');
    const history = await t.db.selectFrom('history').selectAll().where('entity_id', '=', id).execute();
    assert.equal(history.length, 1);
    assert.equal(JSON.stringify(history[0]).includes(key), false);

    const me = await call(t.app, 'GET', '/api/v1/me', { key });
    assert.equal(me.body.data.user.id, officeUser);
    assert.equal(me.body.data.key.expires_at, '2099-01-31T00:00:00.000Z');
  });

  test('expires_at takes an RFC 3339 date-time; a past or malformed one is refused', async () => {
    const ok = await call(t.app, 'POST', '/api/v1/api-keys', {
      key: t.adminKey, body: { user_id: officeUser, name: 'dt', scopes: ['orders.view'], expires_at: '2099-06-01T12:30:00+02:00' },
    });
    assert.equal(ok.status, 201);
    const before = await keyCount();
    expectError(await call(t.app, 'POST', '/api/v1/api-keys', { key: t.adminKey, body: { user_id: officeUser, name: 'p', scopes: ['orders.view'], expires_at: '2001-01-01' } }), 422, 'invalid_request');
    expectError(await call(t.app, 'POST', '/api/v1/api-keys', { key: t.adminKey, body: { user_id: officeUser, name: 'm', scopes: ['orders.view'], expires_at: 'tomorrow' } }), 400, 'bad_request');
    expectError(await call(t.app, 'POST', '/api/v1/api-keys', { key: t.adminKey, body: { user_id: officeUser, name: 'm', scopes: ['orders.view'], expires_at: '2099-02-30' } }), 400, 'bad_request');
    expectError(await call(t.app, 'POST', '/api/v1/api-keys', { key: t.adminKey, body: { user_id: officeUser, name: 'm', scopes: ['orders.view'], expires_at: '9999-12-31T23:59:59-23:59' } }), 400, 'bad_request');
    assert.equal(await keyCount(), before);
  });

  test('scopes beyond the target user’s role are 422', async () => {
    const before = await keyCount();
    const answer = await call(t.app, 'POST', '/api/v1/api-keys', { key: t.adminKey, body: { user_id: officeUser, name: 'x', scopes: ['orders.view', 'receiving.post'] } });
    expectError(answer, 422, 'invalid_request');
    assert.match(answer.body.error.message, /receiving\.post/);
    assert.equal(await keyCount(), before);
  });

  test('scopes beyond the caller’s own permissions are 403', async () => {
    const manager = await userWithKey(t, 'manager', { scopes: ['admin.api_keys', 'orders.view'] });
    const answer = await call(t.app, 'POST', '/api/v1/api-keys', { key: manager.key, body: { user_id: officeUser, name: 'x', scopes: ['orders.create'] } });
    expectError(answer, 403, 'forbidden');
    const within = await call(t.app, 'POST', '/api/v1/api-keys', { key: manager.key, body: { user_id: officeUser, name: 'x', scopes: ['orders.view'] } });
    assert.equal(within.status, 201);
  });

  test('a manager cannot mint or revoke keys of an administrator', async () => {
    const manager = await userWithKey(t, 'manager');
    const admin = (await call(t.app, 'GET', '/api/v1/me', { key: t.adminKey })).body.data;
    expectError(await call(t.app, 'POST', '/api/v1/api-keys', { key: manager.key, body: { user_id: admin.user.id, name: 'x', scopes: ['orders.view'] } }), 403, 'forbidden');
    expectError(await call(t.app, 'DELETE', `/api/v1/api-keys/${admin.key.id}`, { key: manager.key }), 403, 'forbidden');
    const listed = await call(t.app, 'GET', '/api/v1/api-keys?per_page=100', { key: manager.key });
    assert.equal(listed.body.data.some((k: { user_id: string }) => k.user_id === admin.user.id), false);
  });

  test('promoting a user to system_admin revokes the keys they had (a manager may hold one’s plaintext)', async () => {
    const manager = await userWithKey(t, 'manager');
    const target = await userWithKey(t, 'manager', { scopes: ['orders.view'] });
    const minted = await call(t.app, 'POST', '/api/v1/api-keys', { key: manager.key, body: { user_id: target.userId, name: 'kept copy', scopes: ['admin.api_keys'] } });
    assert.equal(minted.status, 201);
    assert.equal((await call(t.app, 'PATCH', `/api/v1/admin/users/${target.userId}`, { key: t.adminKey, body: { role: 'system_admin' } })).status, 200);
    expectError(await call(t.app, 'GET', '/api/v1/admin/users', { key: minted.body.data.key }), 401, 'unauthorized');
    expectError(await call(t.app, 'GET', '/api/v1/me', { key: target.key }), 401, 'unauthorized');
    const live = await t.db.selectFrom('api_keys').select('id').where('user_id', '=', target.userId).where('revoked_at', 'is', null).execute();
    assert.deepEqual(live, []);
    const audits = await t.db.selectFrom('history').select('entity_id').where('entity_type', '=', 'api_key').where('action', '=', 'revoked')
      .where('entity_id', 'in', [target.keyId, minted.body.data.id]).execute();
    assert.equal(audits.length, 2);
  });

  test('without admin.api_keys the route is 403', async () => {
    const office = await userWithKey(t, 'office');
    expectError(await call(t.app, 'POST', '/api/v1/api-keys', { key: office.key, body: { user_id: officeUser, name: 'x', scopes: ['orders.view'] } }), 403, 'forbidden');
    expectError(await call(t.app, 'GET', '/api/v1/api-keys', { key: office.key }), 403, 'forbidden');
  });

  test('an unknown or deactivated user, an unknown scope, empty scopes', async () => {
    expectError(await call(t.app, 'POST', '/api/v1/api-keys', { key: t.adminKey, body: { user_id: '00000000-0000-4000-8000-000000000000', name: 'x', scopes: ['orders.view'] } }), 422, 'invalid_request');
    const gone = await userWithKey(t, 'office');
    await call(t.app, 'POST', `/api/v1/admin/users/${gone.userId}/deactivate`, { key: t.adminKey });
    expectError(await call(t.app, 'POST', '/api/v1/api-keys', { key: t.adminKey, body: { user_id: gone.userId, name: 'x', scopes: ['orders.view'] } }), 422, 'invalid_request');
    expectError(await call(t.app, 'POST', '/api/v1/api-keys', { key: t.adminKey, body: { user_id: officeUser, name: 'x', scopes: ['orders.fly'] } }), 400, 'bad_request');
    expectError(await call(t.app, 'POST', '/api/v1/api-keys', { key: t.adminKey, body: { user_id: officeUser, name: 'x', scopes: [] } }), 400, 'bad_request');
    expectError(await call(t.app, 'POST', '/api/v1/api-keys', { key: t.adminKey, body: { user_id: 'nope', name: 'x', scopes: ['orders.view'] } }), 400, 'bad_request');
  });

  test('a consignor key is confined to the consignor role', async () => {
    const partner = await createManufacturer(t, 'KEYP');
    const consignor = await userWithKey(t, 'consignor', { manufacturerId: partner, scopes: ['orders.view'] });
    expectError(await call(t.app, 'POST', '/api/v1/api-keys', { key: t.adminKey, body: { user_id: consignor.userId, name: 'x', scopes: ['receiving.post'] } }), 422, 'invalid_request');
  });
});

describe('list and revoke', () => {
  test('the list never shows a key or its hash, and tells each key’s status', async () => {
    const { keyId } = await userWithKey(t, 'qc');
    await call(t.app, 'DELETE', `/api/v1/api-keys/${keyId}`, { key: t.adminKey });
    const list = await call(t.app, 'GET', '/api/v1/api-keys?per_page=100', { key: t.adminKey });
    assert.equal(list.status, 200);
    const text = JSON.stringify(list.body);
    assert.equal(/jwc_[0-9A-Za-z]{20}/.test(text), false);
    assert.equal(text.includes('key_hash'), false);
    const revoked = list.body.data.find((k: { id: string }) => k.id === keyId);
    assert.equal(revoked.status, 'revoked');
    assert.ok(revoked.revoked_at);
    const onlyRevoked = await call(t.app, 'GET', '/api/v1/api-keys?status=revoked', { key: t.adminKey });
    assert.ok(onlyRevoked.body.data.every((k: { status: string }) => k.status === 'revoked'));
    const ofUser = await call(t.app, 'GET', `/api/v1/api-keys?user_id=${officeUser}`, { key: t.adminKey });
    assert.ok(ofUser.body.data.length >= 1 && ofUser.body.data.every((k: { user_id: string }) => k.user_id === officeUser));
  });

  test('revoke is 204, idempotent, audited once; an unknown key is 404', async () => {
    const { keyId } = await userWithKey(t, 'qc');
    assert.equal((await call(t.app, 'DELETE', `/api/v1/api-keys/${keyId}`, { key: t.adminKey })).status, 204);
    const first = await t.db.selectFrom('api_keys').select('revoked_at').where('id', '=', keyId).executeTakeFirstOrThrow();
    assert.ok(first.revoked_at);
    assert.equal((await call(t.app, 'DELETE', `/api/v1/api-keys/${keyId}`, { key: t.adminKey })).status, 204);
    const again = await t.db.selectFrom('api_keys').select('revoked_at').where('id', '=', keyId).executeTakeFirstOrThrow();
    assert.equal(new Date(again.revoked_at!).getTime(), new Date(first.revoked_at!).getTime());
    const audits = await t.db.selectFrom('history').select('action').where('entity_id', '=', keyId).where('action', '=', 'revoked').execute();
    assert.equal(audits.length, 1);
    expectError(await call(t.app, 'DELETE', '/api/v1/api-keys/00000000-0000-4000-8000-000000000000', { key: t.adminKey }), 404, 'not_found');
  });
});
