import type { Selectable } from 'kysely';
import type { UsersTable } from '../../db/schema.ts';
import type { Role } from '../../domain/roles.ts';

/** A user as the admin API shows it: never the password hash or invite token. */
export function serializeUser(row: Selectable<UsersTable>, inviteUrl?: string) {
  return {
    id: row.id,
    name: row.name,
    email: row.email,
    role: row.role as Role,
    manufacturer_id: row.manufacturer_id,
    is_active: row.is_active,
    password_set: row.password_hash !== null,
    invite_pending: row.invite_token_hash !== null,
    invite_expires_at: row.invite_expires_at,
    deactivated_at: row.deactivated_at,
    created_at: row.created_at,
    updated_at: row.updated_at,
    ...(inviteUrl ? { invite_url: inviteUrl } : {}),
  };
}
