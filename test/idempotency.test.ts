import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Fastify from 'fastify';
import { inTransaction } from '../src/db/transaction.ts';
import type { Actor } from '../src/http/auth.ts';
import { sendError, toApiError } from '../src/http/errors.ts';
import { registerIdempotency } from '../src/http/idempotency.ts';
import { call, expectError, startApp, userWithKey, type TestApp } from './helpers.ts';

let t: TestApp;
before(async () => {
  t = await startApp();
});
after(() => t.close());

const partnersWithCode = async (code: string) =>
  (await t.db.selectFrom('manufacturers').select('id').where('code', '=', code).execute()).length;

describe('Idempotency-Key', () => {
  test('a repeated POST replays the first response and does the work once', async () => {
    const headers = { 'idempotency-key': 'create-idem-1' };
    const first = await call(t.app, 'POST', '/api/v1/manufacturers', { key: t.adminKey, headers, body: { code: 'IDEM1', name: 'Idem' } });
    const second = await call(t.app, 'POST', '/api/v1/manufacturers', { key: t.adminKey, headers, body: { code: 'IDEM1', name: 'Idem' } });
    assert.equal(first.status, 201);
    assert.equal(second.status, 201);
    assert.deepEqual(second.body, first.body);
    assert.equal(second.headers['idempotent-replayed'], 'true');
    assert.equal(await partnersWithCode('IDEM1'), 1);
    const audits = await t.db.selectFrom('history').select('id').where('entity_id', '=', first.body.data.id).execute();
    assert.equal(audits.length, 1);
  });

  test('the same key with a different body is 422 idempotency_key_reuse', async () => {
    const headers = { 'idempotency-key': 'create-idem-2' };
    assert.equal((await call(t.app, 'POST', '/api/v1/manufacturers', { key: t.adminKey, headers, body: { code: 'IDEM2', name: 'A' } })).status, 201);
    expectError(await call(t.app, 'POST', '/api/v1/manufacturers', { key: t.adminKey, headers, body: { code: 'IDEM2B', name: 'B' } }), 422, 'idempotency_key_reuse');
    assert.equal(await partnersWithCode('IDEM2B'), 0);
  });

  test('an error answer is replayed too; 204 answers replay without a body', async () => {
    const headers = { 'idempotency-key': 'dup-idem-3' };
    await call(t.app, 'POST', '/api/v1/manufacturers', { key: t.adminKey, body: { code: 'IDEM3', name: 'A' } });
    const first = await call(t.app, 'POST', '/api/v1/manufacturers', { key: t.adminKey, headers, body: { code: 'IDEM3', name: 'A' } });
    expectError(first, 409, 'conflict');
    const again = await call(t.app, 'POST', '/api/v1/manufacturers', { key: t.adminKey, headers, body: { code: 'IDEM3', name: 'A' } });
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.deepEqual(again.body, first.body);

    const { userId } = await userWithKey(t, 'qc');
    const off = { 'idempotency-key': 'deactivate-once' };
    assert.equal((await call(t.app, 'POST', `/api/v1/admin/users/${userId}/deactivate`, { key: t.adminKey, headers: off })).status, 204);
    const replay = await call(t.app, 'POST', `/api/v1/admin/users/${userId}/deactivate`, { key: t.adminKey, headers: off });
    assert.equal(replay.status, 204);
    assert.equal(replay.body, null);
  });

  test('keys are per API key: another key’s same Idempotency-Key is independent', async () => {
    const other = await userWithKey(t, 'manager');
    const headers = { 'idempotency-key': 'shared-name' };
    assert.equal((await call(t.app, 'POST', '/api/v1/manufacturers', { key: t.adminKey, headers, body: { code: 'IDEM4A', name: 'A' } })).status, 201);
    assert.equal((await call(t.app, 'POST', '/api/v1/manufacturers', { key: other.key, headers, body: { code: 'IDEM4B', name: 'B' } })).status, 201);
    assert.equal(await partnersWithCode('IDEM4B'), 1);
  });

  test('after 24 hours the key may be used afresh', async () => {
    const headers = { 'idempotency-key': 'old-key' };
    await call(t.app, 'POST', '/api/v1/manufacturers', { key: t.adminKey, headers, body: { code: 'IDEM5', name: 'A' } });
    await t.db.updateTable('idempotency_keys').set({ created_at: new Date(Date.now() - 25 * 3_600_000) }).where('idempotency_key', '=', 'old-key').execute();
    const fresh = await call(t.app, 'POST', '/api/v1/manufacturers', { key: t.adminKey, headers, body: { code: 'IDEM5B', name: 'B' } });
    assert.equal(fresh.status, 201);
    assert.equal(fresh.headers['idempotent-replayed'], undefined);
    assert.equal(await partnersWithCode('IDEM5B'), 1);
  });

  test('parallel requests with one key do the work once', async () => {
    const headers = { 'idempotency-key': 'parallel-key' };
    const answers = await Promise.all(Array.from({ length: 8 }, () =>
      call(t.app, 'POST', '/api/v1/manufacturers', { key: t.adminKey, headers, body: { code: 'IDEM6', name: 'P' } })));
    assert.equal(await partnersWithCode('IDEM6'), 1);
    const created = answers.filter((a) => a.status === 201);
    assert.ok(created.length >= 1);
    assert.ok(created.every((a) => a.body.data.id === created[0]!.body.data.id), 'every 201 names the one record');
    assert.ok(answers.every((a) => a.status === 201 || (a.status === 409 && a.body.error.code === 'conflict')));
  });

  test('the same request in another key order is the same request', async () => {
    const headers = { 'idempotency-key': 'reordered' };
    const first = await call(t.app, 'POST', '/api/v1/manufacturers', { key: t.adminKey, headers, body: { code: 'IDEM8', name: 'R' } });
    const again = await call(t.app, 'POST', '/api/v1/manufacturers', { key: t.adminKey, headers, body: { name: 'R', code: 'IDEM8' } });
    assert.equal(again.status, 201);
    assert.deepEqual(again.body, first.body);
  });

  test('a secret shown once is neither stored nor replayed', async () => {
    const { userId } = await userWithKey(t, 'office');
    const headers = { 'idempotency-key': 'mint-key' };
    const body = { user_id: userId, name: 'once', scopes: ['orders.view'] };
    const first = await call(t.app, 'POST', '/api/v1/api-keys', { key: t.adminKey, headers, body });
    assert.equal(first.status, 201);
    const plaintext: string = first.body.data.key;
    const stored = await t.db.selectFrom('idempotency_keys').select('response_body').where('idempotency_key', '=', 'mint-key').executeTakeFirstOrThrow();
    assert.equal(stored.response_body!.includes(plaintext), false);
    const replay = await call(t.app, 'POST', '/api/v1/api-keys', { key: t.adminKey, headers, body });
    assert.equal(replay.status, 201);
    assert.deepEqual(replay.body, { data: { id: first.body.data.id } });
    assert.equal((await t.db.selectFrom('api_keys').select('id').where('name', '=', 'once').execute()).length, 1);

    const invite = { 'idempotency-key': 'invite-once' };
    const partner = (await call(t.app, 'POST', '/api/v1/manufacturers', { key: t.adminKey, body: { code: 'IDEMINV', name: 'P' } })).body.data.id;
    const consignor = { name: 'C', email: 'idem-consignor@example.com', role: 'consignor', manufacturer_id: partner };
    const created = await call(t.app, 'POST', '/api/v1/admin/users', { key: t.adminKey, headers: invite, body: consignor });
    assert.ok(created.body.data.invite_url);
    const replayed = await call(t.app, 'POST', '/api/v1/admin/users', { key: t.adminKey, headers: invite, body: consignor });
    assert.equal(replayed.body.data.id, created.body.data.id);
    assert.equal('invite_url' in replayed.body.data, false);
  });

  test('a malformed Idempotency-Key is 400', async () => {
    expectError(await call(t.app, 'POST', '/api/v1/manufacturers', { key: t.adminKey, headers: { 'idempotency-key': 'x'.repeat(300) }, body: { code: 'IDEM7', name: 'A' } }), 400, 'bad_request');
    assert.equal(await partnersWithCode('IDEM7'), 0);
  });
});

describe('an idempotent request is one transaction', () => {
  /** A bare app with the idempotency hooks and one route that does its work, then fails when asked to. */
  async function appWithWork() {
    const keyId = (await t.db.selectFrom('api_keys').select('id').executeTakeFirstOrThrow()).id;
    const app = Fastify();
    app.decorateRequest('actor', null);
    app.decorateRequest('idempotencyClaim', null);
    app.addHook('onRequest', (request, _reply, done) => {
      request.actor = { apiKeyId: keyId } as Actor;
      done();
    });
    app.setErrorHandler((error, request, reply) => sendError(reply, toApiError(error as Error, request)));
    registerIdempotency(app, t.db);
    app.post('/work', async (request, reply) => {
      const { code, fail } = request.body as { code: string; fail: boolean };
      await inTransaction(t.db, (tx) => tx.insertInto('manufacturers').values({ code, name: code }).execute());
      if (fail) throw new Error('failed after the work');
      return reply.code(201).send({ data: { code } });
    });
    return app;
  }

  test('a failure after the work undoes the work and records nothing; without a key the work stays', async () => {
    const app = await appWithWork();
    try {
      const post = (body: object, key?: string) =>
        app.inject({ method: 'POST', url: '/work', payload: body, headers: key ? { 'idempotency-key': key } : {} });
      assert.equal((await post({ code: 'TXN1', fail: true }, 'txn-1')).statusCode, 500);
      assert.equal(await partnersWithCode('TXN1'), 0, 'the work rolled back with the request');
      assert.equal((await t.db.selectFrom('idempotency_keys').select('idempotency_key').where('idempotency_key', '=', 'txn-1').execute()).length, 0);
      const retry = await post({ code: 'TXN1', fail: false }, 'txn-1');
      assert.equal(retry.statusCode, 201);
      assert.equal(await partnersWithCode('TXN1'), 1);
      assert.equal((await post({ code: 'TXN1', fail: false }, 'txn-1')).headers['idempotent-replayed'], 'true');

      assert.equal((await post({ code: 'TXN2', fail: true })).statusCode, 500);
      assert.equal(await partnersWithCode('TXN2'), 1, 'without a key the work committed on its own');
    } finally {
      await app.close();
    }
  });
});
