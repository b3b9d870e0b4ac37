-- item_stock_state is kept equal to items by one statement per writing statement instead of one per item row
-- (migration 0009's row triggers). Each row's UPDATE of item_stock_state was a statement of its own, so 0017's
-- statement trigger that keeps the list totals ran once per item as well: ten times for a ten-line order's
-- commitment or shipment. Now both run once per statement: 500 ten-item updates took 195-235 ms against 305-375
-- (docs/decisions.md, Stock).

-- Only rows whose mirrored columns really changed are written (a statement trigger cannot have 0009's WHEN, and one
-- with transition tables cannot name columns, so it fires for every update of items and compares here).
create function mirror_item_stock_state_rows() returns trigger language plpgsql as $$
begin
  if tg_op = 'INSERT' then
    insert into item_stock_state (item_id, manufacturer_id, status, item_number_normalized, qty_on_hand, qty_available,
      reorder_level, price_1, date_last_movement)
    select id, manufacturer_id, status, item_number_normalized, qty_on_hand, qty_available, reorder_level, price_1,
      date_last_movement
    from new_rows;
  else
    update item_stock_state s set manufacturer_id = n.manufacturer_id, status = n.status,
      item_number_normalized = n.item_number_normalized, qty_on_hand = n.qty_on_hand,
      qty_available = n.qty_available, reorder_level = n.reorder_level, price_1 = n.price_1,
      date_last_movement = n.date_last_movement
    from new_rows n
    where s.item_id = n.id
      and (s.manufacturer_id, s.status, s.item_number_normalized, s.qty_on_hand, s.qty_available, s.reorder_level,
           s.price_1, s.date_last_movement)
        is distinct from
          (n.manufacturer_id, n.status, n.item_number_normalized, n.qty_on_hand, n.qty_available, n.reorder_level,
           n.price_1, n.date_last_movement);
  end if;
  return null;
end $$;

-- No write to items may fall between the old triggers and the new: the lock holds writers off until this commits.
lock table items in share row exclusive mode;
drop trigger items_stock_state_insert on items;
drop trigger items_stock_state_update on items;
drop function mirror_item_stock_state();
create trigger items_stock_state_insert after insert on items referencing new table as new_rows
  for each statement execute function mirror_item_stock_state_rows();
create trigger items_stock_state_update after update on items referencing new table as new_rows
  for each statement execute function mirror_item_stock_state_rows();
