// The only code that changes quantities. Every change locks the item row first, then moves the bin row, the item's
// on-hand and date_last_movement, and writes the ledger row (signed quantity, on-hand after it), the history row and
// the event, all in the caller's transaction. Quarantined units (failed QC) sit in quarantine bins outside on-hand:
// their ledger rows are marked inventory_status 'quarantine' and leave on-hand (and balance_after) as it was. Order
// commitments (qty_committed) are changed here too.
import { randomUUID } from 'node:crypto';
import { sql, type Selectable, type Transaction } from 'kysely';
import type { MovementType } from '../db/column-types.ts';
import type { DB, InventoryMovementsTable } from '../db/schema.ts';
import { unsizedArray } from '../db/array-parameters.ts';
import { ApiError, invalidRequest, notFound } from './errors.ts';
import { emit } from './events.ts';
import { historyInsert, recordHistory, type Author } from './history.ts';

export interface StockAuthor extends Author {
  userName: string;
}

/** A ledger row as written, with the names its answer shows (so an operation's answer needs no second read). */
export type MovementRow = Selectable<InventoryMovementsTable> & { item_number_display: string; manufacturer_name: string };
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
  /** Units of the item's qty_committed this change gives up (a shipment takes committed units away). */
  commitmentReleased?: number;
}

const insufficientStock = (available: number) =>
  new ApiError(422, 'insufficient_stock', `the bin holds ${available}; a bin cannot go below zero`);

/** Quantities are int4 columns: an item's on-hand, and so each of its bins, holds at most this many units. */
export const MAX_UNITS = 2_147_483_647;
/** The least an item's qty_available can hold (an acknowledged commitment of an item already short). */
const MIN_UNITS = -2_147_483_648;

const tooManyUnits = (item: { id: string; item_number_display: string }, held: number, quantity: number, what: string) =>
  invalidRequest(`${item.item_number_display}: ${what} would be ${held + quantity}, more than the ${MAX_UNITS} units it can hold`, { item_id: item.id });

/** Locks the item row: every quantity change of one item runs one after the other from here on. */
export async function lockItem(tx: Transaction<DB>, itemId: string) {
  const [item] = await lockItems(tx, [itemId]);
  return item!;
}

/** Locks the items in id order (as commitments lock them, so no two writers deadlock); 404 when one is missing. */
async function lockItems(tx: Transaction<DB>, itemIds: string[]) {
  const items = await sql<{ id: string; manufacturer_id: string; item_number_display: string; qty_on_hand: number; status: string }>`
    select id, manufacturer_id, item_number_display, qty_on_hand, status from items
    where id = any(${unsizedArray([...new Set(itemIds)], 'uuid')}) order by id for update`.execute(tx);
  if (items.rows.length !== new Set(itemIds).size) throw notFound('item');
  return items.rows;
}

/** Locations stock may move into or out of: active, and not quarantine (quarantined stock is not sellable on-hand). */
async function checkStockLocations(tx: Transaction<DB>, locationIds: string[]) {
  // Shared lock: retiring a location (which takes it exclusively) waits for this move, and then sees its stock.
  // Planned for its ids each time (0.05 ms), on purpose: a plan for any number of ids reads a few hundred locations
  // sequentially, which costs more than planning an index probe.
  const locations = await sql<{ id: string; location_code: string; location_type: string; is_active: boolean }>`
    select id, location_code, location_type, is_active from locations where id = any(${[...new Set(locationIds)]}::uuid[]) for share`.execute(tx);
  const byId = new Map(locations.rows.map((location) => [location.id, location]));
  for (const id of locationIds) {
    const location = byId.get(id);
    if (!location) throw invalidRequest('location_id does not name a location');
    if (!location.is_active) throw invalidRequest(`location ${location.location_code} is retired`);
    if (location.location_type === 'quarantine') throw invalidRequest(`location ${location.location_code} is a quarantine location`);
  }
}

interface BinChange {
  itemId: string;
  locationId: string;
  quantity: number;
}

/**
 * Adds each signed quantity to the item's bin row of that status at the location (created on first use; the first
 * available bin of an item is its primary), all in one statement; changes to one bin are added up first. Returns the
 * units each bin holds after.
 */
async function changeBins(tx: Transaction<DB>, changes: BinChange[], status: BinStatus = 'available'): Promise<Map<string, number>> {
  const net = new Map<string, BinChange>();
  for (const change of changes) {
    const key = `${change.itemId} ${change.locationId}`;
    const bin = net.get(key);
    if (bin) bin.quantity += change.quantity;
    else net.set(key, { ...change });
  }
  const bins = [...net.values()].filter((bin) => bin.quantity !== 0);
  const held = new Map<string, number>();
  if (bins.length === 0) return held;
  // Only an item's first new bin here may become its primary: the others cannot see it in the statement's snapshot.
  const seen = new Set<string>();
  const firstOfItem = bins.map((bin) => !seen.has(bin.itemId) && !!seen.add(bin.itemId));
  const changed = await sql<{ id: string; item_id: string; location_id: string; qty_on_hand: number; is_primary: boolean }>`
    insert into item_locations (item_id, location_id, qty_on_hand, inventory_status, is_primary)
    select c.item_id, c.location_id, c.quantity, ${status},
      ${status === 'available'} and c.first_of_item
        and not exists (select 1 from item_locations b where b.item_id = c.item_id and b.inventory_status = 'available')
    from unnest(${unsizedArray(bins.map((b) => b.itemId), 'uuid')}, ${unsizedArray(bins.map((b) => b.locationId), 'uuid')},
      ${unsizedArray(bins.map((b) => b.quantity), 'int')}, ${unsizedArray(firstOfItem, 'boolean')}) as c(item_id, location_id, quantity, first_of_item)
    on conflict (item_id, location_id, inventory_status)
      do update set qty_on_hand = item_locations.qty_on_hand + excluded.qty_on_hand, updated_at = now()
    returning id, item_id, location_id, qty_on_hand, is_primary`.execute(tx);
  for (const bin of changed.rows) {
    const quantity = net.get(`${bin.item_id} ${bin.location_id}`)!.quantity;
    if (bin.qty_on_hand < 0) throw insufficientStock(bin.qty_on_hand - quantity);
    held.set(`${bin.item_id} ${bin.location_id}`, bin.qty_on_hand);
  }
  // An emptied bin that is not the item's primary one is forgotten, so location stock lists only real stock.
  const emptied = changed.rows.filter((bin) => bin.qty_on_hand === 0 && !bin.is_primary).map((bin) => bin.id);
  if (emptied.length) await sql`delete from item_locations where id = any(${unsizedArray(emptied, 'uuid')})`.execute(tx);
  return held;
}

/**
 * Moves stock: locks the items, checks the locations, changes the bins, on-hand (and, for shipments, the commitment
 * the units leave) and writes the ledger and history rows, in a fixed number of statements however many changes there
 * are: a 10-line shipment costs what one line does. Changes apply in the order given; an item's balance_after runs
 * through its changes.
 */
async function writeMovements(tx: Transaction<DB>, author: StockAuthor, changes: StockChange[]): Promise<MovementRow[]> {
  if (changes.length === 0) return [];
  if (changes.some((change) => !Number.isInteger(change.quantity) || change.quantity === 0)) throw invalidRequest('quantity must be a non-zero integer');
  const items = new Map((await lockItems(tx, changes.map((change) => change.itemId))).map((item) => [item.id, item]));
  // The item rows are locked, so on-hand cannot change before the update; a bin never holds more than on-hand.
  const onHand = new Map([...items.values()].map((item) => [item.id, item.qty_on_hand]));
  const balances = changes.map((change) => {
    const before = onHand.get(change.itemId)!;
    if (before + change.quantity > MAX_UNITS) throw tooManyUnits(items.get(change.itemId)!, before, change.quantity, 'on-hand');
    onHand.set(change.itemId, before + change.quantity);
    return { before, after: before + change.quantity };
  });
  await checkStockLocations(tx, changes.map((change) => change.locationId));
  await changeBins(tx, changes);
  const totals = new Map<string, { quantity: number; released: number; shipped: number }>();
  for (const change of changes) {
    const total = totals.get(change.itemId) ?? { quantity: 0, released: 0, shipped: 0 };
    total.quantity += change.quantity;
    total.released += change.commitmentReleased ?? 0;
    if (change.movementType === 'shipment') total.shipped -= change.quantity;
    totals.set(change.itemId, total);
  }
  const ids = [...totals.keys()];
  const rows = changes.map((change, index) => {
    const id = randomUUID();
    return {
      id,
      item_id: change.itemId,
      manufacturer_id: items.get(change.itemId)!.manufacturer_id,
      location_id: change.locationId,
      movement_type: change.movementType,
      quantity: change.quantity,
      balance_after: balances[index]!.after,
      reason: change.reason,
      reference_type: change.referenceType,
      reference_id: change.referenceId ?? id,
      cycle_count_batch_id: change.cycleCountBatchId ?? null,
      performed_by: author.userId,
      performed_by_name: author.userName,
      api_key_id: author.apiKeyId,
    };
  });
  // On-hand, the units shipped in the year (domain/shipped-year.ts), the ledger rows and their history rows in one
  // statement: each part is computed here from the locked items, so none depends on another's effect. A refusal below
  // rolls the whole transaction back with them.
  const { rows: written } = await sql<Omit<MovementRow, 'item_number_display'> & { updated_items: { id: string; qty_on_hand: number; qty_committed: number }[] }>`
    with updated as (
      update items i set qty_on_hand = i.qty_on_hand + c.quantity, qty_committed = i.qty_committed - c.released,
        units_shipped_year = i.units_shipped_year + c.shipped, date_last_movement = now(), updated_at = now()
      from unnest(${unsizedArray(ids, 'uuid')}, ${unsizedArray(ids.map((id) => totals.get(id)!.quantity), 'int')},
          ${unsizedArray(ids.map((id) => totals.get(id)!.released), 'int')}, ${unsizedArray(ids.map((id) => totals.get(id)!.shipped), 'int')})
        as c(id, quantity, released, shipped)
      where i.id = c.id
      returning i.id, i.qty_on_hand, i.qty_committed
    ), inserted as (
      insert into inventory_movements (id, item_id, manufacturer_id, location_id, movement_type, quantity, balance_after, reason,
        reference_type, reference_id, cycle_count_batch_id, performed_by, performed_by_name, api_key_id)
      select id, item_id, manufacturer_id, location_id, movement_type, quantity, balance_after, reason,
        reference_type, reference_id, cycle_count_batch_id, performed_by, performed_by_name, api_key_id
      from json_populate_recordset(null::inventory_movements, ${JSON.stringify(rows)})
      returning *
    ), shipped_on_day as (
      -- The day of the ledger row itself (performed_at is the clock when the row is written, not the transaction's
      -- start): a shipment that began before midnight and wrote after it leaves the kept year with its ledger row.
      insert into item_shipped_days (item_id, day, units)
      select item_id, (performed_at at time zone 'UTC')::date, -sum(quantity)::int
      from inserted where movement_type = 'shipment' group by 1, 2
      on conflict (item_id, day) do update set units = item_shipped_days.units + excluded.units
    ), history as (${historyInsert(author, rows.map((row, index) => ({
      entityType: 'item',
      entityId: row.item_id,
      action: row.movement_type,
      manufacturerId: row.manufacturer_id,
      before: { qty_on_hand: balances[index]!.before },
      after: { qty_on_hand: row.balance_after, movement_id: row.id, location_id: row.location_id, quantity: row.quantity },
    })))})
    select inserted.*, (select name from manufacturers m where m.id = inserted.manufacturer_id) as manufacturer_name,
      (select json_agg(updated) from updated) as updated_items
    from inserted`.execute(tx);
  for (const after of written[0]!.updated_items) {
    if (!changes.some((change) => change.itemId === after.id && change.keepCommitted && change.quantity < 0)) continue;
    if (after.qty_on_hand >= after.qty_committed) continue;
    const item = items.get(after.id)!;
    throw new ApiError(422, 'insufficient_stock', `${item.item_number_display}: ${after.qty_committed} units are committed to orders; only ${Math.max(0, item.qty_on_hand - after.qty_committed)} can be taken away`);
  }
  const byId = new Map(written.map(({ updated_items: _, ...movement }) => [movement.id, { ...movement, item_number_display: items.get(movement.item_id)!.item_number_display }]));
  const movements = rows.map((row) => byId.get(row.id)!);
  return movements;
}

/** An adjustment or a cycle-count correction: one movement, announced as inventory.adjusted. */
export async function adjustStock(tx: Transaction<DB>, author: StockAuthor, change: StockChange): Promise<MovementRow> {
  const [movement] = await writeMovements(tx, author, [change]);
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
  const [movement] = await writeMovements(tx, author, [{
    itemId: receipt.itemId, locationId: receipt.locationId, quantity: receipt.quantity, movementType: 'receipt',
    reason: receipt.reason, referenceType: 'receiving_batch', referenceId: receipt.referenceId, keepCommitted: true,
  }]);
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
  const held = (await changeBins(tx, [{ itemId: item.id, locationId: change.locationId, quantity: change.quantity }], 'quarantine'))
    .get(`${item.id} ${change.locationId}`)!;
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
  const [out, into] = await writeMovements(tx, author, [
    { ...common, locationId: move.fromLocationId, quantity: -move.quantity },
    { ...common, locationId: move.toLocationId, quantity: move.quantity },
  ]);
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
 * name the item) when qty_available would fall below zero, unless acknowledged; with 422 invalid_request when a
 * quantity would pass what its column holds. The item rows are locked in id order
 * first, so orders naming the same items in another order cannot deadlock, and parallel commitments of the last units
 * queue on the lock and each sees what the one before it committed.
 */
export async function commitStock(tx: Transaction<DB>, commitments: Commitment[]): Promise<void> {
  if (commitments.length === 0) return;
  if (commitments.some((c) => !Number.isInteger(c.quantity) || c.quantity <= 0)) throw invalidRequest('a commitment is a positive number of units');
  const ids = commitments.map((c) => c.itemId);
  // One statement: `locked` takes the item locks in id order before the update touches a row (a condition on it alone
  // is a one-time filter, checked before the first row is read), then the guarded update commits them all.
  const committed = await sql<{ id: string }>`
    with locked as materialized (select id from items where id = any(${unsizedArray(ids, 'uuid')}) order by id for update)
    update items i set qty_committed = i.qty_committed + c.quantity, updated_at = now()
    from (select unnest(${unsizedArray(ids, 'uuid')}) as id, unnest(${unsizedArray(commitments.map((c) => c.quantity), 'int')}) as quantity,
                 unnest(${unsizedArray(commitments.map((c) => c.allowNegative), 'boolean')}) as allow_negative) c
    where (select count(*) from locked) >= 0
      and i.id = c.id and (c.allow_negative or i.qty_on_hand - i.qty_committed >= c.quantity)
      and i.qty_committed::bigint + c.quantity <= ${sql.lit(MAX_UNITS)}
      and i.qty_on_hand::bigint - i.qty_committed - c.quantity >= ${sql.lit(MIN_UNITS)}
    returning i.id`.execute(tx);
  if (committed.rows.length === commitments.length) return;
  const done = new Set(committed.rows.map((row) => row.id));
  const refused = commitments.find((c) => !done.has(c.itemId))!;
  const item = await tx.selectFrom('items').select(['id', 'item_number_display', 'qty_available', 'qty_committed']).where('id', '=', refused.itemId).executeTakeFirst();
  if (!item) throw notFound('item');
  if (item.qty_committed + refused.quantity > MAX_UNITS) throw tooManyUnits(item, item.qty_committed, refused.quantity, 'committed');
  if (item.qty_available - refused.quantity < MIN_UNITS) {
    throw invalidRequest(`${item.item_number_display}: available would be ${item.qty_available - refused.quantity}, less than the ${MIN_UNITS} units it can hold`, { item_id: item.id });
  }
  throw new ApiError(422, 'negative_stock',
    `${item.item_number_display} has ${item.qty_available} available; committing ${refused.quantity} would make it negative (send acknowledge_negative: true to commit anyway)`,
    { details: { item_id: refused.itemId } });
}

export interface Shipment {
  itemId: string;
  locationId: string;
  quantity: number;
  reason: string;
  pickBatchId: string;
}

/**
 * Shipping: picked units leave the bins they were picked from as shipment movements, and on-hand and qty_committed fall
 * together (the units were committed to the order lines that ship them). All of a batch's shipments at once.
 */
export async function shipStock(tx: Transaction<DB>, author: StockAuthor, shipments: Shipment[]): Promise<MovementRow[]> {
  if (shipments.some((shipment) => !Number.isInteger(shipment.quantity) || shipment.quantity <= 0)) throw invalidRequest('a shipment is a positive number of units');
  return writeMovements(tx, author, shipments.map((shipment) => ({
    itemId: shipment.itemId, locationId: shipment.locationId, quantity: -shipment.quantity, movementType: 'shipment',
    reason: shipment.reason, referenceType: 'pick_batch', referenceId: shipment.pickBatchId, commitmentReleased: shipment.quantity,
  })));
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
