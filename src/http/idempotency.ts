// Idempotency-Key on POST (CONTRACT): the same key from the same API key within 24 hours replays the first response
// without doing the work again; the same key with another body is 422 idempotency_key_reuse.
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { sql, type Kysely } from 'kysely';
import type { DB } from '../db/schema.ts';
import { sha256 } from '../domain/secrets.ts';
import { ApiError, badRequest, conflict } from './errors.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set while this request owns an Idempotency-Key record that its response must complete. */
    idempotencyClaim: { apiKeyId: string; key: string } | null;
  }
  interface FastifyContextConfig {
    /** Keys of `data` holding a secret shown once (a new API key, an invite link): never stored, absent on replay. */
    secretFields?: string[];
  }
}

const REPLAY_WINDOW = sql`interval '24 hours'`;
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

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

/** Idempotency on the POST routes registered after this (the others never pay for its hooks). */
export function registerIdempotency(app: FastifyInstance, db: Kysely<DB>): void {
  const claimOrReplay = async (request: FastifyRequest, reply: FastifyReply) => {
    const header = request.headers['idempotency-key'];
    if (header === undefined || !request.actor) return;
    if (typeof header !== 'string' || !KEY_PATTERN.test(header)) {
      throw badRequest('Idempotency-Key must be 1 to 255 visible ASCII characters');
    }
    const apiKeyId = request.actor.apiKeyId;
    const hash = requestFingerprint(request);
    // Claim the key, or take it over when its earlier use is older than the replay window.
    const claimed = await db
      .insertInto('idempotency_keys')
      .values({ api_key_id: apiKeyId, idempotency_key: header, request_hash: hash })
      .onConflict((oc) =>
        oc.columns(['api_key_id', 'idempotency_key']).doUpdateSet({
          request_hash: hash, status_code: null, response_body: null, created_at: sql`now()`, completed_at: null,
        }).where('idempotency_keys.created_at', '<', sql<Date>`now() - ${REPLAY_WINDOW}`),
      )
      .returning('api_key_id')
      .executeTakeFirst();
    if (claimed) {
      request.idempotencyClaim = { apiKeyId, key: header };
      return;
    }
    const first = await db
      .selectFrom('idempotency_keys')
      .select(['request_hash', 'status_code', 'response_body', 'completed_at'])
      .where('api_key_id', '=', apiKeyId)
      .where('idempotency_key', '=', header)
      .executeTakeFirstOrThrow();
    if (first.request_hash !== hash) {
      throw new ApiError(422, 'idempotency_key_reuse', 'this Idempotency-Key was used with a different request');
    }
    if (!first.completed_at || first.status_code === null) {
      throw conflict('a request with this Idempotency-Key is still in progress');
    }
    reply.code(first.status_code).header('idempotent-replayed', 'true');
    if (first.response_body === null) return reply.send();
    return reply.type('application/json; charset=utf-8').send(first.response_body);
  };

  const recordResponse = async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    const claim = request.idempotencyClaim;
    if (!claim) return payload;
    request.idempotencyClaim = null;
    try {
      if (reply.statusCode >= 500) {
        // A failure is not a result: the client may try the same key again.
        await db.deleteFrom('idempotency_keys').where('api_key_id', '=', claim.apiKeyId).where('idempotency_key', '=', claim.key).execute();
      } else {
        const body = typeof payload === 'string' && payload ? withoutSecrets(payload, request.routeOptions.config.secretFields) : null;
        await db
          .updateTable('idempotency_keys')
          .set({ status_code: reply.statusCode, response_body: body, completed_at: sql`now()` })
          .where('api_key_id', '=', claim.apiKeyId)
          .where('idempotency_key', '=', claim.key)
          .execute();
      }
    } catch (error) {
      request.log.error({ err: error }, 'could not record the idempotent response');
    }
    return payload;
  };

  app.addHook('onRoute', (route) => {
    if (![route.method].flat().includes('POST')) return;
    route.preHandler = [...[route.preHandler ?? []].flat(), claimOrReplay] as typeof route.preHandler;
    route.onSend = [...[route.onSend ?? []].flat(), recordResponse] as typeof route.onSend;
  });
}

/** Drops records past the replay window; main runs it periodically. */
export async function pruneIdempotencyKeys(db: Kysely<DB>): Promise<void> {
  await db.deleteFrom('idempotency_keys').where('created_at', '<', sql<Date>`now() - ${REPLAY_WINDOW}`).execute();
}
