// Order lines: the rules a line request must meet, its snapshots and price, its stock commitment, and the order's
// totals that follow from its lines.
import { sql, type InsertObject, type RawBuilder, type Transaction } from 'kysely';
import type { FulfillmentSource } from '../../db/column-types.ts';
import { isoTimeOfJson } from '../../db/timestamps.ts';
import type { DB } from '../../db/schema.ts';
import { commitStock, releaseCommitment, type Commitment } from '../../domain/stock.ts';
import { ApiError, invalidRequest } from '../../domain/errors.ts';
import { MAX_UNIT_PRICE } from './schemas.ts';
import type { LineRow } from './serialize.ts';

export interface LineRequest {
  item_id: string;
  qty_ordered: number;
  unit_price?: number;
  discount_pct?: number;
  fulfillment_source?: FulfillmentSource;
  qty_warehouse?: number;
  qty_direct?: number;
  acknowledge_negative?: boolean;
  acknowledge_exception?: boolean;
}

/** Errors of one line of a request name it by its index in `lines` (create) so the client knows which to fix. */
function atLine(index: number | null, error: unknown): unknown {
  if (index === null || !(error instanceof ApiError)) return error;
  return new ApiError(error.status, error.code, `lines[${index}]: ${error.message}`, { details: { line_index: index } });
}

/** qty_warehouse and qty_direct of a line from its source: a split names both and they must add up to qty_ordered. */
function splitOf(line: LineRequest): { qty_warehouse: number; qty_direct: number } {
  const source = line.fulfillment_source ?? 'warehouse';
  const given = { qty_warehouse: line.qty_warehouse, qty_direct: line.qty_direct };
  const split = source === 'split'
    ? { qty_warehouse: line.qty_warehouse ?? 0, qty_direct: line.qty_direct ?? 0 }
    : source === 'warehouse' ? { qty_warehouse: line.qty_ordered, qty_direct: 0 } : { qty_warehouse: 0, qty_direct: line.qty_ordered };
  const contradicts = (given.qty_warehouse !== undefined && given.qty_warehouse !== split.qty_warehouse)
    || (given.qty_direct !== undefined && given.qty_direct !== split.qty_direct);
  if (split.qty_warehouse + split.qty_direct !== line.qty_ordered || contradicts) {
    throw new ApiError(422, 'invalid_split',
      `qty_warehouse (${given.qty_warehouse ?? split.qty_warehouse}) + qty_direct (${given.qty_direct ?? split.qty_direct}) must equal qty_ordered (${line.qty_ordered}) for a ${source} line`);
  }
  return split;
}

/**
 * extended_price = qty × price × (1 − discount) in cents, computed by PostgreSQL in exact decimals, from the price and
 * discount as they are stored (4 and 6 decimals).
 */
const extendedPrice = (qty: number, unitPrice: number, discount: number) =>
  sql<number>`round(${qty}::numeric * round(${unitPrice}::numeric, 4) * (1 - round(${discount}::numeric, 6)), 2)`;

interface NumberedLine {
  line: LineRequest;
  lineNumber: number;
  /** Its index in the request's `lines` (order entry), named by its errors; null for a single added line. */
  index: number | null;
}

/**
 * Checks line requests against their items and the order, commits their warehouse quantities, and returns the rows to
 * insert. Direct quantities never touch stock and never meet the exception or negative-stock checks. A few queries for
 * the whole set, not a few per line: order entry with many lines stays one short transaction.
 */
export async function prepareLines(
  tx: Transaction<DB>,
  order: { id: string; manufacturer_id: string; line_count: number },
  requests: NumberedLine[],
): Promise<InsertObject<DB, 'order_lines'>[]> {
  function fail(request: NumberedLine, error: unknown): never {
    throw atLine(request.index, error);
  }
  const splits = requests.map((request) => {
    const { line } = request;
    if (line.unit_price !== undefined && !(line.unit_price >= 0 && line.unit_price <= MAX_UNIT_PRICE)) {
      fail(request, new ApiError(400, 'invalid_price', `unit_price must be between 0 and ${MAX_UNIT_PRICE}`));
    }
    try {
      return splitOf(line);
    } catch (error) {
      return fail(request, error);
    }
  });
  const itemIds = [...new Set(requests.map((request) => request.line.item_id))];
  // Each item with whether an open pick exception blocks it, in one read. 'open' is a literal, so the plan kept for
  // the statement can use the open exceptions' partial index: with it as a parameter, PostgreSQL planned the statement
  // anew on every order (0.3-0.45 ms, pg_stat_statements). The ids are one array: one statement for any line count.
  const items = new Map((await tx
    .selectFrom('items')
    .select(['id', 'manufacturer_id', 'item_number_display', 'description', 'unit_weight', 'selling_uom', 'warehouse_location', 'price_1', 'status'])
    .select((eb) => eb.exists(eb.selectFrom('pick_exceptions as e').select(sql`1`.as('one'))
      .whereRef('e.item_id', '=', 'items.id').where('e.status', '=', sql.lit('open'))).as('blocked'))
    .where('id', '=', sql<string>`any(${itemIds}::uuid[])`)
    .execute()).map((item) => [item.id, item]));
  // line_count is kept with every line change (refreshTotals): an order entered in this transaction has none to ask for.
  const onOrder = new Map(order.line_count === 0 ? [] : (await tx.selectFrom('order_lines').select(['item_id', 'line_number'])
    .where('order_id', '=', order.id).where('item_id', 'in', itemIds).execute()).map((row) => [row.item_id, `line ${row.line_number}`]));

  const rows: InsertObject<DB, 'order_lines'>[] = [];
  const commitments: (Commitment & { request: NumberedLine })[] = [];
  for (const [n, request] of requests.entries()) {
    const { line } = request;
    const item = items.get(line.item_id);
    if (!item || item.manufacturer_id !== order.manufacturer_id) fail(request, invalidRequest('item_id does not name an item of the order\'s supply partner'));
    if (item.status !== 'active') fail(request, invalidRequest(`item ${item.item_number_display} is ${item.status} and cannot be ordered`));
    const earlier = onOrder.get(item.id);
    if (earlier) fail(request, invalidRequest(`item ${item.item_number_display} is already on ${earlier}; change that line instead`));
    onOrder.set(item.id, request.index === null ? `line ${request.lineNumber}` : `lines[${request.index}]`);
    const { qty_warehouse, qty_direct } = splits[n]!;
    if (qty_warehouse > 0) {
      if (item.blocked && !line.acknowledge_exception) {
        fail(request, new ApiError(422, 'exception_blocked',
          `item ${item.item_number_display} has an open pick exception (send acknowledge_exception: true to order it anyway)`));
      }
      commitments.push({ itemId: item.id, quantity: qty_warehouse, allowNegative: line.acknowledge_negative ?? false, request });
    }
    const unitPrice = line.unit_price ?? item.price_1 ?? 0;
    const discount = line.discount_pct ?? 0;
    rows.push({
      order_id: order.id,
      item_id: item.id,
      line_number: request.lineNumber,
      item_number_display: item.item_number_display,
      item_description: item.description,
      bin_location: item.warehouse_location,
      qty_ordered: line.qty_ordered,
      qty_warehouse,
      qty_direct,
      qty_committed: qty_warehouse,
      fulfillment_source: line.fulfillment_source ?? 'warehouse',
      unit_price: unitPrice,
      price_override: line.unit_price !== undefined && unitPrice !== item.price_1,
      discount_pct: discount,
      extended_price: extendedPrice(line.qty_ordered, unitPrice, discount),
      unit_weight: item.unit_weight,
      unit_of_measure: item.selling_uom,
    });
  }
  try {
    await commitStock(tx, commitments);
  } catch (error) {
    // negative_stock names the item; the client knows the line.
    const itemId = error instanceof ApiError ? (error.details as { item_id?: string } | undefined)?.item_id : undefined;
    const request = commitments.find((c) => c.itemId === itemId)?.request;
    throw request ? atLine(request.index, error) : error;
  }
  return rows;
}

/** Gives back what the lines still hold in qty_committed and zeroes it, so no path can release it twice. */
export async function releaseLines(tx: Transaction<DB>, lineIds: string[]): Promise<void> {
  if (lineIds.length === 0) return;
  // Read under the lines' row locks, so what is given back is what they hold now, whoever changed them last.
  const lines = await tx.selectFrom('order_lines').select(['id', 'item_id', 'qty_committed']).where('id', 'in', lineIds).where('qty_committed', '>', 0).forUpdate().execute();
  // Item rows in a fixed order: two transactions releasing the same items cannot deadlock.
  for (const line of lines.sort((a, b) => a.item_id.localeCompare(b.item_id))) {
    await releaseCommitment(tx, { itemId: line.item_id, quantity: line.qty_committed });
    await tx.updateTable('order_lines').set({ qty_committed: 0, updated_at: new Date() }).where('id', '=', line.id).execute();
  }
}

/**
 * line_count, total_weight (null when no line has a weight) and total_extended_price of an order from `lines` (a FROM
 * item naming its lines `l`), as the values of the order's row: the same in an update and in the insert of order entry.
 */
const totalsOf = (lines: RawBuilder<unknown>) => ({
  line_count: sql<number>`(select count(*)::int from ${lines})`,
  total_weight: sql<string | null>`(select sum(l.qty_ordered * l.unit_weight) from ${lines})`,
  total_extended_price: sql<string>`(select coalesce(sum(l.extended_price), 0) from ${lines})`,
});

/** The order's totals from its lines. */
export async function refreshTotals(tx: Transaction<DB>, orderId: string): Promise<void> {
  await tx.updateTable('orders').set({ ...totalsOf(sql`order_lines l where l.order_id = ${orderId}`), updated_at: sql`now()` })
    .where('id', '=', orderId).execute();
}

/**
 * The WITH clauses of order entry that insert the lines and the order with its totals from them, for a statement that
 * writes the rest of the entry too (recordAndEmitAnswering's `writes`): `entered_order` is the order's row as
 * inserted, and `lines` its lines as inserted, as JSON (enteredLine reads them), for the statement's answer: the
 * entry's answer without a read of its own. The order is inserted whole, after its lines in the same statement (their
 * foreign key is checked at its end): an update of the new row for its totals rewrote it with all of its 15 indexes,
 * three of them trigram indexes, and counted it again in list_counts.
 */
export function insertOrderWithLines(tx: Transaction<DB>, order: InsertObject<DB, 'orders'>, lines: InsertObject<DB, 'order_lines'>[]) {
  const insertedLines = tx.insertInto('order_lines').values(lines);
  const insertedOrder = tx.insertInto('orders').values({ ...order, ...totalsOf(sql`entered_lines l`) });
  return {
    writes: sql`entered_lines as (${insertedLines.returningAll()}), entered_order as (${insertedOrder.returningAll()})`,
    lines: sql<LineRow[]>`(select json_agg(l order by l.line_number) from entered_lines l)`,
  };
}

/** A line of insertOrderWithLines' `lines`: its times came as JSON (`...+00:00`), the rest as the driver reads them. */
export const enteredLine = (line: LineRow): LineRow => ({
  ...line,
  created_at: isoTimeOfJson(line.created_at), updated_at: isoTimeOfJson(line.updated_at),
  direct_notified_at: isoTimeOfJson(line.direct_notified_at), direct_shipped_at: isoTimeOfJson(line.direct_shipped_at),
});
