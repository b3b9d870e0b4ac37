// Reports of how right the floor is: count accuracy, and the exceptions picking raised and how fast they were reviewed.
import { sql } from 'kysely';
import { Type } from 'typebox';
import { Closed, Nullable } from '../../http/schemas.ts';
import { columnsOf, hours, pageOfRows, PartnerRow, partnerOf, ratio, sumColumns, type PartnerColumns, type Report } from './report.ts';

const accuracyCounts = {
  lines_counted: Type.Integer({ description: 'Count lines counted in the period (batches not cancelled).' }),
  lines_with_variance: Type.Integer(),
  variance_units: Type.Integer({ description: 'Sum of |counted - system|.' }),
  net_variance_units: Type.Integer({ description: 'Sum of counted - system.' }),
  variance_value: Type.Number({ description: 'Sum of |variance| × the item\'s average cost.' }),
  accuracy_pct: Nullable(Type.Number({ description: 'Lines without variance / lines counted × 100.' })),
};
const AccuracyRow = PartnerRow(accuracyCounts);
type AccuracyGroup = Record<Exclude<keyof typeof accuracyCounts, 'accuracy_pct'>, number>;

export const cycleCountAccuracy: Report = {
  name: 'cycle-count-accuracy',
  summary: 'Count lines, variances and accuracy, by supply partner',
  description: 'Lines counted (counted_at) in the period, of batches that were not cancelled; one row per partner.',
  periodic: true,
  defaultPerPage: 50,
  row: AccuracyRow,
  totals: Closed(accuracyCounts),
  async run(db, { period, manufacturerId, page }) {
    const { start, end } = period!;
    const { rows } = await sql<AccuracyGroup & PartnerColumns>`
      select m.id manufacturer_id, m.code manufacturer_code, m.name manufacturer_name, count(*)::int lines_counted,
        (count(*) filter (where l.variance <> 0))::int lines_with_variance, coalesce(sum(abs(l.variance)), 0)::float8 variance_units,
        coalesce(sum(l.variance), 0)::float8 net_variance_units, round(coalesce(sum(abs(l.variance) * i.average_cost), 0), 2)::float8 variance_value
      from cycle_count_lines l join cycle_count_batches b on b.id = l.batch_id join items i on i.id = l.item_id
        join manufacturers m on m.id = i.manufacturer_id
      where l.counted_at >= ${start} and l.counted_at < ${end} and l.counted_qty is not null and b.status <> 'cancelled'
        ${partnerOf(manufacturerId, 'i.manufacturer_id')}
      group by m.id order by m.code`.execute(db);
    const withAccuracy = <T extends AccuracyGroup>(group: T) => {
      const share = ratio(group.lines_counted - group.lines_with_variance, group.lines_counted);
      return { ...group, accuracy_pct: share === null ? null : Math.round(share * 10_000) / 100 };
    };
    const totals = sumColumns(rows, Object.keys(accuracyCounts).filter((key) => key !== 'accuracy_pct') as (keyof AccuracyGroup)[]);
    totals.variance_value = Math.round(totals.variance_value * 100) / 100;
    return { rows: pageOfRows(rows, page).map(withAccuracy), total: rows.length, totals: withAccuracy(totals), columns: columnsOf(AccuracyRow) };
  },
};

const KINDS = ['short_pick', 'mispick', 'quality'] as const;
const STATUSES = ['open', 'reviewed', 'superseded'] as const;
const exceptionCounts = {
  exceptions: Type.Integer(),
  units_short: Type.Integer({ description: 'Units short (short picks).' }),
  reviewed: Type.Integer({ description: 'Of them, reviewed.' }),
  avg_hours_to_review: Nullable(Type.Number({ description: 'Mean time from opened to reviewed, of the reviewed ones.' })),
  median_hours_to_review: Nullable(Type.Number()),
};
const ExceptionsRow = Closed({ kind: Type.Enum(KINDS), status: Type.Enum(STATUSES), ...exceptionCounts });

export const exceptions: Report = {
  name: 'exceptions',
  summary: 'Pick exceptions by kind and status, with time to review',
  description: 'Exceptions opened in the period, one row per kind and status that occurred; totals over all (the median of all reviewed exceptions).',
  periodic: true,
  defaultPerPage: 50,
  row: ExceptionsRow,
  totals: Closed(exceptionCounts),
  async run(db, { period, manufacturerId, page }) {
    const { start, end } = period!;
    const { rows } = await sql<{ kind: string | null; status: string | null; exceptions: number; units_short: number; reviewed: number; avg_hours: number | null; median_hours: number | null }>`
      select e.kind, e.status, count(*)::int exceptions, coalesce(sum(e.qty_short), 0)::float8 units_short,
        (count(*) filter (where e.reviewed_at is not null))::int reviewed,
        (avg(extract(epoch from e.reviewed_at - e.created_at)) / 3600)::float8 avg_hours,
        (percentile_cont(0.5) within group (order by extract(epoch from e.reviewed_at - e.created_at)) / 3600)::float8 median_hours
      from pick_exceptions e
      where e.created_at >= ${start} and e.created_at < ${end} ${partnerOf(manufacturerId, 'e.manufacturer_id')}
      group by grouping sets ((e.kind, e.status), ())
      order by array_position(array['short_pick', 'mispick', 'quality'], e.kind), array_position(array['open', 'reviewed', 'superseded'], e.status)`.execute(db);
    const shape = (row: (typeof rows)[number]) => ({
      exceptions: row.exceptions, units_short: row.units_short, reviewed: row.reviewed,
      avg_hours_to_review: hours(row.avg_hours), median_hours_to_review: hours(row.median_hours),
    });
    const groups = rows.filter((row) => row.kind !== null);
    const overall = rows.find((row) => row.kind === null);
    return {
      rows: pageOfRows(groups, page).map((row) => ({ kind: row.kind, status: row.status, ...shape(row) })),
      total: groups.length,
      totals: overall ? shape(overall) : { exceptions: 0, units_short: 0, reviewed: 0, avg_hours_to_review: null, median_hours_to_review: null },
      columns: columnsOf(ExceptionsRow),
    };
  },
};
