import { Type } from 'typebox';
import { pageParams } from '../../http/pagination.ts';
import { Closed, Label, Nullable, Text, Timestamp, Uuid } from '../../http/schemas.ts';
import { Movement } from '../inventory/schemas.ts';

export const LOCATION_TYPES = ['storage', 'staging', 'receiving', 'shipping', 'quarantine'] as const;

export const Location = Closed({
  id: Uuid,
  warehouse_id: Uuid,
  zone: Nullable(Type.String()),
  aisle: Nullable(Type.String()),
  rack: Nullable(Type.String()),
  shelf: Nullable(Type.String()),
  bin: Nullable(Type.String()),
  location_code: Type.String(),
  location_type: Type.Enum(LOCATION_TYPES),
  capacity: Nullable(Type.Integer({ description: 'Sending 0 stores and reads back null.' })),
  is_active: Type.Boolean(),
  created_at: Timestamp,
  updated_at: Timestamp,
  warehouse_name: Type.Optional(Type.String({ description: 'On get, update, retire, reactivate and move-all destination responses; not on create or list rows.' })),
  item_count: Type.Optional(Type.Integer({ description: 'List rows only: distinct items stored.' })),
  total_qty: Type.Optional(Type.Integer({ description: 'List rows only: units stored.' })),
});

export const LocationStockItem = Closed({
  item_id: Uuid,
  item_number_display: Type.String(),
  description: Type.String(),
  manufacturer_name: Nullable(Type.String()),
  qty_on_hand: Type.Integer(),
  inventory_status: Type.String(),
  is_primary: Type.Boolean(),
});

const Part = Type.Optional(Text(40));
const Code = Text(60, { pattern: '^[A-Za-z0-9][A-Za-z0-9._/-]*$', description: 'Unique; stored uppercase.' });
const Capacity = Type.Optional(Nullable(Type.Integer({ minimum: 0, maximum: 2_000_000_000 })));

export const CreateLocation = Closed({
  warehouse_id: Type.Optional(Uuid),
  zone: Part, aisle: Part, rack: Part, shelf: Part, bin: Part,
  location_code: Type.Optional(Code),
  location_type: Type.Optional(Type.Enum(LOCATION_TYPES)),
  capacity: Capacity,
}, { description: 'warehouse_id defaults to MAIN; location_code defaults to the parts joined by dashes.' });

export const UpdateLocation = Closed({
  zone: Part, aisle: Part, rack: Part, shelf: Part, bin: Part,
  location_code: Type.Optional(Code),
  location_type: Type.Optional(Type.Enum(LOCATION_TYPES)),
  capacity: Capacity,
}, { description: 'PATCH: an empty string clears a part; capacity 0 or null clears it.' });

export const DEFAULT_PER_PAGE = 50;
export const ListLocationsQuery = Closed({
  warehouse_id: Type.Optional(Uuid),
  location_type: Type.Optional(Type.Array(Type.Enum(LOCATION_TYPES), { maxItems: 5 })),
  is_active: Type.Optional(Type.Boolean()),
  q: Type.Optional(Text(60, { description: 'Substring of the location code.' })),
  ...pageParams(DEFAULT_PER_PAGE),
});
export const LocationStockQuery = Closed({ ...pageParams(DEFAULT_PER_PAGE) });

const Destination = {
  to_location_code: Label(60),
  auto_create: Type.Optional(Type.Boolean({ default: false, description: 'Create the destination (storage, same warehouse) when the code is unknown.' })),
};
export const Relocate = Closed({ item_id: Uuid, qty: Type.Integer({ minimum: 1, maximum: 1_000_000_000 }), ...Destination });
export const MoveAll = Closed(Destination);

export const Relocated = Closed({ item_id: Uuid, qty: Type.Integer(), from_location_id: Uuid, to_location: Location, movements: Type.Array(Movement) });
export const MovedAll = Closed({ location: Location, moved_items: Type.Integer(), moved_qty: Type.Integer(), movements: Type.Array(Movement) });
