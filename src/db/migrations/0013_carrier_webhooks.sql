-- The key that seals secrets the service must read back (inbound webhook secrets), when WMS_SECRET_KEY does not give
-- one: made once, on first use, and shared by every instance of this database.
create table service_keys (
  name text primary key,
  key bytea not null,
  created_at timestamptz not null default now()
);

-- Inbound carrier webhooks: each has a token (its URL path segment, stored as SHA-256) and a signing secret (sealed:
-- verifying a signature needs it in clear). Deleted ones are kept, so their token answers 410 and not 404.
create table carrier_webhooks (
  id uuid primary key default gen_random_uuid(),
  name text not null,
  carrier text not null check (carrier in ('ups', 'fedex', 'usps', 'other')),
  token_hash text not null unique,
  token_prefix text not null,
  secret_sealed text not null,
  created_by uuid references users (id),
  created_at timestamptz not null default now(),
  deleted_at timestamptz
);

-- Each carrier event once: a delivery repeated by the carrier finds its id here and changes nothing.
create table carrier_webhook_events (
  carrier_webhook_id uuid not null references carrier_webhooks (id),
  event_id text not null,
  pick_batch_id uuid references pick_batches (id),
  tracking_number text not null,
  received_at timestamptz not null default now(),
  primary key (carrier_webhook_id, event_id)
);
