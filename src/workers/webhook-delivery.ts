// Delivers queued webhook deliveries; runs in every instance. A worker claims due rows with FOR UPDATE SKIP LOCKED and
// leases them (leased_until), so two instances never send one delivery at once and a worker killed mid-send loses
// nothing: its rows are claimed again when the lease ends. Within a subscription, an order's events go out in order
// (a later one waits while an earlier one is pending). Each POST is signed (X-Service-Signature) and times out after
// 10 s; 2xx is delivered; 408, 429, 5xx, timeouts and network errors are retried with full-jitter backoff (1 s up to
// 128 s; a Retry-After up to 128 s is honoured) until max_attempts, then dead; 3xx and other 4xx fail for good, and
// 410 also deactivates the subscription.
import http from 'node:http';
import https from 'node:https';
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { sql, type Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { ADVISORY_LOCKS } from '../db/advisory-locks.ts';
import { PLANNED_EACH_TIME } from '../db/connect.ts';
import type { DB } from '../db/schema.ts';
import { isoTextOf } from '../db/timestamps.ts';
import type { Metrics } from '../http/metrics.ts';
import { secretKeyOf } from '../db/secret-key.ts';
import { openSecret, signatureOf } from '../domain/secrets.ts';
import { isPublicAddress, privateUrlsAllowed } from '../modules/webhooks/url-guard.ts';

const TIMEOUT_MS = 10_000;
// A claimed delivery belongs to its worker this long: the send's timeout and the recording, with room to spare.
const LEASE_SECONDS = 60;
const MAX_BACKOFF_S = 128;
const RESPONSE_KEPT_BYTES = 1024;
const CONCURRENT = 32;
const IDLE_POLL_MS = 250;
// How often at most a worker that finds a backlog refreshes the queue's statistics (see refreshStatistics).
const STATISTICS_REFRESH_MS = 30_000;
/** A delivery `d` that may be sent now: pending, its time come, and no worker's lease on it. */
const DUE = sql`d.status = 'pending' and d.next_attempt_at <= now() and (d.leased_until is null or d.leased_until < now())`;
export const DELIVERY_LOG_DAYS = 30;

interface Claimed {
  id: string;
  subscription_id: string;
  attempts: number;
  max_attempts: number;
  url: string;
  secret_sealed: string;
  event_id: string;
  event_kind: string;
  body: string;
}

interface Outcome {
  statusCode: number | null;
  error: string | null;
  response: string | null;
  durationMs: number;
  retryAfterS: number | null;
  /** A failure no retry can mend (the address is internal, the secret cannot be opened): failed at once. */
  permanent: boolean;
}

class InternalAddressError extends Error {}

/** Full jitter: a random wait between 0 and min(128, 2^(attempt-1)) seconds, at least 1 s. */
function backoffSeconds(attempt: number): number {
  return Math.max(1, Math.random() * Math.min(MAX_BACKOFF_S, 2 ** (attempt - 1)));
}

const transient = (status: number) => status === 408 || status === 429 || status >= 500;

/** Connects only to public addresses (unless allowed): the address checked is the address used. */
function guardedLookup(hostname: string, options: object, callback: (error: Error | null, address: string | LookupAddress[], family?: number) => void) {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return callback(error, []);
    const inside = addresses.find((answer) => !isPublicAddress(answer.address));
    if (inside && !privateUrlsAllowed()) return callback(new InternalAddressError(`${hostname} resolves to ${inside.address}, an internal address`), []);
    const all = (options as { all?: boolean }).all;
    return all ? callback(null, addresses) : callback(null, addresses[0]!.address, addresses[0]!.family);
  });
}

/** One POST: its status, the first KiB of its answer, or why there was none. Never throws. */
function post(url: string, body: string, headers: Record<string, string>, timeoutMs = TIMEOUT_MS): Promise<Outcome> {
  const started = performance.now();
  return new Promise((resolve) => {
    const done = (outcome: Omit<Outcome, 'durationMs'>) => resolve({ ...outcome, durationMs: Math.round(performance.now() - started) });
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      return done({ statusCode: null, error: 'invalid url', response: null, retryAfterS: null, permanent: false });
    }
    const client = target.protocol === 'https:' ? https : http;
    const request = client.request(target, {
      method: 'POST', headers: { ...headers, 'content-length': Buffer.byteLength(body) }, lookup: guardedLookup as never, timeout: timeoutMs,
    }, (response) => {
      const chunks: Buffer[] = [];
      let kept = 0;
      response.on('data', (chunk: Buffer) => {
        if (kept < RESPONSE_KEPT_BYTES) chunks.push(chunk.subarray(0, RESPONSE_KEPT_BYTES - kept));
        kept += chunk.length;
        if (kept >= RESPONSE_KEPT_BYTES) response.destroy();
      });
      const finish = () => {
        const retryAfter = Number(response.headers['retry-after']);
        done({
          // PostgreSQL text cannot hold NUL: a receiver's binary answer must not keep its outcome from being written.
          statusCode: response.statusCode ?? null, error: null, response: Buffer.concat(chunks).toString('utf8').replaceAll('\u0000', ''),
          retryAfterS: Number.isFinite(retryAfter) && retryAfter >= 0 ? Math.min(retryAfter, MAX_BACKOFF_S) : null, permanent: false,
        });
      };
      response.on('end', finish);
      response.on('close', finish);
      response.on('error', finish);
    });
    request.on('timeout', () => request.destroy(new Error(`no answer within ${timeoutMs / 1000} s`)));
    request.on('error', (error) => done({
      statusCode: null, error: error.message.slice(0, 500), response: null, retryAfterS: null, permanent: error instanceof InternalAddressError,
    }));
    request.end(body);
  });
}

export interface DeliveryWorker {
  /** Stops claiming, waits for the sends in flight (up to the deadline), and releases what is still leased. */
  stop(deadlineMs: number): Promise<void>;
}

export interface WorkerOptions {
  /** How long a receiver may take to answer (10 s; tests shorten it). */
  timeoutMs?: number;
  /** Counts the attempts written, by outcome (/metrics). */
  metrics?: Pick<Metrics, 'deliveryAttempts'>;
}

interface RecordedOutcome {
  id: string;
  outcome: 'delivered' | 'retry' | 'failed' | 'dead';
  status: 'pending' | 'delivered' | 'failed' | 'dead';
  wait_s: number;
  status_code: number | null;
  error: string | null;
  response: string | null;
  duration_ms: number;
  gone: boolean;
}

/** One statement (atomic on its own) for many deliveries: each one's new state, its attempt in the log, and on 410 its subscription turned off. */
async function writeOutcomes(db: Kysely<DB>, rows: RecordedOutcome[]): Promise<void> {
  await sql`
    with input as (
      select * from json_to_recordset(${JSON.stringify(rows)}::json) as x(id uuid, outcome text, status text, wait_s float8,
        status_code integer, error text, response text, duration_ms integer, gone boolean)
    ), delivery as (
      update webhook_deliveries d set status = x.status, next_attempt_at = now() + make_interval(secs => x.wait_s),
        leased_until = null, last_status_code = x.status_code, last_error = x.error,
        delivered_at = case when x.status = 'delivered' then now() end, updated_at = now()
      from input x where d.id = x.id returning d.id, d.subscription_id
    ), attempt as (
      insert into webhook_delivery_attempts (delivery_id, attempt, duration_ms, status_code, error, response_body, outcome)
      select x.id, coalesce((select max(a.attempt) from webhook_delivery_attempts a where a.delivery_id = x.id), 0) + 1,
        x.duration_ms, x.status_code, x.error, x.response, x.outcome
      from input x
    )
    update webhook_subscriptions s set is_active = false, updated_at = now()
    from delivery d join input x on x.id = d.id where x.gone and s.id = d.subscription_id`.execute(db);
}

export function startDeliveryWorker(db: Kysely<DB>, config: Pick<Config, 'secretKey'>, log: Pick<Logger, 'warn'>, options: WorkerOptions = {}): DeliveryWorker {
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;
  let wakeUp: (() => void) | null = null;
  const inFlight = new Set<string>();

  // Planned on every poll (1.6-4 ms over the partitioned deliveries and events, the run a fraction of that): a plan
  // kept per connection is the plan for the queue as it first saw it, and one made for an empty queue took 21 s a claim
  // after a burst of 10,000 deliveries (decisions, "Plans kept for first pages"; statistics: refreshStatistics).
  async function claim(limit: number): Promise<Claimed[]> {
    const claimed = await sql<Claimed>`
      with due as (
        select d.id from webhook_deliveries d
        join webhook_subscriptions s on s.id = d.subscription_id and s.is_active
        where ${DUE}
          and not exists (select 1 from webhook_deliveries p where p.subscription_id = d.subscription_id and p.order_id = d.order_id
            and p.status = 'pending' and p.event_seq < d.event_seq)
        order by d.next_attempt_at, d.event_seq
        limit ${sql.lit(limit)}
        for update of d skip locked
      )
      update webhook_deliveries d set leased_until = now() + make_interval(secs => ${sql.lit(LEASE_SECONDS)}), attempts = d.attempts + 1, updated_at = now()
      from due, webhook_subscriptions s, outbox_events e
      where d.id = due.id and s.id = d.subscription_id and e.seq = d.event_seq
      returning d.id, d.subscription_id, d.attempts, s.max_attempts, s.url, s.secret_sealed, d.event_id, d.event_kind,
        json_build_object('id', e.id, 'kind', e.kind, 'occurred_at', ${isoTextOf('e.occurred_at')}, 'manufacturer_id', e.manufacturer_id, 'data', e.data)::text as body
      ${PLANNED_EACH_TIME}`
      .execute(db);
    return claimed.rows;
  }

  // An idle worker first asks whether anything is due: a probe of the pending rows' partial index, planned in ~0.5 ms
  // instead of the claim's planning, four times a second per instance while nothing is queued (decisions). Planned
  // each time for the claim's reason: a plan kept from an empty queue would read every delivered row once it filled.
  async function anythingDue(): Promise<boolean> {
    const { rows } = await sql<{ due: boolean }>`
      select exists (select 1 from webhook_deliveries d where ${DUE}) as due
      ${PLANNED_EACH_TIME}`.execute(db);
    return rows[0]!.due;
  }

  async function deliver(delivery: Claimed): Promise<void> {
    const secret = openSecret(await secretKeyOf(db, config), delivery.secret_sealed);
    const t = Math.floor(Date.now() / 1000);
    const outcome = secret === null
      ? { statusCode: null, error: 'the signing secret cannot be opened (WMS_SECRET_KEY changed): rotate it', response: null, durationMs: 0, retryAfterS: null, permanent: true }
      : await post(delivery.url, delivery.body, {
        'content-type': 'application/json',
        'user-agent': 'consignment-wms-webhooks/1',
        'x-service-signature': `t=${t},v1=${signatureOf(secret, t, delivery.body)}`,
        'x-service-event-id': delivery.event_id,
        'x-service-event-kind': delivery.event_kind,
        'x-service-delivery-id': delivery.id,
      }, options.timeoutMs);
    await record(delivery, outcome);
  }

  // Outcomes are written in batches: the sends that finish while one batch is being written go together in the next,
  // one statement for many deliveries instead of one each (the fan-out's database cost was mostly these writes).
  let batch: { row: RecordedOutcome; done: () => void; failed: (error: unknown) => void }[] = [];
  let writing: Promise<void> | null = null;

  function record(delivery: Claimed, outcome: Outcome): Promise<void> {
    const status = outcome.statusCode;
    const kind = status !== null && status >= 200 && status < 300 ? 'delivered'
      : status === null ? (outcome.permanent ? 'failed' : 'retry')
        : transient(status) ? 'retry' : 'failed';
    const final = kind === 'retry' && delivery.attempts >= delivery.max_attempts ? 'dead' : kind;
    const row: RecordedOutcome = {
      id: delivery.id, outcome: final, status: final === 'retry' ? 'pending' : final,
      wait_s: final === 'retry' ? Math.max(outcome.retryAfterS ?? 0, backoffSeconds(delivery.attempts)) : 0,
      status_code: status, error: outcome.error, response: outcome.response, duration_ms: outcome.durationMs,
      // The receiver is gone for good (410): the subscription is turned off until someone turns it on again.
      gone: status === 410,
    };
    return new Promise<void>((done, failed) => {
      batch.push({ row, done, failed });
      writing ??= writeBatches();
    });
  }

  async function writeBatches() {
    while (batch.length) {
      const taken = batch;
      batch = [];
      try {
        await writeOutcomes(db, taken.map((entry) => entry.row));
        for (const entry of taken) {
          options.metrics?.deliveryAttempts.inc({ outcome: entry.row.outcome });
          entry.done();
        }
      } catch (error) {
        for (const entry of taken) entry.failed(error);
      }
    }
    writing = null;
  }

  // The queue goes from empty to thousands of deliveries in one commit (an event for every subscription, a bulk
  // write), and the claim's plan follows the statistics: made while the queue was empty, they keep it on a plan that
  // sorts every due delivery before taking the first 32 (100 ms a claim at 10,000; 480 deliveries/s where a fresh
  // ANALYZE gives 1,660 on the bench), until autovacuum analyzes the table, a minute later at best and never where it
  // is off. A claim that finds more than it can take therefore refreshes them, at most every STATISTICS_REFRESH_MS per
  // worker. ANALYZE locks out no write; skip_locked passes when another worker is analyzing.
  let analyzedAt = 0;
  async function refreshStatistics() {
    if (Date.now() - analyzedAt < STATISTICS_REFRESH_MS) return;
    analyzedAt = Date.now();
    await sql`analyze (skip_locked) webhook_deliveries`.execute(db)
      .catch((error) => log.warn({ err: error }, 'webhook worker: analyzing the delivery queue failed'));
  }

  // Up to CONCURRENT sends at a time; a slow receiver holds one slot, not the worker: slots are refilled as they free.
  let slotFreed: (() => void) | null = null;
  function send(delivery: Claimed) {
    inFlight.add(delivery.id);
    void deliver(delivery)
      // Not recorded (the database went away): the lease ends and the delivery is claimed again.
      .catch((error) => log.warn({ err: error, deliveryId: delivery.id }, 'webhook delivery not recorded; it will be retried'))
      .finally(() => {
        inFlight.delete(delivery.id);
        slotFreed?.();
      });
  }

  async function loop() {
    // The last claim found nothing: the next poll probes before it claims.
    let idle = false;
    while (!stopped) {
      let claimed = 0;
      const free = CONCURRENT - inFlight.size;
      if (free > 0) {
        try {
          const due = idle && !(await anythingDue()) ? [] : await claim(free);
          claimed = due.length;
          idle = claimed === 0;
          for (const delivery of due) send(delivery);
        } catch (error) {
          log.warn({ err: error }, 'webhook worker: claiming deliveries failed; retrying');
        }
      }
      // Claim again at once while there was more than was free; else wait for a free slot, a wake or the next poll.
      const backlog = claimed > 0 && claimed === free;
      if (backlog) await refreshStatistics();
      if (stopped || backlog) continue;
      await new Promise<void>((resolve) => {
        wakeUp = resolve;
        slotFreed = free > 0 ? null : resolve;
        timer = setTimeout(resolve, IDLE_POLL_MS);
      });
      wakeUp = null;
      slotFreed = null;
    }
    while (inFlight.size) await new Promise<void>((resolve) => (slotFreed = resolve));
  }

  const running = loop();
  return {
    async stop(deadlineMs: number) {
      stopped = true;
      if (timer) clearTimeout(timer);
      wakeUp?.();
      await Promise.race([running, new Promise((resolve) => setTimeout(resolve, deadlineMs).unref())]);
      // What did not finish in time is given back now rather than when its lease ends.
      if (inFlight.size) {
        await db.updateTable('webhook_deliveries').set({ leased_until: null, attempts: sql<number>`attempts - 1` })
          .where('id', 'in', [...inFlight]).where('status', '=', 'pending').execute().catch(() => {});
      }
    },
  };
}

/**
 * Attempts older than the log keeps (30 days) are removed; delivered deliveries with them. The prune holds the
 * partition maintenance's lock: both delete the same expired deliveries, and two deletes taking one set of row locks
 * in different orders deadlock.
 */
export async function pruneDeliveryLog(db: Kysely<DB>): Promise<void> {
  await db.transaction().execute(async (tx) => {
    await sql`select pg_advisory_xact_lock(${ADVISORY_LOCKS.partitions})`.execute(tx);
    await tx.deleteFrom('webhook_delivery_attempts').where('attempted_at', '<', sql<string>`now() - make_interval(days => ${DELIVERY_LOG_DAYS})`).execute();
    await tx.deleteFrom('webhook_deliveries').where('status', '=', 'delivered').where('delivered_at', '<', sql<string>`now() - make_interval(days => ${DELIVERY_LOG_DAYS})`).execute();
  });
}
