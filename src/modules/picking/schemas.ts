// Pick sessions in the spec's PascalCase shape, and the bodies of the floor's actions.
import { Type } from 'typebox';
import { pageParams } from '../../http/pagination.ts';
import { Closed, Label, Nullable, Text, Timestamp, Uuid } from '../../http/schemas.ts';

export const BATCH_STATUSES = ['in_progress', 'completed', 'packed', 'shipped', 'cancelled'] as const;
export const LINE_STATUSES = ['pending', 'picked', 'short', 'skipped'] as const;
export const CARRIERS = ['ups', 'fedex', 'usps', 'other'] as const;
export const DEFAULT_PER_PAGE = 25;

const Qty = Type.Integer({ minimum: 1, maximum: 100_000_000 });
const NullableTime = Nullable(Timestamp);
const Carrier = Type.Enum(CARRIERS);
const NullableCarrier = Type.Unsafe<(typeof CARRIERS)[number] | null>({ type: 'string', enum: [...CARRIERS, null], nullable: true });
const TrackingNumber = Label(120, { description: 'At most 120 characters.' });
const Reason = Label(500);

export const PickLine = Closed({
  PickBatchLineID: Type.String({ description: 'The line\'s id; the empty string on the 201 that starts the batch.' }),
  OrderLineID: Uuid,
  ItemID: Uuid,
  ItemNumberDisplay: Type.String(),
  ItemDescription: Type.String(),
  BinLocation: Type.String({ description: 'The code of the bin to pick from; empty when the item has none.' }),
  UnitOfMeasure: Type.String(),
  ShortReason: Type.String(),
  QtyToPick: Type.Integer(),
  QtyPicked: Type.Integer(),
  QtyShort: Type.Integer(),
  QtyOnHand: Type.Integer(),
  QtyAvailable: Type.Integer(),
  Status: Type.Enum(LINE_STATUSES),
  ExceptionStatus: Type.Enum(['', 'open', 'reviewed', 'superseded'], { description: 'Of the line\'s latest pick exception.' }),
  PackVerifiedAt: NullableTime,
  LocZone: Type.String(),
  LocAisle: Type.String(),
  LocRack: Type.String(),
  LocShelf: Type.String(),
});

export const PickParcel = Closed({
  ID: Uuid,
  PickBatchID: Uuid,
  ParcelSeq: Type.Integer(),
  TrackingNumber: Type.String(),
  TrackingCarrier: Carrier,
  TrackingCapturedAt: Timestamp,
  TrackingCapturedByName: Nullable(Type.String()),
});

export const PickSession = Closed({
  ID: Uuid,
  OrderID: Uuid,
  OrderNumber: Type.Integer(),
  CustomerName: Type.String(),
  ManufacturerName: Type.String(),
  Status: Type.Enum(BATCH_STATUSES, { description: 'The spec\'s statuses, and cancelled for a batch cancelled before it shipped.' }),
  Lines: Nullable(Type.Array(PickLine)),
  TrackingNumbers: Type.Null({ description: 'Always null (a dead field of the spec).' }),
  TrackingNumber: Nullable(Type.String({ description: 'The primary box: the live parcel with the lowest ParcelSeq.' })),
  TrackingCarrier: NullableCarrier,
  TrackingCapturedAt: NullableTime,
  TrackingFlaggedForOfficeAt: NullableTime,
  Parcels: Nullable(Type.Array(PickParcel)),
  StagedSlot: Nullable(Type.String({ description: 'null with StagedAt set: handed over directly.' })),
  StagedAt: NullableTime,
  StagedLocType: Type.Unsafe<'staging' | 'shipping' | null>({ type: 'string', enum: ['staging', 'shipping', null], nullable: true }),
});

export const BatchParams = Closed({ id: Uuid });
export const LineParams = Closed({ id: Uuid, lineId: Uuid });
export const ParcelParams = Closed({ id: Uuid, parcelId: Uuid });

export const ListBatchesQuery = Closed({
  status: Type.Optional(Type.Enum(BATCH_STATUSES)),
  order: Type.Optional(Uuid),
  manufacturer: Type.Optional(Uuid),
  ...pageParams(DEFAULT_PER_PAGE),
});

export const StartBatch = Closed({ order_id: Uuid });
export const PickBody = Closed({ qty_picked: Qty });
export const ShortBody = Closed({ qty_short: Qty, reason: Reason });
export const MispickBody = Closed({
  actual_item_id: Uuid,
  actual_qty: Type.Integer({ minimum: 0, maximum: 100_000_000, description: 'Units of the wrong item found or picked.' }),
  reason: Reason,
});
export const QualityBody = Closed({ reason: Reason });
export const StageBody = Closed({
  slot: Nullable(Text(100, { description: 'Code of an active staging or shipping location; null hands the order over directly.' })),
});
export const TrackingBody = Closed({ tracking_number: TrackingNumber, carrier: Carrier });
export const ShipBody = Closed({
  tracking_number: Type.Optional(TrackingNumber),
  carrier: Type.Optional(Carrier),
});
export const PickupBody = Closed({ picked_up_by_name: Label(200), notes: Type.Optional(Nullable(Text(2000))) });
export const PickupParams = Closed({ id: Uuid });
