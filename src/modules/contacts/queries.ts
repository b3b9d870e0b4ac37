// Contacts through their links: the SQL of entity lists, role lookups and the partner scope of a contact.
import { sql, type Kysely, type Transaction } from 'kysely';
import type { DB } from '../../db/schema.ts';
import type { Actor } from '../../http/auth.ts';
import { onePage, type Page } from '../../http/pagination.ts';
import type { ENTITY_TYPES } from './schemas.ts';

type Executor = Kysely<DB> | Transaction<DB>;
export type EntityType = (typeof ENTITY_TYPES)[number];

/** The column of contact_associations that points at an entity of the type. */
export const LINK_COLUMN = { manufacturer: 'manufacturer_id', customer: 'customer_id' } as const;

/** Active contacts linked to one entity, each with its link: primary first, then by last and first name. */
export function activeLinkedContacts(db: Executor, entityType: EntityType, entityId: string) {
  return db
    .selectFrom('contact_associations as a')
    .innerJoin('contacts as c', 'c.id', 'a.contact_id')
    .where(`a.${LINK_COLUMN[entityType]}`, '=', entityId)
    .where('c.status', '=', 'active');
}

export function inListOrder<QB extends { orderBy: (...args: any[]) => any }>(query: QB): QB {
  return query
    .orderBy('c.is_primary', 'desc')
    .orderBy(sql`lower(c.last_name)`)
    .orderBy(sql`lower(c.first_name)`)
    .orderBy('c.id') as QB;
}

export async function listLinkedContacts(db: Kysely<DB>, entityType: EntityType, entityId: string, page: Page) {
  const linked = activeLinkedContacts(db, entityType, entityId);
  const [rows, total] = await Promise.all([
    inListOrder(linked.selectAll('c').select(['a.id as association_id', 'a.role'])).$call(onePage(page)).execute(),
    linked.select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: total.count };
}

/**
 * The contact a key may reach: a partner-scoped key only one linked to its own partner, so another partner's contact
 * cannot be told from a missing one.
 */
export function contactInScope(db: Executor, actor: Actor, id: string) {
  let query = db.selectFrom('contacts').selectAll().where('id', '=', id);
  if (actor.manufacturerId) {
    const partner = actor.manufacturerId;
    query = query.where((eb) => eb.exists(
      eb.selectFrom('contact_associations as s').select('s.id').whereRef('s.contact_id', '=', 'contacts.id').where('s.manufacturer_id', '=', partner),
    ));
  }
  return query;
}

/** A contact's links, oldest first; a partner-scoped key sees only its own partner's. */
export function linksOf(db: Executor, actor: Actor, contactId: string) {
  let query = db.selectFrom('contact_associations').selectAll().where('contact_id', '=', contactId);
  if (actor.manufacturerId) query = query.where('manufacturer_id', '=', actor.manufacturerId);
  return query.orderBy('created_at').orderBy('id').execute();
}

export function linkBetween(db: Executor, contactId: string, entityType: EntityType, entityId: string) {
  return db
    .selectFrom('contact_associations')
    .selectAll()
    .where('contact_id', '=', contactId)
    .where(LINK_COLUMN[entityType], '=', entityId);
}
