// Inventory adjustments and the two ledgers (every movement; adjustments and count corrections only).
import { sql, type Expression, type Kysely } from 'kysely';
import { countedTotalExpression, rowCount, totalOfPage } from '../../db/list-counts.ts';
import type { MovementType } from '../../db/column-types.ts';
import type { DB } from '../../db/schema.ts';
import { inTransaction } from '../../db/transaction.ts';
import { adjustStock, type MovementRow } from '../../domain/stock.ts';
import { inPartnerScope, type Actor } from '../../http/auth.ts';
import { invalidRequest, notFound } from '../../domain/errors.ts';
import { onePage, type Page } from '../../http/pagination.ts';
import { Movement } from './schemas.ts';

function movementsWithNames(db: Kysely<DB>) {
  return db
    .selectFrom('inventory_movements as mv')
    .innerJoin('items as i', 'i.id', 'mv.item_id')
    .innerJoin('manufacturers as m', 'm.id', 'mv.manufacturer_id')
    .select([
      'mv.id', 'mv.item_id', 'mv.manufacturer_id', 'i.item_number_display', 'm.name as manufacturer_name', 'mv.reason',
      'mv.reference_type', 'mv.movement_type', 'mv.quantity', 'mv.balance_after', 'mv.reference_id', 'mv.cycle_count_batch_id',
      'mv.performed_by_name', 'mv.performed_at', 'mv.inventory_status',
    ]);
}

/** The fields of a ledger row's answer (the Movement schema's, which movementsWithNames reads), in their order. */
const ANSWER_FIELDS = Object.keys(Movement.properties) as (keyof typeof Movement.properties)[];

/** A ledger row's answer from a movement just written, without reading it back. */
export const movementAnswer = (movement: MovementRow) =>
  Object.fromEntries(ANSWER_FIELDS.map((field) => [field, movement[field]])) as Pick<MovementRow, (typeof ANSWER_FIELDS)[number]>;

/**
 * Ledger rows by id, in the order given (a ledger page), with the rows' times, so that only their months are read
 * (the ledger is partitioned by month of performed_at). By id alone the statement reads every month's index and is
 * planned over every partition: an adjustment's answer, when it read its row back this way, spent 3-35 ms of the
 * server in planning it under the mixed bench's writes, at 29 months.
 * (A Date holds milliseconds and performed_at microseconds: the times bound a range, they are not matched.)
 */
async function movementsById(db: Kysely<DB>, ids: string[], performedAt: (Date | string)[]) {
  if (!ids.length) return [];
  const times = performedAt.map((at) => new Date(at).getTime());
  const rows = await movementsWithNames(db).where('mv.id', 'in', ids)
    .where('mv.performed_at', '>=', new Date(Math.min(...times)).toISOString())
    .where('mv.performed_at', '<', new Date(Math.max(...times) + 1).toISOString())
    .execute();
  return ids.map((id) => rows.find((row) => row.id === id)!);
}

export interface LedgerFilter {
  item?: string;
  manufacturer?: string;
  movement_type?: MovementType[];
  from?: string;
  to?: string;
}

/** The ledger's conditions on `mv`: partner scope, the ledger's own types, and the query's filters. */
function ledgerRows<QB extends { where: (...args: any[]) => any }>(query: QB, actor: Actor, filter: LedgerFilter, types?: readonly MovementType[]): QB {
  let rows = inPartnerScope(query, actor, 'mv.manufacturer_id');
  const where = (column: string, op: string, value: unknown) => (rows = rows.where(sql.ref(column), op, value) as QB);
  if (types) where('mv.movement_type', 'in', types);
  if (filter.movement_type?.length) where('mv.movement_type', 'in', filter.movement_type);
  if (filter.item) where('mv.item_id', '=', filter.item);
  if (!actor.manufacturerId && filter.manufacturer) where('mv.manufacturer_id', '=', filter.manufacturer);
  if (filter.from) where('mv.performed_at', '>=', new Date(`${filter.from}T00:00:00Z`));
  if (filter.to) where('mv.performed_at', '<', new Date(Date.parse(`${filter.to}T00:00:00Z`) + 86_400_000));
  return rows;
}

/**
 * Newest first. `types` limits the ledger (the adjustments ledger holds adjustments and count corrections). The page's
 * ids and times come with the total (one round trip, one snapshot), then the rows by id within the page's months. A
 * page past the last has no row to carry the total: counted on its own.
 */
export async function listMovements(db: Kysely<DB>, actor: Actor, filter: LedgerFilter, page: Page, types?: readonly MovementType[]) {
  const query = () => ledgerRows(db.selectFrom('inventory_movements as mv'), actor, filter, types);
  const total: Expression<number> = filter.item || filter.from || filter.to
    ? rowCount(query())
    : ledgerTotal(actor.manufacturerId ?? filter.manufacturer, types, filter.movement_type);
  const pageRows = await query().select(['mv.id', 'mv.performed_at', sql<number>`${total}`.as('total_count')])
    .orderBy('mv.seq', 'desc').$call(onePage(page)).execute();
  const rows = await movementsById(db, pageRows.map((row) => row.id), pageRows.map((row) => row.performed_at));
  return { rows, total: await totalOfPage(db, pageRows, page, total) };
}

/** Every movement the ledger's filters match, newest first, with the list's columns (the CSV export). */
export const allMovementRows = (db: Kysely<DB>, actor: Actor, filter: LedgerFilter, types?: readonly MovementType[]) =>
  ledgerRows(movementsWithNames(db), actor, filter, types).orderBy('mv.seq', 'desc');

/**
 * The total of a ledger narrowed by partner and types only, from the maintained counts (migration 0018). The query's
 * movement_type is validated against the ledger's own types, so it narrows them.
 */
function ledgerTotal(manufacturerId: string | undefined, types: readonly MovementType[] | undefined, chosen: readonly MovementType[] | undefined) {
  return countedTotalExpression({ list: 'movements', manufacturerId, statuses: chosen?.length ? chosen : types });
}

export interface NewAdjustment {
  item_id: string;
  quantity: number;
  reason: string;
  location_id?: string;
}

export async function postAdjustment(db: Kysely<DB>, actor: Actor, input: NewAdjustment) {
  return movementAnswer(await inTransaction(db, async (tx) => {
    const item = await inPartnerScope(tx.selectFrom('items').select('id').where('id', '=', input.item_id), actor, 'items.manufacturer_id')
      .executeTakeFirst();
    if (!item) throw notFound('item');
    let locationId = input.location_id;
    if (!locationId) {
      const primary = await tx.selectFrom('item_locations').select('location_id').where('item_id', '=', item.id).where('is_primary', '=', true).executeTakeFirst();
      if (!primary) throw invalidRequest('location_id is required: the item has no primary bin yet');
      locationId = primary.location_id;
    }
    return adjustStock(tx, actor, {
      itemId: item.id, locationId, quantity: input.quantity, movementType: 'adjustment', reason: input.reason.trim(), referenceType: 'inventory_adjustment',
    });
  }));
}
