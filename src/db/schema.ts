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
  location_type: Generated<'storage' | 'staging' | 'receiving' | 'shipping' | 'quarantine'>;
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

export interface ServiceKeysTable {
  name: string;
  key: Buffer;
  created_at: CreatedAt;
}

export interface CarrierWebhooksTable {
  id: Generated<string>;
  name: string;
  carrier: Carrier;
  token_hash: string;
  token_prefix: string;
  secret_sealed: string;
  created_by: string | null;
  created_at: CreatedAt;
  deleted_at: Date | null;
}

export interface CarrierWebhookEventsTable {
  carrier_webhook_id: string;
  event_id: string;
  pick_batch_id: string | null;
  tracking_number: string;
  received_at: CreatedAt;
}

export interface WebhookSubscriptionsTable {
  id: Generated<string>;
  url: string;
  description: string | null;
  event_kinds: string[];
  is_active: Generated<boolean>;
  max_attempts: Generated<number>;
  manufacturer_id: string | null;
  secret_sealed: string;
  created_by: string | null;
  created_at: CreatedAt;
  updated_at: Generated<Date>;
}

export type DeliveryStatus = 'pending' | 'delivered' | 'failed' | 'dead';

export interface WebhookDeliveriesTable {
  id: Generated<string>;
  subscription_id: string;
  event_seq: number;
  event_id: string;
  event_kind: string;
  order_id: string | null;
  status: Generated<DeliveryStatus>;
  attempts: Generated<number>;
  next_attempt_at: Generated<Date>;
  leased_until: Date | null;
  last_status_code: number | null;
  last_error: string | null;
  delivered_at: Date | null;
  created_at: CreatedAt;
  updated_at: Generated<Date>;
}

export interface WebhookDeliveryAttemptsTable {
  delivery_id: string;
  attempt: number;
  attempted_at: Generated<Date>;
  duration_ms: number;
  status_code: number | null;
  error: string | null;
  response_body: string | null;
  outcome: 'delivered' | 'retry' | 'failed' | 'dead';
}

export interface EventInboxTable {
  tenant: string;
  event_seq: number;
  kind: string;
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

type Numeric = number | null;

export interface ItemsTable {
  id: Generated<string>;
  manufacturer_id: string;
  item_number_display: string;
  item_number_normalized: string;
  description: string;
  description_extended: string | null;
  category: string | null;
  selling_uom: Generated<string>;
  purchase_uom: string | null;
  conversion_factor: Numeric;
  unit_weight: Numeric;
  cubes: Numeric;
  warehouse_location: string | null;
  price_1: Numeric;
  price_2: Numeric;
  price_3: Numeric;
  average_cost: Numeric;
  last_cost: Numeric;
  qty_on_hand: Generated<number>;
  qty_committed: Generated<number>;
  qty_available: ColumnType<number, never, never>;
  qty_on_order: Generated<number>;
  qty_on_backorder: Generated<number>;
  ytd_returns: Generated<number>;
  reorder_level: Generated<number>;
  min_reorder_qty: Generated<number>;
  economic_order_qty: Generated<number>;
  lead_time_days: Generated<number>;
  backorder_control: Generated<boolean>;
  serial_tracking: Generated<boolean>;
  status: Generated<'active' | 'inactive' | 'discontinued'>;
  superseded_by: string | null;
  date_last_ordered: Date | string | null;
  date_last_received: Date | string | null;
  date_last_movement: Date | string | null;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

/** Kept equal to items by a trigger (migration 0009): read-only for the code. */
export interface ItemStockStateTable {
  item_id: ColumnType<string, never, never>;
  manufacturer_id: ColumnType<string, never, never>;
  status: ColumnType<'active' | 'inactive' | 'discontinued', never, never>;
  item_number_normalized: ColumnType<string, never, never>;
  qty_on_hand: ColumnType<number, never, never>;
  qty_available: ColumnType<number, never, never>;
  reorder_level: ColumnType<number, never, never>;
  price_1: ColumnType<Numeric, never, never>;
  date_last_movement: ColumnType<Date | string | null, never, never>;
}

/** Maintained by the triggers of migration 0017 and folded by src/db/list-counts.ts; the API never writes it. */
export interface ListCountsTable {
  list: ColumnType<'orders' | 'items', never, never>;
  manufacturer_id: ColumnType<string, never, never>;
  status: ColumnType<string, never, never>;
  flags: ColumnType<number, never, never>;
  n: ColumnType<number, never, never>;
}

export interface ItemAliasesTable {
  id: Generated<string>;
  item_id: string;
  manufacturer_id: string;
  alias: string;
  alias_normalized: string;
  created_at: CreatedAt;
}

export interface ItemLocationsTable {
  id: Generated<string>;
  item_id: string;
  location_id: string;
  qty_on_hand: number;
  inventory_status: 'available' | 'quarantine';
  is_primary: Generated<boolean>;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export type MovementType = 'receipt' | 'shipment' | 'adjustment' | 'transfer' | 'return' | 'cycle_count_correction';

export interface InventoryMovementsTable {
  id: Generated<string>;
  seq: Generated<number>;
  item_id: string;
  manufacturer_id: string;
  location_id: Generated<string | null>;
  movement_type: MovementType;
  quantity: number;
  balance_after: number;
  reason: Generated<string>;
  reference_type: Generated<string>;
  reference_id: string;
  cycle_count_batch_id: Generated<string | null>;
  performed_by: Generated<string | null>;
  performed_by_name: Generated<string>;
  api_key_id: Generated<string | null>;
  performed_at: CreatedAt;
  inventory_status: Generated<'available' | 'quarantine'>;
}

export interface CustomersTable {
  id: Generated<string>;
  account_number: string;
  name: string;
  customer_type_code: string | null;
  region: string | null;
  address_line_1: string | null;
  address_line_2: string | null;
  city: string | null;
  state: string | null;
  zip_code: string | null;
  status: Generated<'active' | 'inactive'>;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface DropShipLocationsTable {
  id: Generated<string>;
  customer_id: string;
  name: string;
  attention: string | null;
  address_line_1: string;
  address_line_2: string | null;
  city: string;
  state: string;
  zip_code: string;
  country: Generated<string>;
  phone: string | null;
  email: string | null;
  notes: string | null;
  is_hidden: Generated<boolean>;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface ThirdPartyPayersTable {
  id: Generated<string>;
  customer_id: string;
  name: string;
  attention: string | null;
  address_line_1: string;
  address_line_2: string | null;
  city: string;
  state: string;
  zip_code: string;
  country: Generated<string>;
  carrier_account: string;
  notes: string | null;
  is_hidden: Generated<boolean>;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface ContactsTable {
  id: Generated<string>;
  first_name: string | null;
  last_name: string;
  title: string | null;
  email: string | null;
  phone: string | null;
  mobile: string | null;
  notes: string | null;
  is_primary: Generated<boolean>;
  status: Generated<'active' | 'inactive'>;
  created_at: CreatedAt;
  updated_at: Timestamp;
  created_by: string | null;
  updated_by: string | null;
}

export interface ContactAssociationsTable {
  id: Generated<string>;
  contact_id: string;
  manufacturer_id: string | null;
  customer_id: string | null;
  role: Generated<string>;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export type ReceivingBatchStatus = 'draft' | 'verified' | 'posted' | 'voided';
export type InspectionStatus = 'pending' | 'passed' | 'failed' | 'partial' | 'waived';
export type ReferenceType = 'purchase_order' | 'stock_transfer' | 'stock_adjustment' | 'cycle_count' | 'return' | 'other';
/** Canonical field -> the header text of the partner's files. */
export type ImportColumnMap = { item: string; qty: string; ref?: string; cost?: string; uom?: string };

export interface ReceivingBatchesTable {
  id: Generated<string>;
  manufacturer_id: string;
  batch_number: string;
  status: Generated<ReceivingBatchStatus>;
  /** A date column: 'YYYY-MM-DD'. */
  received_date: string;
  posted_date: Date | string | null;
  posted_by: string | null;
  voided_at: Date | string | null;
  voided_by: string | null;
  void_reason: string | null;
  notes: string | null;
  created_by: string | null;
  updated_by: string | null;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface ReceivingLinesTable {
  id: Generated<string>;
  seq: Generated<number>;
  batch_id: string;
  item_id: string;
  reference_number: string | null;
  reference_type: ReferenceType | null;
  qty_received: number;
  qty_expected: number | null;
  new_unit_cost: Numeric;
  old_unit_cost: Numeric;
  new_location_id: string | null;
  old_location: string | null;
  inspection_status: Generated<InspectionStatus>;
  qty_passed: number | null;
  qty_failed: number | null;
  inspection_notes: string | null;
  inspected_by: string | null;
  inspected_at: Date | string | null;
  item_number_display: string;
  item_description: string;
  posted_location_id: Generated<string | null>;
  quarantine_location_id: Generated<string | null>;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface ReceivingImportProfilesTable {
  manufacturer_id: string;
  sheet_name: string | null;
  header_row: number;
  column_map: ColumnType<ImportColumnMap, string, string>;
  updated_by: string | null;
  updated_at: Timestamp;
}

export type CycleCountStatus = 'draft' | 'in_progress' | 'completed' | 'cancelled';

export interface CycleCountBatchesTable {
  id: Generated<string>;
  batch_number: string;
  status: Generated<CycleCountStatus>;
  triggered_by: string;
  assigned_to: string | null;
  started_at: Date | string | null;
  completed_at: Date | string | null;
  cancelled_at: Date | string | null;
  notes: string | null;
  created_by: string | null;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface CycleCountLinesTable {
  id: Generated<string>;
  seq: Generated<number>;
  batch_id: string;
  item_id: string;
  location_id: string;
  system_qty: number;
  counted_qty: number | null;
  variance: number | null;
  status: Generated<'pending' | 'counted' | 'approved'>;
  counted_by: string | null;
  counted_at: Date | string | null;
  approved_by: string | null;
  approved_at: Date | string | null;
  movement_id: string | null;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export type OrderStatus = 'entered' | 'selected' | 'released' | 'partial' | 'shipped' | 'billed' | 'closed' | 'cancelled';
export type Priority = 'normal' | 'high' | 'rush';
export type FulfillmentSource = 'warehouse' | 'direct' | 'split';
export type Carrier = 'ups' | 'fedex' | 'usps' | 'other';
type DateOnly = ColumnType<string, string | undefined, string>;

export interface ReleaseCountersTable {
  manufacturer_id: string | null;
  last_number: Generated<number>;
}

export interface OrdersTable {
  id: Generated<string>;
  manufacturer_id: string;
  customer_id: string;
  order_number: Generated<number>;
  order_type: Generated<'order' | 'invoice' | 'credit'>;
  status: Generated<OrderStatus>;
  priority: Generated<Priority>;
  customer_po_number: string | null;
  manufacturer_auth: string | null;
  agency_customer_number: Generated<string | null>;
  freight_terms: string | null;
  shipping_point: string | null;
  carrier_account: string | null;
  ship_method: string | null;
  ship_via_other: string | null;
  special_instructions: string | null;
  ship_via_id: string | null;
  drop_ship_location_id: string | null;
  third_party_payer_id: string | null;
  order_date: DateOnly;
  request_date: Generated<string | null>;
  ship_date: Generated<string | null>;
  ship_to_name: string | null;
  ship_to_address_1: string | null;
  ship_to_address_2: string | null;
  ship_to_city: string | null;
  ship_to_state: string | null;
  ship_to_zip: string | null;
  bill_to_name: string | null;
  bill_to_address_1: string | null;
  bill_to_address_2: string | null;
  bill_to_city: string | null;
  bill_to_state: string | null;
  bill_to_zip: string | null;
  freight_charge: Generated<number | null>;
  total_weight: Generated<number | null>;
  total_extended_price: Generated<number | null>;
  line_count: Generated<number>;
  release_number: Generated<number | null>;
  original_release_number: Generated<number | null>;
  released_by: Generated<string | null>;
  released_at: Generated<Date | null>;
  shipped_by: Generated<string | null>;
  shipped_at: Generated<Date | null>;
  picked_up_at: Generated<Date | null>;
  picked_up_by_user_id: Generated<string | null>;
  picked_up_by_name: Generated<string | null>;
  picked_up_notes: Generated<string | null>;
  ltl_carrier: Generated<string | null>;
  ltl_pro_number: Generated<string | null>;
  ltl_recorded_at: Generated<Date | null>;
  ltl_recorded_by: Generated<string | null>;
  created_by: string | null;
  updated_by: string | null;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface OrderLinesTable {
  id: Generated<string>;
  order_id: string;
  item_id: string;
  line_number: number;
  item_number_display: string;
  item_description: string;
  additional_description: Generated<string | null>;
  bin_location: string | null;
  qty_ordered: number;
  qty_shipped: Generated<number>;
  qty_backordered: Generated<number>;
  qty_warehouse: number;
  qty_direct: number;
  qty_committed: number;
  fulfillment_source: FulfillmentSource;
  unit_price: number;
  price_override: boolean;
  discount_pct: number;
  extended_price: number;
  unit_weight: number | null;
  unit_of_measure: string;
  direct_shipped_at: Generated<Date | null>;
  direct_shipped_by: Generated<string | null>;
  direct_tracking_number: Generated<string | null>;
  direct_carrier: Generated<Carrier | null>;
  direct_ship_note: Generated<string | null>;
  direct_shipped_source: Generated<'office' | 'consignor' | 'api' | null>;
  direct_shipped_api_key_id: Generated<string | null>;
  direct_notified_at: Generated<Date | null>;
  direct_notified_by: Generated<string | null>;
  direct_notified_via: Generated<'email' | 'out_of_band' | null>;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface PickBatchesTable {
  id: Generated<string>;
  order_id: string;
  manufacturer_id: string;
  batch_number: string;
  status: Generated<'released' | 'in_progress' | 'completed' | 'packed' | 'shipped' | 'cancelled'>;
  packed_at: Date | null;
  packed_by: string | null;
  tracking_number: string | null;
  tracking_carrier: Carrier | null;
  tracking_captured_at: Date | null;
  tracking_flagged_for_office_at: Date | null;
  staged_slot: string | null;
  staged_at: Date | null;
  created_by: string | null;
  created_at: CreatedAt;
  updated_at: Timestamp;
  last_parcel_seq: Generated<number>;
  staged_loc_type: 'staging' | 'shipping' | null;
  completed_at: Date | null;
  shipped_at: Date | null;
  shipped_by: string | null;
  cancelled_at: Date | null;
}

export type PickLineStatus = 'pending' | 'picked' | 'short' | 'skipped';

export interface PickBatchLinesTable {
  id: Generated<string>;
  pick_batch_id: string;
  order_line_id: string;
  item_id: string;
  location_id: string | null;
  bin_location: string | null;
  qty_to_pick: number;
  qty_picked: Generated<number>;
  qty_short: Generated<number>;
  status: Generated<PickLineStatus>;
  short_reason: string | null;
  pack_verified_at: Date | null;
  pack_verified_by: string | null;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface PickBatchParcelsTable {
  id: Generated<string>;
  pick_batch_id: string;
  parcel_seq: number;
  tracking_number: string;
  carrier: Carrier;
  captured_at: Generated<Date>;
  captured_by: string | null;
}

export interface PickExceptionsTable {
  id: Generated<string>;
  kind: 'short_pick' | 'mispick' | 'quality';
  status: Generated<'open' | 'reviewed' | 'superseded'>;
  manufacturer_id: string;
  item_id: string;
  order_id: string | null;
  order_line_id: string | null;
  pick_batch_id: string | null;
  qty_short: Generated<number>;
  short_reason: string | null;
  flag_reason: string | null;
  actual_item_id: string | null;
  actual_qty: number | null;
  created_at: CreatedAt;
  updated_at: Timestamp;
  pick_batch_line_id: string | null;
  created_by: string | null;
  reviewed_at: Date | null;
  reviewed_by: string | null;
}

export interface OrderBlocksTable {
  id: Generated<string>;
  order_id: string;
  kind: 'short_pick' | 'mispick' | 'quality';
  status: Generated<'open' | 'resolved' | 'cancelled'>;
  short_pick_exception_id: string | null;
  mispick_exception_id: string | null;
  quality_exception_id: string | null;
  awaiting_supply_partner_at: Date | null;
  awaiting_supply_partner_note: string | null;
  resolution_disposition: string | null;
  resolution_note: string | null;
  resolved_at: Date | null;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface DocumentsTable {
  id: Generated<string>;
  entity_type: string;
  entity_id: string;
  manufacturer_id: string | null;
  file_name: string;
  file_type: string;
  storage_key: string;
  file_size: number;
  description: string | null;
  tags: string[] | null;
  uploaded_by: string;
  uploaded_at: Generated<Date>;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface DB {
  items: ItemsTable;
  item_stock_state: ItemStockStateTable;
  list_counts: ListCountsTable;
  item_aliases: ItemAliasesTable;
  item_locations: ItemLocationsTable;
  inventory_movements: InventoryMovementsTable;
  receiving_batches: ReceivingBatchesTable;
  receiving_lines: ReceivingLinesTable;
  receiving_import_profiles: ReceivingImportProfilesTable;
  cycle_count_batches: CycleCountBatchesTable;
  cycle_count_lines: CycleCountLinesTable;
  manufacturers: ManufacturersTable;
  users: UsersTable;
  api_keys: ApiKeysTable;
  warehouses: WarehousesTable;
  locations: LocationsTable;
  ship_via: ShipViaTable;
  customers: CustomersTable;
  drop_ship_locations: DropShipLocationsTable;
  third_party_payers: ThirdPartyPayersTable;
  contacts: ContactsTable;
  contact_associations: ContactAssociationsTable;
  release_counters: ReleaseCountersTable;
  orders: OrdersTable;
  order_lines: OrderLinesTable;
  pick_batches: PickBatchesTable;
  pick_batch_parcels: PickBatchParcelsTable;
  pick_batch_lines: PickBatchLinesTable;
  pick_exceptions: PickExceptionsTable;
  order_blocks: OrderBlocksTable;
  documents: DocumentsTable;
  history: HistoryTable;
  carrier_webhook_events: CarrierWebhookEventsTable;
  carrier_webhooks: CarrierWebhooksTable;
  event_inbox: EventInboxTable;
  service_keys: ServiceKeysTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_delivery_attempts: WebhookDeliveryAttemptsTable;
  webhook_subscriptions: WebhookSubscriptionsTable;
  outbox_events: OutboxEventsTable;
  idempotency_keys: IdempotencyKeysTable;
  schema_migrations: SchemaMigrationsTable;
  user_mfa: UserMfaTable;
  user_recovery_codes: UserRecoveryCodesTable;
  trusted_devices: TrustedDevicesTable;
}

export interface UserMfaTable {
  user_id: string;
  secret_sealed: string;
  enabled_at: Date | null;
  last_otp_step: number | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface UserRecoveryCodesTable {
  user_id: string;
  code_hash: string;
}

export interface TrustedDevicesTable {
  id: Generated<string>;
  user_id: string;
  name: string;
  token_hash: string;
  created_at: CreatedAt;
  last_used_at: Date | null;
  expires_at: Date;
}
