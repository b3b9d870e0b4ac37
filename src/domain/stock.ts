// The only code that changes quantities. Every change locks the item row first, then moves the bin row, the item's
// on-hand and date_last_movement, and writes the ledger row (signed quantity, on-hand after it), the history row and
// the event, all in the caller's transaction. Quarantined units (failed QC) sit in quarantine bins outside on-hand:
// their ledger rows are marked inventory_status 'quarantine' and leave on-hand (and balance_after) as it was. Order
// commitments (qty_committed) are changed here too.
import { randomUUID } from 'node:crypto';
import { sql, type Selectable, type Transaction } from 'kysely';
import type { DB, InventoryMovementsTable, MovementType } from '../db/schema.ts';
import { ApiError, invalidRequest, notFound } from './errors.ts';
import { emit } from './events.ts';
import { recordHistory, type Author } from './history.ts';

export interface StockAuthor extends Author {
  userName: string;
}

export type MovementRow = Selectable<InventoryMovementsTable>;
type BinStatus = 'available' | 'quarantine';

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
  /** Refuse to take away units that orders have committed (on-hand may not fall below committed). */
  keepCommitted?: boolean;
}

const insufficientStock = (available: number) =>
  new ApiError(422, 'insufficient_stock', `the bin holds ${available}; a bin cannot go below zero`);

/** Quantities are int4 columns: an item's on-hand, and so each of its bins, holds at most this many units. */
export const MAX_UNITS = 2_147_483_647;

const tooManyUnits = (item: { id: string; item_number_display: string }, held: number, quantity: number, what: string) =>
  invalidRequest(`${item.item_number_display}: ${what} would be ${held + quantity}, more than the ${MAX_UNITS} units it can hold`, { item_id: item.id });

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

/**
 * Adds the signed quantity to the item's bin row of that status at the location (created on first use; the first
 * available bin of an item is its primary).
 */
async function changeBin(
  tx: Transaction<DB>, itemId: string, locationId: string, quantity: number, status: BinStatus = 'available',
): Promise<number> {
  const bin = await tx
    .insertInto('item_locations')
    .values({
      item_id: itemId,
      location_id: locationId,
      qty_on_hand: quantity,
      inventory_status: status,
      is_primary: status === 'available'
        ? sql<boolean>`not exists (select 1 from item_locations where item_id = ${itemId} and inventory_status = 'available')`
        : false,
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
  // The item row is locked, so on-hand cannot change before the update; a bin never holds more than on-hand.
  if (item.qty_on_hand + change.quantity > MAX_UNITS) throw tooManyUnits(item, item.qty_on_hand, change.quantity, 'on-hand');
  await stockLocation(tx, change.locationId);
  await changeBin(tx, change.itemId, change.locationId, change.quantity);
  const updated = await tx
    .updateTable('items')
    .set((eb) => ({ qty_on_hand: eb('qty_on_hand', '+', change.quantity), date_last_movement: sql`now()`, updated_at: sql`now()` }))
    .where('id', '=', item.id)
    .returning(['qty_on_hand', 'qty_committed'])
    .executeTakeFirstOrThrow();
  if (change.keepCommitted && change.quantity < 0 && updated.qty_on_hand < updated.qty_committed) {
    throw new ApiError(422, 'insufficient_stock', `${item.item_number_display}: ${updated.qty_committed} units are committed to orders; only ${Math.max(0, updated.qty_on_hand - change.quantity - updated.qty_committed)} can be taken away`);
  }
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

export interface Receipt {
  itemId: string;
  locationId: string;
  /** Positive units put away; negative when a void takes them back. */
  quantity: number;
  reason: string;
  /** The receiving batch. */
  referenceId: string;
  /** Supplied on a post: moves average_cost by weighted average and becomes last_cost. */
  unitCost?: number | null;
  /** The batch's received_date ('YYYY-MM-DD'): date_last_received never moves back. */
  receivedDate?: string;
}

/**
 * Receiving: units into (or, for a void, back out of) an available bin, raising on-hand, as a receipt movement. A void
 * cannot take away units that orders have committed.
 */
export async function receiveStock(tx: Transaction<DB>, author: StockAuthor, receipt: Receipt): Promise<MovementRow> {
  const movement = await writeMovement(tx, author, {
    itemId: receipt.itemId, locationId: receipt.locationId, quantity: receipt.quantity, movementType: 'receipt',
    reason: receipt.reason, referenceType: 'receiving_batch', referenceId: receipt.referenceId, keepCommitted: true,
  });
  if (receipt.quantity > 0) await stampReceipt(tx, receipt.itemId, receipt.quantity, receipt.unitCost ?? null, receipt.receivedDate);
  return movement;
}

/**
 * The cost and date side of a receipt. Runs after the on-hand increase: the units held before it are on-hand minus
 * the receipt, and when there were none (or no average yet) the new cost is the average.
 */
export async function stampReceipt(tx: Transaction<DB>, itemId: string, quantity: number, unitCost: number | null, receivedDate?: string) {
  // Midnight UTC of the date (dates are written as midnight UTC), whatever the session's TimeZone.
  const received = receivedDate ? sql<Date>`(${receivedDate}::date)::timestamp at time zone 'UTC'` : sql<Date>`now()`;
  await tx
    .updateTable('items')
    .set({
      date_last_received: sql`greatest(coalesce(date_last_received, ${received}), ${received})`,
      ...(unitCost === null ? {} : { last_cost: unitCost }),
      // Units that did not go on hand (all failed QC) carry no weight in the average.
      ...(unitCost === null || quantity <= 0 ? {} : {
        average_cost: sql<number>`case when average_cost is null or qty_on_hand - ${quantity}::int <= 0 then ${unitCost}::numeric
          else round((average_cost * (qty_on_hand - ${quantity}::int) + ${unitCost}::numeric * ${quantity}::int) / qty_on_hand, 4) end`,
      }),
      updated_at: sql`now()`,
    })
    .where('id', '=', itemId)
    .execute();
}

/**
 * Quarantined units (failed QC) in the quarantine bin at a quarantine location: kept apart from on-hand. They leave a
 * receipt movement marked inventory_status 'quarantine', whose balance_after repeats the unchanged on-hand, so every
 * unit into or out of any bin is in the ledger and on-hand stays the sum of the 'available' rows. Negative takes them
 * back out (a void).
 */
export async function quarantineStock(
  tx: Transaction<DB>,
  author: StockAuthor,
  change: { itemId: string; locationId: string; quantity: number; reason: string; referenceId: string },
): Promise<number> {
  if (!Number.isInteger(change.quantity) || change.quantity === 0) throw invalidRequest('quantity must be a non-zero integer');
  const item = await lockItem(tx, change.itemId);
  const location = await tx.selectFrom('locations').select(['location_code', 'location_type']).where('id', '=', change.locationId).forShare().executeTakeFirst();
  if (location?.location_type !== 'quarantine') throw invalidRequest('quarantined stock goes to a quarantine location');
  if (change.quantity > 0) {
    const bin = await tx.selectFrom('item_locations').select('qty_on_hand')
      .where('item_id', '=', item.id).where('location_id', '=', change.locationId).where('inventory_status', '=', 'quarantine').executeTakeFirst();
    if ((bin?.qty_on_hand ?? 0) + change.quantity > MAX_UNITS) throw tooManyUnits(item, bin?.qty_on_hand ?? 0, change.quantity, 'the quarantine bin');
  }
  const held = await changeBin(tx, item.id, change.locationId, change.quantity, 'quarantine');
  await tx.updateTable('items').set({ date_last_movement: sql`now()`, updated_at: sql`now()` }).where('id', '=', item.id).execute();
  await tx.insertInto('inventory_movements').values({
    item_id: item.id,
    manufacturer_id: item.manufacturer_id,
    location_id: change.locationId,
    movement_type: 'receipt',
    inventory_status: 'quarantine',
    quantity: change.quantity,
    balance_after: item.qty_on_hand,
    reason: change.reason,
    reference_type: 'receiving_batch',
    reference_id: change.referenceId,
    performed_by: author.userId,
    performed_by_name: author.userName,
    api_key_id: author.apiKeyId,
  }).execute();
  await recordHistory(tx, author, {
    entityType: 'item',
    entityId: item.id,
    action: change.quantity > 0 ? 'quarantined' : 'unquarantined',
    manufacturerId: item.manufacturer_id,
    before: { qty_quarantined: held - change.quantity },
    after: { qty_quarantined: held, location_id: change.locationId, quantity: change.quantity, reason: change.reason, reference_id: change.referenceId },
  });
  return held;
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

export interface Commitment {
  itemId: string;
  quantity: number;
  /** The caller acknowledged that qty_available may fall below zero. */
  allowNegative: boolean;
}

/**
 * Commits units of items to order lines: qty_committed rises, on-hand stays. Refused with 422 negative_stock (details
 * name the item) when qty_available would fall below zero, unless acknowledged. The item rows are locked in id order
 * first, so orders naming the same items in another order cannot deadlock, and parallel commitments of the last units
 * queue on the lock and each sees what the one before it committed.
 */
export async function commitStock(tx: Transaction<DB>, commitments: Commitment[]): Promise<void> {
  if (commitments.length === 0) return;
  if (commitments.some((c) => !Number.isInteger(c.quantity) || c.quantity <= 0)) throw invalidRequest('a commitment is a positive number of units');
  const ids = commitments.map((c) => c.itemId);
  await sql`select id from items where id = any(${ids}::uuid[]) order by id for update`.execute(tx);
  const committed = await sql<{ id: string }>`
    update items i set qty_committed = i.qty_committed + c.quantity, updated_at = now()
    from (select unnest(${ids}::uuid[]) as id, unnest(${commitments.map((c) => c.quantity)}::int[]) as quantity,
                 unnest(${commitments.map((c) => c.allowNegative)}::boolean[]) as allow_negative) c
    where i.id = c.id and (c.allow_negative or i.qty_on_hand - i.qty_committed >= c.quantity)
    returning i.id`.execute(tx);
  if (committed.rows.length === commitments.length) return;
  const done = new Set(committed.rows.map((row) => row.id));
  const refused = commitments.find((c) => !done.has(c.itemId))!;
  const item = await tx.selectFrom('items').select(['item_number_display', 'qty_available']).where('id', '=', refused.itemId).executeTakeFirst();
  if (!item) throw notFound('item');
  throw new ApiError(422, 'negative_stock',
    `${item.item_number_display} has ${item.qty_available} available; committing ${refused.quantity} would make it negative (send acknowledge_negative: true to commit anyway)`,
    { details: { item_id: refused.itemId } });
}

/**
 * Shipping: picked units leave the bin they were picked from as a shipment movement, and on-hand and qty_committed fall
 * together (the units were committed to the order line that ships them).
 */
export async function shipStock(
  tx: Transaction<DB>,
  author: StockAuthor,
  shipment: { itemId: string; locationId: string; quantity: number; reason: string; pickBatchId: string },
): Promise<MovementRow> {
  if (!Number.isInteger(shipment.quantity) || shipment.quantity <= 0) throw invalidRequest('a shipment is a positive number of units');
  const movement = await writeMovement(tx, author, {
    itemId: shipment.itemId, locationId: shipment.locationId, quantity: -shipment.quantity, movementType: 'shipment',
    reason: shipment.reason, referenceType: 'pick_batch', referenceId: shipment.pickBatchId,
  });
  await releaseCommitment(tx, { itemId: shipment.itemId, quantity: shipment.quantity });
  return movement;
}

/** Gives committed units back (a cancelled order, a deleted line): qty_committed falls by exactly what was committed. */
export async function releaseCommitment(tx: Transaction<DB>, release: { itemId: string; quantity: number }): Promise<void> {
  if (release.quantity === 0) return;
  await tx
    .updateTable('items')
    .set((eb) => ({ qty_committed: eb('qty_committed', '-', release.quantity), updated_at: sql`now()` }))
    .where('id', '=', release.itemId)
    .execute();
}
