// Bench data: migrates an empty PostgreSQL database and fills it server-side (insert ... select from generate_series),
// so 100,000 items and 1,000,000 movements take about a minute instead of a million round trips.
import { sql, type Kysely } from 'kysely';
import { ensureFirstAdmin } from '../src/bootstrap.ts';
import { connectPostgres } from '../src/db/connect.ts';
import { migrate } from '../src/db/migrate.ts';
import type { DB } from '../src/db/schema.ts';
import { generateApiKey } from '../src/domain/secrets.ts';

// BENCH_SCALE=large: ten times the items and movements, five times the orders (issue 16's scale targets).
export const LARGE = process.env.BENCH_SCALE === 'large';
export const ITEMS = LARGE ? 1_000_000 : 100_000;
export const MOVEMENTS = LARGE ? 10_000_000 : 1_000_000;
export const ORDERS = LARGE ? 1_000_000 : 200_000;
const CUSTOMERS = LARGE ? 10_000 : 2_000;
// Item numbers and aliases are g times a prime, modulo a number above every g and coprime with it, so distinct for
// every item. The default scale keeps the numbers every earlier run measured (5 and 6 digits).
const NUMBERS = LARGE ? { modulus: 1_000_003, digits: 7 } : { modulus: 100_003, digits: 5 };
const ALIASES = LARGE ? { modulus: 10_000_019, digits: 8 } : { modulus: 1_000_003, digits: 6 };
const MANUFACTURERS = 50;
const LOCATIONS = 500;
// Two years of receipts (55 a day at the default scale), each of three lines of its partner's items.
const RECEIPTS = ORDERS / 5;
// The delivery log of one subscription to every event: its 30 days kept (retention), 10,000 a day at the default scale.
const DELIVERIES = LARGE ? 1_500_000 : 300_000;
/** The subscription whose delivery log the bench reads; inactive, so that nothing is sent for it. */
const LOG_SUBSCRIPTION_URL = 'https://bench.invalid/delivery-log';

export interface Generated {
  adminKey: string;
  /** Seconds per step, in order. */
  timings: { step: string; seconds: number }[];
  totalSeconds: number;
}

/**
 * Drops `table`'s secondary indexes, their definitions kept in a plan table: a bulk load then builds each once, sorted,
 * instead of millions of random insertions (at 10,000,000 movements, minutes). Indexes that back a constraint stay.
 */
function dropIndexes(table: string): string[] {
  return [
    `create unlogged table bench_indexes_${table} as select i.indexname, i.indexdef from pg_indexes i
      where i.schemaname = 'public' and i.tablename = '${table}' and not exists (select 1 from pg_constraint c where c.conname = i.indexname)`,
    `do $$ declare r record; begin
       for r in select indexname from bench_indexes_${table} loop execute format('drop index %I', r.indexname); end loop; end $$`,
  ];
}

/** Builds again the dropped indexes of `table` whose definition (`indexdef`) meets `condition`. */
function buildIndexes(table: string, condition = 'true'): string {
  // A partitioned table's definitions say ON ONLY (the parent alone); built on the whole table, every month gets its index.
  return `do $$ declare r record; begin
    for r in select indexdef from bench_indexes_${table} where ${condition} loop
      execute replace(r.indexdef, ' ON ONLY ', ' ON '); end loop; end $$`;
}

/** The statements of a bulk load into `table` with its secondary indexes dropped before and built again after. */
function withoutIndexes(table: string, ...load: string[]): string[] {
  return [...dropIndexes(table), ...load, buildIndexes(table)];
}

type Step = [step: string, ...statements: string[]];

// The look-alike index takes most of the items' index builds (107 of 137 s at 1,000,000 items on a slow machine): the
// lane with less to load builds it, the other lane the rest.
const TYPO_INDEX = `indexdef like '%number_typo_variants(%'`;

/** Steps that load side by side, each lane on its own connection, its steps in order. */
interface Lanes {
  lanes: Step[][];
}

// Each step runs its statements in order on one connection. The plan tables (bench_*) are unlogged tables every
// connection sees, dropped at the end; a step's own temp tables live in its session only.
const STEPS: (Step | Lanes)[] = [
  ['manufacturers', `
    insert into manufacturers (code, name)
    select 'MFG' || lpad(g::text, 2, '0'), 'Manufacturer ' || g from generate_series(1, ${MANUFACTURERS}) g`],
  // 5 zones x 10 aisles x 5 racks x 2 shelves: (k-1) = 100z + 10a + 2r + s, so every code is distinct.
  ['locations', `
    insert into locations (warehouse_id, zone, aisle, rack, shelf, location_code, location_type, capacity)
    select w.id, x.z, x.a, x.r, x.s, x.z || x.a || '-' || x.r || '-' || x.s, 'storage', 1000
    from warehouses w, lateral (
      select chr(65 + (k - 1) / 100) z, lpad((((k - 1) / 10) % 10 + 1)::text, 2, '0') a,
             (((k - 1) / 2) % 5 + 1)::text r, ((k - 1) % 2 + 1)::text s
      from generate_series(1, ${LOCATIONS}) k) x
    where w.code = 'MAIN'`],
  // Numbered helper rows in plan tables, so every later insert joins by number instead of repeating random draws.
  ['plan tables',
    'create unlogged table bench_mfgs as select row_number() over (order by code)::int k, id from manufacturers',
    `create unlogged table bench_locs as select row_number() over (order by location_code)::int k, id, location_code
      from locations where location_type = 'storage'`,
    `create unlogged table bench_items as
      select g, gen_random_uuid() id, case when g % 12 = 0 then 0 else (g * 31) % 250 end qty,
             (g % ${LOCATIONS}) + 1 loc_k, ((g + ${LOCATIONS / 2}) % ${LOCATIONS}) + 1 loc2_k
      from generate_series(1, ${ITEMS}) g`,
    'select setseed(0.42)',
    // Skewed towards low g (a few fast movers), never touching the last 5% (items that never moved), and evenly
    // spread over two years in m order, so seq follows performed_at.
    `create unlogged table bench_moves as
      select m, (1 + floor(${Math.round(ITEMS * 0.95)} * power(random(), 1.6)))::int g,
             now() - (${MOVEMENTS} - m) * interval '${(730 * 86400) / MOVEMENTS} seconds' ts
      from generate_series(1, ${MOVEMENTS}) m`,
    'create unlogged table bench_last as select g, max(ts) ts from bench_moves group by g',
    // The units each item ships by day in the year that ends today (the movements below: m % 10 < 4 is a shipment of
    // 1 + (m / 10) % 12 units): the kept year of migration 0043, written with the items instead of counted after.
    `create unlogged table bench_shipped_days as
      select g, (ts at time zone 'UTC')::date as day, sum(1 + (m / 10) % 12)::int units from bench_moves
      where m % 10 < 4 and ts >= shipped_year_began() group by 1, 2`,
    'create unlogged table bench_shipped as select g, sum(units)::int units from bench_shipped_days group by g',
    'analyze bench_mfgs, bench_locs, bench_items, bench_moves, bench_last, bench_shipped_days, bench_shipped'],
  // Numbers: prefix + a permutation of g (7919 is a prime that does not divide the modulus), so each number is distinct.
  // The items' indexes are built in the lanes below, beside the other loads.
  ['items', ...dropIndexes('items'), `
    insert into items (id, manufacturer_id, item_number_display, item_number_normalized, description, category,
      selling_uom, unit_weight, warehouse_location, price_1, price_2, average_cost, last_cost, qty_on_hand,
      qty_committed, reorder_level, min_reorder_qty, lead_time_days, status, date_last_movement, units_shipped_year)
    select bi.id, mf.id, d.display, upper(replace(replace(d.display, '-', ''), ' ', '')),
      (array['Stainless','Galvanized','Brass','Nylon','Heavy-duty','Compact','Sealed','Threaded','Flanged','Insulated'])[1 + bi.g % 10]
        || ' ' || (array['bolt','valve','pump','filter','gasket','seal','bearing','motor','coupling','washer','hose',
                         'fitting','bracket','switch','sensor'])[1 + (bi.g / 10) % 15]
        || ' ' || (array['1/4in','3/8in','1/2in','3/4in','1in','2in','M6','M8','M10','M12'])[1 + (bi.g / 150) % 10]
        || case when bi.g % 4 = 0 then ' for ' || (array['hydraulic lines','water systems','conveyors','HVAC units',
                 'compressors','gearboxes'])[1 + (bi.g / 4) % 6] else '' end,
      case when bi.g % 100 = 7 then null else (array['Fasteners','Valves','Pumps','Filters','Gaskets','Seals','Bearings',
        'Motors','Couplings','Hoses','Fittings','Brackets','Electrical','Sensors','Hydraulics','Pneumatics','Safety',
        'Tools','Lubricants','Misc'])[1 + (bi.g * 3) % 20] end,
      case when bi.g % 10 = 9 then (array['BX','CS','PK','FT'])[1 + (bi.g / 10) % 4] else 'EA' end,
      round((bi.g % 500) / 10.0 + 0.1, 4), l.location_code,
      p.price, round(p.price * 0.9, 2), round(p.price * 0.6, 4), round(p.price * 0.62, 4),
      bi.qty, case when bi.g % 9 = 0 then least(bi.qty, bi.g % 7) else 0 end,
      r.reorder, r.reorder * 2, 3 + bi.g % 30,
      case when bi.g % 97 = 0 then 'discontinued' when bi.g % 89 = 0 then 'inactive' else 'active' end,
      ll.ts, coalesce(sh.units, 0)
    from bench_items bi
    join bench_mfgs mf on mf.k = (bi.g % ${MANUFACTURERS}) + 1
    join bench_locs l on l.k = bi.loc_k
    left join bench_last ll on ll.g = bi.g
    left join bench_shipped sh on sh.g = bi.g
    cross join lateral (select
      (array['ABC','BRK','HX','VLV','PMP','FLT','GSK','SL','BRG','MTR','CPL','WSH'])[1 + (bi.g * 7) % 12] pre,
      lpad(((bi.g::bigint * 7919) % ${NUMBERS.modulus})::text, ${NUMBERS.digits}, '0') num) n
    cross join lateral (select case
      when bi.g % 10 = 0 then n.pre || ' ' || n.num
      when bi.g % 10 in (1, 2) then n.pre || '-' || n.num || '-' || chr(65 + bi.g % 26)
      when bi.g % 10 = 3 then n.pre || n.num
      else n.pre || '-' || n.num end display) d
    cross join lateral (select case when bi.g % 20 = 0 then null else round(5 + ((bi.g * 37) % 5000) / 10.0, 2) end price) p
    cross join lateral (select case when bi.g % 2 = 0 then (bi.g * 13) % 60 else 0 end reorder) r
    order by bi.g`],
  // Once the items are in, the rest reads the plan tables and items (by primary key) but no other step's rows: two lanes
  // load side by side, one core each (at 1,000,000 items, the movements and the orders took 5 and 4 minutes one after
  // the other on a slow machine). Each lane builds part of the items' indexes and counts its own list totals.
  { lanes: [[
  ['item indexes', buildIndexes('items', `not (${TYPO_INDEX})`)],
  // 30% of the items get an alias (g % 10 in 1, 4, 7) with their own prefixes and a permutation of g: unique per partner.
  ['aliases', `
    insert into item_aliases (item_id, manufacturer_id, alias, alias_normalized)
    select bi.id, mf.id, a.alias, upper(replace(replace(a.alias, '-', ''), ' ', ''))
    from bench_items bi
    join bench_mfgs mf on mf.k = (bi.g % ${MANUFACTURERS}) + 1
    cross join lateral (select (array['XR','ALT','OEM','KT','ZN','QP'])[1 + bi.g % 6] || '-'
      || lpad(((bi.g::bigint * 104729) % ${ALIASES.modulus})::text, ${ALIASES.digits}, '0') alias) a
    where bi.g % 10 in (1, 4, 7)`],
  // Every suffix of every number and alias (migration 0024), the rows of its view item_number_suffixes_due without
  // that view's distinct over every row: an alias's suffix that ends the item's number too is the number's row. (An
  // item here has one alias at most; two sharing a suffix would fail the unique index's build.)
  ['number suffixes', 'truncate item_number_suffixes', ...withoutIndexes('item_number_suffixes', `
    insert into item_number_suffixes (suffix, item_id, manufacturer_id, status, item_number_normalized)
    select text_suffixes(i.item_number_normalized), i.id, i.manufacturer_id, i.status, i.item_number_normalized from items i
    union all
    select s.s, i.id, i.manufacturer_id, i.status, i.item_number_normalized
      from item_aliases a join items i on i.id = a.item_id cross join text_suffixes(a.alias_normalized) s (s)
     where right(i.item_number_normalized, length(s.s)) <> s.s`)],
  // One primary bin holding the stock; every third item splits a third of it into a second bin.
  ['bins', `
    insert into item_locations (item_id, location_id, qty_on_hand, is_primary)
    select bi.id, l.id, case when bi.g % 3 = 0 then bi.qty - bi.qty / 3 else bi.qty end, true
    from bench_items bi join bench_locs l on l.k = bi.loc_k
    union all
    select bi.id, l.id, bi.qty / 3, false
    from bench_items bi join bench_locs l on l.k = bi.loc2_k where bi.g % 3 = 0`],
  // balance_after is the item's current on-hand, not a chained ledger: the bench only reads movements.
  // The ledger's months exist before its rows come (the default partition would otherwise take them all).
  ['movements', `select wms_month_partitions('inventory_movements', (select min(ts) from bench_moves)::date, now()::date)`,
    ...withoutIndexes('inventory_movements', `
    insert into inventory_movements (item_id, manufacturer_id, location_id, movement_type, quantity, balance_after,
      reason, reference_type, reference_id, performed_by_name, performed_at)
    select bi.id, mf.id, l.id, t.type, t.qty, bi.qty,
      case when t.type = 'adjustment' then 'cycle count' else '' end,
      case t.type when 'shipment' then 'order' when 'receipt' then 'receiving' else t.type end,
      gen_random_uuid(), 'bench', bm.ts
    from bench_moves bm
    join bench_items bi on bi.g = bm.g
    join bench_mfgs mf on mf.k = (bi.g % ${MANUFACTURERS}) + 1
    join bench_locs l on l.k = bi.loc_k
    cross join lateral (select case
      when bm.m % 10 < 4 then 'shipment' when bm.m % 10 < 7 then 'receipt'
      when bm.m % 10 < 9 then 'adjustment' else 'transfer' end type) t0
    cross join lateral (select t0.type, case t0.type
      when 'shipment' then -(1 + (bm.m / 10) % 12)
      when 'receipt' then 1 + (bm.m / 10) % 48
      when 'adjustment' then (1 + (bm.m / 10) % 5) * (1 - 2 * ((bm.m / 7) % 2))
      else (1 + (bm.m / 10) % 20) * (1 - 2 * ((bm.m / 7) % 2)) end qty) t
    order by bm.m`)],
  ['shipped days', ...withoutIndexes('item_shipped_days', `insert into item_shipped_days (item_id, day, units)
    select bi.id, d.day, d.units from bench_shipped_days d join bench_items bi on bi.g = d.g`)],
  ['movement totals', "delete from list_counts where list = 'movements'",
    `insert into list_counts (list, manufacturer_id, status, n)
     select 'movements', manufacturer_id, movement_type, count(*) from inventory_movements group by 2, 3`],
  ], [
  ['item look-alike index', buildIndexes('items', TYPO_INDEX)],
  ['customers', `
    insert into customers (account_number, name, address_line_1, city, state, zip_code)
    select 'C' || lpad(g::text, 5, '0'), (array['Acme','Summit','Harbor','Pioneer','Valley','Granite','Lakeside','Metro'])[1 + g % 8]
      || ' ' || (array['Supply','Hardware','Industrial','Plumbing','Electric'])[1 + (g / 8) % 5] || ' ' || g,
      g || ' Commerce Dr', (array['Springfield','Peoria','Joliet','Madison','Dayton'])[1 + g % 5], 'IL', lpad((60000 + g)::text, 5, '0')
    from generate_series(1, ${CUSTOMERS}) g`],
  // Orders over two years, most of them done: 10% still open (entered, released, partial), then shipped,
  // billed, closed and cancelled. Each holds two lines of its partner's items; generated lines commit no stock.
  ['orders',
    'create temp table bench_customers as select row_number() over (order by account_number)::int k, id, name from customers',
    `create temp table bench_orders as
      select o, gen_random_uuid() id, (o % ${MANUFACTURERS}) + 1 mfg_k, 1 + (o * 7) % ${CUSTOMERS} cust_k,
        now() - (${ORDERS} - o) * interval '${(730 * 86400) / ORDERS} seconds' ts,
        case when o % 100 < 5 then 'entered' when o % 100 < 8 then 'released' when o % 100 < 10 then 'partial'
             when o % 100 < 30 then 'shipped' when o % 100 < 35 then 'billed' when o % 100 < 95 then 'closed' else 'cancelled' end status
      from generate_series(1, ${ORDERS}) o`,
    ...withoutIndexes('orders', `insert into orders (id, manufacturer_id, customer_id, status, priority, customer_po_number, order_date, ship_to_name,
       ship_to_address_1, ship_to_city, ship_to_state, ship_to_zip, line_count, total_extended_price, release_number,
       original_release_number, released_at, shipped_at, created_at, updated_at)
     select bo.id, mf.id, c.id, bo.status, (array['normal','normal','normal','high','rush'])[1 + bo.o % 5], 'PO-' || (100000 + bo.o),
       bo.ts::date, c.name, bo.cust_k || ' Commerce Dr', 'Springfield', 'IL', '62701', 2, 0,
       case when bo.status not in ('entered', 'cancelled') then row_number() over (partition by bo.mfg_k, bo.status not in ('entered', 'cancelled') order by bo.o) end,
       case when bo.status not in ('entered', 'cancelled') then row_number() over (partition by bo.status not in ('entered', 'cancelled') order by bo.o) end,
       case when bo.status not in ('entered', 'cancelled') then bo.ts + interval '1 hour' end,
       case when bo.status in ('shipped', 'billed', 'closed') then bo.ts + (2 + bo.o % 72) * interval '1 hour' end, bo.ts, bo.ts
     from bench_orders bo
     join bench_mfgs mf on mf.k = bo.mfg_k
     join bench_customers c on c.k = bo.cust_k
     order by bo.o`,
    // Item g belongs to partner (g % 50) + 1: g = 50m + k - 1 picks items of partner k.
    ...withoutIndexes('order_lines', `insert into order_lines (order_id, item_id, line_number, item_number_display, item_description, qty_ordered, qty_shipped,
       qty_warehouse, qty_direct, qty_committed, fulfillment_source, unit_price, price_override, discount_pct, extended_price,
       unit_weight, unit_of_measure, created_at, updated_at)
     select bo.id, i.id, j, i.item_number_display, i.description, q.qty,
       case when bo.status in ('shipped', 'billed', 'closed') then q.qty else 0 end, q.qty, 0, 0, 'warehouse',
       coalesce(i.price_1, 0), false, 0, q.qty * coalesce(i.price_1, 0), i.unit_weight, i.selling_uom, bo.ts, bo.ts
     from bench_orders bo
     cross join generate_series(1, 2) j
     join bench_items bi on bi.g = (1 + (bo.o * 37 + j * 101) % ${ITEMS / MANUFACTURERS - 1}) * ${MANUFACTURERS} + bo.mfg_k - 1
     join items i on i.id = bi.id
     cross join lateral (select 1 + (bo.o + j) % 12 qty) q`),
    `update orders o set total_extended_price = t.total from (select order_id, sum(extended_price) total from order_lines group by order_id) t
      where t.order_id = o.id`),
    `insert into release_counters (manufacturer_id, last_number)
      select manufacturer_id, max(release_number) from orders where release_number is not null group by manufacturer_id`,
    `update release_counters set last_number = (select max(original_release_number) from orders) where manufacturer_id is null`,
    "select setval('order_number_seq', (select max(order_number) from orders))"],
  // Each order that shipped was picked and shipped in one batch of all its lines, picked in full: the pick-batch list
  // and the order-fulfillment report read them.
  ['pick batches', ...withoutIndexes('pick_batches', `insert into pick_batches (order_id, manufacturer_id, batch_number, status,
       packed_at, tracking_number, tracking_carrier, tracking_captured_at, completed_at, shipped_at, shipped_lines,
       shipped_lines_in_full, shipped_units_to_pick, shipped_units_picked, created_at, updated_at)
     select o.id, o.manufacturer_id, pick_batch_number(o.n), 'shipped',
       o.shipped_at - interval '30 minutes', '1Z' || o.order_number, 'ups', o.shipped_at - interval '20 minutes',
       o.shipped_at - interval '1 hour', o.shipped_at, l.lines, l.lines, l.units, l.units, o.released_at, o.shipped_at
     from (select *, row_number() over (order by order_number) n from orders where shipped_at is not null) o
     join (select order_id, count(*) lines, sum(qty_ordered) units from order_lines group by order_id) l on l.order_id = o.id
     order by o.order_number`),
    ...withoutIndexes('pick_batch_lines', `insert into pick_batch_lines (pick_batch_id, order_line_id, item_id, qty_to_pick, qty_picked,
       status, pack_verified_at, line_number, item_number_display, item_description, unit_of_measure, created_at, updated_at)
     select b.id, l.id, l.item_id, l.qty_ordered, l.qty_ordered, 'picked', b.packed_at, l.line_number, l.item_number_display,
       l.item_description, l.unit_of_measure, b.created_at, b.shipped_at
     from pick_batches b join order_lines l on l.order_id = b.order_id`),
    "select setval('pick_batch_number_seq', (select count(*) from pick_batches))",
    // One shipped batch in 17 met a short pick on its first line; one exception in 20 is still open.
    `insert into pick_exceptions (kind, status, manufacturer_id, item_id, order_id, order_line_id, pick_batch_id, pick_batch_line_id,
       qty_short, short_reason, created_at, updated_at)
     select 'short_pick', case when b.n % 20 = 0 then 'open' else 'reviewed' end, b.manufacturer_id, l.item_id, b.order_id,
       l.order_line_id, b.id, l.id, 1, 'not in the bin', b.created_at, b.created_at
     from (select id, manufacturer_id, order_id, created_at, row_number() over (order by created_at) n from pick_batches) b
     join (select distinct on (pick_batch_id) id, pick_batch_id, item_id, order_line_id from pick_batch_lines order by pick_batch_id, id) l
       on l.pick_batch_id = b.id
     where b.n % 17 = 0`,
    // Each exception's order block, made with it: open with the open ones (one in four of them waiting for the supply
    // partner), resolved with the reviewed ones.
    `insert into order_blocks (order_id, kind, status, short_pick_exception_id, awaiting_supply_partner_at, awaiting_supply_partner_note,
       resolution_disposition, resolved_at, created_at, updated_at)
     select e.order_id, e.kind, case when e.status = 'open' then 'open' else 'resolved' end, e.id,
       case when e.status = 'open' and e.n % 4 = 0 then e.created_at end,
       case when e.status = 'open' and e.n % 4 = 0 then 'asked the partner for a credit' end,
       case when e.status = 'open' then null else 'backorder' end, case when e.status = 'open' then null else e.created_at end,
       e.created_at, e.created_at
     from (select *, row_number() over (partition by status order by created_at) n from pick_exceptions) e`],
  // Receipts, nearly all posted, the newest few drafts: the receiving list reads them.
  ['receiving', ...withoutIndexes('receiving_batches', `insert into receiving_batches (manufacturer_id, batch_number, status,
       received_date, posted_date, created_at, updated_at)
     select m.id, 'RB' || lpad(n::text, 7, '0'), case when n > ${RECEIPTS} - 50 then 'draft' else 'posted' end,
       (now() - make_interval(secs => (${RECEIPTS} - n) * (63072000.0 / ${RECEIPTS})))::date,
       case when n > ${RECEIPTS} - 50 then null else (now() - make_interval(secs => (${RECEIPTS} - n) * (63072000.0 / ${RECEIPTS})))::date end,
       now() - make_interval(secs => (${RECEIPTS} - n) * (63072000.0 / ${RECEIPTS})), now()
     from generate_series(1, ${RECEIPTS}) n
     join (select id, row_number() over (order by code) - 1 k from manufacturers) m on m.k = n % ${MANUFACTURERS}`),
    // Each line's item is the partner's k-th; k is computed from the partner's item count before the join, so the
    // join is an equality on (partner, k): with the count on the item's side, the planner joined on the partner alone
    // and filtered, 4,000 receipts by 20,000 items a partner (880 s at 1,000,000 items, stop 51; now seconds).
    ...withoutIndexes('receiving_lines', `insert into receiving_lines (batch_id, item_id, qty_received, item_number_display, item_description)
     select b.id, i.id, 10 + j, i.item_number_display, i.description
     from (select id, manufacturer_id, row_number() over (order by batch_number) n from receiving_batches) b
     cross join generate_series(0, 2) j
     join (select manufacturer_id, count(*) c from items group by 1) mc on mc.manufacturer_id = b.manufacturer_id
     join (select id, manufacturer_id, item_number_display, description,
             row_number() over (partition by manufacturer_id order by id) - 1 k from items) i
       on i.manufacturer_id = b.manufacturer_id and i.k = (b.n * 3 + j) % mc.c`)],
  // The delivery log of one subscription: 30 days, one in a hundred failed and one in a thousand dead.
  ['delivery log', `select wms_month_partitions('webhook_deliveries', (now() - interval '30 days')::date, now()::date)`,
    `insert into webhook_subscriptions (url, event_kinds, secret_sealed, is_active) values ('${LOG_SUBSCRIPTION_URL}', '{*}', 'bench', false)`,
    ...withoutIndexes('webhook_deliveries', `insert into webhook_deliveries (subscription_id, event_seq, event_id, event_kind, status, attempts,
       last_status_code, delivered_at, next_attempt_at, created_at, updated_at)
     select s.id, n, gen_random_uuid(), 'inventory.adjusted',
       case when n % 1000 = 7 then 'dead' when n % 100 = 3 then 'failed' else 'delivered' end, 1,
       case when n % 100 = 3 or n % 1000 = 7 then 500 else 200 end,
       case when n % 100 = 3 or n % 1000 = 7 then null else t end, t, t, t
     from webhook_subscriptions s, generate_series(1, ${DELIVERIES}) n,
       lateral (select now() - make_interval(secs => (${DELIVERIES} - n) * (2592000.0 / ${DELIVERIES})) t) moment
     where s.url = '${LOG_SUBSCRIPTION_URL}'`)],
  // The load runs with triggers off (session_replication_role), so the trigger that keeps item_stock_state equal to
  // items did not fire: copy it whole once items are final, and check that it matches.
  ['stock state and list totals', 'truncate item_stock_state',
    `insert into item_stock_state (item_id, manufacturer_id, status, item_number_normalized, qty_on_hand, qty_available,
       reorder_level, price_1, date_last_movement, units_shipped_year)
     select id, manufacturer_id, status, item_number_normalized, qty_on_hand, qty_available, reorder_level, price_1,
       date_last_movement, units_shipped_year
     from items`,
    `do $$ begin
       if exists (select 1 from items i full join item_stock_state s on s.item_id = i.id
         where (i.id, i.manufacturer_id, i.status, i.item_number_normalized, i.qty_on_hand, i.qty_available, i.reorder_level,
                i.price_1, i.date_last_movement, i.units_shipped_year)
           is distinct from (s.item_id, s.manufacturer_id, s.status, s.item_number_normalized, s.qty_on_hand, s.qty_available,
                s.reorder_level, s.price_1, s.date_last_movement, s.units_shipped_year)) then
         raise exception 'item_stock_state does not match items';
       end if;
     end $$`,
    // The list totals (migration 0017) are kept by triggers that did not fire either: count them once, as the triggers
    // would have.
    "delete from list_counts where list <> 'movements'",
    `insert into list_counts (list, manufacturer_id, status, flags, n)
     select 'items', manufacturer_id, status, item_stock_flags(qty_on_hand, qty_available, reorder_level, price_1, units_shipped_year), count(*)
     from item_stock_state group by 2, 3, 4`,
    `insert into list_counts (list, manufacturer_id, status, moved_on, n)
     select 'items_moved', manufacturer_id, status, counted_movement_day(date_last_movement), count(*)
     from item_stock_state where counted_movement_day(date_last_movement) is not null group by 2, 3, 4`,
    `insert into list_counts (list, manufacturer_id, status, flags, n)
     select 'orders', manufacturer_id, status, order_priority_flag(priority), count(*) from orders group by 2, 3, 4`,
    `insert into list_counts (list, manufacturer_id, status, n)
     select 'pick_batches', manufacturer_id, status, count(*) from pick_batches group by 2, 3`,
    `insert into list_counts (list, manufacturer_id, status, n)
     select 'receiving', manufacturer_id, status, count(*) from receiving_batches group by 2, 3`,
    `insert into list_counts (list, manufacturer_id, status, n)
     select 'exceptions', manufacturer_id, status, count(*) from pick_exceptions group by 2, 3`,
    `insert into list_counts (list, manufacturer_id, status, n)
     select 'deliveries', subscription_id, status, count(*) from webhook_deliveries group by 2, 3`,
    // And the location list's stock figures (migration 0046).
    'select recount_location_stock()'],
  ]] },
  // Once both lanes are done: the kept year (planned with the items) holds what the ledger's shipments of the year hold.
  ['shipped year check', `do $$ begin
     if (select coalesce(sum(units), 0) from item_shipped_days) <> (select coalesce(-sum(quantity), 0) from inventory_movements
         where movement_type = 'shipment' and performed_at >= shipped_year_began())
       or (select coalesce(sum(units), 0) from item_shipped_days) <> (select coalesce(sum(units_shipped_year), 0) from items) then
       raise exception 'the kept year of shipments does not match the ledger';
     end if;
   end $$`],
  // VACUUM as well as ANALYZE: freshly loaded pages have no visibility map, which would slow the first reads.
  ['vacuum analyze', `vacuum (analyze) manufacturers, locations, items, item_stock_state, item_shipped_days, item_aliases, item_number_suffixes, item_locations, location_stock_counts, inventory_movements, customers, orders, order_lines, pick_batches, pick_batch_lines, pick_exceptions, order_blocks, receiving_batches, receiving_lines, webhook_deliveries`],
  ['drop plan tables', `do $$ declare r record; begin
     for r in select tablename from pg_tables where schemaname = 'public' and tablename like 'bench\\_%' loop
       execute format('drop table %I', r.tablename); end loop; end $$`],
];

/** Runs steps in order on one connection of the pool, set up for a bulk load. */
async function runOnOneConnection(db: Kysely<DB>, steps: Step[], timings: Generated['timings'], log: (line: string) => void) {
  await db.connection().execute(async (conn) => {
    await sql`set synchronous_commit = off`.execute(conn);
    await sql`set work_mem = '256MB'`.execute(conn);
    await sql`set maintenance_work_mem = '256MB'`.execute(conn);
    // Skips per-row foreign-key triggers (3 per movement); the generated keys are consistent by construction.
    // Needs a superuser: without one the checks simply run.
    await sql`set session_replication_role = replica`.execute(conn).catch(() => log('  (not superuser: foreign keys checked row by row)'));
    for (const [step, ...statements] of steps) {
      const started = performance.now();
      for (const statement of statements) await sql.raw(statement).execute(conn);
      const seconds = Math.round(performance.now() - started) / 1000;
      timings.push({ step, seconds });
      log(`  ${step.padEnd(28)} ${seconds.toFixed(1).padStart(6)} s`);
    }
    await sql`set session_replication_role = origin`.execute(conn).catch(() => {});
  });
}

/** The steps in order; lanes side by side, each on its own connection (the pool holds one per lane). */
async function runSteps(db: Kysely<DB>, timings: Generated['timings'], log: (line: string) => void): Promise<void> {
  let run: Step[] = [];
  for (const entry of STEPS) {
    if (!('lanes' in entry)) {
      run.push(entry);
      continue;
    }
    await runOnOneConnection(db, run, timings, log);
    run = [];
    const started = performance.now();
    // Both lanes end before a failure of one is thrown: none goes on loading into a database the caller drops.
    const ended = await Promise.allSettled(entry.lanes.map((lane) => runOnOneConnection(db, lane, timings, log)));
    for (const lane of ended) if (lane.status === 'rejected') throw lane.reason;
    log(`  ${'(side by side)'.padEnd(28)} ${((performance.now() - started) / 1000).toFixed(1).padStart(6)} s`);
  }
  await runOnOneConnection(db, run, timings, log);
}

/** Migrates the empty database at url, fills it, and creates the admin whose key it returns. */
export async function generate(url: string, log: (line: string) => void = console.log): Promise<Generated> {
  const database = connectPostgres(url, { poolSize: 2, statementTimeoutMs: 0 });
  const started = performance.now();
  const timings: Generated['timings'] = [];
  try {
    await migrate(database.db);
    timings.push({ step: 'migrate', seconds: Math.round(performance.now() - started) / 1000 });
    log(`  ${'migrate'.padEnd(28)} ${timings[0]!.seconds.toFixed(1).padStart(6)} s`);
    await runSteps(database.db, timings, log);
    const adminKey = generateApiKey();
    const first = await ensureFirstAdmin(database.db, adminKey);
    if (!first.created) throw new Error('the bench database already has users: give generate() an empty database');
    const totalSeconds = (performance.now() - started) / 1000;
    log(`  ${'total'.padEnd(28)} ${totalSeconds.toFixed(1).padStart(6)} s`);
    return { adminKey, timings, totalSeconds };
  } finally {
    await database.close();
  }
}

export interface SampleItem {
  id: string;
  item_number_display: string;
  item_number_normalized: string;
}

/** Active items the requests rotate over; ordered by a hash of the generated numbers, so every run picks the same ones. */
export async function sampleItems(url: string, count: number): Promise<SampleItem[]> {
  const database = connectPostgres(url, { poolSize: 1, statementTimeoutMs: 0 });
  try {
    const result = await sql<SampleItem>`select id, item_number_display, item_number_normalized from items
      where status = 'active' order by md5(item_number_normalized) limit ${count}`.execute(database.db);
    return result.rows;
  } finally {
    await database.close();
  }
}

/** Orders the detail reads rotate over, chosen the same way. */
export async function sampleOrders(url: string, count: number): Promise<string[]> {
  const database = connectPostgres(url, { poolSize: 1, statementTimeoutMs: 0 });
  try {
    const result = await sql<{ id: string }>`select id from orders order by md5(id::text) limit ${count}`.execute(database.db);
    return result.rows.map((row) => row.id);
  } finally {
    await database.close();
  }
}

/** The subscription of the generated delivery log; null on a database generated before it was. */
export async function logSubscription(url: string): Promise<string | null> {
  const database = connectPostgres(url, { poolSize: 1, statementTimeoutMs: 0 });
  try {
    const result = await sql<{ id: string }>`select id from webhook_subscriptions where url = ${LOG_SUBSCRIPTION_URL}`.execute(database.db);
    return result.rows[0]?.id ?? null;
  } finally {
    await database.close();
  }
}

// Alone: node bench/generate.ts postgres://.../empty_db  (prints the admin key)
if (import.meta.main) {
  const url = process.argv[2];
  if (!url) throw new Error('usage: node bench/generate.ts postgres://user@host:5432/empty_database');
  const { adminKey } = await generate(url);
  console.log(`admin key: ${adminKey}`);
}
