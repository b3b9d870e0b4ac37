// Kysely table types, kept in step with migrations/*.sql by hand.
import type { ColumnType, Generated } from 'kysely';

type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
type CreatedAt = ColumnType<Date, Date | string | undefined, never>;

export interface ManufacturersTable {
  id: Generated<string>;
  code: string;
  name: string;
  is_active: Generated<boolean>;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface UsersTable {
  id: Generated<string>;
  name: string;
  email: string | null;
  role: string;
  manufacturer_id: string | null;
  is_active: Generated<boolean>;
  password_hash: string | null;
  invite_token_hash: string | null;
  invite_expires_at: Date | string | null;
  deactivated_at: Date | string | null;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface ApiKeysTable {
  id: Generated<string>;
  user_id: string;
  name: string;
  key_hash: string;
  key_prefix: string;
  scopes: string[];
  expires_at: Date | string | null;
  revoked_at: Date | string | null;
  created_by: string | null;
  created_at: CreatedAt;
}

export interface WarehousesTable {
  id: Generated<string>;
  code: string;
  name: string;
  is_active: Generated<boolean>;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface LocationsTable {
  id: Generated<string>;
  warehouse_id: string;
  zone: string | null;
  aisle: string | null;
  rack: string | null;
  shelf: string | null;
  bin: string | null;
  location_code: string;
  location_type: Generated<string>;
  capacity: number | null;
  is_active: Generated<boolean>;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface ShipViaTable {
  id: Generated<string>;
  code: string;
  description: string;
  carrier_name: string | null;
  mode: 'parcel' | 'ltl' | 'will_call';
  is_active: Generated<boolean>;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export type Json = ColumnType<unknown, string | null, string | null>;

export interface HistoryTable {
  id: Generated<string>;
  occurred_at: CreatedAt;
  user_id: string | null;
  api_key_id: string | null;
  entity_type: string;
  entity_id: string;
  action: string;
  manufacturer_id: string | null;
  before: Json;
  after: Json;
}

export interface OutboxEventsTable {
  id: Generated<string>;
  seq: Generated<number>;
  kind: string;
  occurred_at: CreatedAt;
  manufacturer_id: string | null;
  data: ColumnType<unknown, string, string>;
}

export interface IdempotencyKeysTable {
  api_key_id: string;
  idempotency_key: string;
  request_hash: string;
  status_code: number | null;
  response_body: string | null;
  created_at: Timestamp;
  completed_at: Date | string | null;
}

export interface SchemaMigrationsTable {
  version: string;
  applied_at: CreatedAt;
}

export interface DB {
  manufacturers: ManufacturersTable;
  users: UsersTable;
  api_keys: ApiKeysTable;
  warehouses: WarehousesTable;
  locations: LocationsTable;
  ship_via: ShipViaTable;
  history: HistoryTable;
  outbox_events: OutboxEventsTable;
  idempotency_keys: IdempotencyKeysTable;
  schema_migrations: SchemaMigrationsTable;
}
