// One report: its query, its row and totals shapes, and the SQL that computes it. routes.ts serves each at
// GET /reports/{name} as JSON or CSV.
import { sql, type Kysely } from 'kysely';
import { Type, type TObject, type TProperties, type TSchema } from 'typebox';
import type { DB } from '../../db/schema.ts';
import { inReadSnapshot } from '../../db/transaction.ts';
import type { Page } from '../../http/pagination.ts';
import { Closed, Nullable, Timestamp, Uuid } from '../../http/schemas.ts';
import type { Period } from './period.ts';

export interface ReportInput {
  query: Record<string, unknown>;
  /** Null for reports of the present state (valuation, stock status). */
  period: Period | null;
  manufacturerId: string | null;
  page: Page;
}

export interface ReportResult {
  rows: Record<string, unknown>[];
  /** Rows in the whole report, not the page. */
  total: number;
  totals: Record<string, unknown>;
  /** The CSV's columns, in order. */
  columns: readonly string[];
}

export interface Report {
  name: string;
  summary: string;
  description: string;
  periodic: boolean;
  defaultPerPage: number;
  /** Query parameters beyond period, manufacturer and paging. */
  params?: TProperties;
  row: TSchema;
  totals: TObject;
  run(db: Kysely<DB>, input: ReportInput): Promise<ReportResult>;
}

export const columnsOf = (row: TObject): string[] => Object.keys(row.properties);

export function reportEnvelope(report: Report) {
  return Closed({
    data: Type.Array(report.row),
    meta: Closed({
      page: Type.Integer(),
      per_page: Type.Integer(),
      total_count: Type.Integer(),
      total_pages: Type.Integer(),
      from: Nullable(Type.String({ format: 'date' })),
      to: Nullable(Type.String({ format: 'date' })),
      manufacturer_id: Nullable(Type.String({ format: 'uuid' })),
      generated_at: Timestamp,
      totals: report.totals,
    }),
  });
}

/** Rows of a grouped report that are all computed at once (a group per partner, kind or day): the page of them. */
export function pageOfRows<T>(rows: T[], page: Page): T[] {
  return rows.slice(page.offset, page.offset + page.perPage);
}

/** A share as a fraction with 4 decimals, null when there is nothing to divide by. */
export const ratio = (part: number, whole: number): number | null => (whole > 0 ? Math.round((part / whole) * 10_000) / 10_000 : null);

export const sum = <T>(rows: T[], pick: (row: T) => number): number => rows.reduce((total, row) => total + pick(row), 0);

/** The `manufacturer` filter as a condition on the given column (nothing when the report covers every partner). */
export const partnerOf = (manufacturerId: string | null, column: string) =>
  manufacturerId ? sql`and ${sql.ref(column)} = ${manufacturerId}` : sql``;

/** Hours with 2 decimals (null stays null). */
export const hours = (value: number | null): number | null => (value === null ? null : Math.round(value * 100) / 100);

/**
 * A report's statements all read one snapshot, so its rows, counts and totals agree even while the warehouse writes.
 * They aggregate, sort and hash whole periods, so they get more working memory than a request's default 4 MB: a year's
 * velocity sorts and hashes ~80,000 items per step and spilled each to disk (measured ~990 -> ~860 ms). Per statement
 * node, so a pool of 10 stays within a few hundred MB even at its worst.
 */
export function inOneSnapshot<T>(db: Kysely<DB>, read: (tx: Kysely<DB>) => Promise<T>): Promise<T> {
  return inReadSnapshot(db, async (tx) => {
    await sql`set local work_mem = '32MB'`.execute(tx);
    return read(tx);
  });
}

/** The partner columns a report's grouped query returns beside its counts. */
export type PartnerColumns = { manufacturer_id: string; manufacturer_code: string; manufacturer_name: string };

/** A row of a report grouped by supply partner: the partner, then the report's own columns. */
export const PartnerRow = <P extends TProperties>(columns: P) =>
  Closed({ manufacturer_id: Uuid, manufacturer_code: Type.String(), manufacturer_name: Type.String(), ...columns });

/** Each named column summed over the rows: the totals of a report whose rows are groups of counts. */
export function sumColumns<K extends string>(rows: Record<K, number>[], columns: readonly K[]): Record<K, number> {
  return Object.fromEntries(columns.map((column) => [column, sum(rows, (row) => row[column])])) as Record<K, number>;
}
