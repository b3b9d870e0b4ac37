import { Type } from 'typebox';
import { pageParams } from '../../http/pagination.ts';
import { Closed, Label, Nullable, Text, Timestamp, Uuid } from '../../http/schemas.ts';
import { PERMISSIONS } from '../../domain/roles.ts';

export const CreateApiKey = Closed({
  user_id: Uuid,
  name: Label(100),
  scopes: Type.Array(Type.Enum(PERMISSIONS), { minItems: 1, maxItems: PERMISSIONS.length, uniqueItems: true }),
  expires_at: Type.Optional(Text(40, { description: 'RFC 3339 date-time, or YYYY-MM-DD (the key stops at 00:00 UTC of that day).' })),
});

export const CreatedApiKey = Closed({ id: Uuid, key: Type.Optional(Type.String({ description: 'The plaintext key, shown this once (absent on an idempotent replay).' })) });

export const ApiKey = Closed({
  id: Uuid,
  name: Type.String(),
  user_id: Uuid,
  user_name: Type.String(),
  key_prefix: Type.String({ description: 'First characters of the key, to tell keys apart.' }),
  scopes: Type.Array(Type.String()),
  status: Type.Enum(['active', 'revoked', 'expired']),
  expires_at: Nullable(Timestamp),
  revoked_at: Nullable(Timestamp),
  created_by: Nullable(Uuid),
  created_at: Timestamp,
});

export const DEFAULT_PER_PAGE = 50;
export const ListApiKeysQuery = Closed({
  user_id: Type.Optional(Uuid),
  status: Type.Optional(Type.Enum(['active', 'revoked', 'expired'])),
  ...pageParams(DEFAULT_PER_PAGE),
});
