import { Type } from 'typebox';
import { Closed, Uuid } from '../../http/schemas.ts';
import { CARRIERS } from '../picking/schemas.ts';

export const TrackingImportQuery = Closed({
  confirm_overwrite: Type.Optional(Type.Boolean({ default: false, description: 'Replace tracking a batch already has (else such rows are 422).' })),
});

export const TrackingImportResult = Closed({
  rows: Type.Array(Closed({
    row: Type.Integer({ description: 'The line of the file the row starts on (the header is line 1).' }),
    batch_id: Uuid,
    batch_number: Type.String(),
    order_id: Uuid,
    order_number: Type.Integer(),
    tracking_number: Type.String(),
    carrier: Type.Enum(CARRIERS),
    changed: Type.Boolean({ description: 'false when the batch already had this tracking.' }),
  })),
  changed: Type.Integer({ description: 'Batches whose tracking changed.' }),
});
