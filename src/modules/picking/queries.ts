// The pick batch's SQL: the session with its lines and parcels in one query, the list (its page, then its lines), and
// the locks every action takes (the order row first, then the batch row: one order for all, so no two actions can
// deadlock).
import { sql, type Expression, type Kysely, type RawBuilder, type Selectable, type Transaction } from 'kysely';
import type { DB, ItemsTable, LocationsTable, PickBatchesTable, PickBatchLinesTable, PickBatchParcelsTable } from '../../db/schema.ts';
import { countedTotalExpression, rowCount, totalOfPage } from '../../db/list-counts.ts';
import { inPartnerScope, type Actor } from '../../http/auth.ts';
import { notFound } from '../../domain/errors.ts';
import { onePage, type Page } from '../../http/pagination.ts';
import { isoTextOf } from '../../db/timestamps.ts';

type Executor = Kysely<DB> | Transaction<DB>;
export type BatchLineRow = Selectable<PickBatchLinesTable>;

/** Units of an order line the warehouse has shipped (qty_shipped also counts a direct portion once it shipped). */
export const WAREHOUSE_SHIPPED = sql<number>`qty_shipped - case when direct_shipped_at is null then 0 else qty_direct end`;

/** Batches on their way out: their lines hold the order line's units. */
export const LIVE_BATCH = ['in_progress', 'completed', 'packed'] as const;

/** A line of a session as the session query returns it (its verification time as ISO text). */
export type SessionLineRow = Pick<Selectable<PickBatchLinesTable>, 'id' | 'order_line_id' | 'item_id' | 'item_number_display' | 'item_description'
  | 'bin_location' | 'unit_of_measure' | 'short_reason' | 'qty_to_pick' | 'qty_picked' | 'qty_short' | 'status'>
  & Pick<Selectable<ItemsTable>, 'qty_on_hand' | 'qty_available'>
  & Pick<Selectable<LocationsTable>, 'zone' | 'aisle' | 'rack' | 'shelf'>
  & { pack_verified_at: string | null; exception_status: string | null };

export type SessionRow = Pick<Selectable<PickBatchesTable>, 'id' | 'order_id' | 'status' | 'tracking_number' | 'tracking_carrier' | 'tracking_captured_at'
  | 'tracking_flagged_for_office_at' | 'staged_slot' | 'staged_at' | 'staged_loc_type' | 'created_at'> & {
  order_number: number;
  customer_name: string;
  manufacturer_name: string;
  lines: SessionLineRow[];
  parcels: (Pick<Selectable<PickBatchParcelsTable>, 'id' | 'pick_batch_id' | 'parcel_seq' | 'tracking_number' | 'carrier'>
    & { captured_at: string; captured_by_name: string | null })[];
};

type LineOfBatch = SessionLineRow & { pick_batch_id: string; line_number: number };

/**
 * The batch and line rows a session is read from: the tables, or the RETURNING of the statement that wrote them (a
 * started batch answers from its own insert).
 */
interface SessionSource {
  batches: RawBuilder<unknown>;
  lines: RawBuilder<unknown>;
}

const STORED: SessionSource = { batches: sql`pick_batches`, lines: sql`pick_batch_lines` };

/**
 * Lines (`where` over `from`, by default pick_batch_lines, as l) as a session shows them, with their batch and line
 * numbers. The verification time is ISO text already, so it reads the same nested in JSON or as a column.
 */
function sessionLines(where: RawBuilder<unknown>, from = STORED.lines) {
  return sql<LineOfBatch>`
    select l.id, l.order_line_id, l.item_id, l.item_number_display, l.item_description, l.bin_location, l.unit_of_measure,
      l.short_reason, l.qty_to_pick, l.qty_picked, l.qty_short, i.qty_on_hand, i.qty_available, l.status,
      ${isoTextOf('l.pack_verified_at')} as pack_verified_at, loc.zone, loc.aisle, loc.rack, loc.shelf, l.pick_batch_id, l.line_number,
      (select e.status from pick_exceptions e where e.pick_batch_line_id = l.id order by e.created_at desc, e.id desc limit 1) as exception_status
    from ${from} l
    join items i on i.id = l.item_id
    -- A lookup per line by its unique code (limit 1 keeps it one): joined whole, the planner reads every location.
    left join lateral (select zone, aisle, rack, shelf from locations where location_code = l.bin_location limit 1) loc on true
    where ${where}`;
}

/** One line of a batch as the session shows it (no row when it is another batch's). */
export function sessionLineQuery(batchId: string, lineId: string) {
  return sessionLines(sql`l.id = ${lineId} and l.pick_batch_id = ${batchId}`);
}

/** A page of batch ids with the list's total on each (the list's filters, order and offset). */
type PageOfBatches = Expression<{ id: string; total_count: number }>;

/**
 * Batches with their order, customer, partner and parcels: those of `where` (over the source's batches as b) with
 * their lines nested as JSON, a session in one query; or those of a page, in its order, with its total and without
 * lines. Written as SQL text rather than built: every floor request answers with it, and building and compiling it
 * each time cost more than running it.
 */
function batchesOf(of: { where: RawBuilder<unknown>; from?: SessionSource }): RawBuilder<SessionRow>;
function batchesOf(of: { page: PageOfBatches }): RawBuilder<Omit<SessionRow, 'lines'> & { total_count: number }>;
function batchesOf(of: { where: RawBuilder<unknown>; from?: SessionSource } | { page: PageOfBatches }) {
  const one = 'where' in of;
  const from = (one && of.from) || STORED;
  return sql`
    select b.id, b.order_id, o.order_number, c.name as customer_name, m.name as manufacturer_name, b.status,
      b.tracking_number, b.tracking_carrier, b.tracking_captured_at, b.tracking_flagged_for_office_at,
      b.staged_slot, b.staged_at, b.staged_loc_type, b.created_at,
      ${one ? sql`(select coalesce(json_agg(line order by line.line_number), '[]') from (${sessionLines(sql`l.pick_batch_id = b.id`, from.lines)}) line) as lines`
        : sql`page.total_count`},
      (select coalesce(json_agg(parcel order by parcel.parcel_seq), '[]') from (
        select p.id, p.pick_batch_id, p.parcel_seq, p.tracking_number, p.carrier, p.captured_at, u.name as captured_by_name
        from pick_batch_parcels p left join users u on u.id = p.captured_by
        where p.pick_batch_id = b.id
      ) parcel) as parcels
    from ${one ? sql`${from.batches} b` : sql`${of.page} page join pick_batches b on b.id = page.id`}
    join orders o on o.id = b.order_id
    join customers c on c.id = o.customer_id
    join manufacturers m on m.id = b.manufacturer_id
    ${one ? sql`where ${of.where}` : sql`order by b.created_at desc, b.id desc`}`;
}

/** The query of one batch as a session, in the key's partner scope (no row outside it). */
export function sessionQuery(actor: Pick<Actor, 'manufacturerId'>, id: string) {
  return batchesOf({ where: actor.manufacturerId ? sql`b.id = ${id} and b.manufacturer_id = ${actor.manufacturerId}` : sql`b.id = ${id}` });
}

/**
 * The session of a batch its statement has just written, from that statement's WITH clauses `batch` and `lines` (their
 * RETURNING *): the statement's own reads cannot see its writes.
 */
export function writtenSessionQuery() {
  return batchesOf({ where: sql`true`, from: { batches: sql`batch`, lines: sql`lines` } });
}

/** One batch as a session; 404 outside the key's partner scope. */
export async function sessionOf(db: Executor, actor: Actor, id: string): Promise<SessionRow> {
  const { rows: [row] } = await sessionQuery(actor, id).execute(db);
  if (!row) throw notFound('pick batch');
  return row;
}

export interface BatchFilter {
  status?: string;
  order?: string;
  manufacturer?: string;
}

/**
 * Newest first, with an exact total carried by the page's statement: from the maintained counts (migration 0034) when
 * only partner and status narrow the list, counted for one order's batches (a few rows) or a partner-scoped key naming
 * another partner (none). The page's batches come with it, and then their lines, as rows: nested in each batch as JSON,
 * a page's 250 lines took PostgreSQL 1.5 ms more to build (3.9-4.2 ms against 2.4-2.8 for the batches and the lines
 * apart, pgbench on the bench data).
 */
export async function listSessions(db: Kysely<DB>, actor: Actor, filter: BatchFilter, page: Page) {
  let query = inPartnerScope(db.selectFrom('pick_batches as b'), actor, 'b.manufacturer_id');
  if (filter.status) query = query.where('b.status', '=', filter.status as never);
  if (filter.order) query = query.where('b.order_id', '=', filter.order);
  if (filter.manufacturer) query = query.where('b.manufacturer_id', '=', filter.manufacturer);
  const otherPartner = actor.manufacturerId && filter.manufacturer && filter.manufacturer !== actor.manufacturerId;
  const total: Expression<number> = filter.order || otherPartner
    ? rowCount(query)
    : countedTotalExpression({ list: 'pick_batches', manufacturerId: actor.manufacturerId ?? filter.manufacturer, statuses: filter.status ? [filter.status] : [] });
  const { rows: batches } = await batchesOf({
    page: query.select(['b.id', sql<number>`${total}`.as('total_count')]).orderBy('b.created_at', 'desc').orderBy('b.id', 'desc').$call(onePage(page)),
  }).execute(db);
  const totalCount = await totalOfPage(db, batches, page, total);
  if (batches.length === 0) return { rows: [], total: totalCount };
  const { rows: lines } = await sql<LineOfBatch>`
    ${sessionLines(sql`l.pick_batch_id = any(${batches.map((batch) => batch.id)}::uuid[])`)} order by l.line_number`.execute(db);
  const sessions = batches.map(({ total_count: _, ...batch }) => ({ ...batch, lines: [] as SessionLineRow[] }));
  const byId = new Map(sessions.map((session) => [session.id, session]));
  for (const line of lines) byId.get(line.pick_batch_id)!.lines.push(line);
  return { rows: sessions, total: totalCount };
}

/**
 * Locks the batch's order, then the batch, in the caller's transaction, and returns the batch; 404 outside the key's
 * partner scope. Every action on a batch goes through here, as does anything else that locks an order before a batch.
 * One statement: FOR UPDATE OF locks the tables in the order it names them, the order's row first.
 */
export function lockBatch(tx: Transaction<DB>, actor: Pick<Actor, 'manufacturerId'>, id: string) {
  return inPartnerScope(tx.selectFrom('orders as o').innerJoin('pick_batches as b', 'b.order_id', 'o.id').selectAll('b').where('b.id', '=', id), actor, 'b.manufacturer_id')
    .forUpdate(['o', 'b']).executeTakeFirstOrThrow(() => notFound('pick batch'));
}

export type BatchRow = Awaited<ReturnType<typeof lockBatch>>;

/** A line of the batch (404 when it is another batch's). */
export async function lineOf(tx: Executor, batchId: string, lineId: string): Promise<BatchLineRow> {
  const line = await tx.selectFrom('pick_batch_lines').selectAll().where('id', '=', lineId).where('pick_batch_id', '=', batchId).executeTakeFirst();
  if (!line) throw notFound('pick batch line');
  return line;
}
