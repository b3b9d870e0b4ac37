import { Type } from 'typebox';
import { pageParams } from '../../http/pagination.ts';
import { Closed, Label, Nullable, Text, Timestamp, Uuid } from '../../http/schemas.ts';
import { PERMISSIONS, ROLES } from '../../domain/roles.ts';

export const User = Closed({
  id: Uuid,
  name: Type.String(),
  email: Nullable(Type.String()),
  role: Type.Enum(ROLES),
  manufacturer_id: Nullable(Uuid),
  is_active: Type.Boolean(),
  password_set: Type.Boolean(),
  invite_pending: Type.Boolean({ description: 'A consignor invite was issued and not yet accepted.' }),
  invite_expires_at: Nullable(Timestamp),
  deactivated_at: Nullable(Timestamp),
  created_at: Timestamp,
  updated_at: Timestamp,
  invite_url: Type.Optional(Type.String({ description: 'Consignor create and invite re-issue only: where the consignor sets a password (POST {password}). Shown once; absent on an idempotent replay.' })),
});

const Name = Label(200);
const Email = Text(254, { format: 'email' });
const Password = Text(200, { minLength: 12, description: 'At least 12 characters.' });

export const CreateUser = Closed({
  name: Name,
  email: Email,
  role: Type.Enum(ROLES),
  manufacturer_id: Type.Optional(Uuid),
  password: Type.Optional(Password),
}, {
  description: 'consignor: manufacturer_id required, no password (the response carries invite_url). partner_portal: manufacturer_id and password. Other roles: password, no manufacturer_id.',
  example: { name: 'Carla Rivera', email: 'carla@acme.example', role: 'consignor', manufacturer_id: '0b6f3c1e-8d2a-4c5b-9f7e-1a2b3c4d5e6f' },
});

// PATCH semantics of the spec: an empty string (or null) clears a nullable field.
const EmailOrEmpty = Type.String({ maxLength: 254, pattern: '^(|[^\\s@]+@[^\\s@]+\\.[^\\s@]+)$', description: 'An email address; empty clears it.', example: 'carla@acme.example' });
const UuidOrEmpty = Type.String({
  pattern: '^(|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})$', description: 'A supply partner id; empty clears it.',
  example: '0b6f3c1e-8d2a-4c5b-9f7e-1a2b3c4d5e6f',
});
export const UpdateUser = Closed({
  name: Type.Optional(Name),
  email: Type.Optional(Nullable(EmailOrEmpty)),
  role: Type.Optional(Type.Enum(ROLES)),
  manufacturer_id: Type.Optional(Nullable(UuidOrEmpty)),
  password: Type.Optional(Password),
});

export const DEFAULT_PER_PAGE = 50;
export const ListUsersQuery = Closed({
  role: Type.Optional(Type.Array(Type.Enum(ROLES))),
  manufacturer: Type.Optional(Uuid),
  status: Type.Optional(Type.Enum(['active', 'inactive'])),
  q: Type.Optional(Text(200, { description: 'Substring of name or email, case-insensitive.' })),
  ...pageParams(DEFAULT_PER_PAGE),
});

export const RoleDescription = Closed({
  role: Type.Enum(ROLES),
  partner_scoped: Type.Boolean(),
  administers: Type.Boolean({ description: 'Administers users and reference data.' }),
  api_access: Type.Boolean(),
  permissions: Type.Array(Type.Enum(PERMISSIONS)),
});

export const InviteParams = Closed({ token: Text(64, { pattern: '^[0-9A-Za-z]+$' }) });
export const AcceptInvite = Closed({ password: Password });
