-- The item list's velocity (fast, slow, dead: units shipped in the year that ends today, its 365 UTC days) from a kept
-- sum per item instead of the ledger (docs/decisions.md, Items): `velocity=fast` summed every item's shipments of the
-- year before its first row, 252 ms at 205,886 shipments (slow 738 ms), against the lists' 50 ms.
-- Each shipment adds its units to the item's day (item_shipped_days) and to the item's sum (units_shipped_year, on
-- items beside the stock it ships from, so the same HOT update carries it, and copied to item_stock_state with the
-- other stock columns, where partial indexes answer each bucket). When the day turns, the year's first day moves:
-- advanceShippedYear (src/domain/shipped-year.ts) takes the days that left it off their items' sums, and until it has,
-- shipped_year.starts_on says the sums are of an earlier year and the list reads the ledger, as before.

create table item_shipped_days (
  item_id uuid not null references items (id) on delete cascade,
  day date not null,
  units integer not null,
  primary key (item_id, day)
);
-- The days that leave the year, read when it moves.
create index item_shipped_days_day_idx on item_shipped_days (day);

-- One row: the first day the kept sums count.
create table shipped_year (
  only_row boolean primary key default true check (only_row),
  starts_on date not null
);

-- The first day of the year that ends today (UTC), and the moment it began: the year of a ledger row's performed_at.
create function shipped_year_start() returns date language sql stable parallel safe as $$
  select (now() at time zone 'UTC')::date - 364
$$;
create function shipped_year_began() returns timestamptz language sql stable parallel safe as $$
  select shipped_year_start()::timestamp at time zone 'UTC'
$$;

alter table items add column units_shipped_year integer not null default 0;
alter table item_stock_state add column units_shipped_year integer not null default 0;

create or replace function mirror_item_stock_state_rows() returns trigger language plpgsql as $$
begin
  if tg_op = 'INSERT' then
    insert into item_stock_state (item_id, manufacturer_id, status, item_number_normalized, qty_on_hand, qty_available,
      reorder_level, price_1, date_last_movement, units_shipped_year)
    select id, manufacturer_id, status, item_number_normalized, qty_on_hand, qty_available, reorder_level, price_1,
      date_last_movement, units_shipped_year
    from new_rows;
  else
    update item_stock_state s set manufacturer_id = n.manufacturer_id, status = n.status,
      item_number_normalized = n.item_number_normalized, qty_on_hand = n.qty_on_hand,
      qty_available = n.qty_available, reorder_level = n.reorder_level, price_1 = n.price_1,
      date_last_movement = n.date_last_movement, units_shipped_year = n.units_shipped_year
    from new_rows n
    where s.item_id = n.id;
  end if;
  return null;
end $$;

-- The maintained item totals (migration 0017) gain the velocity as one bit each: fast 32, slow 64, dead 128
-- (src/modules/items/queries.ts), so `velocity=` alone, or with stock filters, is a total of a few index rows.
create function item_stock_flags(qty_on_hand integer, qty_available integer, reorder_level integer, price_1 numeric,
  units_shipped_year integer)
returns smallint language sql immutable parallel safe as $$
  select (item_stock_flags(qty_on_hand, qty_available, reorder_level, price_1)
    | (case when units_shipped_year >= 52 then 32 when units_shipped_year > 0 then 64 else 128 end))::smallint
$$;

create or replace function count_items() returns trigger language plpgsql as $$
begin
  if tg_op = 'INSERT' then
    insert into list_counts (list, manufacturer_id, status, flags, n)
    select 'items', manufacturer_id, status,
      item_stock_flags(qty_on_hand, qty_available, reorder_level, price_1, units_shipped_year), count(*)
    from new_rows group by 2, 3, 4;
  elsif tg_op = 'DELETE' then
    insert into list_counts (list, manufacturer_id, status, flags, n)
    select 'items', manufacturer_id, status,
      item_stock_flags(qty_on_hand, qty_available, reorder_level, price_1, units_shipped_year), -count(*)
    from old_rows group by 2, 3, 4;
  else
    insert into list_counts (list, manufacturer_id, status, flags, n)
    select 'items', manufacturer_id, status, flags, sum(n) from (
      select manufacturer_id, status,
        item_stock_flags(qty_on_hand, qty_available, reorder_level, price_1, units_shipped_year) as flags, 1 as n
      from new_rows
      union all
      select manufacturer_id, status,
        item_stock_flags(qty_on_hand, qty_available, reorder_level, price_1, units_shipped_year), -1
      from old_rows
    ) d group by manufacturer_id, status, flags having sum(n) <> 0;
  end if;
  return null;
end $$;

-- The fast and the slow movers in the list's number order, with its status. The dead ones (a fifth of the bench's
-- catalogue, most of a warehouse's long tail) are found along the number index a few rows per page row.
create index item_stock_state_fast_idx on item_stock_state (status, item_number_normalized, item_id)
  where units_shipped_year >= 52;
create index item_stock_state_slow_idx on item_stock_state (status, item_number_normalized, item_id)
  where units_shipped_year > 0 and units_shipped_year < 52;

-- The year counted anew from the ledger: here, and where shipments were written to the ledger directly (tests, an
-- operator's repair: docs/operations.md). Not while the warehouse ships: a shipment between its statements would be
-- lost or counted twice (the migration holds the writers off).
create function count_shipped_year() returns void language sql as $$
  delete from item_shipped_days;
  insert into item_shipped_days (item_id, day, units)
  select item_id, (performed_at at time zone 'UTC')::date, -sum(quantity)::int
  from inventory_movements
  where movement_type = 'shipment' and performed_at >= shipped_year_began()
  group by 1, 2;
  update items i set units_shipped_year = coalesce(d.units, 0)
  from items a left join (select item_id, sum(units)::int units from item_shipped_days group by 1) d on d.item_id = a.id
  where i.id = a.id and i.units_shipped_year <> coalesce(d.units, 0);
  insert into shipped_year (starts_on) values (shipped_year_start())
  on conflict (only_row) do update set starts_on = excluded.starts_on;
$$;

-- No fold may be under way (see migration 0032), and no item or stock written between the year counted and the totals
-- counted anew: the locks hold them off until this commits.
select pg_advisory_xact_lock(4711003);
lock table items, item_stock_state in share row exclusive mode;
select count_shipped_year();
delete from list_counts where list = 'items';
insert into list_counts (list, manufacturer_id, status, flags, n)
select 'items', manufacturer_id, status,
  item_stock_flags(qty_on_hand, qty_available, reorder_level, price_1, units_shipped_year), count(*)
from item_stock_state group by 2, 3, 4;
