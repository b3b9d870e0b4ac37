// The error envelope {error:{code,message,details?}} and the one place where failures become HTTP answers.
import { STATUS_CODES } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { isDatabaseUnavailable, tookTooLong } from '../db/availability.ts';
import { ApiError, badRequest, conflict, invalidRequest, unavailable, unsupportedMediaType } from '../domain/errors.ts';

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

/**
 * An error Fastify marks 4xx came from the request (its body, its headers), never from the database, whatever its code:
 * a client that closes the connection before its body arrived whole is Node's 'aborted' with ECONNRESET, a socket code
 * that the database's failures share.
 */
function fromRequest(error: Error): boolean {
  const status = (error as FastifyError).statusCode;
  return status !== undefined && status >= 400 && status < 500;
}

/** Node's words for a request's own failures, as the client reads them. */
const REQUEST_FAILURES: Record<string, string> = {
  aborted: 'the request body was cut off: the client closed the connection before sending all of it',
};

/** Fastify's own errors (parsing, validation, limits) and everything thrown by handlers. */
export function toApiError(error: FastifyError | Error, request: FastifyRequest): ApiError {
  if (error instanceof ApiError) return error;
  if (!fromRequest(error) && isDatabaseUnavailable(error)) {
    request.log.warn({ err: error, reqId: request.id }, 'database unavailable');
    // A statement cut by the statement timeout, or a server that stopped answering: the database is there, the request
    // took too long. Saying so tells the client that retrying the same thing may time out the same way.
    if (tookTooLong(error)) {
      return unavailable('the database did not finish this request within the statement timeout and nothing of it was kept; ' +
        'try again shortly: a request that times out again waits on a lock held elsewhere or asks for too much at once');
    }
    return unavailable('the database is unavailable; try again shortly');
  }
  const database = translateDatabaseError(error);
  if (database) return database;
  const fastifyError = error as FastifyError;
  if (fastifyError.validation) return badRequest(fastifyError.message);
  switch (fastifyError.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      // The file imports take text/csv (receiving also XLSX); every other route JSON.
      if (request.routeOptions.url?.endsWith('/import-file')) return unsupportedMediaType('send the file as text/csv or application/vnd.openxmlformats-officedocument.spreadsheetml.sheet');
      if (request.routeOptions.url?.endsWith('/tracking-import')) return unsupportedMediaType('send the file as text/csv');
      return unsupportedMediaType('request bodies must be application/json');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError(413, 'payload_too_large', 'request body is too large');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return badRequest('request body is empty but Content-Type is application/json');
  }
  const status = fastifyError.statusCode;
  // 414 is Fastify's answer to an overlong path parameter: for the client that is a malformed id.
  if (status === 400 || status === 414) {
    return badRequest(error instanceof SyntaxError ? 'malformed JSON body' : REQUEST_FAILURES[fastifyError.message] ?? fastifyError.message);
  }
  if (status && status >= 400 && status < 500) {
    return new ApiError(status, status === 404 ? 'not_found' : 'bad_request', fastifyError.message);
  }
  request.log.error({ err: error, reqId: request.id }, 'unexpected failure');
  return new ApiError(500, 'internal_error', `internal error (request ${request.id})`);
}

/**
 * Node's HTTP parser refused the request before Fastify saw it (headers too large, too slow to arrive, not HTTP):
 * answer in the envelope and close the connection, as Fastify's own handler does with its own body.
 */
export function answerClientError(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, code, message] =
    error.code === 'HPE_HEADER_OVERFLOW' ? [431, 'headers_too_large', 'the request line and headers are too large']
    : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? [408, 'request_timeout', 'the request did not arrive in time']
    : [400, 'bad_request', 'malformed HTTP request'];
  const body = JSON.stringify({ error: { code, message } });
  if (!socket.writable) return void socket.destroy();
  // end() rather than destroy(), which would reset the connection and may discard the answer at the client.
  socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
  setTimeout(() => socket.destroy(), CLIENT_ERROR_LINGER_MS).unref();
}

// How long a refused connection may stay half open for the client to read the answer.
const CLIENT_ERROR_LINGER_MS = 1000;

/** An Expect header other than 100-continue, which Node would refuse with a bare 417 of its own. */
export function answerUnknownExpectation(_request: IncomingMessage, response: ServerResponse): void {
  const body = JSON.stringify({ error: { code: 'expectation_failed', message: 'the only Expect this service meets is 100-continue' } });
  response.writeHead(417, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body), connection: 'close' });
  response.end(body);
}
