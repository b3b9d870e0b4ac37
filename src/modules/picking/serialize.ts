// A pick batch as the spec's Pick session: PascalCase, nullable line columns flattened to "", empty arrays as null.
import { isoTimeOfJson } from '../../db/timestamps.ts';
import type { SessionLineRow, SessionRow } from './queries.ts';


/** A line as the session shows it; `started`: on the 201 that starts the batch, its PickBatchLineID is "" (spec). */
export function serializeLine(line: SessionLineRow, options: { started?: boolean } = {}) {
  return {
    PickBatchLineID: options.started ? '' : line.id,
    OrderLineID: line.order_line_id,
    ItemID: line.item_id,
    ItemNumberDisplay: line.item_number_display,
    ItemDescription: line.item_description,
    BinLocation: line.bin_location ?? '',
    UnitOfMeasure: line.unit_of_measure ?? '',
    ShortReason: line.short_reason ?? '',
    QtyToPick: line.qty_to_pick,
    QtyPicked: line.qty_picked,
    QtyShort: line.qty_short,
    QtyOnHand: line.qty_on_hand,
    QtyAvailable: line.qty_available,
    Status: line.status,
    ExceptionStatus: (line.exception_status ?? '') as '' | 'open' | 'reviewed' | 'superseded',
    PackVerifiedAt: line.pack_verified_at,
    LocZone: line.zone ?? '',
    LocAisle: line.aisle ?? '',
    LocRack: line.rack ?? '',
    LocShelf: line.shelf ?? '',
  };
}

export type PickSessionLineResponse = ReturnType<typeof serializeLine>;

/** `started`: the 201 that starts the batch, where each line's PickBatchLineID is the empty string (spec). */
export function serializeSession(row: SessionRow, options: { started?: boolean } = {}) {
  const lines = row.lines.map((line) => serializeLine(line, options));
  const parcels = row.parcels.map((parcel) => ({
    ID: parcel.id,
    PickBatchID: parcel.pick_batch_id,
    ParcelSeq: parcel.parcel_seq,
    TrackingNumber: parcel.tracking_number,
    TrackingCarrier: parcel.carrier,
    TrackingCapturedAt: isoTimeOfJson(parcel.captured_at),
    TrackingCapturedByName: parcel.captured_by_name,
  }));
  return {
    ID: row.id,
    OrderID: row.order_id,
    OrderNumber: row.order_number,
    CustomerName: row.customer_name,
    ManufacturerName: row.manufacturer_name,
    Status: row.status as 'in_progress' | 'completed' | 'packed' | 'shipped' | 'cancelled',
    Lines: lines.length ? lines : null,
    TrackingNumbers: null,
    TrackingNumber: row.tracking_number,
    TrackingCarrier: row.tracking_carrier,
    TrackingCapturedAt: row.tracking_captured_at,
    TrackingFlaggedForOfficeAt: row.tracking_flagged_for_office_at,
    Parcels: parcels.length ? parcels : null,
    StagedSlot: row.staged_slot,
    StagedAt: row.staged_at,
    StagedLocType: row.staged_loc_type,
  };
}

export type PickSessionResponse = ReturnType<typeof serializeSession>;
