-- The pick-batch list in proportion to its page. At the bench's 170,000 batches (one per order shipped) the list
-- without a filter answered 21 requests/s at p50 366 ms: it sorted every batch to find the newest 25, and its exact
-- total counted every one (130-140 ms, as did the count of the shipped ones).

-- The newest first along an index (the status and partner indexes serve those filters).
create index pick_batches_created_idx on pick_batches (created_at desc, id desc);

-- The total from counts kept as the order list's are (migration 0017; docs/decisions.md, "List totals"): by partner
-- and status.
alter table list_counts drop constraint list_counts_list_check,
  add constraint list_counts_list_check check (list in ('orders', 'items', 'movements', 'items_moved', 'events', 'pick_batches'));

-- Statement-level with transition tables, as count_orders: one insert per statement, grouped by partner and status,
-- nothing when no batch changed status (staging, parcels, tracking).
create function count_pick_batches() returns trigger language plpgsql as $$
begin
  if tg_op = 'INSERT' then
    insert into list_counts (list, manufacturer_id, status, n)
    select 'pick_batches', manufacturer_id, status, count(*) from new_rows group by 2, 3;
  elsif tg_op = 'DELETE' then
    insert into list_counts (list, manufacturer_id, status, n)
    select 'pick_batches', manufacturer_id, status, -count(*) from old_rows group by 2, 3;
  else
    insert into list_counts (list, manufacturer_id, status, n)
    select 'pick_batches', manufacturer_id, status, sum(n) from (
      select manufacturer_id, status, 1 as n from new_rows
      union all
      select manufacturer_id, status, -1 from old_rows
    ) d group by manufacturer_id, status having sum(n) <> 0;
  end if;
  return null;
end $$;

-- No batch may be written between the counts taken below and the triggers: the lock holds writers off until this
-- commits. (No fold can hold a pick_batches row yet: there were none.)
lock table pick_batches in share row exclusive mode;

create trigger pick_batches_count_insert after insert on pick_batches
  referencing new table as new_rows for each statement execute function count_pick_batches();
create trigger pick_batches_count_update after update on pick_batches
  referencing old table as old_rows new table as new_rows for each statement execute function count_pick_batches();
create trigger pick_batches_count_delete after delete on pick_batches
  referencing old table as old_rows for each statement execute function count_pick_batches();
create trigger pick_batches_count_truncate after truncate on pick_batches
  for each statement execute function forget_list_counts('pick_batches');

insert into list_counts (list, manufacturer_id, status, n)
select 'pick_batches', manufacturer_id, status, count(*) from pick_batches group by 2, 3;
