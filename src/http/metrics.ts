// GET /metrics in the Prometheus text format (prom-client), for the operator's scraper: request durations per route and
// status, the database pool, the webhook backlog and the age of its oldest undelivered event, delivery attempts by
// outcome (failures and dead letters among them) and rate-limit refusals. Served only with WMS_METRICS_TOKEN set, and
// only to a request bearing it: the figures describe the warehouse's traffic, which is not every API key's business.
import { timingSafeEqual } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { PoolStats } from '../db/connect.ts';
import type { DB } from '../db/schema.ts';
import { unauthorized } from '../domain/errors.ts';
import { sendError } from './errors.ts';

export interface Metrics {
  registry: Registry;
  requestDuration: Histogram<'method' | 'route' | 'status'>;
  rateLimitRefusals: Counter;
  /** Webhook delivery attempts by outcome: delivered, retry (a failure tried again), failed, dead. */
  deliveryAttempts: Counter<'outcome'>;
}

/** One registry per process (main gives it to the app and the delivery worker when WMS_METRICS_TOKEN is set). */
export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'wms_' });
  return {
    registry,
    requestDuration: new Histogram({
      name: 'wms_http_request_duration_seconds', help: 'Time from request to response, by route pattern and status.',
      labelNames: ['method', 'route', 'status'], buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10], registers: [registry],
    }),
    rateLimitRefusals: new Counter({ name: 'wms_rate_limit_refusals_total', help: 'Requests refused with 429 rate_limited.', registers: [registry] }),
    deliveryAttempts: new Counter({
      name: 'wms_webhook_delivery_attempts_total', help: 'Webhook delivery attempts by outcome (retry and failed are failures, dead a dead letter).',
      labelNames: ['outcome'], registers: [registry],
    }),
  };
}

/**
 * Serves GET /metrics to requests bearing `token`, and returns what measures a finished request (the app calls it once
 * per request, answered or not: app.ts, recordRequest). Registered only when WMS_METRICS_TOKEN is set: without it there
 * is no /metrics (404) and no request pays for being measured.
 */
export function registerMetrics(
  app: FastifyInstance, metrics: Metrics, options: { token: string; db: Kysely<DB>; poolStats?: () => PoolStats },
): (request: FastifyRequest, reply: FastifyReply) => void {

  const { poolStats } = options;
  if (poolStats) {
    new Gauge({
      name: 'wms_db_pool_connections', help: 'Connections of the request pool by state, and requests waiting for one.', labelNames: ['state'],
      registers: [metrics.registry],
      collect() {
        const stats = poolStats();
        this.set({ state: 'in_use' }, stats.total - stats.idle);
        this.set({ state: 'idle' }, stats.idle);
        this.set({ state: 'waiting' }, stats.waiting);
      },
    });
  }
  const backlog = new Gauge({ name: 'wms_webhook_backlog', help: 'Webhook deliveries waiting to be sent (pending).', registers: [metrics.registry] });
  const oldest = new Gauge({
    name: 'wms_webhook_oldest_undelivered_seconds', help: 'Age of the oldest pending webhook delivery (0 when none).', registers: [metrics.registry],
  });

  const expected = Buffer.from(`Bearer ${options.token}`);
  app.get('/metrics', { schema: { hide: true } }, async (request, reply) => {
    const given = Buffer.from(request.headers.authorization ?? '');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return sendError(reply, unauthorized('the metrics token is required'));
    // The pending deliveries have a partial index of their own: this reads only them.
    const { rows: [pending] } = await sql<{ n: number; age: number | null }>`
      select count(*)::int as n, extract(epoch from now() - min(created_at))::float8 as age
      from webhook_deliveries where status = 'pending'`.execute(options.db);
    backlog.set(pending!.n);
    oldest.set(pending!.age ?? 0);
    return reply.type(metrics.registry.contentType).send(await metrics.registry.metrics());
  });

  return (request, reply) => {
    // The route's pattern, not the URL: ids in paths would make a series per record.
    const route = request.routeOptions.url ?? 'unmatched';
    metrics.requestDuration.observe({ method: request.method, route, status: String(reply.statusCode) }, reply.elapsedTime / 1000);
    if (reply.statusCode === 429) metrics.rateLimitRefusals.inc();
  };
}
