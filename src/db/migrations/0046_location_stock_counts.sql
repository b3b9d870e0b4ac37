-- The location list's figures kept by the database, as the list totals are (0017): at 1,000,000 items a page of 50
-- locations still read every bin of its locations, 115,000 index entries and 9.5-11.9 ms of PostgreSQL (0045), and the
-- bench's p99 stayed over 100 ms. Each location keeps, per partner, its bins with stock and their units: every change
-- to item_locations appends signed deltas in its own transaction (insert only: two pickers at one location never wait
-- for each other, as a counter row per location would make them), a figure is the sum of its key's rows in the
-- request's snapshot, and foldListCounts folds each key's rows into one with the list totals. A page then reads a row
-- per location and partner. The items with both bins of a location stocked are still subtracted live, from the
-- quarantined bins (0045). An item's partner never changes, so a bin counts for its item's partner for good.

create table location_stock_counts (
  location_id uuid not null,
  manufacturer_id uuid not null,
  -- The bins with stock (qty_on_hand <> 0) and the units they hold.
  bins bigint not null,
  qty bigint not null,
  folded boolean not null default false
);
create index location_stock_counts_key_idx on location_stock_counts (location_id, manufacturer_id) include (bins, qty);
create index location_stock_counts_unfolded_idx on location_stock_counts (location_id, manufacturer_id) where not folded;
-- Folded every few seconds, and vacuumed after each fold as list_counts is.
alter table location_stock_counts set (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 1000);

-- Statement-level with transition tables: one insert per statement, grouped by location and partner, nothing when
-- the statement left every figure as it was (an emptied bin deleted).
create function count_location_stock() returns trigger language plpgsql as $$
begin
  if tg_op = 'INSERT' then
    insert into location_stock_counts (location_id, manufacturer_id, bins, qty)
    select b.location_id, i.manufacturer_id, count(*) filter (where b.qty_on_hand <> 0), sum(b.qty_on_hand)
    from new_rows b join items i on i.id = b.item_id group by 1, 2
    having count(*) filter (where b.qty_on_hand <> 0) <> 0 or sum(b.qty_on_hand) <> 0;
  elsif tg_op = 'DELETE' then
    insert into location_stock_counts (location_id, manufacturer_id, bins, qty)
    select b.location_id, i.manufacturer_id, -count(*) filter (where b.qty_on_hand <> 0), -sum(b.qty_on_hand)
    from old_rows b join items i on i.id = b.item_id group by 1, 2
    having count(*) filter (where b.qty_on_hand <> 0) <> 0 or sum(b.qty_on_hand) <> 0;
  else
    insert into location_stock_counts (location_id, manufacturer_id, bins, qty)
    select d.location_id, i.manufacturer_id, sum(d.bins), sum(d.qty) from (
      select item_id, location_id, (qty_on_hand <> 0)::int as bins, qty_on_hand as qty from new_rows
      union all
      select item_id, location_id, -(qty_on_hand <> 0)::int, -qty_on_hand from old_rows
    ) d join items i on i.id = d.item_id group by 1, 2
    having sum(d.bins) <> 0 or sum(d.qty) <> 0;
  end if;
  return null;
end $$;

create function forget_location_stock_counts() returns trigger language plpgsql as $$
begin
  delete from location_stock_counts;
  return null;
end $$;

-- No bin may change between the figures taken below and the triggers: the lock holds writers off until this commits.
lock table item_locations in share row exclusive mode;

create trigger item_locations_count_insert after insert on item_locations referencing new table as new_rows
  for each statement execute function count_location_stock();
create trigger item_locations_count_update after update on item_locations
  referencing old table as old_rows new table as new_rows
  for each statement execute function count_location_stock();
create trigger item_locations_count_delete after delete on item_locations referencing old table as old_rows
  for each statement execute function count_location_stock();
create trigger item_locations_count_truncate after truncate on item_locations
  for each statement execute function forget_location_stock_counts();

-- Every location's figures counted again from the bins, folded: here, by the bench's loader (whose load runs with
-- triggers off) and by hand (docs/operations.md). The caller holds the bins still and no fold runs meanwhile.
create function recount_location_stock() returns void language sql as $$
  delete from location_stock_counts;
  insert into location_stock_counts (location_id, manufacturer_id, bins, qty, folded)
  select b.location_id, i.manufacturer_id, count(*) filter (where b.qty_on_hand <> 0), sum(b.qty_on_hand), true
  from item_locations b join items i on i.id = b.item_id group by 1, 2
  having count(*) filter (where b.qty_on_hand <> 0) <> 0 or sum(b.qty_on_hand) <> 0;
$$;
select recount_location_stock();
