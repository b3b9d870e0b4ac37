-- The item's stock state: a narrow copy of the columns that every stock event changes, with the list indexes over
-- them. Those indexes used to sit on items, so no update of items was HOT and every commitment and movement wrote
-- all 21 of its indexes; now items keeps only indexes on columns a stock event does not touch (docs/decisions.md,
-- Stock). A trigger on items keeps the copy equal in the same transaction, whoever writes items.

create table item_stock_state (
  item_id uuid primary key references items (id) on delete cascade,
  manufacturer_id uuid not null,
  status text not null,
  item_number_normalized text not null,
  qty_on_hand integer not null,
  qty_available integer not null,
  reorder_level integer not null,
  -- Not a stock column: here so the list's stock filters, OR-ed together, are all answered by this table's indexes.
  price_1 numeric(14, 4),
  date_last_movement timestamptz
);

-- No write to items may slip between this copy and the trigger below: the lock holds them off until the migration
-- commits (the foreign key above takes it too; here it is on purpose).
lock table items in share row exclusive mode;

insert into item_stock_state (item_id, manufacturer_id, status, item_number_normalized, qty_on_hand, qty_available,
  reorder_level, price_1, date_last_movement)
select id, manufacturer_id, status, item_number_normalized, qty_on_hand, qty_available, reorder_level, price_1,
  date_last_movement
from items;

create function mirror_item_stock_state() returns trigger language plpgsql as $$
begin
  if tg_op = 'INSERT' then
    insert into item_stock_state (item_id, manufacturer_id, status, item_number_normalized, qty_on_hand, qty_available,
      reorder_level, price_1, date_last_movement)
    values (new.id, new.manufacturer_id, new.status, new.item_number_normalized, new.qty_on_hand, new.qty_available,
      new.reorder_level, new.price_1, new.date_last_movement);
  else
    update item_stock_state set manufacturer_id = new.manufacturer_id, status = new.status,
      item_number_normalized = new.item_number_normalized, qty_on_hand = new.qty_on_hand,
      qty_available = new.qty_available, reorder_level = new.reorder_level, price_1 = new.price_1,
      date_last_movement = new.date_last_movement
    where item_id = new.id;
  end if;
  return null;
end $$;

-- AFTER, so the generated qty_available is computed; only updates naming a mirrored column (or qty_committed, which
-- qty_available depends on) fire it, and only rows where one of them really changed are written.
create trigger items_stock_state_insert after insert on items
  for each row execute function mirror_item_stock_state();
create trigger items_stock_state_update
  after update of manufacturer_id, status, item_number_normalized, qty_on_hand, qty_committed, reorder_level, price_1,
    date_last_movement on items
  for each row
  when ((old.manufacturer_id, old.status, old.item_number_normalized, old.qty_on_hand, old.qty_available,
         old.reorder_level, old.price_1, old.date_last_movement)
        is distinct from
        (new.manufacturer_id, new.status, new.item_number_normalized, new.qty_on_hand, new.qty_available,
         new.reorder_level, new.price_1, new.date_last_movement))
  execute function mirror_item_stock_state();

-- The list indexes over stock columns, moved from items with the same keys (item_id for id).
create index item_stock_state_on_hand_idx on item_stock_state (qty_on_hand, item_number_normalized, item_id);
create index item_stock_state_available_idx on item_stock_state (qty_available, item_number_normalized, item_id);
create index item_stock_state_last_movement_idx
  on item_stock_state (date_last_movement desc nulls last, item_number_normalized, item_id);
create index item_stock_state_status_movement_idx on item_stock_state (status, date_last_movement);
-- The list's exact count reads this table when no filter needs items: over a status (and a partner) from this index.
create index item_stock_state_status_idx on item_stock_state (status, manufacturer_id);
-- The item-number order of a page picked here (a movement window, velocity) without joining items first.
create index item_stock_state_number_idx on item_stock_state (item_number_normalized, item_id);
-- The stock filters (values OR together in a bitmap OR); with the status and the sort key, a filtered page and its
-- count read only the index.
create index item_stock_state_negative_idx on item_stock_state (status, item_number_normalized, item_id)
  where qty_on_hand < 0;
create index item_stock_state_oversold_idx on item_stock_state (status, item_number_normalized, item_id)
  where qty_available < 0;
create index item_stock_state_out_of_stock_idx on item_stock_state (status, item_number_normalized, item_id)
  where qty_on_hand = 0;
create index item_stock_state_below_reorder_idx on item_stock_state (status, item_number_normalized, item_id)
  where reorder_level > 0 and qty_available < reorder_level;
create index item_stock_state_missing_price_idx on item_stock_state (status, item_number_normalized, item_id)
  where price_1 is null;

drop index items_on_hand_idx, items_available_idx, items_last_movement_idx, items_status_movement_idx,
  items_negative_idx, items_oversold_idx, items_out_of_stock_idx, items_below_reorder_idx, items_missing_price_idx;

-- Room on each page for the new version of a row, so a stock update stays on its page (HOT) and writes no index.
alter table items set (fillfactor = 90);
