// Idempotency-Key on POST (CONTRACT): the same key from the same API key within 24 hours replays the first response
// without doing the work again; the same key with another body is 422 idempotency_key_reuse.
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { sql, type Kysely } from 'kysely';
import type { DB } from '../db/schema.ts';
import { sha256 } from '../domain/secrets.ts';
import { requestTransaction, type RequestTransaction } from '../db/request-transaction.ts';
import { toApiError } from './errors.ts';
import { ApiError, badRequest, conflict } from '../domain/errors.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set while this request owns an Idempotency-Key: its answer is recorded and committed with its work. */
    idempotencyClaim: { apiKeyId: string; key: string; hash: string; transaction: RequestTransaction } | null;
  }
  interface FastifyContextConfig {
    /** Keys of `data` holding a secret shown once (a new API key, an invite link): never stored, absent on replay. */
    secretFields?: string[];
  }
}

const REPLAY_WINDOW = sql`interval '24 hours'`;
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;
// SQLSTATE of a statement sent to a transaction that an earlier failed statement has already aborted.
const IN_FAILED_TRANSACTION = '25P02';
/** JSON with object keys sorted, so that the same request written in another key order is the same request. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

function requestFingerprint(request: FastifyRequest): string {
  const { params, query } = request;
  // An uploaded file counts by its digest: walking its bytes as a JSON object would take minutes.
  const body = Buffer.isBuffer(request.body) ? { file_sha256: createHash('sha256').update(request.body).digest('hex') } : request.body;
  return sha256(`${request.method} ${request.routeOptions.url}\n${canonicalJson({ params, query, body })}`);
}

function withoutSecrets(payload: string, fields: string[] | undefined): string {
  if (!fields?.length) return payload;
  const parsed = JSON.parse(payload) as { data?: Record<string, unknown> };
  for (const field of fields) if (parsed.data && typeof parsed.data === 'object') delete parsed.data[field];
  return JSON.stringify(parsed);
}

// A claim row of the earlier scheme (written before the work, its answer added after) younger than this may still be
// running on an instance not yet upgraded: it counts as in progress. An older one is a crashed claim and is taken over.
const LEGACY_CLAIM_TTL = sql`interval '10 minutes'`;

/** What is recorded for a key within the replay window: an answer, or (status_code null) a claim of the earlier scheme still running. */
async function recordedAnswer(db: Kysely<DB>, apiKeyId: string, key: string) {
  return db
    .selectFrom('idempotency_keys')
    .select(['request_hash', 'status_code', 'response_body'])
    .where('api_key_id', '=', apiKeyId)
    .where('idempotency_key', '=', key)
    .where('created_at', '>=', sql<string>`now() - ${REPLAY_WINDOW}`)
    .where((eb) => eb.or([eb('status_code', 'is not', null), eb('created_at', '>=', sql<string>`now() - ${LEGACY_CLAIM_TTL}`)]))
    .executeTakeFirst();
}

/**
 * Idempotency on the POST routes registered after this (other routes pay only for an onResponse check).
 *
 * A request with a key runs as one request transaction (src/db/request-transaction.ts) that first takes a
 * transaction-scoped advisory lock on the key. A request that finds the lock taken is a concurrent duplicate (409); one
 * that finds an answer recorded replays it; otherwise it does the work, and its answer is written into the same
 * transaction before the commit. So an answer is recorded exactly when its work committed, and a process that dies
 * mid-request leaves neither, and its lock goes with its connection: the retry does the work, at once.
 */
export function registerIdempotency(app: FastifyInstance, db: Kysely<DB>): void {
  /** Returns true when the request was answered here (a replay). */
  const claimOrReplay = async (request: FastifyRequest, reply: FastifyReply, transaction: RequestTransaction, key: string) => {
    const apiKeyId = request.actor!.apiKeyId;
    const hash = requestFingerprint(request);
    const { rows } = await sql<{ locked: boolean }>`
      select pg_try_advisory_xact_lock(hashtextextended(${`${apiKeyId}:${key}`}, 0)) as locked`.execute(db);
    if (!rows[0]!.locked) throw conflict('a request with this Idempotency-Key is still in progress');
    const first = await recordedAnswer(db, apiKeyId, key);
    if (first && first.status_code === null) throw conflict('a request with this Idempotency-Key is still in progress');
    if (!first) {
      request.idempotencyClaim = { apiKeyId, key, hash, transaction };
      return false;
    }
    if (first.request_hash !== hash) {
      throw new ApiError(422, 'idempotency_key_reuse', 'this Idempotency-Key was used with a different request');
    }
    await transaction.rollback();
    reply.code(first.status_code!).header('idempotent-replayed', 'true');
    if (first.response_body === null) reply.send();
    else reply.type('application/json; charset=utf-8').send(first.response_body);
    return true;
  };

  // Callback style, so that the route's handler and its remaining hooks run inside the request transaction's context.
  const enterRequestTransaction = (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => {
    const key = request.headers['idempotency-key'];
    if (key === undefined || !request.actor) return done();
    if (typeof key !== 'string' || !KEY_PATTERN.test(key)) {
      return done(badRequest('Idempotency-Key must be 1 to 255 visible ASCII characters'));
    }
    const transaction = requestTransaction();
    transaction.run(() => {
      claimOrReplay(request, reply, transaction, key).then(
        (replayed) => void (replayed || done()),
        (error: Error) => void transaction.rollback().catch(() => {}).finally(() => done(error)),
      );
    });
  };

  const recordAndCommit = async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    const claim = request.idempotencyClaim;
    if (!claim) return payload;
    request.idempotencyClaim = null;
    const { transaction } = claim;
    // A failure is not a result: its work rolls back and the client may try the same key again.
    if (reply.statusCode >= 500) {
      await transaction.rollback().catch(() => {});
      return payload;
    }
    try {
      const body = typeof payload === 'string' && payload ? withoutSecrets(payload, request.routeOptions.config.secretFields) : null;
      await transaction.run(() => db
        .insertInto('idempotency_keys')
        .values({
          api_key_id: claim.apiKeyId, idempotency_key: claim.key, request_hash: claim.hash,
          status_code: reply.statusCode, response_body: body, completed_at: sql`now()`,
        })
        .onConflict((oc) => oc.columns(['api_key_id', 'idempotency_key']).doUpdateSet({
          request_hash: claim.hash, status_code: reply.statusCode, response_body: body, created_at: sql`now()`, completed_at: sql`now()`,
        }))
        .execute());
    } catch (error) {
      await transaction.rollback().catch(() => {});
      // A refusal whose request had already failed a statement did nothing: it goes out, unrecorded (a retry asks again).
      if ((error as { code?: string }).code === IN_FAILED_TRANSACTION && reply.statusCode >= 400) return payload;
      return failedAnswer(request, reply, error);
    }
    try {
      await transaction.commit();
    } catch (error) {
      // The commit's outcome is unknown (the connection went) or it failed: a retry with the key replays or redoes it.
      return failedAnswer(request, reply, error);
    }
    return payload;
  };

  // An answer that never got as far as onSend (the client went away) must not leave its transaction open.
  const abandon = (request: FastifyRequest, done: () => void) => {
    const claim = request.idempotencyClaim;
    request.idempotencyClaim = null;
    if (!claim) return done();
    claim.transaction.rollback().catch(() => {}).finally(() => done());
  };

  app.addHook('onRoute', (route) => {
    if (![route.method].flat().includes('POST')) return;
    route.preHandler = [...[route.preHandler ?? []].flat(), enterRequestTransaction] as typeof route.preHandler;
    // First of the route's onSend hooks: the work commits before anything else reacts to the answer.
    route.onSend = [recordAndCommit, ...[route.onSend ?? []].flat()] as typeof route.onSend;
  });
  app.addHook('onResponse', (request, _reply, done) => abandon(request, done));
  app.addHook('onRequestAbort', abandon);
}

function failedAnswer(request: FastifyRequest, reply: FastifyReply, error: unknown): string {
  const failure = toApiError(error as Error, request);
  // Headers of the answer it replaces (a Location of a record that may not exist) must not go out with it.
  reply.removeHeader('location');
  reply.code(failure.status).headers(failure.headers);
  return JSON.stringify({ error: { code: failure.code, message: failure.message } });
}
/** Drops records past the replay window; main runs it periodically. */
export async function pruneIdempotencyKeys(db: Kysely<DB>): Promise<void> {
  await db.deleteFrom('idempotency_keys').where('created_at', '<', sql<string>`now() - ${REPLAY_WINDOW}`).execute();
}
