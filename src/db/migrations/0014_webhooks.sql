-- Outbound webhooks. A subscription receives the events of its tenant (its partner's, or every event when it has
-- none) whose kind it names ('*' = all). Its signing secret is sealed (src/domain/secrets.ts).
create table webhook_subscriptions (
  id uuid primary key default gen_random_uuid(),
  url text not null,
  description text,
  event_kinds text[] not null,
  is_active boolean not null default true,
  max_attempts integer not null default 8 check (max_attempts between 1 and 20),
  manufacturer_id uuid references manufacturers (id),
  secret_sealed text not null,
  created_by uuid references users (id),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index webhook_subscriptions_manufacturer_idx on webhook_subscriptions (manufacturer_id, created_at);

-- One row per event and subscription, written with the event (emit) so none is missed. status: pending (waiting for
-- an attempt, or leased to a worker until leased_until), delivered, failed (a permanent refusal), dead (attempts
-- exhausted). order_id orders a subscription's events of one order.
create table webhook_deliveries (
  id uuid primary key default gen_random_uuid(),
  subscription_id uuid not null references webhook_subscriptions (id) on delete cascade,
  event_seq bigint not null,
  event_id uuid not null,
  event_kind text not null,
  order_id uuid,
  status text not null default 'pending' check (status in ('pending', 'delivered', 'failed', 'dead')),
  attempts integer not null default 0,
  next_attempt_at timestamptz not null default now(),
  leased_until timestamptz,
  last_status_code integer,
  last_error text,
  delivered_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (subscription_id, event_seq)
);
create index webhook_deliveries_due_idx on webhook_deliveries (next_attempt_at, event_seq) where status = 'pending';
create index webhook_deliveries_order_idx on webhook_deliveries (subscription_id, order_id, event_seq) where status = 'pending';
create index webhook_deliveries_log_idx on webhook_deliveries (subscription_id, created_at desc);

-- Every attempt: when, how long, what came back (the first KiB), kept 30 days.
create table webhook_delivery_attempts (
  delivery_id uuid not null references webhook_deliveries (id) on delete cascade,
  attempt integer not null,
  attempted_at timestamptz not null default now(),
  duration_ms integer not null,
  status_code integer,
  error text,
  response_body text,
  outcome text not null check (outcome in ('delivered', 'retry', 'failed', 'dead')),
  primary key (delivery_id, attempt)
);
create index webhook_delivery_attempts_time_idx on webhook_delivery_attempts (attempted_at);
