// Reports of what happened in a period: orders through the floor, receipts, and the ledger's movements by day.
import { sql } from 'kysely';
import { Type } from 'typebox';
import { Closed, Nullable } from '../../http/schemas.ts';
import { INVENTORY_STATUSES, MOVEMENT_TYPES } from '../inventory/schemas.ts';
import { columnsOf, hours, pageOfRows, PartnerRow, partnerOf, ratio, sum, sumColumns, type PartnerColumns, type Report } from './report.ts';

const Hours = (description: string) => Nullable(Type.Number({ description }));

const fulfillmentCounts = {
  orders_entered: Type.Integer({ description: 'Orders created in the period.' }),
  orders_released: Type.Integer({ description: 'Orders released in the period.' }),
  orders_shipped: Type.Integer({ description: 'Orders that became shipped (nothing left to ship) in the period.' }),
  batches_shipped: Type.Integer({ description: 'Pick batches shipped in the period.' }),
  lines_shipped: Type.Integer({ description: 'Lines of those batches.' }),
  units_requested: Type.Integer({ description: 'Units those lines were to pick.' }),
  units_shipped: Type.Integer({ description: 'Units those lines shipped.' }),
  fill_rate: Nullable(Type.Number({ description: 'units_shipped / units_requested.' })),
  line_fill_rate: Nullable(Type.Number({ description: 'Share of those lines shipped in full.' })),
  avg_hours_release_to_ship: Hours('Mean time from release to shipped of the orders shipped in the period.'),
  median_hours_release_to_ship: Hours('Median of the same.'),
};
const FulfillmentRow = PartnerRow(fulfillmentCounts);

interface FulfillmentGroup {
  manufacturer_id: string | null;
  orders_entered: number; orders_released: number; orders_shipped: number; batches_shipped: number; lines_shipped: number;
  units_requested: number; units_shipped: number; lines_complete: number;
  avg_hours: number | null; median_hours: number | null;
}

export const orderFulfillment: Report = {
  name: 'order-fulfillment',
  summary: 'Orders entered, released and shipped, fill rate and release-to-ship time, by supply partner',
  description: 'One row per partner with activity in the period; totals over all of them (the median of all orders, not of the rows).',
  periodic: true,
  defaultPerPage: 50,
  row: FulfillmentRow,
  totals: Closed(fulfillmentCounts),
  async run(db, { period, manufacturerId, page }) {
    const { start, end } = period!;
    const inPeriod = (column: string) => sql`${sql.ref(column)} >= ${start} and ${sql.ref(column)} < ${end} ${partnerOf(manufacturerId, 'manufacturer_id')}`;
    // Grouping sets give each partner's row and, with manufacturer_id null, the totals over all of them. Each part is
    // an index-only scan of its period (migration 0033): the orders' date indexes carry the partner (and the release
    // time), a shipped batch carries its lines' figures.
    const { rows } = await sql<FulfillmentGroup & PartnerColumns>`
      with entered as (select manufacturer_id, count(*) n from orders where ${inPeriod('created_at')} group by manufacturer_id),
      released as (select manufacturer_id, count(*) n from orders where ${inPeriod('released_at')} group by manufacturer_id),
      shipped_orders as (
        select manufacturer_id, count(*) n, avg(extract(epoch from shipped_at - released_at)) / 3600 avg_hours,
          percentile_cont(0.5) within group (order by extract(epoch from shipped_at - released_at)) / 3600 median_hours
        from orders where ${inPeriod('shipped_at')} group by grouping sets ((manufacturer_id), ())),
      batches as (
        select manufacturer_id, count(*) batches, sum(shipped_lines) lines, sum(shipped_units_to_pick) requested,
          sum(shipped_units_picked) shipped, sum(shipped_lines_in_full) complete
        from pick_batches where ${inPeriod('shipped_at')} group by manufacturer_id),
      partners as (select manufacturer_id from entered union select manufacturer_id from released
        union select manufacturer_id from shipped_orders where manufacturer_id is not null union select manufacturer_id from batches)
      select m.id manufacturer_id, m.code manufacturer_code, m.name manufacturer_name,
        coalesce(e.n, 0)::int orders_entered, coalesce(r.n, 0)::int orders_released, coalesce(s.n, 0)::int orders_shipped,
        coalesce(b.batches, 0)::int batches_shipped, coalesce(b.lines, 0)::int lines_shipped, coalesce(b.requested, 0)::float8 units_requested,
        coalesce(b.shipped, 0)::float8 units_shipped, coalesce(b.complete, 0)::int lines_complete,
        s.avg_hours::float8 avg_hours, s.median_hours::float8 median_hours
      from partners p join manufacturers m on m.id = p.manufacturer_id
        left join entered e on e.manufacturer_id = p.manufacturer_id left join released r on r.manufacturer_id = p.manufacturer_id
        left join shipped_orders s on s.manufacturer_id = p.manufacturer_id left join batches b on b.manufacturer_id = p.manufacturer_id
      union all
      select null, null, null, 0, 0, n::int, 0, 0, 0, 0, 0, avg_hours::float8, median_hours::float8 from shipped_orders where manufacturer_id is null
      order by 2 nulls last`.execute(db);
    const partners = rows.filter((row) => row.manufacturer_id !== null);
    const overall = rows.find((row) => row.manufacturer_id === null);
    const shape = (group: FulfillmentGroup) => ({
      orders_entered: group.orders_entered, orders_released: group.orders_released, orders_shipped: group.orders_shipped,
      batches_shipped: group.batches_shipped, lines_shipped: group.lines_shipped, units_requested: group.units_requested, units_shipped: group.units_shipped,
      fill_rate: ratio(group.units_shipped, group.units_requested), line_fill_rate: ratio(group.lines_complete, group.lines_shipped),
      avg_hours_release_to_ship: hours(group.avg_hours), median_hours_release_to_ship: hours(group.median_hours),
    });
    return {
      rows: pageOfRows(partners, page).map((row) => ({ manufacturer_id: row.manufacturer_id, manufacturer_code: row.manufacturer_code, manufacturer_name: row.manufacturer_name, ...shape(row) })),
      total: partners.length,
      totals: shape({
        manufacturer_id: null,
        ...sumColumns(partners, ['orders_entered', 'orders_released', 'orders_shipped', 'batches_shipped', 'lines_shipped', 'units_requested', 'units_shipped', 'lines_complete']),
        avg_hours: overall?.avg_hours ?? null, median_hours: overall?.median_hours ?? null,
      }),
      columns: columnsOf(FulfillmentRow),
    };
  },
};

const receivingCounts = {
  batches: Type.Integer({ description: 'Batches received (received_date) in the period, in any status.' }),
  batches_open: Type.Integer({ description: 'Of them, draft or verified.' }),
  batches_posted: Type.Integer(),
  batches_voided: Type.Integer(),
  lines_posted: Type.Integer(),
  units_received: Type.Integer({ description: 'Units of the posted batches\' lines.' }),
  units_passed: Type.Integer({ description: 'Of them, put on hand (passed, or waived without inspection).' }),
  units_waived: Type.Integer({ description: 'Of the passed, waived without inspection.' }),
  units_failed: Type.Integer({ description: 'Of them, sent to quarantine.' }),
  pass_rate: Nullable(Type.Number({ description: 'units_passed / units_received.' })),
};
const ReceivingRow = PartnerRow(receivingCounts);

type ReceivingGroup = Record<Exclude<keyof typeof receivingCounts, 'pass_rate'>, number>;

export const receiving: Report = {
  name: 'receiving',
  summary: 'Receiving batches and units received, passed and failed, by supply partner',
  description: 'Batches by their received_date in the period. Units count the lines of posted batches only (what reached stock or quarantine).',
  periodic: true,
  defaultPerPage: 50,
  row: ReceivingRow,
  totals: Closed(receivingCounts),
  async run(db, { period, manufacturerId, page }) {
    const { from, to } = period!;
    const { rows } = await sql<ReceivingGroup & PartnerColumns>`
      with lines as (
        select l.batch_id, count(*) lines, sum(l.qty_received) received,
          sum(case when l.inspection_status = 'waived' then l.qty_received else coalesce(l.qty_passed, 0) end) passed,
          sum(case when l.inspection_status = 'waived' then l.qty_received else 0 end) waived,
          sum(case when l.inspection_status = 'waived' then 0 else coalesce(l.qty_failed, 0) end) failed
        from receiving_lines l join receiving_batches b on b.id = l.batch_id
        where b.status = 'posted' and b.received_date between ${from} and ${to} ${partnerOf(manufacturerId, 'b.manufacturer_id')}
        group by l.batch_id)
      select m.id manufacturer_id, m.code manufacturer_code, m.name manufacturer_name, count(*)::int batches,
        (count(*) filter (where b.status in ('draft', 'verified')))::int batches_open,
        (count(*) filter (where b.status = 'posted'))::int batches_posted, (count(*) filter (where b.status = 'voided'))::int batches_voided,
        coalesce(sum(l.lines), 0)::int lines_posted, coalesce(sum(l.received), 0)::float8 units_received,
        coalesce(sum(l.passed), 0)::float8 units_passed, coalesce(sum(l.waived), 0)::float8 units_waived, coalesce(sum(l.failed), 0)::float8 units_failed
      from receiving_batches b join manufacturers m on m.id = b.manufacturer_id left join lines l on l.batch_id = b.id
      where b.received_date between ${from} and ${to} ${partnerOf(manufacturerId, 'b.manufacturer_id')}
      group by m.id order by m.code`.execute(db);
    const withRate = <T extends ReceivingGroup>(group: T) => ({ ...group, pass_rate: ratio(group.units_passed, group.units_received) });
    const totals = sumColumns(rows, Object.keys(receivingCounts).filter((key) => key !== 'pass_rate') as (keyof ReceivingGroup)[]);
    return { rows: pageOfRows(rows, page).map(withRate), total: rows.length, totals: withRate(totals), columns: columnsOf(ReceivingRow) };
  },
};

const MovementsRow = Closed({
  day: Type.String({ format: 'date', description: 'UTC day.' }),
  movement_type: Type.Enum(MOVEMENT_TYPES),
  inventory_status: Type.Enum(INVENTORY_STATUSES, { description: 'quarantine rows move quarantine bins, not on-hand.' }),
  movements: Type.Integer(), units_in: Type.Integer(), units_out: Type.Integer(), net: Type.Integer(),
});

export const movements: Report = {
  name: 'movements',
  summary: 'Ledger movements by day and type',
  description: 'Movements per UTC day, movement type and inventory status, oldest day first: how many, units in (positive ' +
    'quantities), units out (negative, as a positive number) and the net change.',
  periodic: true,
  defaultPerPage: 100,
  params: { movement_type: Type.Optional(Type.Array(Type.Enum(MOVEMENT_TYPES), { maxItems: 10 })) },
  row: MovementsRow,
  totals: Closed({ movements: Type.Integer(), units_in: Type.Integer(), units_out: Type.Integer(), net: Type.Integer() }),
  async run(db, { query, period, manufacturerId, page }) {
    const { start, end } = period!;
    const types = query.movement_type as string[] | undefined;
    // Grouped by date and formatted after: to_char on each of a year's rows cost as much as the rest (335 -> 180 ms for
    // 500,000 movements).
    const { rows } = await sql<{ day: string; movement_type: string; inventory_status: string; movements: number; units_in: number; units_out: number; net: number }>`
      select to_char(d.day, 'YYYY-MM-DD') as day, d.movement_type, d.inventory_status, d.movements, d.units_in, d.units_out, d.net from (
        select (mv.performed_at at time zone 'UTC')::date as day, mv.movement_type, mv.inventory_status, count(*)::int movements,
          sum(greatest(mv.quantity, 0))::float8 units_in, (-sum(least(mv.quantity, 0)))::float8 units_out, sum(mv.quantity)::float8 net
        from inventory_movements mv
        where mv.performed_at >= ${start} and mv.performed_at < ${end} ${partnerOf(manufacturerId, 'mv.manufacturer_id')}
          ${types?.length ? sql`and mv.movement_type = any(${types}::text[])` : sql``}
        group by 1, 2, 3) d
      order by d.day, d.movement_type, d.inventory_status`.execute(db);
    return {
      rows: pageOfRows(rows, page),
      total: rows.length,
      totals: { movements: sum(rows, (r) => r.movements), units_in: sum(rows, (r) => r.units_in), units_out: sum(rows, (r) => r.units_out), net: sum(rows, (r) => r.net) },
      columns: columnsOf(MovementsRow),
    };
  },
};
