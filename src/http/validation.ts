// Request validation and, in tests, response checking, with the one Ajv setup the service uses.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { fullFormats } from 'ajv-formats/dist/formats.js';
import type { FastifyReply, FastifyRequest, FastifySchemaCompiler } from 'fastify';
import { badRequest } from '../domain/errors.ts';
import { NO_NUL, NOT_BLANK } from './schemas.ts';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The body may be left out (it then reads as {}); a body that is sent is validated as any other, JSON null included. */
    optionalBody?: boolean;
  }
}

/** preValidation of routes whose body is optional: no body at all reads as {}; `null` stays null and is refused. */
export function defaultEmptyBody(request: FastifyRequest, _reply: FastifyReply, done: () => void): void {
  if (request.body === undefined) request.body = {};
  done();
}

// PostgreSQL has no year 0 (it is 1 BC there): a date or time in year 0000 was refused by the database on some routes
// and read as 1 BC on others, so it is a malformed value here, like a month 13. Years run from 0001 to 9999.
type StringFormat = { validate: (value: string) => boolean; compare: (a: string, b: string) => number | undefined };
const fromYearOne = (name: 'date' | 'date-time'): StringFormat => {
  const format = fullFormats[name] as StringFormat;
  return { ...format, validate: (value) => !value.startsWith('0000') && format.validate(value) };
};

function makeAjv(coerceTypes: boolean | 'array', useDefaults: boolean): Ajv {
  // verbose: an error carries the schema it failed, so that formatSchemaErrors can say which value a `not` refuses.
  const ajv = new Ajv({ allErrors: false, coerceTypes, useDefaults, removeAdditional: false, strict: false, verbose: true });
  addFormats(ajv);
  ajv.addFormat('date', fromYearOne('date'));
  ajv.addFormat('date-time', fromYearOne('date-time'));
  return ajv;
}

// Bodies are JSON and must carry the right types; query strings and paths are text and are coerced
// (a repeated query parameter becomes an array).
const bodyAjv = makeAjv(false, true);
const textAjv = makeAjv('array', true);

type SchemaNode = { type?: unknown; items?: SchemaNode; anyOf?: SchemaNode[]; properties?: Record<string, SchemaNode> };
const holdsInteger = (node: SchemaNode | undefined): boolean =>
  node !== undefined && (node.type === 'integer' || holdsInteger(node.items) || (node.anyOf ?? []).some(holdsInteger));

// Ajv coerces any text that JavaScript reads as a whole number ('1e3', '0x10', '+3', ' 3'); an integer in a query or
// a path is written in decimal digits (CONTRACT: a value that is not an integer is 400), so those are refused first.
const DIGITS = /^-?\d+$/;
const notDigits = (value: unknown) => (Array.isArray(value) ? value : [value]).some((v) => typeof v === 'string' && !DIGITS.test(v));

function textValidator(schema: SchemaNode): ValidateFunction {
  const validate = textAjv.compile(schema as object);
  const integers = Object.entries(schema.properties ?? {}).filter(([, property]) => holdsInteger(property)).map(([name]) => name);
  if (integers.length === 0) return validate;
  const checked = ((data: Record<string, unknown> | null, context?: unknown) => {
    const field = integers.find((name) => notDigits(data?.[name]));
    if (field !== undefined) {
      checked.errors = [{ keyword: 'type', instancePath: `/${field}`, schemaPath: '#/type', params: { type: 'integer' }, message: 'must be an integer' }];
      return false;
    }
    const valid = validate(data, context as never);
    checked.errors = validate.errors;
    return valid;
  }) as ValidateFunction;
  // Fastify hands Ajv's functions (those with a schemaEnv) the request as parent data, so a coerced root can be replaced.
  checked.schemaEnv = validate.schemaEnv;
  return checked;
}

export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) =>
  (httpPart === 'body' ? bodyAjv.compile(schema as object) : textValidator(schema as SchemaNode)) as ReturnType<FastifySchemaCompiler<unknown>>;

/**
 * A period (`from`, `to`: YYYY-MM-DD, both inclusive) that ends before it starts is 400: an empty answer would look
 * like a period without activity.
 */
export function requireOrderedPeriod(from: string, to: string): void {
  if (from > to) throw badRequest(`from (${from}) is after to (${to})`);
}

/** "body/role must be one of: ..." — the failing field first, so a client can see what to fix. */
export function formatSchemaErrors(errors: ErrorObject[] | { message?: string }[], dataVar: string): Error {
  const error = errors[0] as ErrorObject | undefined;
  if (!error?.keyword) return new Error(`${dataVar} is invalid`);
  const path = `${dataVar}${error.instancePath}`;
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'additionalProperties':
      return new Error(`${path}/${String(params.additionalProperty)} is not a known field`);
    case 'required':
      return new Error(`${path}/${String(params.missingProperty)} is required`);
    case 'enum':
      return new Error(`${path} must be one of: ${(params.allowedValues as unknown[]).join(', ')}`);
    // The text patterns every field carries, said in words rather than as the expressions they are.
    case 'pattern':
      if (params.pattern === NOT_BLANK) return new Error(`${path} must not be blank or hold a NUL character`);
      if (params.pattern === NO_NUL) return new Error(`${path} must not hold a NUL character`);
      return new Error(`${path} ${error.message ?? 'is invalid'}`);
    // A value the field refuses (a quantity of 0): Ajv keeps the refused schema on the error (verbose).
    case 'not': {
      const refused = (error.schema as { enum?: unknown[] } | undefined)?.enum;
      return new Error(refused ? `${path} must not be ${refused.map((value) => JSON.stringify(value)).join(' or ')}` : `${path} is a value it may not take`);
    }
    default:
      return new Error(`${path} ${error.message ?? 'is invalid'}`);
  }
}

// Responses are checked strictly: nothing coerced or defaulted, and closed objects reject unknown keys.
const responseAjv = makeAjv(false, false);
const compiledResponses = new WeakMap<object, ValidateFunction>();

/**
 * Checks a response against its route's schema and turns a mismatch into a loud 500. Tests switch it on, so every
 * request a test makes also proves that the documented shape is the real one.
 */
export async function checkResponseShape(request: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> {
  const schemas = request.routeOptions.schema?.response as Record<string, object> | undefined;
  if (!schemas || reply.statusCode === 500) return payload;
  const status = reply.statusCode;
  let schema = schemas[status] ?? schemas[`${Math.floor(status / 100)}xx`];
  // A route that answers in several types (JSON or CSV, a file): the JSON answer is checked against its JSON schema.
  const byType = (schema as { content?: Record<string, { schema: object }> } | undefined)?.content;
  if (byType) {
    const type = String(reply.getHeader('content-type') ?? '').split(';')[0]!.trim();
    if (type !== 'application/json') return payload;
    schema = byType[type]?.schema;
  }
  let problem: string | null = null;
  if (!schema) {
    problem = `no response schema for status ${status}`;
  } else {
    let validate = compiledResponses.get(schema);
    if (!validate) compiledResponses.set(schema, (validate = responseAjv.compile(schema)));
    const body = typeof payload === 'string' && payload.length > 0 ? JSON.parse(payload) : null;
    if (!validate(body)) problem = `${responseAjv.errorsText(validate.errors)} in ${typeof payload === 'string' ? payload.slice(0, 500) : payload}`;
  }
  if (!problem) return payload;
  request.log.error({ problem }, 'response does not match its schema');
  reply.code(500);
  return JSON.stringify({ error: { code: 'response_schema_mismatch', message: `${request.method} ${request.url}: ${problem}` } });
}
