// The service's edges in time and size: before its database is ready, while it shuts down, and the errors Node's HTTP
// parser raises before Fastify sees a request; all of them answer in the error envelope.
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { buildApp } from '../src/app.ts';
import { memoryCounterStore } from '../src/http/rate-limit.ts';
import { call, expectError, startApp, type TestApp } from './helpers.ts';

/** Sends raw bytes (in parts, with pauses between them) and resolves with everything the server wrote back. */
async function rawExchange(url: string, parts: (string | (() => Promise<void>))[]): Promise<string> {
  const { port } = new URL(url);
  const socket = connect(Number(port), '127.0.0.1');
  let received = '';
  socket.on('data', (chunk) => (received += chunk));
  // The server may reset the connection after its answer; what it wrote has arrived by then.
  socket.on('error', () => {});
  const closed = new Promise((resolve) => socket.on('close', resolve));
  await new Promise((resolve) => socket.on('connect', resolve));
  for (const part of parts) {
    if (typeof part === 'string') socket.write(part);
    else await part();
  }
  await closed;
  return received;
}

function parseResponse(raw: string) {
  const [head, body] = raw.split('\r\n\r\n');
  const [statusLine, ...headerLines] = head!.split('\r\n');
  const headers = Object.fromEntries(headerLines.map((line) => [line.split(':')[0]!.toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
  return { status: Number(statusLine!.split(' ')[1]), headers, body: JSON.parse(body!) };
}

describe('errors Node raises before Fastify', () => {
  let t: TestApp;
  let url: string;
  before(async () => {
    t = await startApp();
    url = await t.app.listen({ host: '127.0.0.1', port: 0 });
  });
  after(() => t.close());

  test('headers over the limit: 431 headers_too_large in the envelope, connection closed', async () => {
    const raw = await rawExchange(url, [`GET /api/v1/me HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`]);
    const answer = parseResponse(raw);
    assert.equal(answer.status, 431);
    assert.equal(answer.headers.connection, 'close');
    assert.equal(answer.body.error.code, 'headers_too_large');
  });

  test('a request that does not arrive in time: 408 request_timeout in the envelope', async () => {
    // Node raises ERR_HTTP_REQUEST_TIMEOUT on the connection; its check runs every 30 s, so the test raises it itself.
    const serverSide = new Promise<Socket>((resolve) => t.app.server.once('connection', resolve));
    const raw = rawExchange(url, ['GET /api/v1/me HTTP/1.1\r\nHost: x\r\n', async () => {
      const socket = await serverSide;
      t.app.server.emit('clientError', Object.assign(new Error('request timeout'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' }), socket);
    }]);
    const answer = parseResponse(await raw);
    assert.equal(answer.status, 408);
    assert.equal(answer.body.error.code, 'request_timeout');
  });

  test('something that is not HTTP: 400 bad_request in the envelope', async () => {
    const answer = parseResponse(await rawExchange(url, ['NOT HTTP AT ALL\r\n\r\n']));
    assert.equal(answer.status, 400);
    assert.equal(answer.body.error.code, 'bad_request');
  });

  test('an unknown Expect: 417 expectation_failed in the envelope; a request without Host is served', async () => {
    const expect = parseResponse(await rawExchange(url, ['GET /healthz HTTP/1.1\r\nHost: x\r\nExpect: teapot\r\nConnection: close\r\n\r\n']));
    assert.equal(expect.status, 417);
    assert.equal(expect.body.error.code, 'expectation_failed');
    const hostless = parseResponse(await rawExchange(url, ['GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n']));
    assert.equal(hostless.status, 200);
    assert.deepEqual(hostless.body, { data: { status: 'ok' } });
  });

  test('a method a path does not have is 404 not_found naming both (Fastify answers no 405)', async () => {
    const answer = await call(t.app, 'DELETE', '/api/v1/items', { key: t.adminKey });
    expectError(answer, 404, 'not_found');
    assert.match(answer.body.error.message, /DELETE \/api\/v1\/items/);
  });
});

describe('before the database is ready', () => {
  let t: TestApp;
  let ready = false;
  before(async () => {
    t = await startApp();
  });
  after(() => t.close());

  test('requests that need the database are 503 unavailable with Retry-After; health and the document answer', async () => {
    const app = await buildApp({ config: t.config, db: t.db, counters: memoryCounterStore(), logger: false, databaseReady: () => ready });
    try {
      const me = await call(app, 'GET', '/api/v1/me', { key: t.adminKey });
      expectError(me, 503, 'unavailable');
      assert.equal(me.headers['retry-after'], '2');
      expectError(await call(app, 'GET', '/readyz'), 503, 'unavailable');
      expectError(await call(app, 'POST', `/invites/${'x'.repeat(40)}/accept`, { body: { password: 'correct horse battery' } }), 503, 'unavailable');
      assert.equal((await call(app, 'GET', '/healthz')).status, 200);
      assert.equal((await call(app, 'GET', '/openapi.json')).status, 200);
      ready = true;
      assert.equal((await call(app, 'GET', '/api/v1/me', { key: t.adminKey })).status, 200);
      assert.equal((await call(app, 'GET', '/readyz')).status, 200);
    } finally {
      await app.close();
    }
  });
});

describe('shutting down', () => {
  test('a request that arrives while the service closes is 503 in the envelope with Connection: close; one in flight finishes', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const t = await startApp({
      beforeReady: (app) => app.get('/held', { schema: { hide: true } }, async () => {
        await held;
        return { data: 'done' };
      }),
    });
    const url = await t.app.listen({ host: '127.0.0.1', port: 0 });
    const inFlight = fetch(`${url}/held`);
    await sleep(50);
    let closing: Promise<void> | undefined;
    const raw = rawExchange(url, [
      `GET /api/v1/me HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${t.adminKey}\r\n`,
      async () => {
        // The server must have begun reading this request: a connection it has not heard from is idle and closed at once.
        await sleep(200);
        closing = t.app.close();
        await sleep(100);
      },
      '\r\n',
    ]);
    const late = parseResponse(await raw);
    assert.equal(late.status, 503);
    assert.equal(late.headers.connection, 'close');
    assert.equal(late.headers['retry-after'], '2');
    assert.equal(late.body.error.code, 'unavailable');
    release();
    const finished = await inFlight;
    assert.equal(finished.status, 200);
    assert.equal(finished.headers.get('connection'), 'close', 'the connection of a request running at shutdown is closed after it');
    await closing;
    await t.close();
  });
});
