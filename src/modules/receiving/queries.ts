// Reading receiving batches: one batch with its lines, and the list. Partner scope is part of every query.
import { sql, type Expression, type Kysely, type Transaction } from 'kysely';
import { countedTotalExpression, rowCount, totalOfPage } from '../../db/list-counts.ts';
import type { ReceivingBatchStatus } from '../../db/column-types.ts';
import type { DB } from '../../db/schema.ts';
import { inPartnerScope, type Actor } from '../../http/auth.ts';
import { notFound } from '../../domain/errors.ts';
import { onePage, type Page } from '../../http/pagination.ts';
import { serializeBatch, serializeLine, type BatchRow } from './serialize.ts';

type Executor = Kysely<DB> | Transaction<DB>;

/** The batch with its partner's code and name; 404 outside the actor's scope. */
export async function findBatch(db: Executor, actor: Actor, id: string) {
  const row = await inPartnerScope(
    db.selectFrom('receiving_batches as b').innerJoin('manufacturers as m', 'm.id', 'b.manufacturer_id')
      .selectAll('b').select(['m.code as manufacturer_code', 'm.name as manufacturer_name']).where('b.id', '=', id),
    actor, 'b.manufacturer_id',
  ).executeTakeFirst();
  if (!row) throw notFound('receiving batch');
  return row;
}

/** Lines in the order they were added, with the item's on-hand, the location code and the inspector's name. */
export async function linesOf(db: Executor, batchId: string) {
  const rows = await db
    .selectFrom('receiving_lines as l')
    .innerJoin('items as i', 'i.id', 'l.item_id')
    .leftJoin('locations as loc', 'loc.id', 'l.new_location_id')
    .leftJoin('users as u', 'u.id', 'l.inspected_by')
    .selectAll('l')
    .select(['i.qty_on_hand as item_qty_on_hand', 'loc.location_code', 'u.name as inspected_by_name'])
    .where('l.batch_id', '=', batchId)
    .orderBy('l.seq')
    .execute();
  return rows.map((row) => serializeLine(row, row));
}

/** `{batch, lines}`: the answer of get and of every change to a batch. */
export async function batchWithLines(db: Executor, actor: Actor, id: string) {
  const row = await findBatch(db, actor, id);
  return { batch: serializeBatch(row, { partner: row }), lines: await linesOf(db, id) };
}

export interface BatchFilter {
  status?: ReceivingBatchStatus[];
  manufacturer?: string;
  from?: string;
  to?: string;
}

/**
 * Newest first (received_date, then creation); rows carry line_count and total_qty. The page's ids are picked along
 * the list's index first and only their lines summed: in the statement that takes the OFFSET, PostgreSQL would sum
 * the lines of every batch it skips (page 100 of 40,000 batches: 47 requests/s). The exact total rides on the page's
 * statement, from the counts kept by partner and status (migration 0038) unless dates narrow the list; a page past the
 * last reads it on its own.
 */
export async function listBatches(db: Kysely<DB>, actor: Actor, filter: BatchFilter, page: Page) {
  let query = inPartnerScope(db.selectFrom('receiving_batches as b'), actor, 'b.manufacturer_id');
  if (!actor.manufacturerId && filter.manufacturer) query = query.where('b.manufacturer_id', '=', filter.manufacturer);
  if (filter.status?.length) query = query.where('b.status', 'in', filter.status);
  if (filter.from) query = query.where('b.received_date', '>=', filter.from);
  if (filter.to) query = query.where('b.received_date', '<=', filter.to);
  const total: Expression<number> = filter.from || filter.to
    ? rowCount(query)
    : countedTotalExpression({ list: 'receiving', manufacturerId: actor.manufacturerId ?? filter.manufacturer, statuses: filter.status ?? [] });
  const pageIds = query.select('b.id as page_id')
    .orderBy('b.received_date', 'desc').orderBy('b.created_at', 'desc').orderBy('b.id').$call(onePage(page)).as('p');
  const rows = await db.selectFrom('receiving_batches as b')
    .innerJoin(pageIds, 'p.page_id', 'b.id')
    .innerJoin('manufacturers as m', 'm.id', 'b.manufacturer_id')
    .selectAll('b')
    .select(['m.code as manufacturer_code', 'm.name as manufacturer_name', sql<number>`${total}`.as('total_count')])
    .select([
      sql<number>`(select count(*)::int from receiving_lines l where l.batch_id = b.id)`.as('line_count'),
      // bigint: 10,000 lines of up to 100,000,000 units pass int4; int8 arrives as a JS number (exact to 2^53).
      sql<number>`(select coalesce(sum(l.qty_received), 0)::bigint from receiving_lines l where l.batch_id = b.id)`.as('total_qty'),
    ])
    .orderBy('b.received_date', 'desc').orderBy('b.created_at', 'desc').orderBy('b.id')
    .execute();
  return {
    rows: rows.map(({ total_count: _, ...row }) => serializeBatch(row as BatchRow, { partner: row, totals: row })),
    total: await totalOfPage(db, rows, page, total),
  };
}
