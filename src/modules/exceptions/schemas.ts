// Pick exceptions: one row shape for short picks, mispicks and quality flags, their detail, and the office's actions.
import { Type } from 'typebox';
import { pageParams } from '../../http/pagination.ts';
import { Closed, Label, Nullable, Text, Timestamp, Uuid } from '../../http/schemas.ts';
import { OrderBlock } from '../orders/schemas.ts';

export const KINDS = ['short_pick', 'mispick', 'quality'] as const;
export const STATUSES = ['open', 'reviewed', 'superseded'] as const;
export const DEFAULT_PER_PAGE = 50;

const NullableText = Nullable(Type.String());
const NullableTime = Nullable(Timestamp);

export const PickException = Closed({
  id: Uuid,
  kind: Type.Enum(KINDS),
  status: Type.Enum(STATUSES),
  manufacturer_id: Uuid,
  order_id: Nullable(Uuid),
  order_number: Type.Integer({ description: '0 when the exception has no order.' }),
  pick_batch_id: Nullable(Uuid),
  batch_number: Type.String(),
  order_line_id: Nullable(Uuid),
  pick_batch_line_id: Nullable(Uuid),
  item_id: Uuid,
  item_number_display: Type.String(),
  item_description: Type.String(),
  qty_short: Type.Integer({ description: 'Short picks only; 0 on the other kinds.' }),
  short_reason: Type.String({ description: 'Short picks only; "" on the other kinds.' }),
  flag_reason: Type.String({ description: 'Mispicks and quality flags; "" on short picks.' }),
  actual_item_id: Nullable(Uuid),
  actual_item_number_display: Type.String({ description: 'Mispicks only; "" on the other kinds.' }),
  actual_qty: Type.Integer({ description: 'Mispicks only; 0 on the other kinds.' }),
  awaiting_supply_partner: Type.Boolean({ description: 'The exception\'s order block is open and waits for the supply partner.' }),
  awaiting_supply_partner_note: NullableText,
  resolution_disposition: NullableText,
  resolution_note: NullableText,
  created_by_name: NullableText,
  created_at: Timestamp,
  reviewed_at: NullableTime,
  reviewed_by_name: NullableText,
  updated_at: Timestamp,
});

export const ExceptionDetail = Closed({ ...PickException.properties, block: Nullable(OrderBlock) });

export const ListExceptionsQuery = Closed({
  kind: Type.Optional(Type.Enum(KINDS)),
  status: Type.Optional(Type.Enum(STATUSES)),
  awaiting_supply_partner: Type.Optional(Type.Enum(['1', '0'], { description: '1: only exceptions whose block waits for the supply partner; 0: the others.' })),
  order: Type.Optional(Uuid),
  item: Type.Optional(Uuid),
  ...pageParams(DEFAULT_PER_PAGE),
});

export const ExceptionParams = Closed({ id: Uuid });
export const ReviewBody = Closed({
  disposition: Label(100, { description: 'What the office decided (free text, e.g. backorder, found, adjust stock, credit).' }),
  note: Type.Optional(Nullable(Text(2000))),
});
export const AwaitBody = Closed({ note: Type.Optional(Nullable(Text(2000))) });
