import { Type } from 'typebox';
import { pageParams } from '../../http/pagination.ts';
import { Closed, Label, Nullable, Timestamp, Uuid } from '../../http/schemas.ts';

export const MOVEMENT_TYPES = ['receipt', 'shipment', 'adjustment', 'transfer', 'return', 'cycle_count_correction'] as const;
export const INVENTORY_STATUSES = ['available', 'quarantine'] as const;
export const ADJUSTMENT_TYPES = ['adjustment', 'cycle_count_correction'] as const;

export const Movement = Closed({
  id: Uuid,
  item_id: Uuid,
  manufacturer_id: Uuid,
  item_number_display: Type.String(),
  manufacturer_name: Type.String(),
  reason: Type.String(),
  reference_type: Type.String(),
  movement_type: Type.Enum(MOVEMENT_TYPES),
  quantity: Type.Integer({ description: 'Signed change.' }),
  balance_after: Type.Integer({ description: 'The item\'s on-hand after this movement.' }),
  inventory_status: Type.Enum(INVENTORY_STATUSES, {
    description: 'quarantine: units into or out of a quarantine bin (failed QC); they are not on hand, so balance_after repeats on-hand and ' +
      'on-hand is the sum of the available rows.',
  }),
  reference_id: Uuid,
  cycle_count_batch_id: Nullable(Uuid),
  performed_by_name: Type.String(),
  performed_at: Timestamp,
}, { description: 'A row of the movement ledger.' });

export const CreateAdjustment = Closed({
  item_id: Uuid,
  quantity: Type.Integer({ minimum: -1_000_000_000, maximum: 1_000_000_000, not: { enum: [0] }, description: 'Signed, non-zero.', example: 12 }),
  reason: Label(500),
  location_id: Type.Optional(Uuid),
}, { description: 'location_id defaults to the item\'s primary bin.' });

const DateOnly = Type.String({ format: 'date', description: 'YYYY-MM-DD' });
export const DEFAULT_PER_PAGE = 50;

const ledgerFilters = {
  item: Type.Optional(Uuid),
  manufacturer: Type.Optional(Uuid),
  from: Type.Optional(DateOnly),
  to: Type.Optional(Type.String({ format: 'date', description: 'YYYY-MM-DD, inclusive' })),
  ...pageParams(DEFAULT_PER_PAGE),
};
export const MovementsQuery = Closed({ ...ledgerFilters, movement_type: Type.Optional(Type.Array(Type.Enum(MOVEMENT_TYPES), { maxItems: 10 })) });
export const AdjustmentsQuery = Closed({ ...ledgerFilters, movement_type: Type.Optional(Type.Array(Type.Enum(ADJUSTMENT_TYPES), { maxItems: 10 })) });

