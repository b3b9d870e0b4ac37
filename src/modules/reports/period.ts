// What every report reads first: its period (UTC days, `to` inclusive), its supply partner, and whether the key may
// read reports at all (partner-scoped keys may not: they get 404, as if reports did not exist).
import { Type, type TProperties } from 'typebox';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { invalidRequest, notFound } from '../../domain/errors.ts';
import type { Actor } from '../../http/auth.ts';
import { pageParams } from '../../http/pagination.ts';
import { requireOrderedPeriod } from '../../http/validation.ts';
import { Uuid } from '../../http/schemas.ts';

export const DEFAULT_PERIOD_DAYS = 30;

const DAY_MS = 86_400_000;

const Day = (description: string) => Type.String({ format: 'date', description });

export const periodParams = {
  from: Type.Optional(Day(`First day (UTC), YYYY-MM-DD; default ${DEFAULT_PERIOD_DAYS - 1} days before \`to\`.`)),
  to: Type.Optional(Day('Last day (UTC, inclusive), YYYY-MM-DD; default today.')),
};

export function reportParams(periodic: boolean, defaultPerPage: number, extra: TProperties = {}): TProperties {
  return {
    ...(periodic ? periodParams : {}),
    manufacturer: Type.Optional(Uuid),
    ...extra,
    ...pageParams(defaultPerPage),
  };
}

export interface Period {
  from: string;
  to: string;
  /** The first instant of `from`. */
  start: Date;
  /** The first instant after `to`. */
  end: Date;
}

const dayOf = (at: number) => new Date(at).toISOString().slice(0, 10);
const FIRST_DAY = '0001-01-01';
// Years 1 to 9999 as YYYY-MM-DD order as text.
const maxDay = (a: string, b: string) => (a > b ? a : b);

export function periodOf(query: { from?: string; to?: string }, now = Date.now()): Period {
  const to = query.to ?? dayOf(now);
  // The default start stays in year 1: before it, a date has no YYYY-MM-DD (and PostgreSQL refuses year 0).
  const from = query.from ?? maxDay(FIRST_DAY, dayOf(Date.parse(`${to}T00:00:00Z`) - (DEFAULT_PERIOD_DAYS - 1) * DAY_MS));
  requireOrderedPeriod(from, to);
  return { from, to, start: new Date(`${from}T00:00:00Z`), end: new Date(Date.parse(`${to}T00:00:00Z`) + DAY_MS) };
}

/** Reports are the warehouse's: a partner-scoped key cannot tell they exist. */
export function requireWarehouseReader(actor: Actor): void {
  if (actor.manufacturerId) throw notFound('report');
}

/** The `manufacturer` filter names a supply partner that exists (422 otherwise, not an empty report). */
export async function knownManufacturer(db: Kysely<DB>, id: string | undefined): Promise<string | null> {
  if (!id) return null;
  const row = await db.selectFrom('manufacturers').select('id').where('id', '=', id).executeTakeFirst();
  if (!row) throw invalidRequest(`unknown manufacturer ${id}`, { manufacturer: id });
  return id;
}
