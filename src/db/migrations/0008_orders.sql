-- Orders and their lines, the counters that number releases, and the picking-side tables an order reads (pick
-- batches with their parcels, pick exceptions, order blocks, documents), which the picking area fills later.

-- Release numbers: per supply partner and global, handed out under the counter's row lock inside the releasing
-- transaction, so a rolled-back release gives its number back and the sequence has no gaps.
create table release_counters (
  -- null: the global sequence (original_release_number).
  manufacturer_id uuid references manufacturers (id),
  last_number integer not null default 0,
  constraint release_counters_manufacturer_key unique nulls not distinct (manufacturer_id)
);
insert into release_counters (manufacturer_id) values (null);

create sequence order_number_seq start 100001;

create table orders (
  id uuid primary key default gen_random_uuid(),
  manufacturer_id uuid not null references manufacturers (id),
  customer_id uuid not null references customers (id),
  order_number bigint not null default nextval('order_number_seq'),
  order_type text not null default 'order' check (order_type in ('order', 'invoice', 'credit')),
  status text not null default 'entered'
    check (status in ('entered', 'selected', 'released', 'partial', 'shipped', 'billed', 'closed', 'cancelled')),
  priority text not null default 'normal' check (priority in ('normal', 'high', 'rush')),
  customer_po_number text,
  manufacturer_auth text,
  agency_customer_number text,
  freight_terms text,
  shipping_point text,
  carrier_account text,
  ship_method text,
  ship_via_other text,
  special_instructions text,
  ship_via_id uuid references ship_via (id),
  drop_ship_location_id uuid references drop_ship_locations (id),
  third_party_payer_id uuid references third_party_payers (id),
  order_date date not null default current_date,
  request_date date,
  ship_date date,
  ship_to_name text,
  ship_to_address_1 text,
  ship_to_address_2 text,
  ship_to_city text,
  ship_to_state text,
  ship_to_zip text,
  bill_to_name text,
  bill_to_address_1 text,
  bill_to_address_2 text,
  bill_to_city text,
  bill_to_state text,
  bill_to_zip text,
  freight_charge numeric(14, 2),
  -- Unbounded: 100,000,000 units at 99,999,999 each, over many lines, must fit.
  total_weight numeric,
  total_extended_price numeric,
  line_count integer not null default 0,
  release_number integer,
  original_release_number integer,
  released_by uuid references users (id),
  released_at timestamptz,
  shipped_by uuid references users (id),
  shipped_at timestamptz,
  picked_up_at timestamptz,
  picked_up_by_user_id uuid references users (id),
  picked_up_by_name text,
  picked_up_notes text,
  ltl_carrier text,
  ltl_pro_number text,
  ltl_recorded_at timestamptz,
  ltl_recorded_by uuid references users (id),
  created_by uuid references users (id),
  updated_by uuid references users (id),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint orders_order_number_key unique (order_number),
  constraint orders_release_number_key unique (manufacturer_id, release_number),
  constraint orders_original_release_number_key unique (original_release_number)
);
-- The list: newest first (by order number), per status, partner and customer; q by trigram over the text columns.
create index orders_status_idx on orders (status, order_number desc);
-- status=open (the office's working list): its pages read only this index, newest first.
create index orders_open_idx on orders (order_number desc) where status in ('entered', 'released', 'partial');
create index orders_manufacturer_idx on orders (manufacturer_id, status, order_number desc);
create index orders_customer_idx on orders (customer_id, order_number desc);
create index orders_created_idx on orders (created_at);
create index orders_order_date_idx on orders (order_date, order_number desc);
create index orders_po_trgm_idx on orders using gin (customer_po_number gin_trgm_ops);
create index orders_number_trgm_idx on orders using gin ((order_number::text) gin_trgm_ops);
create index orders_release_trgm_idx on orders using gin ((release_number::text) gin_trgm_ops, (original_release_number::text) gin_trgm_ops);

create table order_lines (
  id uuid primary key default gen_random_uuid(),
  order_id uuid not null references orders (id),
  item_id uuid not null references items (id),
  line_number integer not null,
  item_number_display text not null,
  item_description text not null,
  additional_description text,
  bin_location text,
  qty_ordered integer not null check (qty_ordered between 1 and 100000000),
  qty_shipped integer not null default 0,
  qty_backordered integer not null default 0,
  qty_warehouse integer not null default 0 check (qty_warehouse >= 0),
  qty_direct integer not null default 0 check (qty_direct >= 0),
  -- Units of this line held in the item's qty_committed: released exactly once, whatever path ends the line.
  qty_committed integer not null default 0 check (qty_committed >= 0),
  fulfillment_source text not null check (fulfillment_source in ('warehouse', 'direct', 'split')),
  unit_price numeric(14, 4) not null check (unit_price between 0 and 99999999),
  price_override boolean not null default false,
  discount_pct numeric(7, 6) not null default 0 check (discount_pct between 0 and 1),
  extended_price numeric not null,
  unit_weight numeric(18, 4),
  unit_of_measure text not null,
  direct_shipped_at timestamptz,
  direct_shipped_by uuid references users (id),
  direct_tracking_number text,
  direct_carrier text check (direct_carrier in ('ups', 'fedex', 'usps', 'other')),
  direct_ship_note text,
  direct_shipped_source text check (direct_shipped_source in ('office', 'consignor', 'api')),
  direct_shipped_api_key_id uuid,
  direct_notified_at timestamptz,
  direct_notified_by uuid references users (id),
  direct_notified_via text check (direct_notified_via in ('email', 'out_of_band')),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint order_lines_line_number_key unique (order_id, line_number),
  -- One line per item and order (docs/decisions.md).
  constraint order_lines_item_key unique (order_id, item_id),
  constraint order_lines_split check (qty_warehouse + qty_direct = qty_ordered)
);
create index order_lines_item_idx on order_lines (item_id);
-- awaiting_direct_ship: direct quantities not shipped yet.
create index order_lines_awaiting_direct_idx on order_lines (order_id) where qty_direct > 0 and direct_shipped_at is null;

-- Picking writes these; orders read them (include=shipments, display_substatus, lifecycle).
create table pick_batches (
  id uuid primary key default gen_random_uuid(),
  order_id uuid not null references orders (id),
  manufacturer_id uuid not null references manufacturers (id),
  batch_number text not null,
  status text not null default 'in_progress'
    check (status in ('released', 'in_progress', 'completed', 'packed', 'shipped', 'cancelled')),
  packed_at timestamptz,
  packed_by uuid references users (id),
  tracking_number text,
  tracking_carrier text check (tracking_carrier in ('ups', 'fedex', 'usps', 'other')),
  tracking_captured_at timestamptz,
  tracking_flagged_for_office_at timestamptz,
  staged_slot text,
  staged_at timestamptz,
  created_by uuid references users (id),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint pick_batches_batch_number_key unique (batch_number)
);
create index pick_batches_order_idx on pick_batches (order_id, created_at);

create table pick_batch_parcels (
  id uuid primary key default gen_random_uuid(),
  pick_batch_id uuid not null references pick_batches (id),
  parcel_seq integer not null,
  tracking_number text not null,
  carrier text not null check (carrier in ('ups', 'fedex', 'usps', 'other')),
  captured_at timestamptz not null default now(),
  captured_by uuid references users (id),
  constraint pick_batch_parcels_seq_key unique (pick_batch_id, parcel_seq)
);

-- An open exception on an item blocks new warehouse lines for it unless acknowledged (exception_blocked).
create table pick_exceptions (
  id uuid primary key default gen_random_uuid(),
  kind text not null check (kind in ('short_pick', 'mispick', 'quality')),
  status text not null default 'open' check (status in ('open', 'reviewed', 'superseded')),
  manufacturer_id uuid not null references manufacturers (id),
  item_id uuid not null references items (id),
  order_id uuid references orders (id),
  order_line_id uuid references order_lines (id),
  pick_batch_id uuid references pick_batches (id),
  qty_short integer not null default 0,
  short_reason text,
  flag_reason text,
  actual_item_id uuid references items (id),
  actual_qty integer,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index pick_exceptions_open_item_idx on pick_exceptions (item_id) where status = 'open';

create table order_blocks (
  id uuid primary key default gen_random_uuid(),
  order_id uuid not null references orders (id),
  kind text not null check (kind in ('short_pick', 'mispick', 'quality')),
  status text not null default 'open' check (status in ('open', 'resolved', 'cancelled')),
  short_pick_exception_id uuid references pick_exceptions (id),
  mispick_exception_id uuid references pick_exceptions (id),
  quality_exception_id uuid references pick_exceptions (id),
  awaiting_supply_partner_at timestamptz,
  awaiting_supply_partner_note text,
  resolution_disposition text,
  resolution_note text,
  resolved_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index order_blocks_open_idx on order_blocks (order_id) where status = 'open';

create table documents (
  id uuid primary key default gen_random_uuid(),
  entity_type text not null,
  entity_id uuid not null,
  manufacturer_id uuid references manufacturers (id),
  file_name text not null,
  file_type text not null,
  storage_key text not null,
  file_size integer not null,
  description text,
  tags text[],
  uploaded_by uuid not null references users (id),
  uploaded_at timestamptz not null default now(),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index documents_entity_idx on documents (entity_type, entity_id, uploaded_at);
