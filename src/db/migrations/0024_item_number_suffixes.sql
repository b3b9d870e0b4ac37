-- Every suffix of every item number and alias, so that "the number or an alias contains q" (the item list's q=, item
-- search's substring stage) is a range of one btree: the suffixes that start with q. Through the trigram indexes, q=0033
-- at 1,000,000 items matched 1,684 items in 16-20 ms, almost all of it one heap page per match and a primary-key lookup
-- per alias hit; the range read from this index alone (it carries the partner, status and number each list needs)
-- answered the same page in 5-6 ms (docs/decisions.md, Uncached reads against the floor). The cost is about ten rows
-- per item (2.1 GB at 1,000,000 items) and their upkeep, which the triggers below do in the writing transaction:
-- numbers, statuses, partners and aliases change rarely next to stock.
--
-- One row per item and distinct suffix: a suffix shared by the number and an alias is one row.
create table item_number_suffixes (
  suffix text not null,
  item_id uuid not null,
  manufacturer_id uuid not null,
  status text not null,
  item_number_normalized text not null
);

-- The suffixes of a text, itself first.
create function text_suffixes(t text) returns setof text
language sql immutable strict parallel safe
as $$ select substr(t, p) from generate_series(1, length(t)) p $$;

-- The rows the table holds for items and aliases as they are: what the backfill below copies and a rebuild copies for
-- one item (a condition on item_id reaches inside the distinct).
create view item_number_suffixes_due as
select distinct text_suffixes(t.t) as suffix, i.id as item_id, i.manufacturer_id, i.status::text as status,
       i.item_number_normalized
  from items i
  cross join lateral (select i.item_number_normalized
    union select a.alias_normalized from item_aliases a where a.item_id = i.id) t (t);

-- An item's rows made again from its number and aliases as they are now (none once it is gone); `stale` is a text it
-- no longer holds (an old number, a removed alias) whose rows go too. Its rows are found by suffix, so the table needs
-- no index of its own on item_id.
create function rebuild_item_number_suffixes(item uuid, stale text) returns void
language plpgsql
as $$
begin
  -- The item's row lock (an update of the item holds it already) puts two rebuilds of one item, or a rebuild and an
  -- alias insert, one after the other: each statement below then reads what the other committed, and two transactions
  -- never both insert one item's suffix.
  perform 1 from items i where i.id = item for no key update;
  delete from item_number_suffixes s
   where s.item_id = item
     and s.suffix = any (array(
       select text_suffixes(stale) union select d.suffix from item_number_suffixes_due d where d.item_id = item));
  insert into item_number_suffixes (suffix, item_id, manufacturer_id, status, item_number_normalized)
  select d.suffix, d.item_id, d.manufacturer_id, d.status, d.item_number_normalized
    from item_number_suffixes_due d where d.item_id = item;
end $$;

create function item_number_suffixes_of_new_items() returns trigger language plpgsql as $$
begin
  -- A new item has no alias yet.
  insert into item_number_suffixes (suffix, item_id, manufacturer_id, status, item_number_normalized)
  select text_suffixes(n.item_number_normalized), n.id, n.manufacturer_id, n.status, n.item_number_normalized
    from new_rows n;
  return null;
end $$;

create function item_number_suffixes_of_changed_item() returns trigger language plpgsql as $$
begin
  if tg_op = 'DELETE' then
    perform rebuild_item_number_suffixes(old.id, old.item_number_normalized);
  else
    perform rebuild_item_number_suffixes(new.id, old.item_number_normalized);
  end if;
  return null;
end $$;

create function item_number_suffixes_of_new_aliases() returns trigger language plpgsql as $$
begin
  -- The item's row is locked (more strongly than the foreign key check does), so a change of its status or number
  -- cannot commit between the read here and this insert and leave these rows with the old values: it waits, or this
  -- read sees it.
  insert into item_number_suffixes (suffix, item_id, manufacturer_id, status, item_number_normalized)
  select distinct text_suffixes(x.alias_normalized), x.id, x.manufacturer_id, x.status, x.item_number_normalized
    from (select n.alias_normalized, i.id, i.manufacturer_id, i.status, i.item_number_normalized
            from new_rows n join items i on i.id = n.item_id for share of i) x
  on conflict do nothing;
  return null;
end $$;

create function item_number_suffixes_of_changed_alias() returns trigger language plpgsql as $$
begin
  perform rebuild_item_number_suffixes(old.item_id, old.alias_normalized);
  if tg_op = 'UPDATE' and new.item_id <> old.item_id then
    perform rebuild_item_number_suffixes(new.item_id, null);
  end if;
  return null;
end $$;

-- No write to items or aliases may fall between the copy below and the triggers: the locks hold writers off until
-- this commits.
lock table items, item_aliases in share row exclusive mode;

create trigger items_number_suffixes_insert after insert on items referencing new table as new_rows
  for each statement execute function item_number_suffixes_of_new_items();
-- Stock writes update items all day but never these columns: a trigger on named columns does not even fire for them.
create trigger items_number_suffixes_update after update of item_number_normalized, status, manufacturer_id on items
  for each row
  when ((old.item_number_normalized, old.status, old.manufacturer_id)
    is distinct from (new.item_number_normalized, new.status, new.manufacturer_id))
  execute function item_number_suffixes_of_changed_item();
create trigger items_number_suffixes_delete after delete on items
  for each row execute function item_number_suffixes_of_changed_item();
create trigger item_aliases_number_suffixes_insert after insert on item_aliases referencing new table as new_rows
  for each statement execute function item_number_suffixes_of_new_aliases();
create trigger item_aliases_number_suffixes_change after update of alias_normalized, item_id or delete on item_aliases
  for each row execute function item_number_suffixes_of_changed_alias();

insert into item_number_suffixes (suffix, item_id, manufacturer_id, status, item_number_normalized)
select suffix, item_id, manufacturer_id, status, item_number_normalized from item_number_suffixes_due;

-- Built after the rows: one sorted build instead of an insertion per row.
create unique index item_number_suffixes_idx on item_number_suffixes (suffix text_pattern_ops, item_id)
  include (manufacturer_id, status, item_number_normalized);
