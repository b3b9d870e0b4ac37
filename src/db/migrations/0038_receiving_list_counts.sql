-- The receiving list's exact total from counts kept as the other lists' are (migration 0017; docs/decisions.md, "List
-- totals"): by partner and status. Two years of a warehouse posting 55 receipts a day is 40,000 batches; counting them
-- on every page (3 ms of PostgreSQL's 3.3 a request) held the list to 354 requests/s at p99 72 ms.
alter table list_counts drop constraint list_counts_list_check,
  add constraint list_counts_list_check check (list in ('orders', 'items', 'movements', 'items_moved', 'events', 'pick_batches', 'deliveries', 'receiving'));

-- One trigger function for every list counted by partner and status alone (pick batches, migration 0034, and now
-- receipts), the list's name its argument: statement-level with transition tables, one insert per statement grouped
-- by partner and status, nothing when no row changed status (lines, inspection, notes). The name is a value, not part
-- of the statement, so PL/pgSQL keeps one plan per table as before (docs/decisions.md, "Batches and lines").
create function count_by_partner_and_status() returns trigger language plpgsql as $$
begin
  if tg_op = 'INSERT' then
    insert into list_counts (list, manufacturer_id, status, n)
    select tg_argv[0], manufacturer_id, status, count(*) from new_rows group by 2, 3;
  elsif tg_op = 'DELETE' then
    insert into list_counts (list, manufacturer_id, status, n)
    select tg_argv[0], manufacturer_id, status, -count(*) from old_rows group by 2, 3;
  else
    insert into list_counts (list, manufacturer_id, status, n)
    select tg_argv[0], manufacturer_id, status, sum(n) from (
      select manufacturer_id, status, 1 as n from new_rows
      union all
      select manufacturer_id, status, -1 from old_rows
    ) d group by manufacturer_id, status having sum(n) <> 0;
  end if;
  return null;
end $$;

-- The pick batches' triggers call it in place of their own copy.
create or replace trigger pick_batches_count_insert after insert on pick_batches
  referencing new table as new_rows for each statement execute function count_by_partner_and_status('pick_batches');
create or replace trigger pick_batches_count_update after update on pick_batches
  referencing old table as old_rows new table as new_rows for each statement execute function count_by_partner_and_status('pick_batches');
create or replace trigger pick_batches_count_delete after delete on pick_batches
  referencing old table as old_rows for each statement execute function count_by_partner_and_status('pick_batches');
drop function count_pick_batches();

-- No batch may be written between the counts taken below and the triggers: the lock holds writers off until this
-- commits.
lock table receiving_batches in share row exclusive mode;

create trigger receiving_batches_count_insert after insert on receiving_batches
  referencing new table as new_rows for each statement execute function count_by_partner_and_status('receiving');
create trigger receiving_batches_count_update after update on receiving_batches
  referencing old table as old_rows new table as new_rows for each statement execute function count_by_partner_and_status('receiving');
create trigger receiving_batches_count_delete after delete on receiving_batches
  referencing old table as old_rows for each statement execute function count_by_partner_and_status('receiving');
create trigger receiving_batches_count_truncate after truncate on receiving_batches
  for each statement execute function forget_list_counts('receiving');

insert into list_counts (list, manufacturer_id, status, n)
select 'receiving', manufacturer_id, status, count(*) from receiving_batches group by 2, 3;
