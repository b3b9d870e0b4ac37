// Lists and reports answer in the representation the client asks for with Accept: JSON (the default), CSV, or (where a
// route offers one) PDF; an Accept the route cannot meet is 406. Negotiation is the `accepts` package; CSV is
// csv-stringify.
import type { IncomingMessage } from 'node:http';
import accepts from 'accepts';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { stringify } from 'csv-stringify/sync';
import type { Readable } from 'node:stream';
import { ApiError } from '../domain/errors.ts';

export const CSV = 'text/csv';
export const PDF = 'application/pdf';
export const JSON_TYPE = 'application/json';

export type Representation = typeof JSON_TYPE | typeof CSV | typeof PDF;

/**
 * Accept without media-type parameters other than q: `application/json; charset=utf-8` (what many HTTP clients send)
 * asks for JSON, but the negotiator would match it only against an offer with the same parameter.
 */
const withoutParameters = (accept: string) =>
  accept.split(',').map((range) => range.split(';').map((part) => part.trim()).filter((part, i) => i === 0 || /^q=/i.test(part)).join(';')).join(',');

/** The offered type the request prefers (JSON without an Accept header, or a blank one); 406 when its Accept allows none of them. */
export function preferredRepresentation(request: FastifyRequest, offered: readonly Representation[]): Representation {
  const accept = request.headers.accept;
  if (!accept?.trim()) return JSON_TYPE;
  const chosen = accepts({ headers: { accept: withoutParameters(accept) } } as IncomingMessage).type([...offered]);
  if (typeof chosen !== 'string') throw notAcceptable(accept, offered);
  return chosen as Representation;
}

const notAcceptable = (accept: string, offered: readonly string[]) =>
  new ApiError(406, 'not_acceptable', `this route answers ${offered.join(', ')}; Accept: ${accept.slice(0, 200)} allows none of them`);

/**
 * The rows as CSV under a header of the given columns (none for the later batches of an export); nested values are
 * written as JSON, null as an empty cell.
 */
export function csvOf(rows: readonly Record<string, unknown>[], columns: readonly string[], { header = true } = {}): string {
  return stringify(rows.map((row) => columns.map((column) => {
    const value = row[column];
    if (value === null || value === undefined) return '';
    if (value instanceof Date) return value.toISOString();
    // Booleans as the JSON writes them (csv-stringify would write true as 1 and false as an empty cell, like null).
    const text = typeof value === 'object' ? JSON.stringify(value) : typeof value === 'boolean' ? String(value) : value;
    // A text cell a spreadsheet would run as a formula (a partner's description, a reason) is quoted with a leading '.
    return typeof text === 'string' && /^[=+\-@\t\r]/.test(text) ? `'${text}` : text;
  })), { header, columns: [...columns], bom: false });
}

/** A file answer: its type and a name to save it under. Returns what the handler returns. */
export function sendFile(reply: FastifyReply, type: string, fileName: string, body: string | Buffer | Readable) {
  return reply.type(type === CSV ? `${CSV}; charset=utf-8` : type)
    .header('content-disposition', `attachment; filename="${fileName.replace(/[^A-Za-z0-9._-]/g, '_')}"`)
    .send(body);
}
