// Contacts as the spec shapes them: the bare contact, plus association_id and role when read through a link.
import type { Selectable } from 'kysely';
import type { ContactsTable } from '../../db/schema.ts';

export type ContactRow = Selectable<ContactsTable>;

export function serializeContact(row: ContactRow) {
  return {
    id: row.id,
    first_name: row.first_name,
    last_name: row.last_name,
    title: row.title,
    email: row.email,
    phone: row.phone,
    mobile: row.mobile,
    notes: row.notes,
    is_primary: row.is_primary,
    status: row.status,
    created_at: row.created_at,
    updated_at: row.updated_at,
    created_by: row.created_by,
    updated_by: row.updated_by,
  };
}

export function serializeLinkedContact(row: ContactRow & { association_id: string; role: string }) {
  return { ...serializeContact(row), association_id: row.association_id, role: row.role };
}
