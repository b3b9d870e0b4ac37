// The pick batch's SQL: the session with its lines and parcels in one query, the list, and the locks every action
// takes (the order row first, then the batch row: one order for all, so no two actions can deadlock).
import { sql, type Kysely, type Transaction } from 'kysely';
import { jsonArrayFrom } from 'kysely/helpers/postgres';
import type { DB, PickBatchLinesTable } from '../../db/schema.ts';
import { inPartnerScope, type Actor } from '../../http/auth.ts';
import { notFound } from '../../domain/errors.ts';
import type { Page } from '../../http/pagination.ts';
import type { Selectable } from 'kysely';

type Executor = Kysely<DB> | Transaction<DB>;
export type BatchLineRow = Selectable<PickBatchLinesTable>;

/** Units of an order line the warehouse has shipped (qty_shipped also counts a direct portion once it shipped). */
export const WAREHOUSE_SHIPPED = sql<number>`qty_shipped - case when direct_shipped_at is null then 0 else qty_direct end`;

/** Batches on their way out: their lines hold the order line's units. */
export const LIVE_BATCH = ['in_progress', 'completed', 'packed'] as const;

function sessions(db: Executor) {
  return db
    .selectFrom('pick_batches as b')
    .innerJoin('orders as o', 'o.id', 'b.order_id')
    .innerJoin('customers as c', 'c.id', 'o.customer_id')
    .innerJoin('manufacturers as m', 'm.id', 'b.manufacturer_id')
    .select((eb) => [
      'b.id', 'b.order_id', 'o.order_number', 'c.name as customer_name', 'm.name as manufacturer_name', 'b.status',
      'b.tracking_number', 'b.tracking_carrier', 'b.tracking_captured_at', 'b.tracking_flagged_for_office_at',
      'b.staged_slot', 'b.staged_at', 'b.staged_loc_type', 'b.created_at',
      jsonArrayFrom(eb.selectFrom('pick_batch_lines as l')
        .innerJoin('order_lines as ol', 'ol.id', 'l.order_line_id')
        .innerJoin('items as i', 'i.id', 'l.item_id')
        // A lookup per line by its unique code (limit 1 keeps it one): joined whole, the planner reads every location.
        .leftJoinLateral((eb) => eb.selectFrom('locations').select(['zone', 'aisle', 'rack', 'shelf'])
          .whereRef('location_code', '=', 'l.bin_location').limit(sql.lit(1)).as('loc'), (join) => join.onTrue())
        .select([
          'l.id', 'l.order_line_id', 'l.item_id', 'ol.item_number_display', 'ol.item_description', 'l.bin_location',
          'ol.unit_of_measure', 'l.short_reason', 'l.qty_to_pick', 'l.qty_picked', 'l.qty_short', 'i.qty_on_hand',
          'i.qty_available', 'l.status', 'l.pack_verified_at', 'loc.zone', 'loc.aisle', 'loc.rack', 'loc.shelf',
          sql<string | null>`(select e.status from pick_exceptions e where e.pick_batch_line_id = l.id
            order by e.created_at desc, e.id desc limit 1)`.as('exception_status'),
        ])
        .whereRef('l.pick_batch_id', '=', 'b.id')
        .orderBy('ol.line_number')).as('lines'),
      jsonArrayFrom(eb.selectFrom('pick_batch_parcels as p')
        .leftJoin('users as u', 'u.id', 'p.captured_by')
        .select(['p.id', 'p.pick_batch_id', 'p.parcel_seq', 'p.tracking_number', 'p.carrier', 'p.captured_at', 'u.name as captured_by_name'])
        .whereRef('p.pick_batch_id', '=', 'b.id')
        .orderBy('p.parcel_seq')).as('parcels'),
    ]);
}

export type SessionRow = Awaited<ReturnType<ReturnType<typeof sessions>['executeTakeFirstOrThrow']>>;

/** The query of one batch as a session, in the key's partner scope (no row outside it). */
export function sessionQuery(db: Executor, actor: Pick<Actor, 'manufacturerId'>, id: string) {
  return inPartnerScope(sessions(db).where('b.id', '=', id), actor, 'b.manufacturer_id');
}

/** One batch as a session; 404 outside the key's partner scope. */
export async function sessionOf(db: Executor, actor: Actor, id: string): Promise<SessionRow> {
  const row = await sessionQuery(db, actor, id).executeTakeFirst();
  if (!row) throw notFound('pick batch');
  return row;
}

export interface BatchFilter {
  status?: string;
  order?: string;
  manufacturer?: string;
}

/** Newest first, with an exact count. */
export async function listSessions(db: Kysely<DB>, actor: Actor, filter: BatchFilter, page: Page) {
  let query = inPartnerScope(db.selectFrom('pick_batches as b'), actor, 'b.manufacturer_id');
  if (filter.status) query = query.where('b.status', '=', filter.status as never);
  if (filter.order) query = query.where('b.order_id', '=', filter.order);
  if (filter.manufacturer) query = query.where('b.manufacturer_id', '=', filter.manufacturer);
  const [ids, total] = await Promise.all([
    query.select('b.id').orderBy('b.created_at', 'desc').orderBy('b.id', 'desc').limit(page.perPage).offset(page.offset).execute(),
    query.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
  ]);
  if (ids.length === 0) return { rows: [], total: Number(total.n) };
  const rows = await sessions(db).where('b.id', 'in', ids.map((row) => row.id)).execute();
  const byId = new Map(rows.map((row) => [row.id, row]));
  return { rows: ids.map((row) => byId.get(row.id)!), total: Number(total.n) };
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
