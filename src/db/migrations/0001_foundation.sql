-- Foundation: supply partners, users and their API keys, warehouses and locations, ship-via codes,
-- and the cross-cutting audit history, event outbox and idempotency records.
create extension if not exists pg_trgm;

create table manufacturers (
  id uuid primary key default gen_random_uuid(),
  code text not null,
  name text not null,
  is_active boolean not null default true,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint manufacturers_code_key unique (code)
);

create table users (
  id uuid primary key default gen_random_uuid(),
  name text not null,
  email text,
  role text not null check (role in ('system_admin', 'manager', 'office', 'warehouse', 'qc', 'consignor', 'partner_portal')),
  manufacturer_id uuid references manufacturers (id),
  is_active boolean not null default true,
  password_hash text,
  invite_token_hash text,
  invite_expires_at timestamptz,
  deactivated_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  -- Partner-scoped roles and only they carry a supply partner.
  constraint users_partner_scope check ((role in ('consignor', 'partner_portal')) = (manufacturer_id is not null)),
  constraint users_invite_token_key unique (invite_token_hash)
);
create unique index users_email_key on users (lower(email));
create index users_manufacturer_idx on users (manufacturer_id);

create table api_keys (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null references users (id),
  name text not null,
  -- SHA-256 hex of the plaintext key; the plaintext is shown once and never stored.
  key_hash text not null,
  key_prefix text not null,
  scopes text[] not null,
  expires_at timestamptz,
  revoked_at timestamptz,
  created_by uuid references users (id),
  created_at timestamptz not null default now(),
  constraint api_keys_key_hash_key unique (key_hash)
);
create index api_keys_user_idx on api_keys (user_id);

create table warehouses (
  id uuid primary key default gen_random_uuid(),
  code text not null,
  name text not null,
  is_active boolean not null default true,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint warehouses_code_key unique (code)
);

create table locations (
  id uuid primary key default gen_random_uuid(),
  warehouse_id uuid not null references warehouses (id),
  zone text,
  aisle text,
  rack text,
  shelf text,
  bin text,
  location_code text not null,
  location_type text not null default 'storage'
    check (location_type in ('storage', 'staging', 'receiving', 'shipping', 'quarantine')),
  capacity integer check (capacity > 0),
  is_active boolean not null default true,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint locations_location_code_key unique (location_code)
);
create index locations_warehouse_idx on locations (warehouse_id);

create table ship_via (
  id uuid primary key default gen_random_uuid(),
  code text not null,
  description text not null,
  carrier_name text,
  mode text not null check (mode in ('parcel', 'ltl', 'will_call')),
  is_active boolean not null default true,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint ship_via_code_key unique (code)
);

-- Audit trail: one row per write, in the same transaction as the write.
create table history (
  id uuid primary key default gen_random_uuid(),
  occurred_at timestamptz not null default now(),
  user_id uuid,
  api_key_id uuid,
  entity_type text not null,
  entity_id uuid not null,
  action text not null,
  manufacturer_id uuid,
  before jsonb,
  after jsonb
);
create index history_entity_idx on history (entity_type, entity_id, occurred_at);
create index history_manufacturer_idx on history (manufacturer_id, occurred_at);

-- Transactional outbox: events are written with the change they report and delivered later.
create table outbox_events (
  id uuid primary key default gen_random_uuid(),
  seq bigserial not null,
  kind text not null,
  occurred_at timestamptz not null default now(),
  manufacturer_id uuid,
  data jsonb not null,
  constraint outbox_events_seq_key unique (seq)
);
create index outbox_events_manufacturer_idx on outbox_events (manufacturer_id, seq);

-- First response of a POST sent with an Idempotency-Key, per API key, replayed for 24 hours.
create table idempotency_keys (
  api_key_id uuid not null,
  idempotency_key text not null,
  request_hash text not null,
  status_code integer,
  response_body text,
  created_at timestamptz not null default now(),
  completed_at timestamptz,
  primary key (api_key_id, idempotency_key)
);
create index idempotency_keys_created_idx on idempotency_keys (created_at);
