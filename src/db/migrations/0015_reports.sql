-- Reports and the consignor statement read the ledger by date. A movement is stamped when it is written, not when its
-- transaction began: the item row is locked while its movements are written, so per item the time order is the seq
-- order, and "the last movement before a date" gives the balance at that date (the statement's opening balance).
alter table inventory_movements alter column performed_at set default clock_timestamp();

-- Periods of the reports: each report reads only its period through one of these.
create index inventory_movements_day_idx on inventory_movements (performed_at) include (manufacturer_id, movement_type, inventory_status, quantity);
create index inventory_movements_manufacturer_day_idx on inventory_movements (manufacturer_id, performed_at)
  include (movement_type, inventory_status, quantity);
create index inventory_movements_shipped_day_idx on inventory_movements (performed_at) include (item_id, quantity)
  where movement_type = 'shipment';
-- The statement's opening quarantine: the quarantine rows of an item before a date.
create index inventory_movements_quarantine_idx on inventory_movements (item_id, performed_at) include (quantity)
  where inventory_status = 'quarantine';
create index orders_released_idx on orders (released_at) where released_at is not null;
create index orders_shipped_idx on orders (shipped_at) where shipped_at is not null;
create index pick_batches_shipped_idx on pick_batches (shipped_at) where shipped_at is not null;
create index cycle_count_lines_counted_idx on cycle_count_lines (counted_at) where counted_at is not null;
