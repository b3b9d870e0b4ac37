// The only code that changes quantities. Every change locks the item row first, then moves the bin row, the item's
// on-hand and date_last_movement, and writes the ledger row (signed quantity, on-hand after it), the history row and
// the event, all in the caller's transaction.
import { randomUUID } from 'node:crypto';
import { sql, type Selectable, type Transaction } from 'kysely';
import type { DB, InventoryMovementsTable, MovementType } from '../db/schema.ts';
import { ApiError, invalidRequest, notFound } from '../http/errors.ts';
import { emit } from './events.ts';
import { recordHistory, type Author } from './history.ts';

export interface StockAuthor extends Author {
  userName: string;
}

export type MovementRow = Selectable<InventoryMovementsTable>;

export interface StockChange {
  itemId: string;
  locationId: string;
  /** Signed units: positive into the bin, negative out of it. */
  quantity: number;
  movementType: MovementType;
  reason: string;
  referenceType: string;
  /** The operation the movement belongs to; defaults to the movement itself. */
  referenceId?: string;
  cycleCountBatchId?: string | null;
}

const insufficientStock = (available: number) =>
  new ApiError(422, 'insufficient_stock', `the bin holds ${available}; a bin cannot go below zero`);

/** Locks the item row: every quantity change of one item runs one after the other from here on. */
export async function lockItem(tx: Transaction<DB>, itemId: string) {
  const item = await tx
    .selectFrom('items')
    .select(['id', 'manufacturer_id', 'item_number_display', 'qty_on_hand', 'status'])
    .where('id', '=', itemId)
    .forUpdate()
    .executeTakeFirst();
  if (!item) throw notFound('item');
  return item;
}

/** A location stock may move into or out of: active, and not quarantine (quarantined stock is not sellable on-hand). */
async function stockLocation(tx: Transaction<DB>, locationId: string) {
  const location = await tx
    .selectFrom('locations')
    .select(['id', 'location_code', 'location_type', 'is_active'])
    .where('id', '=', locationId)
    // Shared lock: retiring the location (which takes it exclusively) waits for this move, and then sees its stock.
    .forShare()
    .executeTakeFirst();
  if (!location) throw invalidRequest('location_id does not name a location');
  if (!location.is_active) throw invalidRequest(`location ${location.location_code} is retired`);
  if (location.location_type === 'quarantine') throw invalidRequest(`location ${location.location_code} is a quarantine location`);
  return location;
}

/** Adds the signed quantity to the item's available bin row at the location (created on first use; the first bin of an item is its primary). */
async function changeBin(tx: Transaction<DB>, itemId: string, locationId: string, quantity: number): Promise<number> {
  const bin = await tx
    .insertInto('item_locations')
    .values({
      item_id: itemId,
      location_id: locationId,
      qty_on_hand: quantity,
      inventory_status: 'available',
      is_primary: sql<boolean>`not exists (select 1 from item_locations where item_id = ${itemId})`,
    })
    .onConflict((oc) =>
      oc.columns(['item_id', 'location_id', 'inventory_status']).doUpdateSet((eb) => ({
        qty_on_hand: eb('item_locations.qty_on_hand', '+', eb.ref('excluded.qty_on_hand')),
        updated_at: new Date(),
      })))
    .returning(['id', 'qty_on_hand', 'is_primary'])
    .executeTakeFirstOrThrow();
  if (bin.qty_on_hand < 0) throw insufficientStock(bin.qty_on_hand - quantity);
  // An emptied bin that is not the item's primary one is forgotten, so location stock lists only real stock.
  if (bin.qty_on_hand === 0 && !bin.is_primary) await tx.deleteFrom('item_locations').where('id', '=', bin.id).execute();
  return bin.qty_on_hand;
}

async function writeMovement(tx: Transaction<DB>, author: StockAuthor, change: StockChange): Promise<MovementRow> {
  if (!Number.isInteger(change.quantity) || change.quantity === 0) throw invalidRequest('quantity must be a non-zero integer');
  const item = await lockItem(tx, change.itemId);
  await stockLocation(tx, change.locationId);
  await changeBin(tx, change.itemId, change.locationId, change.quantity);
  const updated = await tx
    .updateTable('items')
    .set((eb) => ({ qty_on_hand: eb('qty_on_hand', '+', change.quantity), date_last_movement: sql`now()`, updated_at: sql`now()` }))
    .where('id', '=', item.id)
    .returning('qty_on_hand')
    .executeTakeFirstOrThrow();
  const id = randomUUID();
  const movement = await tx
    .insertInto('inventory_movements')
    .values({
      id,
      item_id: item.id,
      manufacturer_id: item.manufacturer_id,
      location_id: change.locationId,
      movement_type: change.movementType,
      quantity: change.quantity,
      balance_after: updated.qty_on_hand,
      reason: change.reason,
      reference_type: change.referenceType,
      reference_id: change.referenceId ?? id,
      cycle_count_batch_id: change.cycleCountBatchId ?? null,
      performed_by: author.userId,
      performed_by_name: author.userName,
      api_key_id: author.apiKeyId,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  await recordHistory(tx, author, {
    entityType: 'item',
    entityId: item.id,
    action: change.movementType,
    manufacturerId: item.manufacturer_id,
    before: { qty_on_hand: item.qty_on_hand },
    after: { qty_on_hand: updated.qty_on_hand, movement_id: movement.id, location_id: change.locationId, quantity: change.quantity },
  });
  return movement;
}

/** An adjustment or a cycle-count correction: one movement, announced as inventory.adjusted. */
export async function adjustStock(tx: Transaction<DB>, author: StockAuthor, change: StockChange): Promise<MovementRow> {
  const movement = await writeMovement(tx, author, change);
  await emit(tx, 'inventory.adjusted', movementEvent(movement), movement.manufacturer_id);
  return movement;
}

/** Relocation: a transfer pair (out of one bin, into another) that leaves on-hand where it was. */
export async function transferStock(
  tx: Transaction<DB>,
  author: StockAuthor,
  move: { itemId: string; fromLocationId: string; toLocationId: string; quantity: number; reason: string },
): Promise<[MovementRow, MovementRow]> {
  if (!Number.isInteger(move.quantity) || move.quantity <= 0) throw invalidRequest('qty must be a positive integer');
  if (move.fromLocationId === move.toLocationId) throw invalidRequest('the destination is the location the stock is in');
  const referenceId = randomUUID();
  const common = { itemId: move.itemId, movementType: 'transfer' as const, reason: move.reason, referenceType: 'relocation', referenceId };
  const out = await writeMovement(tx, author, { ...common, locationId: move.fromLocationId, quantity: -move.quantity });
  const into = await writeMovement(tx, author, { ...common, locationId: move.toLocationId, quantity: move.quantity });
  await emit(tx, 'inventory.relocated', {
    item_id: move.itemId, from_location_id: move.fromLocationId, to_location_id: move.toLocationId, qty: move.quantity, reference_id: referenceId,
  }, out.manufacturer_id);
  return [out, into];
}

function movementEvent(movement: MovementRow) {
  return {
    movement_id: movement.id,
    item_id: movement.item_id,
    location_id: movement.location_id,
    movement_type: movement.movement_type,
    quantity: movement.quantity,
    balance_after: movement.balance_after,
    reason: movement.reason,
  };
}
