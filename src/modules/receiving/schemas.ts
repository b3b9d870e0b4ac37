import { Type } from 'typebox';
import { pageParams } from '../../http/pagination.ts';
import { Closed, Label, Nullable, Text, Timestamp, Uuid } from '../../http/schemas.ts';

export const BATCH_STATUSES = ['draft', 'verified', 'posted', 'voided'] as const;
export const INSPECTION_STATUSES = ['pending', 'passed', 'failed', 'partial', 'waived'] as const;
export const REFERENCE_TYPES = ['purchase_order', 'stock_transfer', 'stock_adjustment', 'cycle_count', 'return', 'other'] as const;
export const PROFILE_FIELDS = ['item', 'qty', 'ref', 'cost', 'uom'] as const;

const NullableUuid = Nullable(Uuid);
// OpenAPI 3.0: a nullable enum carries its type and lists null among its values.
const ReferenceType = Type.Unsafe<(typeof REFERENCE_TYPES)[number] | null>({ type: 'string', enum: [...REFERENCE_TYPES, null], nullable: true });
const Money = Nullable(Type.Number());

export const Batch = Closed({
  id: Uuid,
  manufacturer_id: Uuid,
  batch_number: Type.String({ description: 'RB-YYYYMMDD-XXXXXX (the day it was created, six random letters and digits).' }),
  status: Type.Enum(BATCH_STATUSES),
  received_date: Timestamp,
  posted_date: Nullable(Timestamp),
  posted_by: NullableUuid,
  created_by: NullableUuid,
  updated_by: NullableUuid,
  notes: Nullable(Type.String()),
  created_at: Timestamp,
  updated_at: Timestamp,
  manufacturer_code: Type.Optional(Type.String({ description: 'Join-derived; absent on create and import responses.' })),
  manufacturer_name: Type.Optional(Type.String({ description: 'Join-derived; absent on create and import responses.' })),
  line_count: Type.Optional(Type.Integer({ description: 'List rows only.' })),
  total_qty: Type.Optional(Type.Integer({ description: 'List rows only: the sum of qty_received.' })),
}, { description: 'received_date is a date, written as midnight UTC. created_by and updated_by are null on create and import responses.' });

export const Line = Closed({
  id: Uuid,
  batch_id: Uuid,
  item_id: Uuid,
  reference_number: Nullable(Type.String()),
  reference_type: ReferenceType,
  qty_received: Type.Integer(),
  qty_expected: Nullable(Type.Integer({ description: 'Set by import; null for lines added by hand.' })),
  new_unit_cost: Money,
  old_unit_cost: Nullable(Type.Number({ description: 'The item\'s average cost when the line was added.' })),
  new_location_id: NullableUuid,
  old_location: Nullable(Type.String({ description: 'The item\'s free-text warehouse_location when the line was added.' })),
  inspection_status: Type.Enum(INSPECTION_STATUSES),
  qty_passed: Nullable(Type.Integer()),
  qty_failed: Nullable(Type.Integer()),
  inspection_notes: Nullable(Type.String()),
  inspected_by: NullableUuid,
  inspected_at: Nullable(Timestamp),
  item_number_display: Type.String(),
  item_description: Type.String(),
  created_at: Timestamp,
  updated_at: Timestamp,
  item_qty_on_hand: Nullable(Type.Integer({ description: 'The item\'s on-hand now; null on the add-line response.' })),
  stock_order_line_id: NullableUuid,
  new_price: Money,
  old_price: Money,
  created_by: NullableUuid,
  updated_by: NullableUuid,
  location_code: Type.Optional(Type.String({ description: 'Joined: the code of new_location_id, empty when none. Absent on the add-line response.' })),
  inspected_by_name: Type.Optional(Type.String({ description: 'Joined: the inspector\'s name, empty when not inspected. Absent on the add-line response.' })),
}, { description: 'stock_order_line_id, new_price, old_price, created_by and updated_by are always null.' });

export const BatchWithLines = Closed({ batch: Batch, lines: Type.Array(Line) });
export const BatchOnly = Closed({ batch: Batch });
export const LineOnly = Closed({ line: Line });
export const Skipped = Closed({
  index: Type.Integer({ description: 'JSON import: the 0-based index in lines. File import: the row number in the file (1-based).' }),
  reason: Type.String(),
  item_id: Type.String({ description: 'The item_id sent (JSON) or the item number read (file).' }),
});
export const ImportResult = Closed({ batch: Batch, lines: Type.Array(Line), added: Type.Integer(), skipped: Type.Array(Skipped) });

export const Profile = Closed({
  manufacturer_id: Uuid,
  sheet_name: Nullable(Type.String({ description: 'null: the first sheet (and always for CSV).' })),
  header_row: Type.Integer({ minimum: 1 }),
  column_map: Closed({
    item: Type.String(), qty: Type.String(),
    ref: Type.Optional(Type.String()), cost: Type.Optional(Type.String()), uom: Type.Optional(Type.String()),
  }),
  updated_at: Timestamp,
});

const DateOnly = (description: string) => Type.String({ format: 'date', description });
const Qty = Type.Integer({ minimum: 1, maximum: 100_000_000 });
const Cost = Type.Number({ minimum: 0, maximum: 99_999_999 });
const Notes = Type.Optional(Nullable(Text(2000)));
const Reference = Type.Optional(Nullable(Text(100)));

export const CreateBatch = Closed({
  manufacturer_id: Uuid,
  received_date: Type.Optional(DateOnly('YYYY-MM-DD; default today in the server\'s time zone.')),
  notes: Notes,
});

export const AddLine = Closed({
  item_id: Uuid,
  qty_received: Qty,
  reference_number: Reference,
  reference_type: Type.Optional(ReferenceType),
  new_unit_cost: Type.Optional(Nullable(Cost)),
  new_location_id: Type.Optional(NullableUuid),
});

export const EditLine = Closed({
  qty_received: Qty,
  reference_number: Type.Optional(Nullable(Text(100, { description: 'An empty string clears it.' }))),
  new_unit_cost: Type.Optional(Nullable(Cost)),
  new_location_id: Type.Optional(NullableUuid),
}, { description: 'Omitted fields keep their value; null (or "" for reference_number) clears one.' });

export const RecordInspection = Closed({
  qty_passed: Type.Integer({ minimum: 0, maximum: 100_000_000 }),
  qty_failed: Type.Integer({ minimum: 0, maximum: 100_000_000 }),
  inspection_notes: Type.Optional(Nullable(Text(2000))),
}, { description: 'qty_passed + qty_failed must equal qty_received (else 400 bad_request). Result: passed when none failed, failed when none passed, partial otherwise.' });

export const VoidBatch = Closed({ reason: Label(500) });
export const SetLocation = Closed({ location_id: Uuid });

export const ImportBatch = Closed({
  manufacturer_id: Uuid,
  received_date: Type.Optional(DateOnly('YYYY-MM-DD; default today in the server\'s time zone.')),
  notes: Notes,
  lines: Type.Array(Closed({
    item_id: Uuid,
    qty_received: Qty,
    reference_number: Reference,
    reference_type: Type.Optional(ReferenceType),
    new_unit_cost: Type.Optional(Nullable(Cost)),
    new_location_id: Type.Optional(NullableUuid),
  }), { minItems: 1, maxItems: 10_000 }),
});

const Header = Label(100, { description: 'The column\'s header text in the file (matched ignoring case and surrounding spaces).' });
export const PutProfile = Closed({
  sheet_name: Type.Optional(Nullable(Label(31))),
  header_row: Type.Integer({ minimum: 1, maximum: 1000 }),
  column_map: Closed({
    item: Header, qty: Header,
    ref: Type.Optional(Header), cost: Type.Optional(Header), uom: Type.Optional(Header),
  }, { description: 'Canonical field -> header text. item (item number or alias) and qty are required.', example: { item: 'Part number', qty: 'Qty' } }),
});

export const DEFAULT_PER_PAGE = 50;
export const ListBatchesQuery = Closed({
  status: Type.Optional(Type.Array(Type.Enum(BATCH_STATUSES), { maxItems: 4 })),
  manufacturer: Type.Optional(Uuid),
  from: Type.Optional(DateOnly('received_date on or after (YYYY-MM-DD).')),
  to: Type.Optional(DateOnly('received_date on or before (YYYY-MM-DD), inclusive.')),
  ...pageParams(DEFAULT_PER_PAGE),
});

export const ImportFileQuery = Closed({ manufacturer_id: Uuid });
export const LineParams = Closed({ id: Uuid, lineId: Uuid });
export const ManufacturerParams = Closed({ manufacturerId: Uuid });
