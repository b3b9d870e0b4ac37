-- item_stock_state's row of an item is written anew by every write of the item, not only when a mirrored column
-- changed (migration 0020). The item list's pages picked on item_stock_state (a stock filter or a stock sort) then take
-- each row's version for its kept JSON text (src/http/row-texts.ts) from the mirror row, whose xmin and ctid change
-- with each of its item's writes, and read no items row at all: a below_reorder page of 50 cost PostgreSQL 0.17 ms
-- instead of 0.31 (docs/decisions.md, "Row texts"). A write that changes no mirrored column (a description, a price
-- other than price_1) is rare and its mirror update is HOT: no index has a column it changes. The list totals'
-- trigger on item_stock_state counts nothing for it (its flags stay the same).

create or replace function mirror_item_stock_state_rows() returns trigger language plpgsql as $$
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
    where s.item_id = n.id;
  end if;
  return null;
end $$;
