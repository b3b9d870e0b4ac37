// The error envelope {error:{code,message,details?}} and the one place where failures become HTTP answers.
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';

export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly details: unknown;
  readonly headers: Record<string, string>;
  constructor(status: number, code: string, message: string, options: { details?: unknown; headers?: Record<string, string> } = {}) {
    super(message);
    this.status = status;
    this.code = code;
    this.details = options.details;
    this.headers = options.headers ?? {};
  }
}

export const badRequest = (message: string, details?: unknown) => new ApiError(400, 'bad_request', message, { details });
export const unauthorized = (message = 'API key required') => new ApiError(401, 'unauthorized', message);
export const forbidden = (message = 'this key may not do that') => new ApiError(403, 'forbidden', message);
export const notFound = (what = 'record') => new ApiError(404, 'not_found', `${what} not found`);
export const conflict = (message: string) => new ApiError(409, 'conflict', message);
export const gone = (message: string) => new ApiError(410, 'gone', message);
export const invalidRequest = (message: string, details?: unknown) => new ApiError(422, 'invalid_request', message, { details });
export const unsupportedMediaType = (message: string) => new ApiError(415, 'unsupported_media_type', message);

// Unique constraints whose violation is the client's fault, by constraint name.
const UNIQUE_VIOLATIONS: Record<string, () => ApiError> = {
  manufacturers_code_key: () => conflict('a manufacturer with this code already exists'),
  users_email_key: () => conflict('a user with this email already exists'),
  warehouses_code_key: () => conflict('a warehouse with this code already exists'),
  locations_location_code_key: () => conflict('a location with this code already exists'),
  ship_via_code_key: () => conflict('a ship-via code with this code already exists'),
  items_manufacturer_number_key: () => new ApiError(409, 'duplicate_item_number', 'this supply partner already has an item with this number'),
  item_aliases_manufacturer_alias_key: () => conflict('this supply partner already has an item with this alias'),
  customers_account_number_key: () => new ApiError(422, 'duplicate_account_number', 'a customer with this account number already exists'),
};

interface PgError {
  code?: string;
  constraint?: string;
}

/** PostgreSQL errors caused by the request, as API errors; null for anything else (a bug or an outage). */
export function translateDatabaseError(error: unknown): ApiError | null {
  const { code, constraint } = (error ?? {}) as PgError;
  if (typeof code !== 'string' || code.length !== 5) return null;
  if (code === '23505') return (constraint && UNIQUE_VIOLATIONS[constraint]?.()) || conflict('a record with these values already exists');
  if (code === '23503') return invalidRequest('a referenced record does not exist');
  if (code === '23514' || code === '23502') return invalidRequest('the values break a rule of the record');
  // invalid text representation, numeric or string out of range, bad datetime, NUL or untranslatable characters
  if (['22P02', '22003', '22001', '22007', '22008', '22009', '22021', '22P05'].includes(code)) return badRequest('a value is out of range or malformed');
  return null;
}

export function sendError(reply: FastifyReply, error: ApiError): FastifyReply {
  const body: { error: { code: string; message: string; details?: unknown } } = {
    error: { code: error.code, message: error.message },
  };
  if (error.details !== undefined) body.error.details = error.details;
  return reply.code(error.status).headers(error.headers).send(body);
}

/** Fastify's own errors (parsing, validation, limits) and everything thrown by handlers. */
export function toApiError(error: FastifyError | Error, request: FastifyRequest): ApiError {
  if (error instanceof ApiError) return error;
  const database = translateDatabaseError(error);
  if (database) return database;
  const fastifyError = error as FastifyError;
  if (fastifyError.validation) return badRequest(fastifyError.message);
  switch (fastifyError.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      // The file import takes text/csv or XLSX; every other route JSON.
      return unsupportedMediaType(request.routeOptions.url?.endsWith('/import-file')
        ? 'send the file as text/csv or application/vnd.openxmlformats-officedocument.spreadsheetml.sheet'
        : 'request bodies must be application/json');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError(413, 'payload_too_large', 'request body is too large');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return badRequest('request body is empty but Content-Type is application/json');
  }
  const status = fastifyError.statusCode;
  // 414 is Fastify's answer to an overlong path parameter: for the client that is a malformed id.
  if (status === 400 || status === 414) return badRequest(error instanceof SyntaxError ? 'malformed JSON body' : fastifyError.message);
  if (status && status >= 400 && status < 500) {
    return new ApiError(status, status === 404 ? 'not_found' : 'bad_request', fastifyError.message);
  }
  request.log.error({ err: error, reqId: request.id }, 'unexpected failure');
  return new ApiError(500, 'internal_error', `internal error (request ${request.id})`);
}
