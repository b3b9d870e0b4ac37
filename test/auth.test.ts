import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { call, createManufacturer, expectError, insertKey, startApp, userWithKey, type TestApp } from './helpers.ts';

let t: TestApp;
before(async () => {
  t = await startApp();
});
after(() => t.close());

describe('401 unauthorized', () => {
  test('a missing key', async () => {
    const answer = await call(t.app, 'GET', '/api/v1/me');
    expectError(answer, 401, 'unauthorized');
    assert.equal(answer.body.error.message, 'API key required');
  });

  test('a header that is not a bearer key', async () => {
    expectError(await call(t.app, 'GET', '/api/v1/me', { headers: { authorization: `Basic ${t.adminKey}` } }), 401, 'unauthorized');
  });

  test('a malformed key', async () => {
    expectError(await call(t.app, 'GET', '/api/v1/me', { key: 'abc_123' }), 401, 'unauthorized');
    expectError(await call(t.app, 'GET', '/api/v1/me', { key: 'jwc_short' }), 401, 'unauthorized');
  });

  test('an unknown key', async () => {
    expectError(await call(t.app, 'GET', '/api/v1/me', { key: `jwc_${'x'.repeat(32)}` }), 401, 'unauthorized');
  });

  test('a session cookie is not a key', async () => {
    expectError(await call(t.app, 'GET', '/api/v1/me', { headers: { cookie: `session=${t.adminKey}` } }), 401, 'unauthorized');
  });

  test('an expired key', async () => {
    const { userId } = await userWithKey(t, 'office');
    const { key } = await insertKey(t, userId, ['orders.view'], new Date(Date.now() - 1000));
    expectError(await call(t.app, 'GET', '/api/v1/me', { key }), 401, 'unauthorized');
  });

  test('a revoked key stops at the next request', async () => {
    const { key, keyId } = await userWithKey(t, 'office');
    assert.equal((await call(t.app, 'GET', '/api/v1/me', { key })).status, 200);
    assert.equal((await call(t.app, 'DELETE', `/api/v1/api-keys/${keyId}`, { key: t.adminKey })).status, 204);
    expectError(await call(t.app, 'GET', '/api/v1/me', { key }), 401, 'unauthorized');
  });

  test('a deactivated user’s key stops at once, and works again after reactivation', async () => {
    const { key, userId } = await userWithKey(t, 'warehouse');
    assert.equal((await call(t.app, 'GET', '/api/v1/me', { key })).status, 200);
    assert.equal((await call(t.app, 'POST', `/api/v1/admin/users/${userId}/deactivate`, { key: t.adminKey })).status, 204);
    expectError(await call(t.app, 'GET', '/api/v1/me', { key }), 401, 'unauthorized');
    assert.equal((await call(t.app, 'POST', `/api/v1/admin/users/${userId}/reactivate`, { key: t.adminKey })).status, 204);
    assert.equal((await call(t.app, 'GET', '/api/v1/me', { key })).status, 200);
  });

  test('a percent-encoded or absolute-form path is authenticated like the plain one', async () => {
    for (const url of ['/%61pi/v1/admin/users', '/api/v%31/admin/roles', '/api/v1/%61dmin/users', 'http://wms.test/api/v1/admin/users']) {
      expectError(await call(t.app, 'GET', url), 401, 'unauthorized');
    }
    expectError(await call(t.app, 'GET', '/%61pi/v1/nothing-here'), 401, 'unauthorized');
  });

  test('an unknown /api/v1 route without a key is 401, with a key 404', async () => {
    expectError(await call(t.app, 'GET', '/api/v1/no-such-thing'), 401, 'unauthorized');
    expectError(await call(t.app, 'GET', '/api/v1/no-such-thing', { key: t.adminKey }), 404, 'not_found');
  });
});

describe('403 forbidden', () => {
  test('a partner_portal user’s key is refused on every API route', async () => {
    const partner = await createManufacturer(t, 'PORTAL1');
    const { key } = await userWithKey(t, 'partner_portal', { manufacturerId: partner });
    expectError(await call(t.app, 'GET', '/api/v1/me', { key }), 403, 'forbidden');
    expectError(await call(t.app, 'GET', '/api/v1/manufacturers', { key }), 403, 'forbidden');
  });

  test('a key without the route’s permission', async () => {
    const { key } = await userWithKey(t, 'qc');
    expectError(await call(t.app, 'GET', '/api/v1/manufacturers', { key }), 403, 'forbidden');
    expectError(await call(t.app, 'GET', '/api/v1/ship-via', { key }), 403, 'forbidden');
  });

  test('a key’s scope the role lacks is not effective', async () => {
    // A key that (through a direct insert) carries manufacturers.edit for a qc user: the role does not have it.
    const { userId } = await userWithKey(t, 'qc');
    const { key } = await insertKey(t, userId, ['inventory.view', 'manufacturers.edit']);
    const me = await call(t.app, 'GET', '/api/v1/me', { key });
    assert.deepEqual(me.body.data.permissions, ['inventory.view']);
    expectError(await call(t.app, 'POST', '/api/v1/manufacturers', { key, body: { code: 'QCX', name: 'x' } }), 403, 'forbidden');
  });

  test('a role change takes effect on the next request', async () => {
    const { key, userId } = await userWithKey(t, 'manager', { scopes: ['manufacturers.view', 'inventory.view'] });
    assert.equal((await call(t.app, 'GET', '/api/v1/manufacturers', { key })).status, 200);
    const patched = await call(t.app, 'PATCH', `/api/v1/admin/users/${userId}`, { key: t.adminKey, body: { role: 'qc' } });
    assert.equal(patched.status, 200);
    expectError(await call(t.app, 'GET', '/api/v1/manufacturers', { key }), 403, 'forbidden');
    assert.deepEqual((await call(t.app, 'GET', '/api/v1/me', { key })).body.data.permissions, ['inventory.view']);
  });

  test('administration needs the system_admin role: a manager with every permission is refused', async () => {
    const { key } = await userWithKey(t, 'manager');
    expectError(await call(t.app, 'GET', '/api/v1/admin/users', { key }), 403, 'forbidden');
    expectError(await call(t.app, 'GET', '/api/v1/admin/roles', { key }), 403, 'forbidden');
  });

  test('an administrator’s key without admin.api_keys cannot administer', async () => {
    const admin = await call(t.app, 'GET', '/api/v1/me', { key: t.adminKey });
    const narrow = await call(t.app, 'POST', '/api/v1/api-keys', {
      key: t.adminKey, body: { user_id: admin.body.data.user.id, name: 'inventory only', scopes: ['inventory.view'] },
    });
    expectError(await call(t.app, 'GET', '/api/v1/admin/users', { key: narrow.body.data.key }), 403, 'forbidden');
  });
});

describe('/me', () => {
  test('tells the user, the key and the effective permissions', async () => {
    const partner = await createManufacturer(t, 'MEPART');
    const { key, keyId, userId } = await userWithKey(t, 'consignor', { manufacturerId: partner, scopes: ['orders.view', 'inventory.view'] });
    const me = await call(t.app, 'GET', '/api/v1/me', { key });
    assert.equal(me.status, 200);
    assert.equal(me.body.data.user.id, userId);
    assert.equal(me.body.data.user.role, 'consignor');
    assert.equal(me.body.data.user.manufacturer_id, partner);
    assert.equal(me.body.data.key.id, keyId);
    assert.deepEqual(me.body.data.key.scopes, ['orders.view', 'inventory.view']);
    assert.equal(me.body.data.key.expires_at, null);
    assert.deepEqual(me.body.data.permissions, ['orders.view', 'inventory.view']);
  });
});

describe('partner scope', () => {
  test('a scoped key sees only its own partner; another partner’s record is 404 like a missing one', async () => {
    const mine = await createManufacturer(t, 'SCOPEA');
    const theirs = await createManufacturer(t, 'SCOPEB');
    const { key } = await userWithKey(t, 'consignor', { manufacturerId: mine });
    const list = await call(t.app, 'GET', '/api/v1/manufacturers', { key });
    assert.deepEqual(list.body.data.map((m: { id: string }) => m.id), [mine]);
    assert.equal(list.body.meta.total_count, 1);
    assert.equal((await call(t.app, 'GET', `/api/v1/manufacturers/${mine}`, { key })).status, 200);
    const other = await call(t.app, 'GET', `/api/v1/manufacturers/${theirs}`, { key });
    const missing = await call(t.app, 'GET', '/api/v1/manufacturers/00000000-0000-4000-8000-000000000000', { key });
    expectError(other, 404, 'not_found');
    assert.deepEqual(other.body, missing.body);
  });

  test('the other partner’s key sees the mirror image', async () => {
    const a = await createManufacturer(t, 'MIRRORA');
    const b = await createManufacturer(t, 'MIRRORB');
    const keyA = (await userWithKey(t, 'consignor', { manufacturerId: a })).key;
    const keyB = (await userWithKey(t, 'consignor', { manufacturerId: b })).key;
    expectError(await call(t.app, 'GET', `/api/v1/manufacturers/${b}`, { key: keyA }), 404, 'not_found');
    expectError(await call(t.app, 'GET', `/api/v1/manufacturers/${a}`, { key: keyB }), 404, 'not_found');
    assert.equal((await call(t.app, 'GET', `/api/v1/manufacturers/${b}`, { key: keyB })).status, 200);
  });
});
