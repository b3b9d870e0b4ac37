// Schema pieces every area uses: ids, nullable values, closed objects, envelopes and error responses.
import { Type, type Static, type TProperties, type TSchema } from 'typebox';

export const Uuid = Type.String({ format: 'uuid' });
// Handlers may return Date objects: the serializer writes them as ISO 8601 UTC strings.
export const Timestamp = Type.Unsafe<Date | string>({ type: 'string', format: 'date-time' });

/** A request or response object that names every key it may carry (unknown keys are a 400 / a failed test). */
export function Closed<P extends TProperties>(properties: P, options: { description?: string; example?: Record<string, unknown> } = {}) {
  return Type.Object(properties, { additionalProperties: false, ...options });
}

/** OpenAPI 3.0 spells "or null" as nullable: true, which Ajv also understands. */
export function Nullable<T extends TSchema>(schema: T) {
  return Type.Unsafe<Static<T> | null>({ ...schema, nullable: true });
}

/** An enum or null (OpenAPI 3.0: nullable with a type; null among the values, as Ajv needs). */
export function NullableEnum<const V extends string>(values: readonly V[]) {
  return Type.Unsafe<V | null>({ type: 'string', enum: [...values, null], nullable: true });
}

// PostgreSQL text cannot hold NUL; refusing it in the schema names the field instead of failing in the database.
export const NO_NUL = '^[^\\u0000]*$';
export const NOT_BLANK = '^(?=[\\s\\S]*\\S)[^\\u0000]*$';

/** A bounded string: no field accepts unbounded text. */
export function Text(maxLength = 200, options: { minLength?: number; description?: string; pattern?: string; format?: string } = {}) {
  return Type.String({ maxLength, pattern: NO_NUL, ...options });
}

/** A required name or label: bounded and not blank (stored trimmed). */
export function Label(maxLength = 200, options: { description?: string } = {}) {
  return Type.String({ minLength: 1, maxLength, pattern: NOT_BLANK, ...options });
}

export const IdParams = Closed({ id: Uuid });

export const ErrorEnvelope = Closed(
  {
    error: Closed({
      code: Type.String(),
      message: Type.String(),
      details: Type.Optional(Type.Unknown()),
    }),
  },
  { description: 'Error' },
);

export const PageMeta = Closed({
  page: Type.Integer(),
  per_page: Type.Integer(),
  total_count: Type.Integer(),
  total_pages: Type.Integer(),
});

export function DataEnvelope<T extends TSchema>(data: T) {
  return Closed({ data });
}

export function ListEnvelope<T extends TSchema>(item: T) {
  return Closed({ data: Type.Array(item), meta: PageMeta });
}

const NoContent = Type.Null({ description: 'No content' });

/** Route responses: the given success shapes plus the error envelope for every 4xx and 5xx. */
export function responses<R extends Record<number, TSchema>>(success: R) {
  return { ...success, '4xx': ErrorEnvelope, '5xx': ErrorEnvelope };
}

export const noContent = responses({ 204: NoContent });

export const CsvText = Type.String({ description: 'CSV with a header row (RFC 4180).' });

/** A list that also exports: JSON pages, or with `Accept: text/csv` every matching row as CSV (its columns: the row's fields). */
export function listOrCsv<T extends TSchema>(item: T) {
  return {
    200: {
      description: 'A page of rows; with `Accept: text/csv`, every row the filters match (no paging), streamed, one column per field.',
      content: { 'application/json': { schema: ListEnvelope(item) }, 'text/csv': { schema: CsvText } },
    },
    '4xx': ErrorEnvelope, '5xx': ErrorEnvelope,
  };
}
