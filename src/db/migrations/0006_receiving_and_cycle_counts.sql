-- Receiving batches with their lines and QC results, each partner's import column mapping, and cycle counts.

create table receiving_batches (
  id uuid primary key default gen_random_uuid(),
  manufacturer_id uuid not null references manufacturers (id),
  batch_number text not null,
  status text not null default 'draft' check (status in ('draft', 'verified', 'posted', 'voided')),
  received_date date not null,
  posted_date timestamptz,
  posted_by uuid references users (id),
  voided_at timestamptz,
  voided_by uuid references users (id),
  void_reason text,
  notes text,
  created_by uuid references users (id),
  updated_by uuid references users (id),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint receiving_batches_batch_number_key unique (batch_number)
);
-- The list: newest first, over everything or one partner, filtered by status and received_date.
create index receiving_batches_received_idx on receiving_batches (received_date desc, created_at desc, id);
create index receiving_batches_manufacturer_idx on receiving_batches (manufacturer_id, received_date desc, created_at desc);
create index receiving_batches_status_idx on receiving_batches (status, received_date desc);

create table receiving_lines (
  id uuid primary key default gen_random_uuid(),
  -- Lines keep the order they were added (or imported) in.
  seq bigserial not null,
  batch_id uuid not null references receiving_batches (id) on delete cascade,
  item_id uuid not null references items (id),
  reference_number text,
  reference_type text
    check (reference_type in ('purchase_order', 'stock_transfer', 'stock_adjustment', 'cycle_count', 'return', 'other')),
  qty_received integer not null check (qty_received >= 1),
  qty_expected integer,
  new_unit_cost numeric(14, 4),
  old_unit_cost numeric(14, 4),
  new_location_id uuid references locations (id),
  old_location text,
  inspection_status text not null default 'pending'
    check (inspection_status in ('pending', 'passed', 'failed', 'partial', 'waived')),
  qty_passed integer check (qty_passed >= 0),
  qty_failed integer check (qty_failed >= 0),
  inspection_notes text,
  inspected_by uuid references users (id),
  inspected_at timestamptz,
  item_number_display text not null,
  item_description text not null,
  -- Where posting put the line's stock (the put-away bin and the quarantine bin), so a void takes it back from there.
  posted_location_id uuid references locations (id),
  quarantine_location_id uuid references locations (id),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint receiving_lines_seq_key unique (seq)
);
create index receiving_lines_batch_idx on receiving_lines (batch_id, seq);
create index receiving_lines_item_idx on receiving_lines (item_id);

create table receiving_import_profiles (
  manufacturer_id uuid primary key references manufacturers (id),
  sheet_name text,
  header_row integer not null check (header_row >= 1),
  -- Canonical field (item, qty, ref, cost, uom) -> header text in the partner's files.
  column_map jsonb not null,
  updated_by uuid references users (id),
  updated_at timestamptz not null default now()
);

create table cycle_count_batches (
  id uuid primary key default gen_random_uuid(),
  batch_number text not null,
  status text not null default 'draft' check (status in ('draft', 'in_progress', 'completed', 'cancelled')),
  triggered_by text not null,
  assigned_to uuid references users (id),
  started_at timestamptz,
  completed_at timestamptz,
  cancelled_at timestamptz,
  notes text,
  created_by uuid references users (id),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint cycle_count_batches_batch_number_key unique (batch_number)
);
create index cycle_count_batches_created_idx on cycle_count_batches (created_at desc, id);
create index cycle_count_batches_status_idx on cycle_count_batches (status, created_at desc);

create table cycle_count_lines (
  id uuid primary key default gen_random_uuid(),
  seq bigserial not null,
  batch_id uuid not null references cycle_count_batches (id) on delete cascade,
  item_id uuid not null references items (id),
  location_id uuid not null references locations (id),
  system_qty integer not null,
  counted_qty integer check (counted_qty >= 0),
  variance integer,
  status text not null default 'pending' check (status in ('pending', 'counted', 'approved')),
  counted_by uuid references users (id),
  counted_at timestamptz,
  approved_by uuid references users (id),
  approved_at timestamptz,
  -- The cycle_count_correction an approved variance wrote (null when the count matched).
  movement_id uuid references inventory_movements (id),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint cycle_count_lines_seq_key unique (seq),
  constraint cycle_count_lines_bin_key unique (batch_id, item_id, location_id)
);
create index cycle_count_lines_batch_idx on cycle_count_lines (batch_id, seq);
create index inventory_movements_cycle_count_idx on inventory_movements (cycle_count_batch_id) where cycle_count_batch_id is not null;
