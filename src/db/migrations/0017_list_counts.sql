-- Exact totals of the busiest lists without counting their rows (docs/decisions.md, "List totals"): the order list by
-- partner and status, and the item list by partner, status and stock flags. A count(*) reads every matching row, so a
-- list of 50 cost as much as its total (10 ms for 20,000 items below their reorder level); these totals cost a few
-- index rows. Every change appends signed deltas in the changing statement's own transaction (insert only: writers
-- never wait for one another), a count is the sum of a key's rows read in the request's snapshot, and the service folds
-- each key's rows into one every few seconds (src/workers/list-counts.ts).

create table list_counts (
  list text not null check (list in ('orders', 'items')),
  manufacturer_id uuid not null,
  status text not null,
  -- items: the stock filters the item meets, one bit each (item_stock_flags); orders: 0.
  flags smallint not null default 0,
  n bigint not null
);
create index list_counts_key_idx on list_counts (list, manufacturer_id, status, flags) include (n);
-- Folded every few seconds: vacuum it as often, so the key index stays a few pages.
alter table list_counts set (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 1000);

-- The item list's stock filters as bits: negative 1, oversold 2, out_of_stock 4, below_reorder 8, missing_price 16
-- (src/modules/items/queries.ts names them in this order). Equal to the list's conditions on item_stock_state.
create function item_stock_flags(qty_on_hand integer, qty_available integer, reorder_level integer, price_1 numeric)
returns smallint language sql immutable parallel safe as $$
  select ((case when qty_on_hand < 0 then 1 else 0 end)
    | (case when qty_available < 0 then 2 else 0 end)
    | (case when qty_on_hand = 0 then 4 else 0 end)
    | (case when reorder_level > 0 and qty_available < reorder_level then 8 else 0 end)
    | (case when price_1 is null then 16 else 0 end))::smallint
$$;

-- Statement-level with transition tables: one insert per statement, grouped, and nothing when a change moved no row
-- between keys (most stock movements leave an item's flags as they were).
create function count_orders() returns trigger language plpgsql as $$
begin
  if tg_op = 'INSERT' then
    insert into list_counts (list, manufacturer_id, status, n)
    select 'orders', manufacturer_id, status, count(*) from new_rows group by manufacturer_id, status;
  elsif tg_op = 'DELETE' then
    insert into list_counts (list, manufacturer_id, status, n)
    select 'orders', manufacturer_id, status, -count(*) from old_rows group by manufacturer_id, status;
  else
    insert into list_counts (list, manufacturer_id, status, n)
    select 'orders', manufacturer_id, status, sum(n) from (
      select manufacturer_id, status, 1 as n from new_rows
      union all
      select manufacturer_id, status, -1 from old_rows
    ) d group by manufacturer_id, status having sum(n) <> 0;
  end if;
  return null;
end $$;

create function count_items() returns trigger language plpgsql as $$
begin
  if tg_op = 'INSERT' then
    insert into list_counts (list, manufacturer_id, status, flags, n)
    select 'items', manufacturer_id, status, item_stock_flags(qty_on_hand, qty_available, reorder_level, price_1), count(*)
    from new_rows group by 2, 3, 4;
  elsif tg_op = 'DELETE' then
    insert into list_counts (list, manufacturer_id, status, flags, n)
    select 'items', manufacturer_id, status, item_stock_flags(qty_on_hand, qty_available, reorder_level, price_1), -count(*)
    from old_rows group by 2, 3, 4;
  else
    insert into list_counts (list, manufacturer_id, status, flags, n)
    select 'items', manufacturer_id, status, flags, sum(n) from (
      select manufacturer_id, status, item_stock_flags(qty_on_hand, qty_available, reorder_level, price_1) as flags, 1 as n
      from new_rows
      union all
      select manufacturer_id, status, item_stock_flags(qty_on_hand, qty_available, reorder_level, price_1), -1 from old_rows
    ) d group by manufacturer_id, status, flags having sum(n) <> 0;
  end if;
  return null;
end $$;

create function forget_list_counts() returns trigger language plpgsql as $$
begin
  delete from list_counts where list = tg_argv[0];
  return null;
end $$;

-- No write may slip between the totals taken below and the triggers: the locks hold writers off until this commits.
lock table orders, item_stock_state in share row exclusive mode;

create trigger orders_count_insert after insert on orders referencing new table as new_rows
  for each statement execute function count_orders();
create trigger orders_count_update after update on orders referencing old table as old_rows new table as new_rows
  for each statement execute function count_orders();
create trigger orders_count_delete after delete on orders referencing old table as old_rows
  for each statement execute function count_orders();
create trigger orders_count_truncate after truncate on orders
  for each statement execute function forget_list_counts('orders');

create trigger item_stock_state_count_insert after insert on item_stock_state referencing new table as new_rows
  for each statement execute function count_items();
create trigger item_stock_state_count_update after update on item_stock_state
  referencing old table as old_rows new table as new_rows
  for each statement execute function count_items();
create trigger item_stock_state_count_delete after delete on item_stock_state referencing old table as old_rows
  for each statement execute function count_items();
create trigger item_stock_state_count_truncate after truncate on item_stock_state
  for each statement execute function forget_list_counts('items');

insert into list_counts (list, manufacturer_id, status, n)
select 'orders', manufacturer_id, status, count(*) from orders group by manufacturer_id, status;
insert into list_counts (list, manufacturer_id, status, flags, n)
select 'items', manufacturer_id, status, item_stock_flags(qty_on_hand, qty_available, reorder_level, price_1), count(*)
from item_stock_state group by 2, 3, 4;
