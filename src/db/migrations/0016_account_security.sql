-- Account security of the key holder's own account: a TOTP authenticator (RFC 6238), single-use recovery codes and
-- trusted devices.

-- One authenticator per user. enabled_at is null while the enrollment waits for its first code (confirm). The secret is
-- sealed (src/domain/secrets.ts). last_otp_step is the last accepted time step: only a later one is accepted (replay).
create table user_mfa (
  user_id uuid primary key references users (id),
  secret_sealed text not null,
  enabled_at timestamptz,
  last_otp_step integer,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

-- SHA-256 of the user id and the code (random, high-entropy); a code is deleted when it is used.
create table user_recovery_codes (
  user_id uuid not null references user_mfa (user_id) on delete cascade,
  code_hash text not null,
  primary key (user_id, code_hash)
);

-- A device that a later sign-in may let skip the second factor: its token is shown once and kept as SHA-256.
create table trusted_devices (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null references users (id),
  name text not null,
  token_hash text not null,
  created_at timestamptz not null default now(),
  last_used_at timestamptz,
  expires_at timestamptz not null,
  constraint trusted_devices_token_key unique (token_hash)
);
create index trusted_devices_user_idx on trusted_devices (user_id, expires_at);
