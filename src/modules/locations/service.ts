// Warehouse locations (global, not partner data) and moving stock between them.
import { sql, type Kysely, type Transaction } from 'kysely';
import { containsPattern } from '../../db/like.ts';
import { rowCount, totalOfPage } from '../../db/list-counts.ts';
import type { DB } from '../../db/schema.ts';
import { inTransaction } from '../../db/transaction.ts';
import { recordHistory } from '../../domain/history.ts';
import { transferStock, type MovementRow } from '../../domain/stock.ts';
import { inPartnerScope, type Actor } from '../../http/auth.ts';
import { ApiError, forbidden, invalidRequest, invalidStatus, notFound } from '../../domain/errors.ts';
import { onePage, type Page } from '../../http/pagination.ts';
import { movementAnswer } from '../inventory/service.ts';
import type { LOCATION_TYPES } from './schemas.ts';

type LocationType = (typeof LOCATION_TYPES)[number];
type Executor = Kysely<DB> | Transaction<DB>;

const LOCATION_COLUMNS = [
  'l.id', 'l.warehouse_id', 'l.zone', 'l.aisle', 'l.rack', 'l.shelf', 'l.bin', 'l.location_code', 'l.location_type',
  'l.capacity', 'l.is_active', 'l.created_at', 'l.updated_at',
] as const;

const notEmpty = (code: string) => new ApiError(422, 'location_not_empty', `location ${code} still holds stock`);

/** Locations belong to the warehouse: partners read them but do not change them. */
function assertWarehouseStaff(actor: Actor): void {
  if (actor.manufacturerId) throw forbidden('a partner-scoped key cannot change warehouse locations');
}

/** A location with its warehouse's name, as get and the mutation responses show it. */
async function locationWithWarehouse(db: Executor, id: string) {
  const row = await db
    .selectFrom('locations as l')
    .innerJoin('warehouses as w', 'w.id', 'l.warehouse_id')
    .select(LOCATION_COLUMNS)
    .select('w.name as warehouse_name')
    .where('l.id', '=', id)
    .executeTakeFirst();
  if (!row) throw notFound('location');
  return row;
}

export const getLocation = (db: Kysely<DB>, id: string) => locationWithWarehouse(db, id);

export interface LocationFilter {
  warehouse_id?: string;
  location_type?: LocationType[];
  is_active?: boolean;
  q?: string;
}

/**
 * Rows carry item_count and total_qty of the stock the caller may see (a partner: only its own). The page's locations
 * are chosen first and their stock summed after: summed in the select list, PostgreSQL would sum the stock of every
 * location an OFFSET skips as well (page 10 of the bench's 500 locations took 3 s).
 */
export async function listLocations(db: Kysely<DB>, actor: Actor, filter: LocationFilter, page: Page) {
  let query = db.selectFrom('locations as l');
  if (filter.warehouse_id) query = query.where('l.warehouse_id', '=', filter.warehouse_id);
  if (filter.location_type?.length) query = query.where('l.location_type', 'in', filter.location_type);
  if (filter.is_active !== undefined) query = query.where('l.is_active', '=', filter.is_active);
  if (filter.q) query = query.where('l.location_code', 'like', containsPattern(filter.q.toUpperCase()));
  const total = rowCount(query);
  const pageIds = query.select('l.id as page_id').orderBy('l.location_code').$call(onePage(page)).as('p');
  const partner = actor.manufacturerId;
  // The bins with stock and their units are kept per location and partner (migration 0046): a row each to sum. An
  // item holds at most two bins in a location (one available, one quarantined), so its items are its bins with stock
  // less the items both of whose bins hold stock, found live from the few quarantined bins (migration 0045).
  const stock = sql<{ item_count: number; total_qty: number }>`lateral (
    select (coalesce(sum(c.bins), 0) - (
        select count(*) from item_locations q
        ${partner ? sql`join items i on i.id = q.item_id and i.manufacturer_id = ${partner}` : sql``}
        join item_locations a on a.item_id = q.item_id and a.location_id = q.location_id and a.inventory_status = 'available'
          and a.qty_on_hand <> 0
        where q.location_id = l.id and q.inventory_status = 'quarantine' and q.qty_on_hand <> 0
      ))::int as item_count,
      coalesce(sum(c.qty), 0)::int as total_qty
    from location_stock_counts c
    where c.location_id = l.id ${partner ? sql`and c.manufacturer_id = ${partner}` : sql``})`;
  const rows = await db.selectFrom('locations as l')
    .innerJoin(pageIds, 'p.page_id', 'l.id')
    .innerJoin(stock.as('s'), (join) => join.onTrue())
    .select(LOCATION_COLUMNS)
    .select(['s.item_count', 's.total_qty', sql<number>`${total}`.as('total_count')])
    .orderBy('l.location_code')
    .execute();
  return { rows: rows.map(({ total_count: _, ...row }) => row), total: await totalOfPage(db, rows, page, total) };
}

export async function locationStock(db: Kysely<DB>, actor: Actor, id: string, page: Page) {
  await locationWithWarehouse(db, id);
  const query = inPartnerScope(
    db.selectFrom('item_locations as b').innerJoin('items as i', 'i.id', 'b.item_id').where('b.location_id', '=', id),
    actor, 'i.manufacturer_id',
  );
  const [rows, total] = await Promise.all([
    query
      .leftJoin('manufacturers as m', 'm.id', 'i.manufacturer_id')
      .select(['b.item_id', 'i.item_number_display', 'i.description', 'm.name as manufacturer_name', 'b.qty_on_hand', 'b.inventory_status', 'b.is_primary'])
      .orderBy('i.item_number_normalized')
      .orderBy('b.inventory_status')
      .$call(onePage(page))
      .execute(),
    query.select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: total.count };
}

interface LocationParts {
  zone?: string;
  aisle?: string;
  rack?: string;
  shelf?: string;
  bin?: string;
}

const clearable = (value: string | undefined) => (value === undefined ? undefined : value.trim() || null);
// Capacity 0 means "no capacity recorded" (the spec: sending 0 reads back null).
const capacityOf = (value: number | null | undefined) => (value === undefined ? undefined : value || null);

export interface NewLocation extends LocationParts {
  warehouse_id?: string;
  location_code?: string;
  location_type?: LocationType;
  capacity?: number | null;
}

export async function createLocation(db: Kysely<DB>, actor: Actor, input: NewLocation) {
  assertWarehouseStaff(actor);
  const parts = [input.zone, input.aisle, input.rack, input.shelf, input.bin].map((p) => p?.trim()).filter(Boolean);
  const code = (input.location_code ?? parts.join('-')).trim().toUpperCase();
  if (!code) throw invalidRequest('give location_code or at least one of zone, aisle, rack, shelf, bin');
  return inTransaction(db, async (tx) => {
    const warehouse = await tx
      .selectFrom('warehouses')
      .select(['id', 'is_active'])
      .$if(!!input.warehouse_id, (qb) => qb.where('id', '=', input.warehouse_id!))
      .$if(!input.warehouse_id, (qb) => qb.where('code', '=', 'MAIN'))
      .executeTakeFirst();
    if (!warehouse) throw invalidRequest('warehouse_id does not name a warehouse');
    if (!warehouse.is_active) throw invalidRequest('the warehouse is inactive');
    const row = await tx
      .insertInto('locations')
      .values({
        warehouse_id: warehouse.id,
        zone: clearable(input.zone) ?? null,
        aisle: clearable(input.aisle) ?? null,
        rack: clearable(input.rack) ?? null,
        shelf: clearable(input.shelf) ?? null,
        bin: clearable(input.bin) ?? null,
        location_code: code,
        location_type: input.location_type ?? 'storage',
        capacity: capacityOf(input.capacity) ?? null,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    await recordHistory(tx, actor, { entityType: 'location', entityId: row.id, action: 'created', after: row });
    return row;
  });
}

async function lockLocation(tx: Transaction<DB>, id: string) {
  const row = await tx.selectFrom('locations').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
  if (!row) throw notFound('location');
  return row;
}

async function holdsStock(tx: Transaction<DB>, id: string): Promise<boolean> {
  return !!(await tx.selectFrom('item_locations').select('id').where('location_id', '=', id).where('qty_on_hand', '<>', 0).limit(1).executeTakeFirst());
}

export interface LocationChanges extends LocationParts {
  location_code?: string;
  location_type?: LocationType;
  capacity?: number | null;
}

export async function updateLocation(db: Kysely<DB>, actor: Actor, id: string, changes: LocationChanges) {
  assertWarehouseStaff(actor);
  return inTransaction(db, async (tx) => {
    const before = await lockLocation(tx, id);
    const quarantineChanges = changes.location_type !== undefined &&
      (changes.location_type === 'quarantine') !== (before.location_type === 'quarantine');
    // Quarantined stock is not on-hand: turning a bin with stock into quarantine (or out of it) would falsify on-hand.
    if (quarantineChanges && (await holdsStock(tx, id))) throw notEmpty(before.location_code);
    const after = await tx
      .updateTable('locations')
      .set({
        zone: clearable(changes.zone),
        aisle: clearable(changes.aisle),
        rack: clearable(changes.rack),
        shelf: clearable(changes.shelf),
        bin: clearable(changes.bin),
        location_code: changes.location_code?.trim().toUpperCase(),
        location_type: changes.location_type,
        capacity: capacityOf(changes.capacity),
        updated_at: new Date(),
      })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow();
    await recordHistory(tx, actor, { entityType: 'location', entityId: id, action: 'updated', before, after });
    return locationWithWarehouse(tx, id);
  });
}

export async function setLocationActive(db: Kysely<DB>, actor: Actor, id: string, active: boolean) {
  assertWarehouseStaff(actor);
  return inTransaction(db, async (tx) => {
    const before = await lockLocation(tx, id);
    if (before.is_active === active) throw invalidStatus(`location ${before.location_code} is already ${active ? 'active' : 'retired'}`);
    if (!active && (await holdsStock(tx, id))) throw notEmpty(before.location_code);
    await tx.updateTable('locations').set({ is_active: active, updated_at: new Date() }).where('id', '=', id).execute();
    await recordHistory(tx, actor, { entityType: 'location', entityId: id, action: active ? 'reactivated' : 'retired', before: { is_active: before.is_active }, after: { is_active: active } });
    return locationWithWarehouse(tx, id);
  });
}

/** The destination of a move, by code; created (storage, in the source's warehouse) when asked to. */
async function destination(tx: Transaction<DB>, actor: Actor, code: string, autoCreate: boolean, warehouseId: string) {
  const locationCode = code.trim().toUpperCase();
  const existing = await tx.selectFrom('locations').select('id').where('location_code', '=', locationCode).executeTakeFirst();
  if (existing) return existing.id;
  if (!autoCreate) {
    throw new ApiError(422, 'unknown_location', `unknown location code ${locationCode}; send auto_create true to create it`, { details: { location_code: locationCode } });
  }
  const created = await tx
    .insertInto('locations')
    .values({ warehouse_id: warehouseId, location_code: locationCode, location_type: 'storage', zone: null, aisle: null, rack: null, shelf: null, bin: null, capacity: null })
    .returningAll()
    .executeTakeFirstOrThrow();
  await recordHistory(tx, actor, { entityType: 'location', entityId: created.id, action: 'created', after: created });
  return created.id;
}

async function sourceLocation(tx: Transaction<DB>, id: string) {
  const source = await tx.selectFrom('locations').select(['id', 'warehouse_id']).where('id', '=', id).executeTakeFirst();
  if (!source) throw notFound('location');
  return source;
}

export async function relocate(db: Kysely<DB>, actor: Actor, id: string, input: { item_id: string; qty: number; to_location_code: string; auto_create?: boolean }) {
  assertWarehouseStaff(actor);
  const result = await inTransaction(db, async (tx) => {
    const source = await sourceLocation(tx, id);
    const item = await tx.selectFrom('items').select('id').where('id', '=', input.item_id).executeTakeFirst();
    if (!item) throw notFound('item');
    const toId = await destination(tx, actor, input.to_location_code, input.auto_create ?? false, source.warehouse_id);
    const moves = await transferStock(tx, actor, { itemId: item.id, fromLocationId: id, toLocationId: toId, quantity: input.qty, reason: 'relocation' });
    return { toId, moves };
  });
  return {
    item_id: input.item_id,
    qty: input.qty,
    from_location_id: id,
    to_location: await getLocation(db, result.toId),
    movements: result.moves.map(movementAnswer),
  };
}

export async function moveAll(db: Kysely<DB>, actor: Actor, id: string, input: { to_location_code: string; auto_create?: boolean }) {
  assertWarehouseStaff(actor);
  const result = await inTransaction(db, async (tx) => {
    const source = await sourceLocation(tx, id);
    const toId = await destination(tx, actor, input.to_location_code, input.auto_create ?? false, source.warehouse_id);
    // Items in id order: two concurrent moves lock their items in the same order and cannot deadlock.
    const bins = await tx
      .selectFrom('item_locations')
      .select(['item_id', 'qty_on_hand'])
      .where('location_id', '=', id)
      .where('inventory_status', '=', 'available')
      .where('qty_on_hand', '>', 0)
      .orderBy('item_id')
      .execute();
    const moves: MovementRow[] = [];
    for (const bin of bins) {
      moves.push(...(await transferStock(tx, actor, { itemId: bin.item_id, fromLocationId: id, toLocationId: toId, quantity: bin.qty_on_hand, reason: 'move all' })));
    }
    return { toId, moves, items: bins.length, qty: bins.reduce((sum, bin) => sum + bin.qty_on_hand, 0) };
  });
  return {
    location: await getLocation(db, result.toId),
    moved_items: result.items,
    moved_qty: result.qty,
    movements: result.moves.map(movementAnswer),
  };
}
