// Contacts of supply partners and customers. A contact may be linked to several entities, each link with its own
// role; what a key may do with a contact follows from the permissions it holds on the entities the contact is linked to.
import { sql, type Kysely, type Selectable, type Transaction } from 'kysely';
import type { ContactAssociationsTable, DB } from '../../db/schema.ts';
import { inTransaction } from '../../db/transaction.ts';
import { isEmailAddress } from '../../domain/addresses.ts';
import { recordHistory } from '../../domain/history.ts';
import type { Permission } from '../../domain/roles.ts';
import { hasPermission, requirePermission, type Actor } from '../../http/auth.ts';
import { ApiError, forbidden, notFound } from '../../domain/errors.ts';
import type { Page } from '../../http/pagination.ts';
import { getCustomer } from '../customers/service.ts';
import { getManufacturer } from '../manufacturers/service.ts';
import {
  activeLinkedContacts, contactInScope, inListOrder, LINK_COLUMN, linkBetween, linksOf, listLinkedContacts, type EntityType,
} from './queries.ts';
import { serializeContact, serializeLinkedContact, type ContactRow } from './serialize.ts';

export type { EntityType } from './queries.ts';

type Executor = Kysely<DB> | Transaction<DB>;
type Access = 'view' | 'edit';
type Link = Selectable<ContactAssociationsTable>;

/** A contact's permissions are those of the entity it is reached through. */
const ENTITY_PERMISSIONS: Record<EntityType, Record<Access, Permission>> = {
  manufacturer: { view: 'manufacturers.view', edit: 'manufacturers.edit' },
  customer: { view: 'customers.view', edit: 'customers.edit' },
};

const entityTypeOf = (link: Link): EntityType => (link.manufacturer_id ? 'manufacturer' : 'customer');
const entityIdOf = (link: Link) => (link.manufacturer_id ?? link.customer_id)!;
// The supply partner a history row of the contact is filed under: the first partner it is linked to, if any.
const partnerOf = (links: Link[]) => links.find((link) => link.manufacturer_id)?.manufacturer_id ?? null;
const describeLink = (link: Link) => ({ association_id: link.id, entity_type: entityTypeOf(link), entity_id: entityIdOf(link), role: link.role });

/** The entity a contact operation names: the key needs the entity's permission and must reach the entity. */
async function reachEntity(db: Executor, actor: Actor, entityType: EntityType, entityId: string, access: Access): Promise<void> {
  requirePermission(actor, ENTITY_PERMISSIONS[entityType][access]);
  if (entityType === 'manufacturer') {
    await getManufacturer(db, actor, entityId);
    return;
  }
  // Customers are global, but a partner-scoped key reaches only the contacts of its own partner.
  if (actor.manufacturerId) throw new ApiError(404, 'not_found', 'customer contacts are not available to a partner-scoped key');
  await getCustomer(db, entityId);
}

/**
 * A contact the key may read (view) or change (edit): it holds that permission on at least one entity the contact
 * is linked to. A contact without links is read with the view permission of either entity type, but changed only by a
 * key holding the edit permission of both (or of a system_admin): any key with one of them could otherwise take over
 * a supply partner's contact whose last link is gone. A partner-scoped key never reaches a contact without a link to
 * its partner. Inside a transaction the contact row is locked, so the writes to one contact take turns.
 */
async function reachContact(db: Executor, actor: Actor, id: string, access: Access, lock: boolean) {
  const needed = Object.values(ENTITY_PERMISSIONS).map((permissions) => permissions[access]);
  if (!needed.some((permission) => hasPermission(actor, permission))) throw forbidden(`this key lacks ${needed.join(' and ')}`);
  const query = contactInScope(db, actor, id);
  const contact = await (lock ? query.forUpdate() : query).executeTakeFirst();
  if (!contact) throw notFound('contact');
  const links = await linksOf(db, actor, id);
  if (links.length && !links.some((link) => hasPermission(actor, ENTITY_PERMISSIONS[entityTypeOf(link)][access]))) {
    throw forbidden(`this key lacks the ${access} permission of every entity the contact is linked to`);
  }
  if (!links.length && access === 'edit' && actor.role !== 'system_admin' && !needed.every((permission) => hasPermission(actor, permission))) {
    throw forbidden(`the contact is linked to no entity: changing it needs ${needed.join(' and ')}`);
  }
  return { contact, links };
}

export async function listContacts(db: Kysely<DB>, actor: Actor, entityType: EntityType, entityId: string, page: Page) {
  await reachEntity(db, actor, entityType, entityId, 'view');
  const { rows, total } = await listLinkedContacts(db, entityType, entityId, page);
  return { rows: rows.map(serializeLinkedContact), total };
}

/**
 * Active contacts of an entity whose link carries the role (compared case-insensitively), primary first: for other
 * areas, e.g. the direct-ship notice needs a direct_ship contact with an e-mail address of the order's partner.
 */
export async function activeContactsWithRole(db: Executor, entityType: EntityType, entityId: string, role: string) {
  const rows = await inListOrder(
    activeLinkedContacts(db, entityType, entityId)
      .where(sql`lower(a.role)`, '=', role.trim().toLowerCase())
      .selectAll('c')
      .select(['a.id as association_id', 'a.role']),
  ).execute();
  return rows.map(serializeLinkedContact);
}

export async function getContact(db: Kysely<DB>, actor: Actor, id: string) {
  return serializeContact((await reachContact(db, actor, id, 'view', false)).contact);
}

interface ContactFields {
  last_name: string;
  first_name?: string | null;
  title?: string | null;
  email?: string | null;
  phone?: string | null;
  mobile?: string | null;
  notes?: string | null;
  is_primary?: boolean;
}

/** Trimmed; an empty string or null clears; undefined keeps (PATCH). */
const clearable = (value: string | null | undefined) => (value === undefined ? undefined : value?.trim() || null);

/** The trimmed e-mail address (blank clears); the schema lets surrounding whitespace through, so the rule is checked here too. */
function emailOf(value: string | null | undefined) {
  const email = clearable(value);
  if (email && !isEmailAddress(email)) throw new ApiError(400, 'bad_request', 'body/email must be an e-mail address');
  return email;
}

const contactColumns = (input: ContactFields) => ({
  last_name: input.last_name.trim(),
  first_name: clearable(input.first_name),
  title: clearable(input.title),
  email: emailOf(input.email),
  phone: clearable(input.phone),
  mobile: clearable(input.mobile),
  notes: clearable(input.notes),
  is_primary: input.is_primary,
});

const linkedShape = (contact: ContactRow, link: Link) => serializeLinkedContact({ ...contact, association_id: link.id, role: link.role });

export async function createContact(
  db: Kysely<DB>, actor: Actor, entityType: EntityType, entityId: string, input: ContactFields & { role?: string },
) {
  return inTransaction(db, async (tx) => {
    await reachEntity(tx, actor, entityType, entityId, 'edit');
    const columns = contactColumns(input);
    const contact = await tx
      .insertInto('contacts')
      .values({
        last_name: columns.last_name,
        first_name: columns.first_name ?? null,
        title: columns.title ?? null,
        email: columns.email ?? null,
        phone: columns.phone ?? null,
        mobile: columns.mobile ?? null,
        notes: columns.notes ?? null,
        is_primary: columns.is_primary ?? false,
        created_by: actor.userId,
        updated_by: actor.userId,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    const link = await tx
      .insertInto('contact_associations')
      .values({ contact_id: contact.id, [LINK_COLUMN[entityType]]: entityId, role: input.role?.trim() ?? '' })
      .returningAll()
      .executeTakeFirstOrThrow();
    const shape = linkedShape(contact, link);
    await recordHistory(tx, actor, {
      entityType: 'contact', entityId: contact.id, action: 'created', manufacturerId: link.manufacturer_id,
      after: { ...serializeContact(contact), links: [describeLink(link)] },
    });
    return shape;
  });
}

export async function updateContact(db: Kysely<DB>, actor: Actor, id: string, changes: ContactFields) {
  return inTransaction(db, async (tx) => {
    const { contact: before, links } = await reachContact(tx, actor, id, 'edit', true);
    const after = await tx
      .updateTable('contacts')
      .set({ ...contactColumns(changes), updated_by: actor.userId, updated_at: new Date() })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow();
    const contact = serializeContact(after);
    await recordHistory(tx, actor, { entityType: 'contact', entityId: id, action: 'updated', manufacturerId: partnerOf(links), before: serializeContact(before), after: contact });
    return contact;
  });
}

/** Inactive contacts leave lists and role lookups; their links stay. Deactivating an inactive contact changes nothing. */
export async function deactivateContact(db: Kysely<DB>, actor: Actor, id: string): Promise<void> {
  await inTransaction(db, async (tx) => {
    const { contact, links } = await reachContact(tx, actor, id, 'edit', true);
    if (contact.status === 'inactive') return;
    await tx.updateTable('contacts').set({ status: 'inactive', updated_by: actor.userId, updated_at: new Date() }).where('id', '=', id).execute();
    await recordHistory(tx, actor, { entityType: 'contact', entityId: id, action: 'deactivated', manufacturerId: partnerOf(links), before: { status: 'active' }, after: { status: 'inactive' } });
  });
}

/**
 * Links the contact to the entity with the role, or gives an existing link the new role: sending the same link again
 * is answered the same and changes nothing. The key needs edit on the entity and edit on the contact (on at least one
 * entity it is already linked to): reading a contact is not enough, or a link would hand the key a contact it may
 * only read.
 */
export async function linkContact(db: Kysely<DB>, actor: Actor, id: string, entityType: EntityType, entityId: string, role: string) {
  return inTransaction(db, async (tx) => {
    await reachEntity(tx, actor, entityType, entityId, 'edit');
    const { contact } = await reachContact(tx, actor, id, 'edit', true);
    if (contact.status === 'inactive') throw new ApiError(422, 'invalid_status', 'an inactive contact cannot be linked');
    const wanted = role.trim();
    const existing = await linkBetween(tx, id, entityType, entityId).executeTakeFirst();
    if (existing?.role === wanted) return linkedShape(contact, existing);
    const link = existing
      ? await tx.updateTable('contact_associations').set({ role: wanted, updated_at: new Date() }).where('id', '=', existing.id).returningAll().executeTakeFirstOrThrow()
      : await tx.insertInto('contact_associations').values({ contact_id: id, [LINK_COLUMN[entityType]]: entityId, role: wanted }).returningAll().executeTakeFirstOrThrow();
    await recordHistory(tx, actor, {
      entityType: 'contact', entityId: id, action: existing ? 'role_changed' : 'linked', manufacturerId: link.manufacturer_id,
      ...(existing ? { before: describeLink(existing) } : {}), after: describeLink(link),
    });
    return linkedShape(contact, link);
  });
}

/** Removes one link; the contact and its other links stay. The key needs edit on that entity. */
export async function unlinkContact(db: Kysely<DB>, actor: Actor, id: string, entityType: EntityType, entityId: string): Promise<void> {
  await inTransaction(db, async (tx) => {
    await reachEntity(tx, actor, entityType, entityId, 'edit');
    const contact = await contactInScope(tx, actor, id).forUpdate().executeTakeFirst();
    if (!contact) throw notFound('contact');
    const removed = await tx
      .deleteFrom('contact_associations')
      .where('contact_id', '=', id)
      .where(LINK_COLUMN[entityType], '=', entityId)
      .returningAll()
      .executeTakeFirst();
    if (!removed) throw notFound('link between the contact and the entity');
    await recordHistory(tx, actor, { entityType: 'contact', entityId: id, action: 'unlinked', manufacturerId: removed.manufacturer_id, before: describeLink(removed) });
  });
}
