// timestamptz values leave the driver as the text the API writes, not as Date objects: ISO 8601 in UTC to the
// millisecond ('2026-11-27T08:21:09.739Z', what Date#toISOString gives, and what the API has always answered).
//
// Why text: a Date in an answer costs twice. The driver's parser reads it with a regular expression, and
// JSON.stringify then leaves V8's fast path for the whole answer because Date has a toJSON. A 50-item page (150
// timestamps) took 160 µs to stringify with Dates and 54 µs with strings, about a fifth of the service's CPU for that
// list (docs/decisions.md, "Timestamps as ISO text"). Code that needs a time's arithmetic makes a Date of the text.
import { sql, type RawBuilder } from 'kysely';
import pg from 'pg';

// Arrays of timestamptz (no query reads one today) keep the pg driver's own parser, which makes Dates; PGlite builds
// its array parsers from the element's, so it would give this text. Register 1185 here before reading such an array.
export const TIMESTAMPTZ = 1184;

const postgresDate = pg.types.getTypeParser(TIMESTAMPTZ) as (text: string) => Date | number | null;

const SPACE = 32;
const DASH = 45;
const DOT = 46;
const T = 84;

/**
 * 'YYYY-MM-DD?HH:MM:SS[.f to ffffff]' and then UTC's offset as PostgreSQL writes it (`offset`), with `separator` at the
 * '?', rearranged as ISO text without a Date, the fraction cut to milliseconds as Date does; null for any other form.
 */
function isoOfUtcText(text: string, separator: number, offset: string): string | null {
  const length = text.length - offset.length;
  if (length < 19 || length > 26 || text.charCodeAt(10) !== separator || text.charCodeAt(4) !== DASH || !text.endsWith(offset)) return null;
  const day = text.slice(0, 10);
  const time = text.slice(11, 19);
  if (length === 19) return `${day}T${time}.000Z`;
  return text.charCodeAt(19) === DOT ? `${day}T${time}.${(text.slice(20, length) + '00').slice(0, 3)}Z` : null;
}

/**
 * PostgreSQL's text of a timestamptz as the API's ISO text. With the session's TimeZone at UTC (the usual server
 * setting, and PGlite's) the text is 'YYYY-MM-DD HH:MM:SS[.f to ffffff]+00' and is rearranged without a Date. Any
 * other form (another time zone's offset, a year past 9999, BC) goes through the driver's own parser and
 * Date#toISOString, which gives the same text a Date would have; 'infinity' stays as written.
 */
export function isoTimestamp(text: string): string {
  const iso = isoOfUtcText(text, SPACE, '+00');
  if (iso !== null) return iso;
  const parsed = postgresDate(text);
  return parsed instanceof Date && !Number.isNaN(parsed.getTime()) ? parsed.toISOString() : text;
}

/**
 * A time nested in JSON that PostgreSQL built (json_agg, json_build_object), where it writes
 * 'YYYY-MM-DDTHH:MM:SS[.f to ffffff]+00:00' in UTC (rearranged without a Date: a Date for each took a twentieth of
 * the pick-batch list's CPU), as the API writes times. What Date cannot read ('infinity', BC) stays as written.
 */
export function isoTimeOfJson(value: string): string;
export function isoTimeOfJson(value: string | null): string | null;
export function isoTimeOfJson(value: string | null): string | null {
  if (value === null) return null;
  const iso = isoOfUtcText(value, T, '+00:00');
  if (iso !== null) return iso;
  const at = new Date(value);
  return Number.isNaN(at.getTime()) ? value : at.toISOString();
}

/**
 * A timestamptz column as the API's ISO text, written by PostgreSQL: for JSON that PostgreSQL builds and that leaves
 * the service as it is (a webhook's body, whose signature covers its bytes), or a time formatted for a page's rows only.
 * to_char cuts the fraction to milliseconds as isoTimestamp does, so both give the same text.
 */
export const isoTextOf = (column: string): RawBuilder<string> =>
  sql<string>`to_char(${sql.ref(column)} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
