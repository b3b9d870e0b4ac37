// The item master: create and change items, discontinue and reactivate them, their aliases and their bin stock.
import { sql, type Kysely, type Selectable, type Transaction } from 'kysely';
import type { DB, ItemsTable } from '../../db/schema.ts';
import { inTransaction } from '../../db/transaction.ts';
import { recordHistory } from '../../domain/history.ts';
import { inPartnerScope, type Actor } from '../../http/auth.ts';
import { forbidden, invalidRequest, invalidStatus, notFound } from '../../domain/errors.ts';
import { onePage, type Page } from '../../http/pagination.ts';
import type { RowTexts } from '../../http/row-texts.ts';
import { itemVersion, normalizeItemNumber } from './queries.ts';
import { serializeItem } from './serialize.ts';

/** An empty string clears a nullable text field; other text is stored trimmed. */
const clearable = (value: string | undefined) => (value === undefined ? undefined : value.trim() || null);

function itemInScope(db: Kysely<DB> | Transaction<DB>, actor: Actor, id: string) {
  return inPartnerScope(db.selectFrom('items').selectAll().where('id', '=', id), actor, 'items.manufacturer_id');
}

async function lockItemInScope(tx: Transaction<DB>, actor: Actor, id: string) {
  const item = await itemInScope(tx, actor, id).forUpdate().executeTakeFirst();
  if (!item) throw notFound('item');
  return item;
}

/** The rows an item read is made from, the item (i) and its supply partner (m), within the caller's partner scope. */
function itemWithPartner(actor: Actor, id: string) {
  const scope = actor.manufacturerId ? sql`and i.manufacturer_id = ${actor.manufacturerId}` : sql``;
  return sql`from items i join manufacturers m on m.id = i.manufacturer_id where i.id = ${id} ${scope}`;
}

const ITEM_TEXTS = 'item';

/**
 * An item as the JSON text of its read. The API's most frequent request: its first statement reads only the version
 * of the item's and its partner's rows (http/row-texts.ts); a text kept at that version is the answer, otherwise the
 * rows are read whole and their text kept. Reading the item's 45 columns and serializing them was a fifth of the
 * read's CPU in the service (docs/decisions.md, "Row texts"). Built as templates: with the query builder the read
 * spent 11 µs of node time per request on building alone, about a tenth of the request; a template takes under 1 µs.
 */
export async function getItemText(db: Kysely<DB>, texts: RowTexts, actor: Actor, id: string): Promise<string> {
  const { rows: [seen] } = await sql<{ version: string }>`select ${itemVersion} as version ${itemWithPartner(actor, id)}`.execute(db);
  if (!seen) throw notFound('item');
  const kept = texts.get(ITEM_TEXTS, id, seen.version);
  if (kept !== undefined) return kept;
  const { rows: [row] } = await sql<Selectable<ItemsTable> & { manufacturer_code: string; manufacturer_name: string; version: string }>`
    select i.*, m.code as manufacturer_code, m.name as manufacturer_name, ${itemVersion} as version
    ${itemWithPartner(actor, id)}`.execute(db);
  // Deleted since the first statement read it.
  if (!row) throw notFound('item');
  const { version, ...item } = row;
  const text = JSON.stringify(serializeItem(item, item));
  texts.set(ITEM_TEXTS, id, version, text);
  return text;
}

export interface NewItem {
  manufacturer_id: string;
  item_number_display: string;
  description: string;
  description_extended?: string;
  category?: string;
  purchase_uom?: string;
  warehouse_location?: string;
  selling_uom?: string;
  unit_weight?: number;
}

export async function createItem(db: Kysely<DB>, actor: Actor, input: NewItem) {
  if (actor.manufacturerId && actor.manufacturerId !== input.manufacturer_id) {
    throw forbidden('a partner-scoped key creates items only for its own supply partner');
  }
  return inTransaction(db, async (tx) => {
    const partner = await tx.selectFrom('manufacturers').select('id').where('id', '=', input.manufacturer_id).executeTakeFirst();
    if (!partner) throw invalidRequest('manufacturer_id does not name a supply partner');
    const number = input.item_number_display.trim();
    if (!normalizeItemNumber(number)) throw invalidRequest('item_number_display must contain more than dashes and spaces');
    const row = await tx
      .insertInto('items')
      .values({
        manufacturer_id: input.manufacturer_id,
        item_number_display: number,
        item_number_normalized: normalizeItemNumber(number),
        description: input.description.trim(),
        description_extended: clearable(input.description_extended) ?? null,
        category: clearable(input.category) ?? null,
        purchase_uom: clearable(input.purchase_uom) ?? null,
        warehouse_location: clearable(input.warehouse_location) ?? null,
        selling_uom: input.selling_uom?.trim().toUpperCase() || 'EA',
        unit_weight: input.unit_weight ?? null,
        superseded_by: null,
        date_last_ordered: null,
        date_last_received: null,
        date_last_movement: null,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    const item = serializeItem(row);
    await recordHistory(tx, actor, { entityType: 'item', entityId: row.id, action: 'created', manufacturerId: row.manufacturer_id, after: item });
    return item;
  });
}

export interface ItemChanges {
  description?: string;
  description_extended?: string;
  category?: string;
  selling_uom?: string;
  purchase_uom?: string;
  warehouse_location?: string;
  unit_weight?: number | null;
  reorder_level?: number;
}

export async function updateItem(db: Kysely<DB>, actor: Actor, id: string, changes: ItemChanges) {
  return inTransaction(db, async (tx) => {
    const before = await lockItemInScope(tx, actor, id);
    const values = {
      description: changes.description?.trim(),
      description_extended: clearable(changes.description_extended),
      category: clearable(changes.category),
      selling_uom: changes.selling_uom?.trim().toUpperCase(),
      purchase_uom: clearable(changes.purchase_uom),
      warehouse_location: clearable(changes.warehouse_location),
      unit_weight: changes.unit_weight,
      reorder_level: changes.reorder_level,
    };
    // A PATCH that changes nothing writes nothing (no history row, updated_at kept), as an order's PATCH.
    if (Object.entries(values).every(([field, value]) => value === undefined || value === before[field as keyof typeof values])) return serializeItem(before);
    const after = await tx
      .updateTable('items')
      .set({ ...values, updated_at: new Date() })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow();
    const item = serializeItem(after);
    await recordHistory(tx, actor, { entityType: 'item', entityId: id, action: 'updated', manufacturerId: after.manufacturer_id, before: serializeItem(before), after: item });
    return item;
  });
}

export async function discontinueItem(db: Kysely<DB>, actor: Actor, id: string, input: { superseded_by?: string; reason?: string }) {
  return inTransaction(db, async (tx) => {
    const before = await lockItemInScope(tx, actor, id);
    if (before.status !== 'active') throw invalidStatus(`only an active item can be discontinued; this one is ${before.status}`);
    if (input.superseded_by) {
      if (input.superseded_by === id) throw invalidRequest('an item cannot succeed itself');
      const successor = await itemInScope(tx, actor, input.superseded_by).executeTakeFirst();
      if (!successor || successor.manufacturer_id !== before.manufacturer_id) {
        throw invalidRequest('superseded_by must be an item of the same supply partner');
      }
      if (successor.status !== 'active') throw invalidRequest('superseded_by must be an active item');
    }
    const after = await tx
      .updateTable('items')
      .set({ status: 'discontinued', superseded_by: input.superseded_by ?? null, updated_at: new Date() })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow();
    const item = serializeItem(after);
    await recordHistory(tx, actor, {
      entityType: 'item', entityId: id, action: 'discontinued', manufacturerId: after.manufacturer_id,
      before: { status: before.status }, after: { status: after.status, superseded_by: after.superseded_by, reason: input.reason ?? null },
    });
    return after.qty_on_hand > 0 ? { item, stock_warning: { qty_on_hand: after.qty_on_hand } } : { item };
  });
}

export async function reactivateItem(db: Kysely<DB>, actor: Actor, id: string, input: { reason?: string }) {
  return inTransaction(db, async (tx) => {
    const before = await lockItemInScope(tx, actor, id);
    if (before.status !== 'discontinued') throw invalidStatus(`only a discontinued item can be reactivated; this one is ${before.status}`);
    const after = await tx
      .updateTable('items')
      .set({ status: 'active', superseded_by: null, updated_at: new Date() })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow();
    await recordHistory(tx, actor, {
      entityType: 'item', entityId: id, action: 'reactivated', manufacturerId: after.manufacturer_id,
      before: { status: before.status, superseded_by: before.superseded_by }, after: { status: after.status, reason: input.reason ?? null },
    });
    return serializeItem(after);
  });
}

export async function itemBinStock(db: Kysely<DB>, actor: Actor, id: string) {
  const item = await itemInScope(db, actor, id).executeTakeFirst();
  if (!item) throw notFound('item');
  const locations = await db
    .selectFrom('item_locations as b')
    .leftJoin('locations as l', 'l.id', 'b.location_id')
    .select(['b.id', 'b.item_id', 'b.location_id', 'b.qty_on_hand', 'b.inventory_status', 'b.is_primary', 'l.location_code'])
    .where('b.item_id', '=', id)
    .orderBy('b.is_primary', 'desc')
    .orderBy('l.location_code')
    .execute();
  return { item_id: id, locations };
}

export async function listAliases(db: Kysely<DB>, actor: Actor, itemId: string, page: Page) {
  const item = await itemInScope(db, actor, itemId).executeTakeFirst();
  if (!item) throw notFound('item');
  const query = db.selectFrom('item_aliases').where('item_id', '=', itemId);
  const [rows, total] = await Promise.all([
    query.select(['id', 'item_id', 'alias', 'alias_normalized', 'created_at']).orderBy('alias_normalized').$call(onePage(page)).execute(),
    query.select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: total.count };
}

export async function addAlias(db: Kysely<DB>, actor: Actor, itemId: string, alias: string) {
  return inTransaction(db, async (tx) => {
    const item = await lockItemInScope(tx, actor, itemId);
    const normalized = normalizeItemNumber(alias.trim());
    if (!normalized) throw invalidRequest('alias must contain more than dashes and spaces');
    const row = await tx
      .insertInto('item_aliases')
      .values({ item_id: itemId, manufacturer_id: item.manufacturer_id, alias: alias.trim(), alias_normalized: normalized })
      .returning(['id', 'item_id', 'alias', 'alias_normalized', 'created_at'])
      .executeTakeFirstOrThrow();
    await recordHistory(tx, actor, { entityType: 'item', entityId: itemId, action: 'alias_added', manufacturerId: item.manufacturer_id, after: row });
    return row;
  });
}

export async function removeAlias(db: Kysely<DB>, actor: Actor, itemId: string, aliasId: string): Promise<void> {
  await inTransaction(db, async (tx) => {
    const item = await lockItemInScope(tx, actor, itemId);
    const removed = await tx.deleteFrom('item_aliases').where('id', '=', aliasId).where('item_id', '=', itemId).returningAll().executeTakeFirst();
    if (!removed) throw notFound('alias');
    await recordHistory(tx, actor, { entityType: 'item', entityId: itemId, action: 'alias_removed', manufacturerId: item.manufacturer_id, before: removed });
  });
}
