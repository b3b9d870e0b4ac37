// Errors of the rules, with the status and code their answer carries: thrown by domain/ and the modules, turned into the
// error envelope by http/errors.ts. They live below both, so the domain depends on nothing of the HTTP layer.

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
/** The operation is not allowed in the record's current status (the spec's invalid_status). */
export const invalidStatus = (message: string) => new ApiError(422, 'invalid_status', message);
export const unsupportedMediaType = (message: string) => new ApiError(415, 'unsupported_media_type', message);

const RETRY_AFTER_S = 2;
/** A dependency is down or the service is starting or stopping: the same request may succeed a moment later. */
export const unavailable = (message: string, details?: unknown) =>
  new ApiError(503, 'unavailable', message, { details, headers: { 'retry-after': String(RETRY_AFTER_S) } });
