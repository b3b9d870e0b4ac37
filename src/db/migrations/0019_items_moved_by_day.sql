-- The item list's movement windows (movement=30d: not moved in 30 days) from maintained counts too (docs/decisions.md,
-- "List totals"). No total kept once can follow now(), so the database keeps how many items last moved on each day
-- (UTC) of the last 400: a window's total is the item total less the items moved after the window's first day, less
-- those moved on that day after the window began (counted: one day's items, read from an index). Counted whole, the
-- window read most of item_stock_state: 112-116 ms at 1,000,000 items (bench `plans`).

-- list_counts keys gain the day of last movement: a real day for 'items_moved', -infinity for every other list.
alter table list_counts add column moved_on date not null default '-infinity',
  drop constraint list_counts_list_check,
  add constraint list_counts_list_check check (list in ('orders', 'items', 'movements', 'items_moved'));
drop index list_counts_key_idx;
create index list_counts_key_idx on list_counts (list, manufacturer_id, status, flags, moved_on) include (n);
-- A window reads the days after its first, for all partners or one.
create index list_counts_moved_idx on list_counts (moved_on, status, manufacturer_id) include (n)
  where list = 'items_moved';
-- With a row per partner, status and day the table holds tens of thousands of rows, and the fold, which looked for keys
-- with several rows by grouping all of them, took 15-40 ms every 2 s on every instance. Rows the fold writes are
-- marked folded; it looks only at the keys of the rows written since (by the triggers), through this index.
alter table list_counts add column folded boolean not null default false;
create index list_counts_unfolded_idx on list_counts (list, manufacturer_id, status, flags, moved_on) where not folded;

-- The first day counted: the longest window is 365 days, and a margin. Earlier days are never read, so they are not
-- written, and the fold deletes them as they age (src/db/list-counts.ts).
create function movement_day_horizon() returns date language sql stable parallel safe as $$
  select ((now() - interval '400 days') at time zone 'UTC')::date
$$;

-- The day (UTC) an item's last movement counts on, or null before the horizon (or never moved).
create function counted_movement_day(moved_at timestamptz) returns date language sql stable parallel safe as $$
  select case when (moved_at at time zone 'UTC')::date >= movement_day_horizon() then (moved_at at time zone 'UTC')::date end
$$;

-- Row triggers, not 0017's statement trigger: the WHEN below lets through only a change of day (or of partner or
-- status), so a commitment, and every movement of an item that already moved that day, pays nothing. Folded into the
-- statement trigger, every stock update paid 0.1 ms more (500 ten-row updates: 400 ms against 340).
create function count_item_moved_day() returns trigger language plpgsql as $$
begin
  if tg_op <> 'INSERT' and counted_movement_day(old.date_last_movement) is not null then
    insert into list_counts (list, manufacturer_id, status, moved_on, n)
    values ('items_moved', old.manufacturer_id, old.status, counted_movement_day(old.date_last_movement), -1);
  end if;
  if tg_op <> 'DELETE' and counted_movement_day(new.date_last_movement) is not null then
    insert into list_counts (list, manufacturer_id, status, moved_on, n)
    values ('items_moved', new.manufacturer_id, new.status, counted_movement_day(new.date_last_movement), 1);
  end if;
  return null;
end $$;

-- A truncate of item_stock_state forgets both kinds of item count.
create or replace function forget_list_counts() returns trigger language plpgsql as $$
begin
  delete from list_counts where list = any(tg_argv);
  return null;
end $$;
drop trigger item_stock_state_count_truncate on item_stock_state;
create trigger item_stock_state_count_truncate after truncate on item_stock_state
  for each statement execute function forget_list_counts('items', 'items_moved');

-- No write may slip between the counts taken below and the new triggers: the lock holds writers off until this commits.
lock table item_stock_state in share row exclusive mode;
create trigger item_stock_state_moved_day_insert after insert on item_stock_state for each row
  when (new.date_last_movement is not null)
  execute function count_item_moved_day();
create trigger item_stock_state_moved_day_update after update on item_stock_state for each row
  when ((old.manufacturer_id, old.status, (old.date_last_movement at time zone 'UTC')::date)
        is distinct from (new.manufacturer_id, new.status, (new.date_last_movement at time zone 'UTC')::date))
  execute function count_item_moved_day();
create trigger item_stock_state_moved_day_delete after delete on item_stock_state for each row
  when (old.date_last_movement is not null)
  execute function count_item_moved_day();
insert into list_counts (list, manufacturer_id, status, moved_on, n)
select 'items_moved', manufacturer_id, status, counted_movement_day(date_last_movement), count(*)
from item_stock_state where counted_movement_day(date_last_movement) is not null group by 2, 3, 4;
