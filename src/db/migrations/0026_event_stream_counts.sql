-- The poll's exact total (GET /shipments/events) from counts kept like the lists' totals (migration 0017;
-- docs/decisions.md, "List totals"): a count(*) of a stream read every event it still held, and a stream nobody
-- acknowledges (the warehouse's own, when only webhooks are used) holds every event written. Each insert into or delete
-- from event_inbox appends signed deltas per stream and kind in its own statement; the fold keeps a row per key.
alter table list_counts drop constraint list_counts_list_check,
  add constraint list_counts_list_check check (list in ('orders', 'items', 'movements', 'items_moved', 'events'));

-- A stream's key in list_counts (whose partner column is never null): the partner's id, or the nil uuid for the
-- warehouse's own stream (tenant 'warehouse', which no partner id can equal).
create function event_stream_key(tenant text) returns uuid language sql immutable parallel safe as $$
  select case when tenant = 'warehouse' then '00000000-0000-0000-0000-000000000000'::uuid else tenant::uuid end
$$;

-- Statement-level with transition tables, as count_orders: one insert per statement, grouped by stream and kind.
create function count_events() returns trigger language plpgsql as $$
begin
  if tg_op = 'INSERT' then
    insert into list_counts (list, manufacturer_id, status, n)
    select 'events', event_stream_key(tenant), kind, count(*) from new_rows group by 2, 3;
  elsif tg_op = 'DELETE' then
    insert into list_counts (list, manufacturer_id, status, n)
    select 'events', event_stream_key(tenant), kind, -count(*) from old_rows group by 2, 3;
  else
    insert into list_counts (list, manufacturer_id, status, n)
    select 'events', stream, kind, sum(n) from (
      select event_stream_key(tenant) as stream, kind, 1 as n from new_rows
      union all
      select event_stream_key(tenant), kind, -1 from old_rows
    ) d group by stream, kind having sum(n) <> 0;
  end if;
  return null;
end $$;

-- No write may slip between the counts taken below and the triggers: the lock holds writers off until this commits.
lock table event_inbox in share row exclusive mode;

create trigger event_inbox_count_insert after insert on event_inbox
  referencing new table as new_rows for each statement execute function count_events();
create trigger event_inbox_count_update after update on event_inbox
  referencing old table as old_rows new table as new_rows for each statement execute function count_events();
create trigger event_inbox_count_delete after delete on event_inbox
  referencing old table as old_rows for each statement execute function count_events();
create trigger event_inbox_count_truncate after truncate on event_inbox
  for each statement execute function forget_list_counts('events');

insert into list_counts (list, manufacturer_id, status, n)
select 'events', event_stream_key(tenant), kind, count(*) from event_inbox group by 2, 3;
