-- Customers (global records) with their drop-ship locations and third-party freight payers, and the contacts of
-- supply partners and customers with the links that give each contact a role per entity.

create table customers (
  id uuid primary key default gen_random_uuid(),
  account_number text not null,
  name text not null,
  customer_type_code text,
  region text,
  address_line_1 text,
  address_line_2 text,
  city text,
  state text,
  zip_code text,
  -- No v1 operation changes it; the list filter accepts both values.
  status text not null default 'active' check (status in ('active', 'inactive')),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
-- Account numbers are unique whatever their case: "c-100" and "C-100" name one account.
create unique index customers_account_number_key on customers (lower(account_number));
create index customers_name_idx on customers (lower(name), account_number);
create index customers_status_idx on customers (status, lower(name), account_number);
create index customers_account_number_trgm_idx on customers using gin (account_number gin_trgm_ops);
create index customers_name_trgm_idx on customers using gin (name gin_trgm_ops);

-- Hidden rows leave the order-entry pickers but are never deleted: orders keep pointing at them.
create table drop_ship_locations (
  id uuid primary key default gen_random_uuid(),
  customer_id uuid not null references customers (id),
  name text not null,
  attention text,
  address_line_1 text not null,
  address_line_2 text,
  city text not null,
  state text not null,
  zip_code text not null,
  country text not null default 'US',
  phone text,
  email text,
  notes text,
  is_hidden boolean not null default false,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index drop_ship_locations_customer_idx on drop_ship_locations (customer_id, lower(name), id);

create table third_party_payers (
  id uuid primary key default gen_random_uuid(),
  customer_id uuid not null references customers (id),
  name text not null,
  attention text,
  address_line_1 text not null,
  address_line_2 text,
  city text not null,
  state text not null,
  zip_code text not null,
  country text not null default 'US',
  carrier_account text not null,
  notes text,
  is_hidden boolean not null default false,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index third_party_payers_customer_idx on third_party_payers (customer_id, lower(name), id);

create table contacts (
  id uuid primary key default gen_random_uuid(),
  first_name text,
  last_name text not null,
  title text,
  email text,
  phone text,
  mobile text,
  notes text,
  is_primary boolean not null default false,
  status text not null default 'active' check (status in ('active', 'inactive')),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  created_by uuid references users (id),
  updated_by uuid references users (id)
);

-- One link per contact and entity. The entity is a supply partner or a customer, each with its own foreign key, so a
-- link can never point at a missing record and partner scope is a plain `manufacturer_id = $scope`.
create table contact_associations (
  id uuid primary key default gen_random_uuid(),
  contact_id uuid not null references contacts (id),
  manufacturer_id uuid references manufacturers (id),
  customer_id uuid references customers (id),
  role text not null default '',
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint contact_associations_one_entity check (num_nonnulls(manufacturer_id, customer_id) = 1),
  constraint contact_associations_contact_manufacturer_key unique (contact_id, manufacturer_id),
  constraint contact_associations_contact_customer_key unique (contact_id, customer_id)
);
create index contact_associations_manufacturer_idx on contact_associations (manufacturer_id, lower(role)) where manufacturer_id is not null;
create index contact_associations_customer_idx on contact_associations (customer_id, lower(role)) where customer_id is not null;
