// Reports answer in the representation the client asks for with Accept: JSON (the default), CSV of the same rows, or
// (where a route offers one) PDF. Negotiation is @fastify/accepts (the `accepts` package); CSV is csv-stringify.
import accepts from '@fastify/accepts';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { stringify } from 'csv-stringify/sync';
import type { App } from './types.ts';

export const CSV = 'text/csv';
export const PDF = 'application/pdf';
export const JSON_TYPE = 'application/json';

export type Representation = typeof JSON_TYPE | typeof CSV | typeof PDF;

export async function registerNegotiation(app: App): Promise<void> {
  await app.register(accepts);
}

/** The offered type the request prefers; JSON when it names none of them (or sends no Accept). */
export function preferredRepresentation(request: FastifyRequest, offered: readonly Representation[]): Representation {
  const chosen = request.accepts().type([...offered]);
  return typeof chosen === 'string' ? chosen as Representation : JSON_TYPE;
}

/** The rows as CSV under a header of the given columns; nested values are written as JSON, null as an empty cell. */
export function csvOf(rows: readonly Record<string, unknown>[], columns: readonly string[]): string {
  return stringify(rows.map((row) => columns.map((column) => {
    const value = row[column];
    if (value === null || value === undefined) return '';
    if (value instanceof Date) return value.toISOString();
    const text = typeof value === 'object' ? JSON.stringify(value) : value;
    // A text cell a spreadsheet would run as a formula (a partner's description, a reason) is quoted with a leading '.
    return typeof text === 'string' && /^[=+\-@\t\r]/.test(text) ? `'${text}` : text;
  })), { header: true, columns: [...columns], bom: false });
}

/** A file answer: its type and a name to save it under. Returns what the handler returns. */
export function sendFile(reply: FastifyReply, type: string, fileName: string, body: string | Buffer) {
  return reply.type(type === CSV ? `${CSV}; charset=utf-8` : type)
    .header('content-disposition', `attachment; filename="${fileName.replace(/[^A-Za-z0-9._-]/g, '_')}"`)
    .send(body);
}
