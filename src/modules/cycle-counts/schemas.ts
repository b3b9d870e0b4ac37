import { Type } from 'typebox';
import { pageParams } from '../../http/pagination.ts';
import { Closed, Nullable, Timestamp, Uuid } from '../../http/schemas.ts';

export const CYCLE_COUNT_STATUSES = ['draft', 'in_progress', 'completed', 'cancelled'] as const;
export const LINE_STATUSES = ['pending', 'counted', 'approved'] as const;

export const CycleCountBatch = Closed({
  id: Uuid,
  batch_number: Type.String({ description: 'CC-YYYYMMDD-XXXXXX.' }),
  status: Type.Enum(CYCLE_COUNT_STATUSES),
  triggered_by: Type.String({ description: 'manual: generated through the API.' }),
  assigned_to: Nullable(Uuid),
  started_at: Nullable(Timestamp),
  completed_at: Nullable(Timestamp),
  notes: Nullable(Type.String()),
  created_at: Timestamp,
  line_count: Type.Integer(),
  counted_count: Type.Integer({ description: 'Lines counted (or counted and approved).' }),
});

export const CycleCountLine = Closed({
  id: Uuid,
  batch_id: Uuid,
  item_id: Uuid,
  location_id: Uuid,
  system_qty: Type.Integer({ description: 'The bin\'s quantity when generated; refreshed when the count is recorded.' }),
  counted_qty: Nullable(Type.Integer()),
  variance: Nullable(Type.Integer({ description: 'counted_qty - system_qty.' })),
  status: Type.Enum(LINE_STATUSES),
  counted_by: Nullable(Uuid),
  counted_at: Nullable(Timestamp),
  item_number_display: Type.String(),
  item_description: Type.String(),
  location_code: Nullable(Type.String()),
});

export const BatchOnly = Closed({ batch: CycleCountBatch });
export const BatchWithLines = Closed({ batch: CycleCountBatch, lines: Type.Array(CycleCountLine) });

export const MAX_SAMPLE = 500;
export const Generate = Closed({
  num_items: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_SAMPLE, default: 10, description: 'Items to sample (default 10).' })),
});
export const RecordCount = Closed({ line_id: Uuid, counted_qty: Type.Integer({ minimum: 0, maximum: 1_000_000_000 }) });

export const DEFAULT_PER_PAGE = 50;
export const ListQuery = Closed({
  status: Type.Optional(Type.Array(Type.Enum(CYCLE_COUNT_STATUSES), { maxItems: 4 })),
  ...pageParams(DEFAULT_PER_PAGE),
});
export const LineParams = Closed({ id: Uuid, lineId: Uuid });
