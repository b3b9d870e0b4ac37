// The finishing pass over the OpenAPI document @fastify/swagger builds from the routes (its transformObject): what every
// operation shares is written here once instead of in ~170 route declarations — an operationId, the areas (tags) with
// their descriptions, the error answers each kind of operation can give with their codes, and an example of every JSON
// request body.
import { sample } from 'openapi-sampler';

type Schema = Record<string, unknown>;
interface Operation {
  operationId?: string;
  tags?: string[];
  parameters?: { in: string; required?: boolean; schema?: { default?: unknown } }[];
  requestBody?: { required?: boolean; content?: Record<string, { schema?: Schema; example?: unknown }> };
  responses: Record<string, unknown>;
  security?: unknown[];
}
interface Document {
  paths: Record<string, Record<string, Operation>>;
  tags?: { name: string; description: string }[];
  servers?: { url: string; description?: string }[];
  components?: Record<string, Record<string, unknown>>;
}

const AREAS: Record<string, string> = {
  Account: 'The key holder\'s own account: second factor (TOTP), recovery codes, trusted devices.',
  Administration: 'Users and roles (system administrators); consignor invites.',
  'API keys': 'Bearer keys with their permission scopes.',
  Manufacturers: 'Supply partners: the owners of the consigned stock. A partner-scoped key sees its own partner only.',
  Warehouses: 'The warehouses of the installation.',
  'Ship-via': 'Ship-via codes: carrier and mode of an order\'s shipment.',
  Items: 'The item master: numbers, aliases, search, stock by bin.',
  Inventory: 'Stock adjustments and the movement ledger.',
  Locations: 'Warehouse locations (bins, staging and shipping slots) and moving stock between them.',
  Customers: 'Customers with their drop-ship locations and third-party payers.',
  Contacts: 'Contacts of supply partners and customers, with a role per link.',
  Orders: 'Customer orders: entry, stock commitment, release, cancel, bill, close, direct shipping.',
  Receiving: 'Receiving batches from the dock to stock: lines, QC inspection, posting, voiding, file import.',
  'Cycle counts': 'Counting bins and approving the corrections.',
  Documents: 'Files filed under orders, pick batches and exceptions.',
  'Pick, pack and ship': 'Pick batches: the picker\'s line actions, packing, staging, parcels, tracking, shipping, will-call pickup.',
  Exceptions: 'Short picks, mispicks and quality flags, the order blocks they open, and their review.',
  Events: 'The event stream an integrator polls and acknowledges.',
  Webhooks: 'Signed webhook subscriptions that push the event stream, with their delivery log.',
  'Carrier webhooks': 'Tracking updates posted by carriers, signed per tenant.',
  History: 'The audit history of any record.',
  Reports: 'Reports of the office (JSON or CSV) and the consignor statement.',
  Operations: 'Probes for a load balancer or an orchestrator, without a key: the process is up (liveness), its database answers (readiness).',
};

// The answers an operation may give besides its success, by what the operation is; each names the codes it carries.
const ERRORS: Record<string, { description: string; codes: string[]; applies: (op: Operation, method: string) => boolean }> = {
  '400': {
    description: 'The request does not match its schema or breaks a rule of the input; `error.details` lists each problem.',
    codes: ['bad_request', 'invalid_price', 'no_email_contact'],
    applies: (op) => Boolean(op.requestBody || op.parameters?.length),
  },
  '401': {
    description: 'No key, or a key that is unknown, revoked or expired.',
    codes: ['unauthorized'],
    applies: (op) => Boolean(op.security?.length),
  },
  '403': {
    description: 'The key lacks the permission the operation names, or the record belongs to another supply partner\'s scope in a way the key may not act on.',
    codes: ['forbidden'],
    applies: (op) => Boolean(op.security?.length),
  },
  '404': {
    description: 'The record does not exist or is outside the key\'s partner scope.',
    codes: ['not_found'],
    applies: (op) => Boolean(op.parameters?.some((p) => p.in === 'path')),
  },
  '406': {
    description: 'The Accept header allows none of the types the operation answers (JSON; also CSV where the operation exports).',
    codes: ['not_acceptable'],
    applies: (op) => Boolean(op.security?.length),
  },
  '409': {
    description: 'A unique value is taken, a request with the same Idempotency-Key is still running, or the record changed meanwhile.',
    codes: ['conflict', 'duplicate_item_number'],
    applies: (_op, method) => method !== 'get',
  },
  '422': {
    description: 'A business rule refuses the operation in the record\'s current state.',
    codes: [
      'invalid_status', 'invalid_request', 'insufficient_stock', 'negative_stock', 'invalid_split', 'exception_blocked',
      'manufacturer_mismatch', 'batch_empty', 'pending_qc', 'unknown_location', 'location_not_empty',
      'invalid_drop_ship_location', 'invalid_third_party_payer', 'duplicate_account_number', 'invalid_webhook_url',
      'invalid_otp', 'idempotency_key_reuse',
    ],
    applies: (_op, method) => method !== 'get',
  },
  '429': {
    description: 'Too many requests for the key (or failed keys from the address); `Retry-After` tells when to try again.',
    codes: ['rate_limited'],
    applies: (op) => Boolean(op.security?.length),
  },
  '503': {
    description: 'The database is unreachable, the request did not finish within the statement timeout (nothing of it kept), ' +
      'the service is starting or stopping, or (exports) too many exports are running; `Retry-After` tells when to try again.',
    codes: ['unavailable'],
    applies: () => true,
  },
};

/** Answers that tell the client when to try again. */
const RETRY_AFTER = new Set(['429', '503']);

const ERROR_ENVELOPE = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: { code: { type: 'string' }, message: { type: 'string' }, details: {} },
    },
  },
};

const pascal = (word: string) => word.split(/[^A-Za-z0-9]+/).filter(Boolean).map((w) => w[0]!.toUpperCase() + w.slice(1)).join('');

/** `post /api/v1/pick-batches/{id}/ship` → `postPickBatchesByIdShip`: the method and the path, so unique and predictable. */
export function operationIdOf(method: string, path: string): string {
  const words = path.replace(/^\/api\/v1\//, '/').split('/').filter(Boolean)
    .map((segment) => (segment.startsWith('{') ? `By${pascal(segment.slice(1, -1))}` : pascal(segment)));
  return method + words.join('');
}

const responseName = (status: string) => `Error${status}`;

/** `post /api/v1/items/{id}/discontinue` for Fastify's `POST` and `/api/v1/items/:id/discontinue`: an operation of the document. */
export const operationKey = (method: string, url: string) => `${method.toLowerCase()} ${url.replace(/:(\w+)/g, '{$1}')}`;

/** `optionalBodies`: the operations (operationKey) whose body may be left out. */
export function completeDocument(document: Document, optionalBodies: ReadonlySet<string> = new Set()): Document {
  const used = new Set<string>();
  for (const [path, methods] of Object.entries(document.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      op.operationId ??= operationIdOf(method, path);
      op.tags?.forEach((tag) => used.add(tag));
      // Routes without a key (the invite acceptance, the signed carrier message) say so, rather than inheriting none.
      op.security ??= [];
      const errors = Object.keys(ERRORS).filter((status) => ERRORS[status]!.applies(op, method));
      op.responses = { ...op.responses, ...Object.fromEntries(errors.map((status) => [status, { $ref: `#/components/responses/${responseName(status)}` }])) };
      // A parameter with a default (page, per_page, a list's status) may be left out: the service fills it in.
      op.parameters = op.parameters?.map((parameter) => (parameter.schema?.default !== undefined ? { ...parameter, required: false } : parameter));
      // @fastify/swagger marks every body required; one that may be left out reads as {} (config.optionalBody).
      if (op.requestBody && optionalBodies.has(`${method} ${path}`)) op.requestBody = { ...op.requestBody, required: false };
      const json = op.requestBody?.content?.['application/json'];
      if (json?.schema && json.example === undefined) {
        // Required fields only: optional ones often exclude each other (bill-to or a third-party payer; a warehouse
        // and direct split), so the smallest valid request is the example a reader can send as it is.
        const example = sample(json.schema, { skipReadOnly: true, skipNonRequired: true });
        op.requestBody = { ...op.requestBody, content: { ...op.requestBody!.content, 'application/json': { ...json, example } } };
      }
    }
  }
  const responses = Object.fromEntries(Object.entries(ERRORS).map(([status, error]) => [responseName(status), {
    description: `${error.description} Codes: ${error.codes.map((code) => `\`${code}\``).join(', ')}.`,
    ...(RETRY_AFTER.has(status) ? { headers: { 'Retry-After': { description: 'Seconds to wait before sending the request again.', schema: { type: 'integer' } } } } : {}),
    content: { 'application/json': { schema: ERROR_ENVELOPE, example: { error: { code: error.codes[0], message: error.description } } } },
  }]));
  return {
    ...document,
    servers: [{ url: '/', description: 'This service' }],
    tags: [...used].map((name) => ({ name, description: AREAS[name] ?? name })),
    components: { ...document.components, responses: { ...document.components?.responses, ...responses } },
  };
}
