-- The exception list's exact total from counts kept by partner and status, as the other lists' are (migration 0017;
-- docs/decisions.md, "List totals"). Exceptions are never deleted: a warehouse shipping 250 orders a day with one
-- exception in 17 keeps 10,000 after two years, and counting them on every page was a read of them all. A filter by
-- kind, order, item or the awaiting flag still counts (those are an order's or an item's few, or a choice of them).
alter table list_counts drop constraint list_counts_list_check,
  add constraint list_counts_list_check check (list in ('orders', 'items', 'movements', 'items_moved', 'events', 'pick_batches', 'deliveries', 'receiving', 'exceptions'));

-- No exception may be written between the counts taken below and the triggers: the lock holds writers off until this
-- commits.
lock table pick_exceptions in share row exclusive mode;

create trigger pick_exceptions_count_insert after insert on pick_exceptions
  referencing new table as new_rows for each statement execute function count_by_partner_and_status('exceptions');
create trigger pick_exceptions_count_update after update on pick_exceptions
  referencing old table as old_rows new table as new_rows for each statement execute function count_by_partner_and_status('exceptions');
create trigger pick_exceptions_count_delete after delete on pick_exceptions
  referencing old table as old_rows for each statement execute function count_by_partner_and_status('exceptions');
create trigger pick_exceptions_count_truncate after truncate on pick_exceptions
  for each statement execute function forget_list_counts('exceptions');

insert into list_counts (list, manufacturer_id, status, n)
select 'exceptions', manufacturer_id, status, count(*) from pick_exceptions group by 2, 3;

-- The page's ids from the list's index alone: ordered as the list (newest first, then id), carrying what the status,
-- kind and partner filters test. The index by time alone made a deep page read the exceptions it skipped from the
-- table (page 50: 2,450 rows read to skip, and sorted again by id).
drop index pick_exceptions_list_idx;
create index pick_exceptions_list_idx on pick_exceptions (created_at desc, id desc) include (status, kind, manufacturer_id);
