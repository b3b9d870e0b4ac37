// Names the code uses for the values a column allows. The lists themselves live in the migrations' CHECK constraints,
// from which `npm run db:types` writes them into src/db/schema.ts; these names are taken from there, so a migration
// that changes a list changes the name's type too.
import type { ColumnType, Selectable } from 'kysely';
import type {
  CycleCountBatchesTable,
  InventoryMovementsTable,
  OrderLinesTable,
  OrdersTable,
  PickBatchParcelsTable,
  ReceivingBatchesTable,
  ReceivingLinesTable,
  WebhookDeliveriesTable,
} from './schema.ts';

export type Carrier = Selectable<PickBatchParcelsTable>['carrier'];
export type CycleCountStatus = Selectable<CycleCountBatchesTable>['status'];
export type DeliveryStatus = Selectable<WebhookDeliveriesTable>['status'];
export type FulfillmentSource = Selectable<OrderLinesTable>['fulfillment_source'];
export type InspectionStatus = Selectable<ReceivingLinesTable>['inspection_status'];
export type MovementType = Selectable<InventoryMovementsTable>['movement_type'];
export type OrderStatus = Selectable<OrdersTable>['status'];
export type Priority = Selectable<OrdersTable>['priority'];
export type ReceivingBatchStatus = Selectable<ReceivingBatchesTable>['status'];
export type ReferenceType = NonNullable<Selectable<ReceivingLinesTable>['reference_type']>;

/**
 * receiving_import_profiles.column_map (jsonb): canonical field -> the header text of the partner's files. The type
 * the generated schema gives that column (scripts/db-types.ts).
 */
export type ImportColumnMap = { item: string; qty: string; ref?: string; cost?: string; uom?: string };

/**
 * A timestamptz column: read as the API's ISO text ('2026-11-27T08:21:09.739Z', src/db/timestamps.ts), written as a
 * Date or text. The type the generated schema gives every timestamptz column (scripts/db-types.ts).
 */
export type IsoTimestamp = ColumnType<string, Date | string, Date | string>;
