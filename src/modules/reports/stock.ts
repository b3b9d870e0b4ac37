// Reports of the stock as it stands: its value, its status by bin, and how fast it moves.
import { sql, type RawBuilder } from 'kysely';
import { Type } from 'typebox';
import { isoTextOf } from '../../db/timestamps.ts';
import { EVERY_ROW, type Page } from '../../http/pagination.ts';
import { Closed, Nullable, NullableEnum, Timestamp, Uuid } from '../../http/schemas.ts';
import { INVENTORY_STATUSES } from '../inventory/schemas.ts';
import { columnsOf, PartnerRow, partnerOf, type Report } from './report.ts';

const ItemValuation = PartnerRow({
  item_id: Uuid, item_number_display: Type.String(), description: Type.String(),
  qty_on_hand: Type.Integer(), average_cost: Nullable(Type.Number({ description: 'Null when no cost was ever received.' })),
  value: Type.Number({ description: 'qty_on_hand × average_cost, rounded to cents (0 without a cost).' }),
});
const PartnerValuation = PartnerRow({
  items: Type.Integer(), qty_on_hand: Type.Integer(), value: Type.Number(),
});

export const inventoryValuation: Report = {
  name: 'inventory-valuation',
  summary: 'Stock on hand at average cost, by supply partner and item',
  description: 'Items with stock on hand (non-zero), valued at their average cost, ordered by partner code and item number. ' +
    '`group_by=manufacturer` gives one row per partner instead. Totals cover the whole report.',
  periodic: false,
  defaultPerPage: 50,
  params: { group_by: Type.Optional(Type.Enum(['item', 'manufacturer'], { default: 'item' })) },
  row: Type.Union([ItemValuation, PartnerValuation]),
  totals: Closed({ items: Type.Integer(), qty_on_hand: Type.Integer(), value: Type.Number(), items_without_cost: Type.Integer({ description: 'Items valued at 0: no cost known.' }) }),
  async run(db, { query, manufacturerId, page }) {
    const partner = partnerOf(manufacturerId, 'i.manufacturer_id');
    const totals = sql<{ items: number; partners: number; qty_on_hand: number; value: number; items_without_cost: number }>`
      select count(*)::int items, count(distinct i.manufacturer_id)::int partners, coalesce(sum(i.qty_on_hand), 0)::float8 qty_on_hand,
        coalesce(round(sum(i.qty_on_hand * i.average_cost), 2), 0)::float8 value, (count(*) filter (where i.average_cost is null))::int items_without_cost
      from items i where i.qty_on_hand <> 0 ${partner}`.execute(db);
    const byPartner = query.group_by === 'manufacturer';
    const rows = byPartner
      ? sql<Record<string, unknown>>`
          select m.id manufacturer_id, m.code manufacturer_code, m.name manufacturer_name, count(*)::int items,
            sum(i.qty_on_hand)::float8 qty_on_hand, coalesce(round(sum(i.qty_on_hand * i.average_cost), 2), 0)::float8 value
          from items i join manufacturers m on m.id = i.manufacturer_id
          where i.qty_on_hand <> 0 ${partner}
          group by m.id order by m.code limit ${page.perPage} offset ${page.offset}`.execute(db)
      : sql<Record<string, unknown>>`
          select m.id manufacturer_id, m.code manufacturer_code, m.name manufacturer_name, i.id item_id, i.item_number_display,
            i.description, i.qty_on_hand, i.average_cost::float8 average_cost, coalesce(round(i.qty_on_hand * i.average_cost, 2), 0)::float8 value
          from items i join manufacturers m on m.id = i.manufacturer_id
          where i.qty_on_hand <> 0 ${partner}
          order by m.code, i.item_number_normalized, i.id limit ${page.perPage} offset ${page.offset}`.execute(db);
    const [{ rows: [sums] }, { rows: page_ }] = await Promise.all([totals, rows]);
    return {
      rows: page_,
      total: byPartner ? sums!.partners : sums!.items,
      totals: { items: sums!.items, qty_on_hand: sums!.qty_on_hand, value: sums!.value, items_without_cost: sums!.items_without_cost },
      columns: columnsOf(byPartner ? PartnerValuation : ItemValuation),
    };
  },
};

const StockStatusRow = Closed({
  item_id: Uuid, item_number_display: Type.String(), description: Type.String(), item_status: Type.String(),
  manufacturer_id: Uuid, manufacturer_code: Type.String(),
  location_id: Nullable(Uuid), location_code: Nullable(Type.String()),
  inventory_status: NullableEnum(INVENTORY_STATUSES),
  bin_qty: Type.Integer({ description: 'Units in this bin (0 for an item without bins).' }),
  qty_on_hand: Type.Integer(), qty_committed: Type.Integer(), qty_available: Type.Integer(), reorder_level: Type.Integer(),
  below_reorder: Type.Boolean({ description: 'reorder_level > 0 and qty_available < reorder_level.' }),
}, { description: 'One row per bin of an item (one row with location null for an item without bins); the item\'s totals repeat on each.' });

export const stockStatus: Report = {
  name: 'stock-status',
  summary: 'On hand, committed and available by item and bin, with reorder status',
  description: 'Every item with its bins (quarantine bins included, marked so), ordered by item number and location code (at one location, available before quarantine). ' +
    '`below_reorder=1` keeps the items whose available stock is under their reorder level.',
  periodic: false,
  defaultPerPage: 50,
  params: { below_reorder: Type.Optional(Type.Enum(['0', '1'])) },
  row: StockStatusRow,
  totals: Closed({
    items: Type.Integer(), bins: Type.Integer(), qty_on_hand: Type.Integer(), qty_committed: Type.Integer(),
    qty_available: Type.Integer(), qty_quarantined: Type.Integer(), items_below_reorder: Type.Integer(),
  }),
  async run(db, { query, manufacturerId, page }) {
    // Totals read item_stock_state (the narrow, trigger-kept copy of the items' stock columns), not the wide items rows.
    const filterOn = (alias: string) => sql`${partnerOf(manufacturerId, `${alias}.manufacturer_id`)}
      ${query.below_reorder === '1' ? sql`and ${sql.ref(`${alias}.reorder_level`)} > 0 and ${sql.ref(`${alias}.qty_available`)} < ${sql.ref(`${alias}.reorder_level`)}` : sql``}`;
    const [{ rows: [items] }, { rows: [bins] }, { rows }] = await Promise.all([
      sql<{ items: number; qty_on_hand: number; qty_committed: number; qty_available: number; items_below_reorder: number }>`
        select count(*)::int items, coalesce(sum(s.qty_on_hand), 0)::float8 qty_on_hand,
          coalesce(sum(s.qty_on_hand - s.qty_available), 0)::float8 qty_committed, coalesce(sum(s.qty_available), 0)::float8 qty_available,
          (count(*) filter (where s.reorder_level > 0 and s.qty_available < s.reorder_level))::int items_below_reorder
        from item_stock_state s where true ${filterOn('s')}`.execute(db),
      sql<{ rows: number; bins: number; qty_quarantined: number }>`
        select count(*)::int rows, count(b.id)::int bins,
          coalesce(sum(b.qty_on_hand) filter (where b.inventory_status = 'quarantine'), 0)::float8 qty_quarantined
        from item_stock_state s left join item_locations b on b.item_id = s.item_id where true ${filterOn('s')}`.execute(db),
      sql<Record<string, unknown>>`
        select i.id item_id, i.item_number_display, i.description, i.status item_status, i.manufacturer_id, m.code manufacturer_code,
          loc.id location_id, loc.location_code, b.inventory_status, coalesce(b.qty_on_hand, 0) bin_qty,
          i.qty_on_hand, i.qty_committed, i.qty_available, i.reorder_level,
          (i.reorder_level > 0 and i.qty_available < i.reorder_level) below_reorder
        from (${stockStatusRows(filterOn('s'), page)}) p join items i on i.id = p.item_id join manufacturers m on m.id = i.manufacturer_id
          left join item_locations b on b.id = p.bin_id left join locations loc on loc.id = b.location_id
        order by p.item_number_normalized, p.item_id, p.location_code, p.inventory_status, p.bin_id`.execute(db),
    ]);
    return {
      rows,
      total: bins!.rows,
      totals: { ...items!, bins: bins!.bins, qty_quarantined: bins!.qty_quarantined },
      columns: columnsOf(StockStatusRow),
    };
  },
};

/**
 * The (item, bin) rows of a stock-status page, narrow (ids and the order's keys): an item is as many rows as it has bins,
 * at least one. A page walks the items in order, counting each one's bins (index-only), until the walk passes the offset,
 * and only then reads the bins of the items that reach into the page: sorting every (item, bin) row to skip the offset
 * cost ~210 ms at page 1,000 of the bench's 100,000 items, the walk ~70 ms (docs/decisions.md, Reports). The export
 * (every row) joins them all at once instead: one probe per item would be slower there. The bins of one item are
 * ordered by location, then status and id, so a page boundary inside an item's bins neither repeats nor skips one.
 */
function stockStatusRows(filter: RawBuilder<unknown>, page: Page) {
  const bins = (item: string) => sql`select b.id bin_id, b.inventory_status, loc.location_code
    from item_locations b join locations loc on loc.id = b.location_id where b.item_id = ${sql.ref(item)}`;
  if (page === EVERY_ROW) {
    return sql`select s.item_id, s.item_number_normalized, bins.* from item_stock_state s left join lateral (${bins('s.item_id')}) bins on true
      where true ${filter}`;
  }
  // Counted inside the window, as the walk reaches each item: counted in the FROM list, every item the filter keeps was
  // counted before the sort (below_reorder's first page: 87 -> 7 ms).
  const rowsOf = (item: string) => sql`(select greatest(count(*), 1) from item_locations b where b.item_id = ${sql.ref(item)})`;
  return sql`
    with walk as (
      select s.item_id, s.item_number_normalized,
        sum(${rowsOf('s.item_id')}) over (order by s.item_number_normalized, s.item_id rows unbounded preceding) rows_through
      from item_stock_state s
      where true ${filter}
      order by s.item_number_normalized, s.item_id),
    page_items as (
      select w.*, ${rowsOf('w.item_id')} rows_of_item from walk w where w.rows_through > ${page.offset}
      order by w.item_number_normalized, w.item_id limit ${page.perPage}),
    numbered as (
      select p.item_id, p.item_number_normalized, bins.*,
        p.rows_through - p.rows_of_item + row_number() over (partition by p.item_id order by bins.location_code, bins.inventory_status, bins.bin_id) row_no
      from page_items p left join lateral (${bins('p.item_id')}) bins on true)
    select * from numbered where row_no > ${page.offset} and row_no <= ${page.offset + page.perPage}`;
}

const BUCKETS = ['fast', 'slow', 'dead'] as const;
const FAST_SHARE = 0.8;

const VelocityRow = Closed({
  item_id: Uuid, item_number_display: Type.String(), description: Type.String(), manufacturer_id: Uuid, manufacturer_code: Type.String(),
  bucket: Type.Enum(BUCKETS),
  units_shipped: Type.Integer(), shipments: Type.Integer(), last_shipped_at: Nullable(Timestamp), qty_on_hand: Type.Integer(),
  days_of_supply: Nullable(Type.Number({ description: 'qty_on_hand at the period\'s daily rate of shipping; null when nothing shipped.' })),
});
interface BucketSums { bucket: (typeof BUCKETS)[number]; items: number; units_shipped: number; qty_on_hand: number; value_on_hand: number }
const BucketTotals = Closed({ items: Type.Integer(), units_shipped: Type.Integer(), qty_on_hand: Type.Integer(), value_on_hand: Type.Number() });

export const velocity: Report = {
  name: 'velocity',
  summary: 'Fast, slow and dead stock by units shipped in the period',
  description: `Items ranked by units shipped in the period. fast: the best sellers that together shipped ${FAST_SHARE * 100}% of the units; ` +
    'slow: the other items that shipped; dead: stock on hand that did not ship at all. Ordered fast, slow, dead, then by units ' +
    'shipped (most first) and item number. `bucket=` keeps one bucket.',
  periodic: true,
  defaultPerPage: 50,
  params: { bucket: Type.Optional(Type.Enum(BUCKETS)) },
  row: VelocityRow,
  totals: Closed({ fast: BucketTotals, slow: BucketTotals, dead: BucketTotals }),
  async run(db, { query, period, manufacturerId, page }) {
    const { start, end } = period!;
    const days = (end.getTime() - start.getTime()) / 86_400_000;
    const classified = sql`
      with shipped as (
        select mv.item_id, (-sum(mv.quantity))::int units, count(*)::int shipments, max(mv.performed_at) last_shipped_at
        from inventory_movements mv
        where mv.movement_type = 'shipment' and mv.performed_at >= ${start} and mv.performed_at < ${end} ${partnerOf(manufacturerId, 'mv.manufacturer_id')}
        group by mv.item_id),
      ranked as (
        select s.*, sum(s.units) over (order by s.units desc, s.item_id rows unbounded preceding) - s.units shipped_before,
          sum(s.units) over () all_units
        from shipped s),
      classified as materialized (
        select i.id item_id, i.item_number_normalized, i.qty_on_hand, i.average_cost,
          coalesce(r.units, 0) units_shipped, coalesce(r.shipments, 0) shipments, r.last_shipped_at,
          case when r.item_id is null then 'dead' when r.shipped_before < ${FAST_SHARE}::numeric * r.all_units then 'fast' else 'slow' end bucket
        from items i left join ranked r on r.item_id = i.id
        where (r.item_id is not null or i.qty_on_hand > 0) ${partnerOf(manufacturerId, 'i.manufacturer_id')})`;
    const bucket = query.bucket ? sql`where c.bucket = ${query.bucket}` : sql``;
    // One statement: the classification (the costly part) is computed once for the totals and the page. It carries only
    // what the totals and the order need; the page's 50 rows alone read their display columns and format their figures
    // (over a year of the bench data, 98,000 classified rows: ~990 -> ~650 ms).
    const { rows: [answer] } = await sql<{ buckets: BucketSums[] | null; rows: Record<string, unknown>[] | null }>`
      ${classified},
      buckets as (
        select c.bucket, count(*)::int items, sum(c.units_shipped)::float8 units_shipped, sum(c.qty_on_hand)::float8 qty_on_hand,
          coalesce(round(sum(c.qty_on_hand * c.average_cost), 2), 0)::float8 value_on_hand
        from classified c group by c.bucket),
      page as (
        select c.* from classified c ${bucket}
        order by array_position(array['fast', 'slow', 'dead'], c.bucket), c.units_shipped desc, c.item_number_normalized, c.item_id
        limit ${page.perPage} offset ${page.offset}),
      numbered as (select row_number() over () n, p.* from page p),
      answered as (
        select r.n, r.item_id, i.item_number_display, i.description, i.manufacturer_id, m.code manufacturer_code, r.bucket, r.units_shipped,
          r.shipments, ${isoTextOf('r.last_shipped_at')} last_shipped_at, r.qty_on_hand,
          case when r.units_shipped > 0 then round(r.qty_on_hand / (r.units_shipped / ${days}::numeric), 1)::float8 end days_of_supply
        from numbered r join items i on i.id = r.item_id join manufacturers m on m.id = i.manufacturer_id)
      select (select json_agg(b) from buckets b) buckets, (select json_agg(a order by a.n) from answered a) rows`.execute(db);
    const buckets = answer!.buckets ?? [];
    const rows = (answer!.rows ?? []).map(({ n: _, ...row }) => row);
    const totals = Object.fromEntries(BUCKETS.map((name) => {
      const found = buckets.find((row) => row.bucket === name);
      return [name, { items: found?.items ?? 0, units_shipped: found?.units_shipped ?? 0, qty_on_hand: found?.qty_on_hand ?? 0, value_on_hand: found?.value_on_hand ?? 0 }];
    }));
    const total = query.bucket ? totals[query.bucket as string]!.items : buckets.reduce((n, row) => n + row.items, 0);
    return { rows, total, totals, columns: columnsOf(VelocityRow) };
  },
};
