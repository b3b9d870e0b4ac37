-- Picking, packing and shipping: the lines of a pick batch, the batch's own counters and stamps, and what a review of
-- a pick exception records.

create sequence pick_batch_number_seq start 1;

alter table pick_batches
  add column last_parcel_seq integer not null default 0,
  add column staged_loc_type text check (staged_loc_type in ('staging', 'shipping')),
  add column completed_at timestamptz,
  add column shipped_at timestamptz,
  add column shipped_by uuid references users (id),
  add column cancelled_at timestamptz;
create index pick_batches_status_idx on pick_batches (status, created_at desc);
create index pick_batches_manufacturer_idx on pick_batches (manufacturer_id, status, created_at desc);

-- One line per warehouse order line the batch picks: qty_to_pick is what the order line still needed when the batch
-- started, so two live batches never pick the same units.
create table pick_batch_lines (
  id uuid primary key default gen_random_uuid(),
  pick_batch_id uuid not null references pick_batches (id),
  order_line_id uuid not null references order_lines (id),
  item_id uuid not null references items (id),
  location_id uuid references locations (id),
  bin_location text,
  qty_to_pick integer not null check (qty_to_pick > 0),
  qty_picked integer not null default 0 check (qty_picked >= 0),
  qty_short integer not null default 0 check (qty_short >= 0),
  status text not null default 'pending' check (status in ('pending', 'picked', 'short', 'skipped')),
  short_reason text,
  pack_verified_at timestamptz,
  pack_verified_by uuid references users (id),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint pick_batch_lines_quantities check (qty_picked + qty_short <= qty_to_pick)
);
create index pick_batch_lines_batch_idx on pick_batch_lines (pick_batch_id, created_at);
create index pick_batch_lines_order_line_idx on pick_batch_lines (order_line_id);

alter table pick_exceptions
  add column pick_batch_line_id uuid references pick_batch_lines (id),
  add column created_by uuid references users (id),
  add column reviewed_at timestamptz,
  add column reviewed_by uuid references users (id);
create index pick_exceptions_line_idx on pick_exceptions (pick_batch_line_id, created_at desc);
create index pick_exceptions_list_idx on pick_exceptions (created_at desc);
create index pick_exceptions_order_idx on pick_exceptions (order_id);
create index order_blocks_exception_idx on order_blocks (coalesce(short_pick_exception_id, mispick_exception_id, quality_exception_id));
