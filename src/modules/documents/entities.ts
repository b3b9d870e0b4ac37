// The records a document can be filed under: where each lives, whose partner it belongs to, and which permissions
// read and file its documents.
import { sql, type Transaction } from 'kysely';
import type { DB } from '../../db/schema.ts';
import type { Permission } from '../../domain/roles.ts';
import { hasPermission, type Actor } from '../../http/auth.ts';
import { forbidden, notFound } from '../../domain/errors.ts';

interface DocumentEntity {
  /** What the 404 calls it. */
  label: string;
  table: string;
  /** The column naming the record's supply partner; null for records every partner shares (customers). */
  partnerColumn: string | null;
  /** pick_exceptions holds three kinds; the entity type names one. */
  kind?: 'short_pick' | 'mispick' | 'quality';
  /** Any one of these lets a key read the record's documents. */
  read: readonly Permission[];
  /** Any one of these lets a key file a document under the record. */
  upload: readonly Permission[];
}

const exception = (kind: 'short_pick' | 'mispick' | 'quality', label: string): DocumentEntity => ({
  label, table: 'pick_exceptions', partnerColumn: 'manufacturer_id', kind,
  // The picker who flags a problem photographs it; reviewers add their evidence.
  read: ['exceptions.view'], upload: ['exceptions.review', 'picking.execute'],
});

export const DOCUMENT_ENTITIES = {
  // Packers print the order's packing list: shipping.edit reads order documents too.
  order: { label: 'order', table: 'orders', partnerColumn: 'manufacturer_id', read: ['orders.view', 'shipping.edit'], upload: ['orders.edit'] },
  pick_batch: {
    label: 'pick batch', table: 'pick_batches', partnerColumn: 'manufacturer_id',
    read: ['orders.view', 'picking.execute', 'shipping.edit'], upload: ['shipping.edit'],
  },
  short_pick_exception: exception('short_pick', 'short-pick exception'),
  mispick_exception: exception('mispick', 'mispick exception'),
  quality_exception: exception('quality', 'quality exception'),
  item: { label: 'item', table: 'items', partnerColumn: 'manufacturer_id', read: ['inventory.view'], upload: ['inventory.edit'] },
  receiving_batch: {
    label: 'receiving batch', table: 'receiving_batches', partnerColumn: 'manufacturer_id',
    read: ['receiving.view'], upload: ['receiving.create', 'receiving.inspect', 'receiving.qc'],
  },
  customer: { label: 'customer', table: 'customers', partnerColumn: null, read: ['customers.view'], upload: ['customers.edit'] },
  manufacturer: { label: 'supply partner', table: 'manufacturers', partnerColumn: 'id', read: ['manufacturers.view'], upload: ['manufacturers.edit'] },
} as const satisfies Record<string, DocumentEntity>;

export type DocumentEntityType = keyof typeof DOCUMENT_ENTITIES;
export const DOCUMENT_ENTITY_TYPES = Object.keys(DOCUMENT_ENTITIES) as DocumentEntityType[];

const entityOf = (type: string): DocumentEntity | undefined => (DOCUMENT_ENTITIES as Record<string, DocumentEntity>)[type];

const unique = (permissions: readonly Permission[]) => [...new Set(permissions)];
/** Every permission that reads some entity type's documents, and every one that files some. */
export const ANY_READ = unique(Object.values(DOCUMENT_ENTITIES).flatMap((entity: DocumentEntity) => entity.read));
export const ANY_UPLOAD = unique(Object.values(DOCUMENT_ENTITIES).flatMap((entity: DocumentEntity) => entity.upload));

export function requireAnyPermission(actor: Actor, permissions: readonly Permission[], what: string): void {
  if (!permissions.some((permission) => hasPermission(actor, permission))) {
    throw forbidden(`${what} needs one of ${permissions.join(', ')}`);
  }
}

/** The key may read documents filed under records of this type (403 otherwise). */
export function requireReadable(actor: Actor, entityType: string): void {
  const entity = entityOf(entityType);
  if (!entity) throw forbidden(`documents of ${entityType} records are not readable through the API`);
  requireAnyPermission(actor, entity.read, `reading documents of a ${entity.label}`);
}

/**
 * The record a document is about to be filed under, held against deletion until the transaction ends: its supply
 * partner. 403 without the upload permission of the type; 404 when the record does not exist or belongs to another
 * partner than the key's.
 */
export async function lockEntityForFiling(tx: Transaction<DB>, actor: Actor, entityType: DocumentEntityType, entityId: string) {
  const entity: DocumentEntity = DOCUMENT_ENTITIES[entityType];
  requireAnyPermission(actor, entity.upload, `filing a document under a ${entity.label}`);
  // Shared records have no partner: a partner's document there would be invisible to the partner itself.
  if (!entity.partnerColumn && actor.manufacturerId) throw forbidden(`a partner-scoped key cannot file documents under a ${entity.label}`);
  const partner = entity.partnerColumn ? sql.ref(entity.partnerColumn) : sql<null>`null::uuid`;
  const { rows } = await sql<{ manufacturer_id: string | null }>`
    select ${partner} as manufacturer_id from ${sql.table(entity.table)}
    where id = ${entityId}
      ${entity.kind ? sql`and kind = ${entity.kind}` : sql``}
      ${actor.manufacturerId && entity.partnerColumn ? sql`and ${sql.ref(entity.partnerColumn)} = ${actor.manufacturerId}` : sql``}
    for key share`.execute(tx);
  if (!rows[0]) throw notFound(entity.label);
  return { manufacturerId: rows[0].manufacturer_id };
}

/** The permissions of each entity type, as the API description states them. */
export function permissionTable(access: 'read' | 'upload'): string {
  return Object.entries(DOCUMENT_ENTITIES)
    .map(([type, entity]: [string, DocumentEntity]) => `${type}: ${entity[access].map((permission) => `\`${permission}\``).join(' or ')}`)
    .join('; ');
}
