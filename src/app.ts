// buildApp: the one Fastify setup for production and tests: plugins and cross-cutting hooks, then one register() per module.
import { randomUUID } from 'node:crypto';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify';
import swagger from '@fastify/swagger';
import apiReference from '@scalar/fastify-api-reference';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { sql, type Kysely } from 'kysely';
import { Type } from 'typebox';
import type { Config } from './config.ts';
import type { Database } from './db/connect.ts';
import type { DB } from './db/schema.ts';
import { actorCache, AUTH_CHANNEL } from './http/actor-cache.ts';
import { registerAuth, API_PREFIX } from './http/auth.ts';
import { answerClientError, answerUnknownExpectation, sendError, toApiError } from './http/errors.ts';
import { ApiError, unavailable } from './domain/errors.ts';
import { Closed, DataEnvelope, responses } from './http/schemas.ts';
import { completeDocument, operationKey } from './http/openapi-document.ts';
import { RowTexts } from './http/row-texts.ts';
import { registerIdempotency } from './http/idempotency.ts';
import { registerReadCache, type ReadCache } from './http/read-cache.ts';
import { JSON_TYPE, preferredRepresentation } from './http/representations.ts';
import type { CounterStore } from './http/rate-limit.ts';
import type { App, ModuleDeps } from './http/types.ts';
import { checkResponseShape, defaultEmptyBody, formatSchemaErrors, requireOrderedPeriod, validatorCompiler } from './http/validation.ts';
import { accountRoutes } from './modules/account/routes.ts';
import { adminRoutes, inviteRoutes } from './modules/admin/routes.ts';
import { apiKeyRoutes } from './modules/api-keys/routes.ts';
import { carrierInboxRoutes, carrierWebhookRoutes } from './modules/carrier-webhooks/routes.ts';
import { contactRoutes } from './modules/contacts/routes.ts';
import { customerRoutes } from './modules/customers/routes.ts';
import { exceptionRoutes } from './modules/exceptions/routes.ts';
import { historyRoutes } from './modules/history/routes.ts';
import { cycleCountRoutes } from './modules/cycle-counts/routes.ts';
import { documentRoutes } from './modules/documents/routes.ts';
import { eventRoutes } from './modules/events/routes.ts';
import { directoryStore } from './modules/documents/storage.ts';
import { inventoryRoutes } from './modules/inventory/routes.ts';
import { itemRoutes } from './modules/items/routes.ts';
import { locationRoutes } from './modules/locations/routes.ts';
import { manufacturerRoutes } from './modules/manufacturers/routes.ts';
import { orderRoutes } from './modules/orders/routes.ts';
import { pickingRoutes } from './modules/picking/routes.ts';
import { receivingRoutes } from './modules/receiving/routes.ts';
import { reportRoutes } from './modules/reports/routes.ts';
import { shipmentRoutes } from './modules/shipments/routes.ts';
import { shipViaRoutes } from './modules/ship-via/routes.ts';
import { warehouseRoutes } from './modules/warehouses/routes.ts';
import { webhookRoutes } from './modules/webhooks/routes.ts';
import { createMetrics, registerMetrics, type Metrics } from './http/metrics.ts';

declare module 'fastify' {
  interface FastifyInstance {
    readCache: ReadCache;
  }
}

export interface AppDeps {
  config: Config;
  db: Kysely<DB>;
  /** Lag-tolerant reads (Database.reads); absent: `db`. */
  reads?: Kysely<DB>;
  counters: CounterStore;
  /** The database's NOTIFY listener; without it every request looks its key up in the database. */
  listen?: Database['listen'];
  /** The readiness probe of the database (absent: a `select 1` through the request pool). */
  ping?: Database['ping'];
  /** The process's metrics (main shares them with the delivery worker); absent: the app makes its own when WMS_METRICS_TOKEN is set. */
  metrics?: Metrics;
  poolStats?: Database['poolStats'];
  logger?: FastifyServerOptions['logger'];
  /** The process's own logger (main), shared with what runs outside requests. */
  loggerInstance?: FastifyBaseLogger;
  /** Tests: answer 500 when a response does not match its documented schema. */
  checkResponses?: boolean;
  /** False until migrations have run: requests that need the database get 503 meanwhile (absent: ready). */
  databaseReady?: () => boolean;
}

/** Lists and reports read over a period refuse one that ends before it starts, the same on every route. */
function periodInOrder(request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void) {
  const { from, to } = request.query as { from?: string; to?: string };
  try {
    if (from && to) requireOrderedPeriod(from, to);
    done();
  } catch (error) {
    done(error as Error);
  }
}

function requireJsonAccepted(request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void) {
  try {
    preferredRepresentation(request, [JSON_TYPE]);
    done();
  } catch (error) {
    done(error as Error);
  }
}

function varyByAccept(_request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (error: null, payload: unknown) => void) {
  reply.header('vary', 'Accept');
  done(null, payload);
}

const trustHops = (hops: number) => (_address: string, hop: number) => hop < hops;

// The invite token in the path is a credential: it never reaches the log.
const redactSecrets = (url: string) => url.replace(/^\/invites\/[^/?]+/, '/invites/[token]');

// pino says whether a level is on; the silent logger of tests has no such method and logs nothing anyway.
const logsRequests = (log: FastifyBaseLogger) => (log as { isLevelEnabled?: (level: string) => boolean }).isLevelEnabled?.('info') ?? true;

const recorded = Symbol('request recorded');
type RecordResponse = (request: FastifyRequest, reply: FastifyReply) => void;

/**
 * What a finished request leaves, once: its log line (docs/operations.md, Logs) and, with metrics on, its duration.
 * `clientLeft`: its client was gone before the answer.
 */
function recordRequest(request: FastifyRequest, reply: FastifyReply, clientLeft: boolean, measure: RecordResponse | undefined): void {
  const marked = request as FastifyRequest & { [recorded]?: true };
  if (marked[recorded]) return;
  marked[recorded] = true;
  measure?.(request, reply);
  if (!logsRequests(request.log)) return;
  request.log.info(
    {
      method: request.method, url: redactSecrets(request.url), status: reply.statusCode, keyId: request.actor?.apiKeyId,
      ms: Math.round(reply.elapsedTime), ...(clientLeft ? { clientLeft } : {}),
    },
    'request',
  );
}

/**
 * The record of a request whose client left before its answer: Node never finishes such a response, so the onResponse
 * hook that records requests never runs, while the work goes on to its end (an order entered whole, say). Recorded as
 * the answer would go out, after the request's own onSend hooks (the request transaction's commit runs first of them).
 */
const recordWhenClientLeft = (measure: RecordResponse | undefined) =>
  function recordWhenClientLeft(request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (error: null, payload: unknown) => void) {
    if (request.raw.socket?.destroyed === true) recordRequest(request, reply, true, measure);
    done(null, payload);
  };

/** The reference's script (4.9 MB): it changes only with an upgrade of the package, so browsers keep it for a day. */
const DOCS_SCRIPT = '/docs/js/scalar.js';

// Answered while the database is not ready yet: the process is up, its description is static.
const WITHOUT_DATABASE = new Set(['/healthz', '/openapi.json', '/docs', '/docs/', DOCS_SCRIPT]);

const routeNotFound = (request: FastifyRequest) => new ApiError(404, 'not_found', `no route ${request.method} ${request.url.split('?')[0]}`);

// The NOTIFY keeps cached actors true; the time limit only bounds how long an unused key stays in memory.
const ACTOR_CACHE_TTL_MS = 60_000;
const ACTOR_CACHE_SIZE = 10_000;

const API_DESCRIPTION =
  'JSON API of the consignment warehouse service. Every /api/v1 request carries `Authorization: Bearer jwc_...`. ' +
  'Single records come as {data}, lists as {data, meta}, errors as {error:{code,message}}.';

// The reference reads /openapi.json itself (one document, not a copy); nothing is fetched from outside the service:
// no web fonts, no telemetry, no proxy for "try it" (requests go straight to this service with the bearer key typed in).
const DOCS_CONFIGURATION = {
  url: '/openapi.json',
  pageTitle: 'Consignment WMS API reference',
  withDefaultFonts: false,
  telemetry: false,
  hideClientButton: true,
  showDeveloperTools: 'never',
  defaultHttpClient: { targetKey: 'shell', clientKey: 'curl' },
  authentication: { preferredSecurityScheme: 'bearerAuth' },
  agent: { disabled: true },
} as const;

const READY_CHECK_TIMEOUT_MS = 2000;

const Liveness = Closed({ status: Type.Literal('ok') });
const Readiness = Closed({
  status: Type.Literal('ready'),
  database: Type.Literal('ok'),
  redis: Type.Enum(['memory', 'redis', 'degraded'], {
    description: 'Where rate limits are counted: memory (no REDIS_URL), redis, or degraded (Redis unreachable: counted per instance meanwhile).',
  }),
});

/** `select 1` through the request pool, given up after the time (a frozen server must not hang the probe). */
async function pingThroughPool(db: Kysely<DB>, timeoutMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => (timer = setTimeout(resolve, timeoutMs, false)));
  const query = sql`select 1`.execute(db).then(() => true, () => false);
  try {
    return await Promise.race([query, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export async function buildApp(deps: AppDeps): Promise<App> {
  const { config, db } = deps;
  const app: App = Fastify({
    ...(deps.loggerInstance ? { loggerInstance: deps.loggerInstance } : { logger: deps.logger ?? { level: config.logLevel } }),
    // One line per request, written by the onResponse hook below, instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    genReqId: () => randomUUID(),
    bodyLimit: config.bodyLimitBytes,
    trustProxy: typeof config.trustProxy === 'number' ? trustHops(config.trustProxy) : config.trustProxy,
    exposeHeadRoutes: false,
    schemaErrorFormatter: formatSchemaErrors,
    // Errors Fastify raises before a route runs (bad URL encoding, overlong path parameters) use the envelope too.
    frameworkErrors: (error, request, reply) => void sendError(reply, toApiError(error, request)),
    // Errors Node's HTTP parser raises before Fastify sees a request (431, 408, malformed requests): the envelope too.
    clientErrorHandler: answerClientError,
    // Requests during shutdown are answered by the hook below, in the envelope.
    return503OnClosing: false,
    // Node would answer a request without Host itself, with an empty 400; no route here depends on the host.
    http: { requireHostHeader: false },
  }).withTypeProvider<TypeBoxTypeProvider>();
  // Node answers an Expect header it does not know (anything but 100-continue) itself, with a bare 417: the envelope.
  app.server.on('checkExpectation', answerUnknownExpectation);

  app.setValidatorCompiler(validatorCompiler);
  // Response schemas document and (in tests) check the shape; they never filter it, so no key is silently dropped.
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  // Bodies are JSON only; anything else (text/plain included) is 415.
  app.removeContentTypeParser('text/plain');

  app.setErrorHandler((error, request, reply) => sendError(reply, toApiError(error as Error, request)));
  app.setNotFoundHandler((request, reply) => sendError(reply, routeNotFound(request)));
  const measure = config.metricsToken
    ? registerMetrics(app, deps.metrics ?? createMetrics(), { token: config.metricsToken, db, poolStats: deps.poolStats })
    : undefined;
  const whenClientLeft = recordWhenClientLeft(measure);

  // Callback-style hooks: no promise per request for work this small.
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  const { databaseReady } = deps;
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    // Fastify has already set Connection: close on requests that arrive while it closes.
    if (closing) return void sendError(reply, unavailable('the service is shutting down; send the request again'));
    if (databaseReady && !databaseReady() && !WITHOUT_DATABASE.has(request.routeOptions.url ?? '')) {
      return void sendError(reply, unavailable('the service is starting: its database is not ready yet'));
    }
    done();
  });
  // A request that was already running when shutdown began: its connection must not stay open for another one.
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) reply.header('connection', 'close');
    done(null, payload);
  });
  app.addHook('onResponse', (request, reply, done) => {
    recordRequest(request, reply, false, measure);
    done();
  });
  if (deps.checkResponses) app.addHook('onSend', checkResponseShape);

  // Operations whose body may be left out (config.optionalBody): the document says so (requestBody.required false).
  const optionalBodies = new Set<string>();
  app.addHook('onRoute', (route) => {
    route.onSend = [...[route.onSend ?? []].flat(), whenClientLeft] as typeof route.onSend;
    if (route.config?.optionalBody) {
      route.preValidation = [...[route.preValidation ?? []].flat(), defaultEmptyBody] as typeof route.preValidation;
      for (const method of [route.method].flat()) optionalBodies.add(operationKey(method, route.url));
    }
    // A route without query parameters still refuses unknown ones (a typo must not be silently ignored).
    if (!route.schema?.hide && !route.schema?.querystring) route.schema = { ...route.schema, querystring: Closed({}) };
    const queryFields = (route.schema?.querystring as { properties?: Record<string, unknown> } | undefined)?.properties ?? {};
    if ('from' in queryFields && 'to' in queryFields) route.preHandler = [periodInOrder, ...[route.preHandler ?? []].flat()] as typeof route.preHandler;
    if (!route.url.startsWith(API_PREFIX) || route.schema?.hide) return;
    // Routes that answer only JSON refuse an Accept without it (406); the exports and files negotiate their own types,
    // and say that their answer depends on Accept (a shared cache must not give a CSV to a JSON client).
    if (!Object.values(route.schema?.response ?? {}).some((answer) => (answer as { content?: unknown }).content)) {
      route.preValidation = [...[route.preValidation ?? []].flat(), requireJsonAccepted] as typeof route.preValidation;
    } else {
      route.onSend = [...[route.onSend ?? []].flat(), varyByAccept] as typeof route.onSend;
    }
    // Every /api/v1 route is documented as needing the bearer key, with the permission it checks.
    const { permission, anyPermission, administers } = route.config ?? {};
    const needs = [
      permission && `Permission: \`${permission}\`.`,
      anyPermission && `Permission: any of ${anyPermission.map((p) => `\`${p}\``).join(', ')}.`,
      administers && 'Role: system_admin (key holding admin.api_keys).',
    ]
      .filter(Boolean).join(' ');
    route.schema = {
      ...route.schema,
      security: [{ bearerAuth: [] }],
      ...(needs ? { description: [route.schema?.description, needs].filter(Boolean).join('\n\n') } : {}),
    };
  });

  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: { title: 'Consignment Warehouse Management Service', version: '1.0.0-dev', description: API_DESCRIPTION },
      components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: 'API key jwc_...' } } },
    },
    transformObject: (document) => completeDocument((document as { openapiObject: Parameters<typeof completeDocument>[0] }).openapiObject, optionalBodies),
  });

  app.decorateRequest('actor', null);
  app.decorateRequest('idempotencyClaim', null);

  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  // The interactive reference (Scalar), its script served from our own dependencies: installations may run offline.
  await app.register(apiReference, {
    routePrefix: '/docs',
    configuration: DOCS_CONFIGURATION,
    logLevel: 'warn',
    hooks: {
      onRequest: (request, reply, done) => {
        if (request.routeOptions.url === DOCS_SCRIPT) reply.header('cache-control', 'public, max-age=86400');
        done();
      },
    },
  });

  const actors = actorCache({ ttlMs: ACTOR_CACHE_TTL_MS, maxEntries: ACTOR_CACHE_SIZE });
  if (deps.listen) {
    const unlisten = await deps.listen(AUTH_CHANNEL, { notified: actors.clear, listening: actors.setListening });
    app.addHook('onClose', unlisten);
  }

  const reads = deps.reads ?? db;
  // Lists are versioned by the snapshot of the server they are read from.
  app.decorate('readCache', registerReadCache(app, reads, config.readCacheBytes));

  const moduleDeps: ModuleDeps = {
    db, reads, config, documents: directoryStore(config.documentsDir), counters: deps.counters, rowTexts: new RowTexts(),
  };
  await inviteRoutes(app, moduleDeps);
  await carrierInboxRoutes(app, moduleDeps);
  await app.register(async (api) => {
    registerAuth(api, {
      db,
      actors,
      counters: deps.counters,
      perKeyLimit: config.rateLimitPerKey,
      failedPerAddressLimit: config.rateLimitFailedPerAddress,
      windowMs: config.rateLimitWindowMs,
    });
    registerIdempotency(api, db);
    // Unknown routes under /api/v1 are answered after authentication: without a key they are 401, not 404.
    api.setNotFoundHandler((request, reply) => sendError(reply, routeNotFound(request)));
    await accountRoutes(api as App, moduleDeps);
    await adminRoutes(api as App, moduleDeps);
    await apiKeyRoutes(api as App, moduleDeps);
    await manufacturerRoutes(api as App, moduleDeps);
    await warehouseRoutes(api as App, moduleDeps);
    await shipViaRoutes(api as App, moduleDeps);
    await itemRoutes(api as App, moduleDeps);
    await inventoryRoutes(api as App, moduleDeps);
    await locationRoutes(api as App, moduleDeps);
    await orderRoutes(api as App, moduleDeps);
    await customerRoutes(api as App, moduleDeps);
    await contactRoutes(api as App, moduleDeps);
    await receivingRoutes(api as App, moduleDeps);
    await cycleCountRoutes(api as App, moduleDeps);
    await documentRoutes(api as App, moduleDeps);
    await pickingRoutes(api as App, moduleDeps);
    await exceptionRoutes(api as App, moduleDeps);
    await eventRoutes(api as App, moduleDeps);
    await shipmentRoutes(api as App, moduleDeps);
    await carrierWebhookRoutes(api as App, moduleDeps);
    await webhookRoutes(api as App, moduleDeps);
    await historyRoutes(api as App, moduleDeps);
    await reportRoutes(api as App, moduleDeps);
  }, { prefix: API_PREFIX });

  // The probes a load balancer or an orchestrator polls; no key (docs/operations.md, Probes). Declared
  // last: the reference lists its areas in the order of their first route, and opens on the first.
  app.get('/healthz', {
    schema: { tags: ['Operations'], summary: 'Liveness: the process is up', response: responses({ 200: DataEnvelope(Liveness) }) },
  }, async () => ({ data: { status: 'ok' as const } }));
  app.get('/readyz', {
    schema: {
      tags: ['Operations'], summary: 'Readiness: the database answers',
      description: '503 `unavailable` while the service starts, while the database does not answer, or while the service stops; ' +
        'its `details` say which (`database`, `redis`).',
      response: responses({ 200: DataEnvelope(Readiness) }),
    },
  }, async (_request, reply) => {
    const redis = deps.counters.health();
    const answers = deps.ping ? await deps.ping(READY_CHECK_TIMEOUT_MS) : await pingThroughPool(db, READY_CHECK_TIMEOUT_MS);
    if (!answers) return sendError(reply, unavailable('the database is unreachable', { database: 'unavailable', redis }));
    return { data: { status: 'ready' as const, database: 'ok' as const, redis } };
  });

  return app;
}
