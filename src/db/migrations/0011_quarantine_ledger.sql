-- Units that enter or leave a quarantine bin leave a ledger row too. Such a row says inventory_status 'quarantine': its
-- quantity moves the quarantine bin, not on-hand, so its balance_after repeats the item's on-hand. On-hand stays the sum
-- of the 'available' rows and the last row's balance_after. (Quarantine changes before this migration are in history.)
alter table inventory_movements
  add column inventory_status text not null default 'available' check (inventory_status in ('available', 'quarantine'));
