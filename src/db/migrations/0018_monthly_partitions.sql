-- The movement ledger, the event outbox and the webhook delivery log grow without end: each becomes a table
-- range-partitioned by calendar month (UTC) of its time column. Range reads (reports, a ledger from..to, the delivery
-- log) scan only their months; retention (src/db/partitions.ts) drops a finished month whole instead of deleting rows;
-- vacuum and index builds work month by month.
--
-- PostgreSQL requires every unique key of a partitioned table to include its partition column, so the keys become
-- (id, <time>) and (seq, <time>). ids come from gen_random_uuid() and seq from one sequence, so each stays unique on its
-- own; a delivery's (subscription, event) pair stays unique because emit() writes the event and its deliveries in one
-- transaction, so they share the transaction's now(). Foreign keys to these tables go (a key must be unique on its
-- own): a count line's movement and an attempt's delivery are written by the service with the row they name.
--
-- Each table has a DEFAULT partition, so a write never fails for want of a month: rows of a month without its own
-- partition (back-dated data, a clock far off) land there and move to the month when it is created.

-- The partition of `parent` for the UTC month that contains `month`, created when missing: made beside the table,
-- given the rows of that month that sit in the default partition, then attached (attaching validates the new month
-- without holding the whole table, and the table's indexes are built on it). Returns its name when it made it.
create function wms_month_partition(parent text, month date) returns text language plpgsql as $$
declare
  first date := date_trunc('month', month)::date;
  name text := parent || '_' || to_char(first, 'YYYY_MM');
  lo timestamptz := first::timestamp at time zone 'UTC';
  hi timestamptz := (first + interval '1 month')::timestamp at time zone 'UTC';
  key text;
begin
  if to_regclass(name) is not null then return null; end if;
  select a.attname into key from pg_partitioned_table p
    join pg_attribute a on a.attrelid = p.partrelid and a.attnum = p.partattrs[0]
    where p.partrelid = parent::regclass;
  execute format('create table %I (like %I including defaults including constraints)', name, parent);
  execute format('with moved as (delete from %I where %I >= $1 and %I < $2 returning *) insert into %I select * from moved',
    parent || '_default', key, key, name) using lo, hi;
  execute format('alter table %I attach partition %I for values from (%L) to (%L)', parent, name, lo, hi);
  return name;
end $$;

-- Every month from `from_month` to `to_month`, both included; returns the names of those it made.
create function wms_month_partitions(parent text, from_month date, to_month date) returns setof text language sql as $$
  select made from (
    select wms_month_partition(parent, m::date) as made
    from generate_series(date_trunc('month', from_month), date_trunc('month', to_month), interval '1 month') m) months
  where made is not null
$$;

alter table cycle_count_lines drop constraint cycle_count_lines_movement_id_fkey;
alter table webhook_delivery_attempts drop constraint webhook_delivery_attempts_delivery_id_fkey;

-- Turns table `t` into one partitioned by month of `col`, with its columns, defaults, checks, rows and indexes, and every
-- month from its oldest row to three months ahead; its keys and foreign keys are made again below (a key must now
-- include `col`). `seq` names the sequence of its seq column, kept (not dropped with the old table) and owned by the
-- new one.
create function wms_partition_by_month(t text, col text, seq text) returns void language plpgsql as $$
declare
  old text := t || '_unpartitioned';
  oldest timestamptz;
  -- The definitions name the table as `t`: run after the old one is gone, they build on the new one (every month).
  indexes text[] := array(select i.indexdef from pg_indexes i where i.schemaname = current_schema() and i.tablename = t
    and not exists (select 1 from pg_constraint c where c.conname = i.indexname));
  definition text;
begin
  execute format('alter table %I rename to %I', t, old);
  if seq is not null then execute format('alter sequence %I owned by none', seq); end if;
  execute format('create table %I (like %I including defaults including constraints) partition by range (%I)', t, old, col);
  execute format('create table %I partition of %I default', t || '_default', t);
  execute format('select min(%I) from %I', col, old) into oldest;
  perform wms_month_partitions(t, coalesce(oldest, now())::date, (now() + interval '3 months')::date);
  execute format('insert into %I select * from %I', t, old);
  execute format('drop table %I', old);
  foreach definition in array indexes loop execute definition; end loop;
  if seq is not null then execute format('alter sequence %I owned by %I.seq', seq, t); end if;
end $$;

select wms_partition_by_month('inventory_movements', 'performed_at', 'inventory_movements_seq_seq');
select wms_partition_by_month('outbox_events', 'occurred_at', 'outbox_events_seq_seq');
select wms_partition_by_month('webhook_deliveries', 'created_at', null);
drop function wms_partition_by_month(text, text, text);

-- The movement ledger's keys.
alter table inventory_movements
  add primary key (id, performed_at),
  add constraint inventory_movements_seq_key unique (seq, performed_at),
  add foreign key (item_id) references items (id),
  add foreign key (manufacturer_id) references manufacturers (id),
  add foreign key (location_id) references locations (id);

-- The event outbox's.
alter table outbox_events
  add primary key (id, occurred_at),
  add constraint outbox_events_seq_key unique (seq, occurred_at);

-- The webhook delivery log's.
alter table webhook_deliveries
  add primary key (id, created_at),
  add constraint webhook_deliveries_subscription_event_key unique (subscription_id, event_seq, created_at),
  add foreign key (subscription_id) references webhook_subscriptions (id) on delete cascade;

-- Retention asks whether any poll stream still holds an event of a month (src/db/partitions.ts).
create index event_inbox_event_idx on event_inbox (event_seq);

-- The ledger's total by partner and movement type joins the maintained list totals (migration 0017): a ledger page
-- without an item or dates reads its total from a few rows instead of counting every movement. Ledger rows are never
-- changed or deleted, so inserts alone move the counts (and a truncate forgets them).
alter table list_counts drop constraint list_counts_list_check,
  add constraint list_counts_list_check check (list in ('orders', 'items', 'movements'));

create function count_movements() returns trigger language plpgsql as $$
begin
  insert into list_counts (list, manufacturer_id, status, n)
  select 'movements', manufacturer_id, movement_type, count(*) from new_rows group by manufacturer_id, movement_type;
  return null;
end $$;

lock table inventory_movements in share row exclusive mode;
create trigger inventory_movements_count_insert after insert on inventory_movements referencing new table as new_rows
  for each statement execute function count_movements();
create trigger inventory_movements_count_truncate after truncate on inventory_movements
  for each statement execute function forget_list_counts('movements');
insert into list_counts (list, manufacturer_id, status, n)
select 'movements', manufacturer_id, movement_type, count(*) from inventory_movements group by manufacturer_id, movement_type;
