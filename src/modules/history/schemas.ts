import { Type } from 'typebox';
import { pageParams } from '../../http/pagination.ts';
import { Closed, Nullable, Timestamp, Uuid } from '../../http/schemas.ts';

export const DEFAULT_PER_PAGE = 50;

export const HistoryQuery = Closed({
  entity_type: Type.String({ pattern: '^[a-z_]{1,40}$', description: 'The record\'s type as audit rows name it: order, item, pick_batch, receiving_batch, user, ...' }),
  entity_id: Uuid,
  ...pageParams(DEFAULT_PER_PAGE),
});

const Change = Closed({ before: Type.Unknown(), after: Type.Unknown() });

export const HistoryEntry = Closed({
  id: Uuid,
  occurred_at: Timestamp,
  entity_type: Type.String(),
  entity_id: Uuid,
  action: Type.String(),
  manufacturer_id: Nullable(Uuid),
  user: Nullable(Closed({ id: Uuid, name: Type.String() })),
  api_key_id: Nullable(Uuid),
  before: Type.Unknown({ description: 'The record\'s values before (null when it was created).' }),
  after: Type.Unknown({ description: 'The record\'s values after.' }),
  changes: Type.Record(Type.String(), Change, {
    description: 'Each top-level field whose value differs between before and after, as {before, after}; a field absent on one side is null there.',
  }),
}, { description: 'An audit row: who (user and key), when, and what changed.' });
