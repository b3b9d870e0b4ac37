import { Type } from 'typebox';
import { Closed, Label, Nullable, Timestamp, Uuid } from '../../http/schemas.ts';
import { CARRIERS } from '../picking/schemas.ts';

export const CarrierWebhook = Closed({
  id: Uuid,
  name: Type.String(),
  carrier: Type.Enum(CARRIERS),
  token_prefix: Type.String({ description: 'The first characters of the token, to tell webhooks apart.' }),
  url_path: Type.String({ description: 'Where the carrier posts: /webhooks/carrier/<token> (shown in full only on create).' }),
  created_by: Nullable(Uuid),
  created_at: Timestamp,
});

export const CreatedCarrierWebhook = Closed({
  ...CarrierWebhook.properties,
  token: Type.String({ description: 'The URL path segment. Shown once.' }),
  secret: Type.String({ description: 'The signing secret of Carrier-Signature. Shown once.' }),
});

export const NewCarrierWebhook = Closed({
  name: Label(100, { description: 'Which carrier account or feed this is.' }),
  carrier: Type.Enum(CARRIERS, { description: 'The carrier of the parcels it reports.' }),
});

export const TokenParams = Closed({ tenantToken: Type.String({ minLength: 1, maxLength: 200 }) });

/** What a carrier posts (signed): a label it made, for a batch named by number or by its order. */
export const CarrierMessage = Closed({
  event_id: Type.String({ minLength: 1, maxLength: 200, pattern: '^[^\\u0000]*$', description: 'The carrier\'s id of this message: the same id again changes nothing.' }),
  tracking_number: Label(120),
  batch_number: Type.Optional(Type.String({ minLength: 1, maxLength: 40, pattern: '^[^\\u0000]*$' })),
  order_number: Type.Optional(Type.Integer({ minimum: 1, maximum: 2_147_483_647 })),
  status: Type.Optional(Type.String({ maxLength: 100, pattern: '^[^\\u0000]*$', description: 'The carrier\'s status text; recorded in history.' })),
});

export const CarrierReceipt = Closed({
  duplicate: Type.Boolean({ description: 'true when this event_id was received before: nothing changed.' }),
  pick_batch_id: Nullable(Uuid),
  batch_number: Nullable(Type.String()),
  changed: Type.Boolean({ description: 'Whether a parcel was added.' }),
});
