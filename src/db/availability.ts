// Which database failures mean "the database cannot be reached or is going away" rather than "this request is wrong":
// those are answered 503 with Retry-After (the client may retry), never 500.

// SQLSTATE classes and codes of an unreachable, restarting or overloaded server: connection exceptions (08),
// insufficient resources (53: too many connections, out of memory, disk full), admin or crash shutdown, "cannot
// connect now" (starting up or shutting down), a statement cancelled by statement_timeout (57014), and a server that
// refuses the login (28) or lacks the database (3D000): it may be set up yet, and the service comes up once it is.
const UNAVAILABLE_STATES = new Set(['57P01', '57P02', '57P03', '57014', '3D000']);
const UNAVAILABLE_CLASSES = ['08', '28', '53'];

// Socket errors of node's net module while connecting to or talking with the server.
const SOCKET_ERRORS = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'ECONNABORTED',
]);

/** The error of a query the server did not answer within the read timeout (db/connect.ts). */
export const READ_TIMEOUT_MESSAGE = 'Query read timeout';

// pg and pg-pool report a lost, timed-out or closed connection as a plain Error with one of these messages.
const CONNECTION_MESSAGES = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  READ_TIMEOUT_MESSAGE,
  'is not queryable',
  'Cannot use a pool after calling end on the pool',
  // Kysely, for a query made after the service began to close its database.
  'driver has already been destroyed',
  // A read replica cancelling a query whose rows its replay must remove (SQLSTATE 40001 there): try again shortly.
  'conflict with recovery',
];

export function isDatabaseUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (SOCKET_ERRORS.has(code)) return true;
    if (code.length === 5 && (UNAVAILABLE_STATES.has(code) || UNAVAILABLE_CLASSES.includes(code.slice(0, 2)))) return true;
  }
  if (error instanceof AggregateError) return error.errors.some(isDatabaseUnavailable);
  return CONNECTION_MESSAGES.some((message) => error.message.includes(message));
}

/**
 * Whether an unavailable database is in fact one that took too long: a statement cancelled by the statement timeout
 * (57014; nothing else cancels the service's queries) or a server that did not answer within the read timeout.
 */
export function tookTooLong(error: Error): boolean {
  return (error as { code?: unknown }).code === '57014' || error.message.includes(READ_TIMEOUT_MESSAGE);
}

/**
 * Whether a connection that failed with this error must be thrown away rather than go back to the pool: anything that
 * is not an answer of the server about one statement (a lost socket, a read timeout that left a query in flight).
 */
export function isConnectionBroken(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code;
  const sqlState = typeof code === 'string' && code.length === 5 && !SOCKET_ERRORS.has(code);
  return !sqlState || code.startsWith('08') || code === '57P01' || code === '57P02';
}
