-- The delivery log's exact total (GET /webhooks/{id}/deliveries) from counts kept as the other lists' totals are
-- (migration 0017; docs/decisions.md, "List totals"): by subscription and status. A subscription to every event of a
-- busy warehouse holds its last 30 days of deliveries, about a million; counting them took 117 ms (a parallel read of
-- every delivery) and the log answered 13 requests/s at p50 659 ms, where its page took 0.4 ms.
alter table list_counts drop constraint list_counts_list_check,
  add constraint list_counts_list_check check (list in ('orders', 'items', 'movements', 'items_moved', 'events', 'pick_batches', 'deliveries'));

-- Keyed by the subscription in the key column (as the event counts key their stream). Statement-level with transition
-- tables, as count_pick_batches: one insert per statement grouped by subscription and status, nothing when no status
-- changed (a claim's lease, a retry that stays pending). Retention deletes a month's deliveries through the table
-- before it drops the month (src/db/partitions.ts), since a drop deletes no row. Rows moved out of the default
-- partition into a new month (wms_month_partition) are deleted and inserted on the partitions themselves, which fire
-- no statement trigger of the parent: the counts, by subscription and status, do not change, as they should not.
create function count_deliveries() returns trigger language plpgsql as $$
begin
  if tg_op = 'INSERT' then
    insert into list_counts (list, manufacturer_id, status, n)
    select 'deliveries', subscription_id, status, count(*) from new_rows group by 2, 3;
  elsif tg_op = 'DELETE' then
    insert into list_counts (list, manufacturer_id, status, n)
    select 'deliveries', subscription_id, status, -count(*) from old_rows group by 2, 3;
  else
    insert into list_counts (list, manufacturer_id, status, n)
    select 'deliveries', subscription_id, status, sum(n) from (
      select subscription_id, status, 1 as n from new_rows
      union all
      select subscription_id, status, -1 from old_rows
    ) d group by subscription_id, status having sum(n) <> 0;
  end if;
  return null;
end $$;

-- No delivery may be written between the counts taken below and the triggers: the lock holds writers off until this
-- commits.
lock table webhook_deliveries in share row exclusive mode;

create trigger webhook_deliveries_count_insert after insert on webhook_deliveries
  referencing new table as new_rows for each statement execute function count_deliveries();
create trigger webhook_deliveries_count_update after update on webhook_deliveries
  referencing old table as old_rows new table as new_rows for each statement execute function count_deliveries();
create trigger webhook_deliveries_count_delete after delete on webhook_deliveries
  referencing old table as old_rows for each statement execute function count_deliveries();
create trigger webhook_deliveries_count_truncate after truncate on webhook_deliveries
  for each statement execute function forget_list_counts('deliveries');

insert into list_counts (list, manufacturer_id, status, n)
select 'deliveries', subscription_id, status, count(*) from webhook_deliveries group by 2, 3;

-- A status's page along an index of its own: the failed and dead deliveries a receiver's outage leaves are what the
-- log is opened for, and among a million delivered ones the log's index read ~50,000 rows to find a page of dead ones
-- (164 requests/s, p50 59 ms).
create index webhook_deliveries_log_status_idx on webhook_deliveries (subscription_id, status, created_at desc, event_seq desc);
