-- The order list's totals by priority too (docs/decisions.md, "List totals"): `priority=rush&status=open` was counted
-- over every open order's row (the open orders' index holds no priority): 100,000 rows read at 1,000,000 orders to
-- count 20,000, and once the open orders grew the whole table read (the bench's plan check after its load runs). An
-- order's maintained count now carries its priority as one bit in `flags` (normal 1, high 2, rush 4;
-- src/modules/orders/queries.ts names them in this order), so a total by partner, status and priority is a few
-- index rows, as the item list's stock filters are.

create function order_priority_flag(priority text) returns smallint language sql immutable parallel safe as $$
  select (case priority when 'normal' then 1 when 'high' then 2 when 'rush' then 4 else 0 end)::smallint
$$;

create or replace function count_orders() returns trigger language plpgsql as $$
begin
  if tg_op = 'INSERT' then
    insert into list_counts (list, manufacturer_id, status, flags, n)
    select 'orders', manufacturer_id, status, order_priority_flag(priority), count(*) from new_rows group by 2, 3, 4;
  elsif tg_op = 'DELETE' then
    insert into list_counts (list, manufacturer_id, status, flags, n)
    select 'orders', manufacturer_id, status, order_priority_flag(priority), -count(*) from old_rows group by 2, 3, 4;
  else
    insert into list_counts (list, manufacturer_id, status, flags, n)
    select 'orders', manufacturer_id, status, flags, sum(n) from (
      select manufacturer_id, status, order_priority_flag(priority) as flags, 1 as n from new_rows
      union all
      select manufacturer_id, status, order_priority_flag(priority), -1 from old_rows
    ) d group by manufacturer_id, status, flags having sum(n) <> 0;
  end if;
  return null;
end $$;

-- No fold may be under way (foldListCounts in src/db/list-counts.ts takes ADVISORY_LOCKS.foldListCounts): a fold that
-- began before would write its folded rows after the delete below had looked, and they would stay beside the new
-- ones, each total counted twice (later folds skip their round until this commits). And no order may be written
-- between the counts dropped and those taken anew.
select pg_advisory_xact_lock(4711003);
lock table orders in share row exclusive mode;
delete from list_counts where list = 'orders';
insert into list_counts (list, manufacturer_id, status, flags, n)
select 'orders', manufacturer_id, status, order_priority_flag(priority), count(*) from orders group by 2, 3, 4;
