// The envelope on every path: unknown routes, bad JSON, schema violations, media types, sizes, and failures.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { call, expectError, startApp, type TestApp } from './helpers.ts';

let t: TestApp;
const logLines: string[] = [];
before(async () => {
  t = await startApp({
    env: { WMS_BODY_LIMIT_BYTES: '2048' },
    logStream: { write: (line) => void logLines.push(line) },
    beforeReady: (app) => {
      app.get('/api/v1/test-failure', async () => {
        // Stands for a bug deep in a query: the client must see neither this text nor SQL.
        throw new Error('select secret_column from secret_table failed');
      });
    },
  });
});
after(() => t.close());

const manufacturerCount = async () =>
  Number((await t.db.selectFrom('manufacturers').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);

describe('error envelope', () => {
  test('unknown routes outside /api/v1 are 404 not_found', async () => {
    const answer = await call(t.app, 'GET', '/nowhere');
    expectError(answer, 404, 'not_found');
    assert.deepEqual(Object.keys(answer.body), ['error']);
  });

  test('malformed JSON is 400 and changes nothing', async () => {
    const before = await manufacturerCount();
    const answer = await t.app.inject({
      method: 'POST', url: '/api/v1/manufacturers', payload: '{"code": "BAD",',
      headers: { authorization: `Bearer ${t.adminKey}`, 'content-type': 'application/json' },
    });
    assert.equal(answer.statusCode, 400);
    assert.equal(JSON.parse(answer.body).error.code, 'bad_request');
    assert.equal(await manufacturerCount(), before);
  });

  test('an empty JSON body is 400', async () => {
    const answer = await t.app.inject({
      method: 'POST', url: '/api/v1/manufacturers', payload: '',
      headers: { authorization: `Bearer ${t.adminKey}`, 'content-type': 'application/json' },
    });
    assert.equal(answer.statusCode, 400);
    assert.equal(JSON.parse(answer.body).error.code, 'bad_request');
  });

  test('errors Fastify raises before routing use the envelope: bad percent-encoding, an overlong id', async () => {
    for (const url of ['/api/v1/manufacturers/%zz', `/api/v1/manufacturers/${'a'.repeat(150)}`]) {
      expectError(await call(t.app, 'GET', url, { key: t.adminKey }), 400, 'bad_request');
    }
  });

  test('blank names are 400 and write nothing', async () => {
    const before = await manufacturerCount();
    const answer = await call(t.app, 'POST', '/api/v1/manufacturers', { key: t.adminKey, body: { code: 'BLANK', name: '   ' } });
    expectError(answer, 400, 'bad_request');
    // Said in words, not as the pattern that checks it.
    assert.equal(answer.body.error.message, 'body/name must not be blank or hold a NUL character');
    assert.equal(await manufacturerCount(), before);
  });

  test('schema violations are 400 and name the failing field', async () => {
    const cases: [unknown, RegExp][] = [
      [{ name: 'No code' }, /body\/code is required/],
      [{ code: 123, name: 'x' }, /body\/code must be string/],
      [{ code: 'OK', name: 'x', colour: 'red' }, /body\/colour is not a known field/],
      [{ code: 'OK', name: 'x'.repeat(201) }, /body\/name must NOT have more than 200 characters/],
      [{ code: 'has space', name: 'x' }, /body\/code must match pattern/],
      [[1, 2], /body must be object/],
    ];
    const before = await manufacturerCount();
    for (const [body, message] of cases) {
      const answer = await call(t.app, 'POST', '/api/v1/manufacturers', { key: t.adminKey, body });
      expectError(answer, 400, 'bad_request');
      assert.match(answer.body.error.message, message);
    }
    assert.equal(await manufacturerCount(), before);
  });

  test('a NUL character, which PostgreSQL text cannot hold, is 400 naming the field and writes nothing', async () => {
    const before = await manufacturerCount();
    const answer = await call(t.app, 'POST', '/api/v1/manufacturers', { key: t.adminKey, body: { code: 'NUL', name: 'a\u0000b' } });
    expectError(answer, 400, 'bad_request');
    assert.match(answer.body.error.message, /body\/name must not be blank or hold a NUL character/);
    // A field that may be blank says only what it refuses.
    const search = await call(t.app, 'GET', '/api/v1/manufacturers?q=a%00b', { key: t.adminKey });
    expectError(search, 400, 'bad_request');
    assert.equal(search.body.error.message, 'querystring/q must not hold a NUL character');
    assert.equal(await manufacturerCount(), before);
  });

  test('unknown enum values are 400 and list the allowed ones', async () => {
    const answer = await call(t.app, 'POST', '/api/v1/ship-via', { key: t.adminKey, body: { code: 'X', description: 'x', mode: 'boat' } });
    expectError(answer, 400, 'bad_request');
    assert.match(answer.body.error.message, /body\/mode must be one of: parcel, ltl, will_call/);
  });

  test('a non-UUID id in a path is 400; a well-formed unknown one is 404', async () => {
    expectError(await call(t.app, 'GET', '/api/v1/manufacturers/not-a-uuid', { key: t.adminKey }), 400, 'bad_request');
    expectError(await call(t.app, 'GET', '/api/v1/manufacturers/7d0c1e9e-1d4f-4a53-9a8e-3b2f0c6c2b11', { key: t.adminKey }), 404, 'not_found');
  });

  test('a wrong content type is 415', async () => {
    const answer = await t.app.inject({
      method: 'POST', url: '/api/v1/manufacturers', payload: 'code=X',
      headers: { authorization: `Bearer ${t.adminKey}`, 'content-type': 'application/x-www-form-urlencoded' },
    });
    assert.equal(answer.statusCode, 415);
    assert.equal(JSON.parse(answer.body).error.code, 'unsupported_media_type');
    const plain = await t.app.inject({
      method: 'POST', url: '/api/v1/manufacturers', payload: '{"code":"X","name":"x"}',
      headers: { authorization: `Bearer ${t.adminKey}`, 'content-type': 'text/plain' },
    });
    assert.equal(plain.statusCode, 415);
  });

  test('an oversized body is 413', async () => {
    const answer = await call(t.app, 'POST', '/api/v1/manufacturers', { key: t.adminKey, body: { code: 'BIG', name: 'x'.repeat(5000) } });
    expectError(answer, 413, 'payload_too_large');
  });

  test('an unexpected failure is 500 internal_error without stack or SQL, logged with the request id', async () => {
    const answer = await call(t.app, 'GET', '/api/v1/test-failure', { key: t.adminKey });
    expectError(answer, 500, 'internal_error');
    assert.doesNotMatch(JSON.stringify(answer.body), /secret|select|at .*\.ts/);
    const requestId = answer.headers['x-request-id'] as string;
    assert.match(answer.body.error.message, new RegExp(requestId));
    const logged = logLines.map((line) => JSON.parse(line)).find((entry) => entry.reqId === requestId && entry.level === 50);
    assert.ok(logged, 'the failure is logged with the request id');
    assert.match(JSON.stringify(logged.err), /secret_table/);
  });

  test('every request is logged once with request id, key id, status and time', async () => {
    const answer = await call(t.app, 'GET', '/api/v1/me', { key: t.adminKey });
    const requestId = answer.headers['x-request-id'];
    const lines = logLines.map((line) => JSON.parse(line)).filter((entry) => entry.reqId === requestId);
    assert.equal(lines.length, 1);
    assert.equal(lines[0].status, 200);
    assert.equal(lines[0].keyId, answer.body.data.key.id);
    assert.equal(typeof lines[0].ms, 'number');
  });
});

describe('pagination', () => {
  before(async () => {
    for (let i = 0; i < 7; i++) {
      await call(t.app, 'POST', '/api/v1/manufacturers', { key: t.adminKey, body: { code: `PAGE${i}`, name: `Page ${i}` } });
    }
  });

  test('meta tells page, per_page, total_count and total_pages', async () => {
    const total = await manufacturerCount();
    const answer = await call(t.app, 'GET', '/api/v1/manufacturers?page=2&per_page=3', { key: t.adminKey });
    assert.equal(answer.status, 200);
    assert.deepEqual(answer.body.meta, { page: 2, per_page: 3, total_count: total, total_pages: Math.ceil(total / 3) });
    assert.equal(answer.body.data.length, 3);
  });

  test('per_page above 100 is clamped to 100', async () => {
    const answer = await call(t.app, 'GET', '/api/v1/manufacturers?per_page=1000', { key: t.adminKey });
    assert.equal(answer.body.meta.per_page, 100);
  });

  test('page and per_page must be integers >= 1', async () => {
    for (const query of ['page=0', 'page=-1', 'per_page=0', 'per_page=abc', 'page=1.5']) {
      expectError(await call(t.app, 'GET', `/api/v1/manufacturers?${query}`, { key: t.adminKey }), 400, 'bad_request');
    }
    // Written in decimal digits: what JavaScript would also read as a whole number is refused, naming the field.
    for (const [query, field] of [['page=1e3', 'page'], ['page=0x10', 'page'], ['page=%2B3', 'page'], ['per_page=%205', 'per_page'], ['page=', 'page']]) {
      const answer = await call(t.app, 'GET', `/api/v1/manufacturers?${query}`, { key: t.adminKey });
      expectError(answer, 400, 'bad_request');
      assert.equal(answer.body.error.message, `querystring/${field} must be an integer`, query);
    }
    assert.deepEqual((await call(t.app, 'GET', '/api/v1/manufacturers?page=2&per_page=07', { key: t.adminKey })).body.meta.page, 2);
  });

  test('a period that ends before it starts is 400 on every list and report that reads one; a default start stays in year 1', async () => {
    for (const path of ['/orders', '/inventory/movements', '/receiving', '/reports/movements', '/reports/receiving']) {
      const answer = await call(t.app, 'GET', `/api/v1${path}?from=2026-12-01&to=2026-11-05`, { key: t.adminKey });
      expectError(answer, 400, 'bad_request');
      assert.equal(answer.body.error.message, 'from (2026-12-01) is after to (2026-11-05)', path);
      assert.equal((await call(t.app, 'GET', `/api/v1${path}?from=2026-11-05&to=2026-11-05`, { key: t.adminKey })).status, 200, path);
    }
    // Without from, a period reaches back 30 days from to, but not before 0001-01-01 (PostgreSQL has no year 0).
    for (const report of ['receiving', 'movements', 'order-fulfillment', 'exceptions', 'cycle-count-accuracy']) {
      const answer = await call(t.app, 'GET', `/api/v1/reports/${report}?to=0001-01-01`, { key: t.adminKey });
      assert.equal(answer.status, 200, `${report}: ${JSON.stringify(answer.body)}`);
      assert.equal(JSON.stringify(answer.body).includes('0000-'), false, report);
    }
  });

  test('a page beyond any real list is 400, not a database error', async () => {
    expectError(await call(t.app, 'GET', '/api/v1/manufacturers?page=1000000000000000000', { key: t.adminKey }), 400, 'bad_request');
    const last = await call(t.app, 'GET', '/api/v1/manufacturers?page=10000000', { key: t.adminKey });
    assert.equal(last.status, 200);
    assert.deepEqual(last.body.data, []);
  });

  test('a route without query parameters refuses unknown ones', async () => {
    expectError(await call(t.app, 'GET', '/api/v1/me?verbose=1', { key: t.adminKey }), 400, 'bad_request');
    expectError(await call(t.app, 'POST', '/api/v1/manufacturers?dry_run=1', { key: t.adminKey, body: { code: 'QS', name: 'x' } }), 400, 'bad_request');
  });

  test('an unknown query parameter is 400', async () => {
    const answer = await call(t.app, 'GET', '/api/v1/manufacturers?colour=red', { key: t.adminKey });
    expectError(answer, 400, 'bad_request');
    assert.match(answer.body.error.message, /colour/);
  });
});
