-- Items with their alias numbers, stock by bin, and the movement ledger.

create table items (
  id uuid primary key default gen_random_uuid(),
  manufacturer_id uuid not null references manufacturers (id),
  item_number_display text not null,
  -- Uppercased, dashes and spaces removed: the matching key of search and aliases.
  item_number_normalized text not null,
  description text not null,
  description_extended text,
  category text,
  selling_uom text not null default 'EA',
  purchase_uom text,
  conversion_factor numeric(18, 6),
  unit_weight numeric(18, 4),
  cubes numeric(18, 4),
  warehouse_location text,
  price_1 numeric(14, 4),
  price_2 numeric(14, 4),
  price_3 numeric(14, 4),
  average_cost numeric(14, 4),
  last_cost numeric(14, 4),
  qty_on_hand integer not null default 0,
  qty_committed integer not null default 0,
  qty_available integer generated always as (qty_on_hand - qty_committed) stored,
  qty_on_order integer not null default 0,
  qty_on_backorder integer not null default 0,
  ytd_returns integer not null default 0,
  reorder_level integer not null default 0 check (reorder_level >= 0),
  min_reorder_qty integer not null default 0,
  economic_order_qty integer not null default 0,
  lead_time_days integer not null default 0,
  backorder_control boolean not null default false,
  serial_tracking boolean not null default false,
  status text not null default 'active' check (status in ('active', 'inactive', 'discontinued')),
  superseded_by uuid references items (id),
  date_last_ordered timestamptz,
  date_last_received timestamptz,
  date_last_movement timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint items_manufacturer_number_key unique (manufacturer_id, item_number_display)
);
-- List sorts and filters, each with its index, scoped by partner first where a scoped key filters by it.
create index items_number_idx on items (item_number_normalized, id);
create index items_manufacturer_number_idx on items (manufacturer_id, item_number_normalized, id);
create index items_description_idx on items (description, item_number_normalized, id);
create index items_on_hand_idx on items (qty_on_hand, item_number_normalized, id);
create index items_available_idx on items (qty_available, item_number_normalized, id);
create index items_last_movement_idx on items (date_last_movement desc nulls last, item_number_normalized, id);
-- Covering: counts over a status (and a partner) read only this index.
create index items_status_idx on items (status, manufacturer_id) include (id);
create index items_status_movement_idx on items (status, date_last_movement);
-- The stock filters of the list (values OR together: PostgreSQL combines these with a bitmap OR). They hold the status
-- and the sort key, so a filtered page and its count read only the index.
create index items_negative_idx on items (status, item_number_normalized, id) where qty_on_hand < 0;
create index items_oversold_idx on items (status, item_number_normalized, id) where qty_available < 0;
create index items_out_of_stock_idx on items (status, item_number_normalized, id) where qty_on_hand = 0;
create index items_below_reorder_idx on items (status, item_number_normalized, id) where reorder_level > 0 and qty_available < reorder_level;
create index items_missing_price_idx on items (status, item_number_normalized, id) where price_1 is null;
create index items_category_idx on items (category);
create index items_uom_idx on items (selling_uom);
create index items_location_idx on items (warehouse_location);
-- Search: prefix on the normalized number, trigram GIN for substrings, trigram GiST for the nearest look-alikes.
-- The GiST index is on lower(): trigrams ignore case, so distances are the same, and LIKE on the number keeps the
-- much faster GIN index instead of being planned onto the GiST one.
create index items_number_prefix_idx on items (item_number_normalized text_pattern_ops);
create index items_number_trgm_idx on items using gin (item_number_normalized gin_trgm_ops);
create index items_number_knn_idx on items using gist (lower(item_number_normalized) gist_trgm_ops);
create index items_description_trgm_idx on items using gin (description gin_trgm_ops);

create table item_aliases (
  id uuid primary key default gen_random_uuid(),
  item_id uuid not null references items (id) on delete cascade,
  manufacturer_id uuid not null references manufacturers (id),
  alias text not null,
  alias_normalized text not null,
  created_at timestamptz not null default now(),
  -- An alias names one item of its partner.
  constraint item_aliases_manufacturer_alias_key unique (manufacturer_id, alias_normalized)
);
create index item_aliases_item_idx on item_aliases (item_id);
create index item_aliases_prefix_idx on item_aliases (alias_normalized text_pattern_ops);
create index item_aliases_trgm_idx on item_aliases using gin (alias_normalized gin_trgm_ops);
create index item_aliases_knn_idx on item_aliases using gist (lower(alias_normalized) gist_trgm_ops);

-- Stock by bin. Rows at a quarantine location hold inventory_status 'quarantine' and are not sellable on-hand.
create table item_locations (
  id uuid primary key default gen_random_uuid(),
  item_id uuid not null references items (id),
  location_id uuid not null references locations (id),
  qty_on_hand integer not null default 0,
  inventory_status text not null default 'available' check (inventory_status in ('available', 'quarantine')),
  is_primary boolean not null default false,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint item_locations_item_location_status_key unique (item_id, location_id, inventory_status)
);
create index item_locations_location_idx on item_locations (location_id);

-- The movement ledger: every change of quantity, signed, with the item's on-hand after it.
create table inventory_movements (
  id uuid primary key default gen_random_uuid(),
  seq bigserial not null,
  item_id uuid not null references items (id),
  manufacturer_id uuid not null references manufacturers (id),
  location_id uuid references locations (id),
  movement_type text not null
    check (movement_type in ('receipt', 'shipment', 'adjustment', 'transfer', 'return', 'cycle_count_correction')),
  quantity integer not null check (quantity <> 0),
  balance_after integer not null,
  reason text not null default '',
  reference_type text not null default '',
  reference_id uuid not null,
  cycle_count_batch_id uuid,
  performed_by uuid,
  performed_by_name text not null default '',
  api_key_id uuid,
  performed_at timestamptz not null default now(),
  constraint inventory_movements_seq_key unique (seq)
);
create index inventory_movements_item_idx on inventory_movements (item_id, seq);
create index inventory_movements_manufacturer_idx on inventory_movements (manufacturer_id, seq);
create index inventory_movements_type_idx on inventory_movements (movement_type, seq);
create index inventory_movements_performed_idx on inventory_movements (performed_at, seq);
-- Velocity: outbound units per item over the last year.
create index inventory_movements_shipments_idx on inventory_movements (item_id, performed_at) where movement_type = 'shipment';
