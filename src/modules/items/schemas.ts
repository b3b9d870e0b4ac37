import { Type } from 'typebox';
import { pageParams } from '../../http/pagination.ts';
import { Closed, Label, Nullable, Text, Timestamp, Uuid } from '../../http/schemas.ts';

export const ITEM_STATUSES = ['active', 'inactive', 'discontinued'] as const;
export const ITEM_FILTERS = ['negative', 'oversold', 'out_of_stock', 'below_reorder', 'missing_price'] as const;
export const ITEM_SORTS = ['mfg_code', 'item_number', 'description', 'on_hand_asc', 'on_hand_desc', 'available_asc', 'last_movement_desc'] as const;
export const MOVEMENT_WINDOWS = ['30d', '90d', '180d', '365d'] as const;
export const VELOCITIES = ['fast', 'slow', 'dead'] as const;

const Money = Nullable(Type.Number());
const NullableUuid = Nullable(Uuid);

export const Item = Closed({
  id: Uuid,
  manufacturer_id: Uuid,
  item_number_display: Type.String(),
  item_number_normalized: Type.String(),
  description: Type.String(),
  description_extended: Nullable(Type.String()),
  category: Nullable(Type.String()),
  selling_uom: Type.String(),
  purchase_uom: Nullable(Type.String()),
  conversion_factor: Money,
  unit_weight: Money,
  cubes: Money,
  warehouse_location: Nullable(Type.String({ description: 'Free-text bin string, not a reference to a location record.' })),
  price_1: Money,
  price_2: Money,
  price_3: Money,
  average_cost: Money,
  last_cost: Money,
  qty_on_hand: Type.Integer(),
  qty_committed: Type.Integer(),
  qty_on_order: Type.Integer(),
  qty_on_backorder: Type.Integer(),
  ytd_returns: Type.Integer(),
  reorder_level: Type.Integer(),
  min_reorder_qty: Type.Integer(),
  economic_order_qty: Type.Integer(),
  lead_time_days: Type.Integer(),
  qty_available: Type.Integer({ description: 'On hand minus committed; can be negative.' }),
  backorder_control: Type.Boolean(),
  serial_tracking: Type.Boolean(),
  // Empty only on list rows that did not select it (never: status is always selected).
  status: Type.Enum(ITEM_STATUSES),
  date_last_ordered: Nullable(Timestamp),
  date_last_received: Nullable(Timestamp),
  date_last_movement: Nullable(Timestamp),
  created_at: Timestamp,
  updated_at: Timestamp,
  freight_class_id: NullableUuid,
  alternate_item_id: NullableUuid,
  gl_account_id: NullableUuid,
  price_code_id: NullableUuid,
  created_by: NullableUuid,
  updated_by: NullableUuid,
  manufacturer_code: Type.Optional(Type.String({ description: 'Join-derived; absent on create and update responses.' })),
  manufacturer_name: Type.Optional(Type.String({ description: 'Join-derived; absent on create and update responses.' })),
});

export const ItemEnvelope = Closed({ item: Item });

export const SearchResult = Closed({
  Item: Item,
  AliasValue: Type.Optional(Type.String({ description: 'The alias that matched, when the hit came through an alias.' })),
  Score: Type.Number({ description: '1.0 exact, 0.95 prefix, 0.75 substring, trigram similarity for fuzzy.' }),
  MatchType: Type.Enum(['exact', 'prefix', 'fuzzy'], { description: 'Substring hits are reported as prefix (Score 0.75).' }),
});

export const ItemLocation = Closed({
  id: Uuid,
  item_id: Uuid,
  location_id: Uuid,
  qty_on_hand: Type.Integer(),
  inventory_status: Type.String(),
  is_primary: Type.Boolean(),
  location_code: Nullable(Type.String()),
});

export const Alias = Closed({ id: Uuid, item_id: Uuid, alias: Type.String(), alias_normalized: Type.String(), created_at: Timestamp });

const Str = (max: number) => Text(max);
const OptionalStr = (max: number) => Type.Optional(Str(max));

export const CreateItem = Closed({
  manufacturer_id: Uuid,
  item_number_display: Label(60),
  description: Label(500),
  description_extended: OptionalStr(4000),
  category: OptionalStr(100),
  purchase_uom: OptionalStr(20),
  warehouse_location: OptionalStr(100),
  selling_uom: Type.Optional(Label(20)),
  unit_weight: Type.Optional(Type.Number({ minimum: 0, maximum: 1e9 })),
});

export const UpdateItem = Closed({
  description: Type.Optional(Label(500)),
  description_extended: OptionalStr(4000),
  category: OptionalStr(100),
  selling_uom: Type.Optional(Label(20)),
  purchase_uom: OptionalStr(20),
  warehouse_location: OptionalStr(100),
  unit_weight: Type.Optional(Nullable(Type.Number({ minimum: 0, maximum: 1e9 }))),
  reorder_level: Type.Optional(Type.Integer({ minimum: 0, maximum: 2_000_000_000 })),
}, { description: 'PATCH: omitted fields keep their value; an empty string clears a nullable field.' });

export const Discontinue = Closed({ superseded_by: Type.Optional(Uuid), reason: OptionalStr(500) });
export const Reactivate = Closed({ reason: OptionalStr(500) });
export const CreateAlias = Closed({ alias: Label(60) });

export const DEFAULT_PER_PAGE = 50;
const ManyText = Type.Optional(Type.Array(Str(100), { maxItems: 50 }));

export const ListItemsQuery = Closed({
  manufacturer: Type.Optional(Uuid),
  status: Type.Optional(Type.Array(Type.Enum(ITEM_STATUSES), { maxItems: 20 })),
  filter: Type.Optional(Type.Array(Type.Enum(ITEM_FILTERS), { maxItems: 20 })),
  category: ManyText,
  location: ManyText,
  uom: ManyText,
  movement: Type.Optional(Type.Enum(MOVEMENT_WINDOWS)),
  velocity: Type.Optional(Type.Enum(VELOCITIES)),
  sort: Type.Optional(Str(40)),
  q: Type.Optional(Str(200)),
  ...pageParams(DEFAULT_PER_PAGE),
});

export const SearchQuery = Closed({ q: Label(200), manufacturer: Type.Optional(Uuid) });
export const ItemParams = Closed({ id: Uuid });
export const AliasParams = Closed({ id: Uuid, aliasId: Uuid });
