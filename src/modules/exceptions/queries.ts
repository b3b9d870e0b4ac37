// The exceptions' SQL: one row shape for the three kinds (the other kinds' fields zero), filters, and the detail with
// the exception's order block.
import { sql, type AliasedSelectQueryBuilder, type Expression, type Kysely } from 'kysely';
import { countedTotalExpression, rowCount, totalOfPage } from '../../db/list-counts.ts';
import { inLiterals } from '../../db/literals.ts';
import type { DB } from '../../db/schema.ts';
import { inPartnerScope, type Actor } from '../../http/auth.ts';
import { notFound } from '../../domain/errors.ts';
import { onePage, type Page } from '../../http/pagination.ts';
import { blockExceptionId } from '../orders/queries.ts';

export type ExceptionKind = 'short_pick' | 'mispick' | 'quality';


/**
 * The exceptions with what the row shows, joined. A list's page (its chosen ids) is joined first: with more tables
 * than PostgreSQL orders freely (join_collapse_limit, 8), a join written last is made last, after every exception
 * had been joined to everything else.
 */
function exceptionRows(db: Kysely<DB>, page?: AliasedSelectQueryBuilder<{ page_id: string }, 'p'>) {
  return db
    .selectFrom('pick_exceptions as e')
    .$if(page !== undefined, (query) => query.innerJoin(page!, 'p.page_id', 'e.id'))
    .innerJoin('items as i', 'i.id', 'e.item_id')
    .leftJoin('items as ai', 'ai.id', 'e.actual_item_id')
    .leftJoin('orders as o', 'o.id', 'e.order_id')
    .leftJoin('pick_batches as b', 'b.id', 'e.pick_batch_id')
    // The block the exception opened, looked up by the exception (a block names one exception). As a join on
    // `k.id = (the newest block's id)`, PostgreSQL hashed every block of the warehouse for a page of 50 (10,000
    // blocks: 5 ms of the page's 7).
    .leftJoinLateral((eb) => eb.selectFrom('order_blocks as k2')
      .select(['k2.id', 'k2.status', 'k2.awaiting_supply_partner_at', 'k2.awaiting_supply_partner_note', 'k2.resolution_disposition', 'k2.resolution_note'])
      .where(sql<boolean>`${blockExceptionId('k2')} = e.id`).orderBy('k2.created_at', 'desc').limit(1).as('k'), (join) => join.onTrue())
    .leftJoin('users as cu', 'cu.id', 'e.created_by')
    .leftJoin('users as ru', 'ru.id', 'e.reviewed_by')
    .select([
      'e.id', 'e.kind', 'e.status', 'e.manufacturer_id', 'e.order_id', 'o.order_number', 'e.pick_batch_id', 'b.batch_number',
      'e.order_line_id', 'e.pick_batch_line_id', 'e.item_id', 'i.item_number_display', 'i.description as item_description',
      'e.qty_short', 'e.short_reason', 'e.flag_reason', 'e.actual_item_id', 'ai.item_number_display as actual_item_number_display',
      'e.actual_qty', 'k.id as block_id', 'k.status as block_status', 'k.awaiting_supply_partner_at', 'k.awaiting_supply_partner_note',
      'k.resolution_disposition', 'k.resolution_note', 'cu.name as created_by_name', 'e.created_at', 'e.reviewed_at',
      'ru.name as reviewed_by_name', 'e.updated_at',
    ]);
}

export type ExceptionRow = Awaited<ReturnType<ReturnType<typeof exceptionRows>['executeTakeFirstOrThrow']>>;

/** Short-pick fields are zero on the other kinds' rows and the flag fields zero on short picks (spec). */
export function serializeException(row: ExceptionRow) {
  const short = row.kind === 'short_pick';
  const mispick = row.kind === 'mispick';
  return {
    id: row.id,
    kind: row.kind,
    status: row.status,
    manufacturer_id: row.manufacturer_id,
    order_id: row.order_id,
    order_number: row.order_number ?? 0,
    pick_batch_id: row.pick_batch_id,
    batch_number: row.batch_number ?? '',
    order_line_id: row.order_line_id,
    pick_batch_line_id: row.pick_batch_line_id,
    item_id: row.item_id,
    item_number_display: row.item_number_display,
    item_description: row.item_description,
    qty_short: short ? row.qty_short : 0,
    short_reason: short ? row.short_reason ?? '' : '',
    flag_reason: short ? '' : row.flag_reason ?? '',
    actual_item_id: mispick ? row.actual_item_id : null,
    actual_item_number_display: mispick ? row.actual_item_number_display ?? '' : '',
    actual_qty: mispick ? row.actual_qty ?? 0 : 0,
    awaiting_supply_partner: row.block_status === 'open' && row.awaiting_supply_partner_at !== null,
    awaiting_supply_partner_note: row.awaiting_supply_partner_note,
    resolution_disposition: row.resolution_disposition,
    resolution_note: row.resolution_note,
    created_by_name: row.created_by_name,
    created_at: row.created_at,
    reviewed_at: row.reviewed_at,
    reviewed_by_name: row.reviewed_by_name,
    updated_at: row.updated_at,
  };
}

export interface ExceptionFilter {
  kind?: ExceptionKind;
  status?: 'open' | 'reviewed' | 'superseded';
  awaitingSupplyPartner?: boolean;
  order?: string;
  item?: string;
}

// The exceptions whose order block is open and waits for the supply partner: the few rows of migration 0041's index.
// Every exception has one block, made with it (service.ts), so "a block of it waits" is "its block waits". A set the
// filter tests with `in` and `not in` is hashed once a statement; as `not exists`, PostgreSQL planned a loop over
// the waiting blocks for every exception it read (125 waiting, 2,500 exceptions read: 144 ms).
const WAITING = sql<string>`select ${blockExceptionId('k')} from order_blocks k
  where k.status = 'open' and k.awaiting_supply_partner_at is not null and ${blockExceptionId('k')} is not null`;
const AWAITING = sql<boolean>`e.id in (${WAITING})`;

/**
 * The page's exceptions are chosen, and counted, on the exceptions alone (the blocks that wait only when the filter
 * asks about them); their items, order, batch, block and people are joined to the page's rows only. Joined before the
 * page, every row an OFFSET skipped was joined too, and the count joined them all (10,000 exceptions: page 50 took
 * 3.7 s).
 */
export async function listExceptions(db: Kysely<DB>, actor: Actor, filter: ExceptionFilter, page: Page) {
  let scoped = inPartnerScope(db.selectFrom('pick_exceptions as e'), actor, 'e.manufacturer_id');
  // Kind and status as literals (closed sets, db/literals.ts): with them as parameters PostgreSQL planned the
  // statement anew on every request (8.7 ms of planning for 6.4 of execution, `status=open`).
  if (filter.kind) scoped = scoped.where(inLiterals('e.kind', [filter.kind]));
  if (filter.status) scoped = scoped.where(inLiterals('e.status', [filter.status]));
  if (filter.order) scoped = scoped.where('e.order_id', '=', filter.order);
  if (filter.item) scoped = scoped.where('e.item_id', '=', filter.item);
  const chosen = filter.awaitingSupplyPartner === undefined ? scoped
    : scoped.where(filter.awaitingSupplyPartner ? AWAITING : sql<boolean>`e.id not in (${WAITING})`);
  // By partner and status the total is kept (migration 0040), and the ones not waiting are that less the few that
  // wait; a choice by kind, order or item, or of the ones waiting, is counted.
  const kept = countedTotalExpression({ list: 'exceptions', manufacturerId: actor.manufacturerId ?? undefined, statuses: filter.status ? [filter.status] : [] });
  const total: Expression<number> = filter.kind || filter.order || filter.item || filter.awaitingSupplyPartner ? rowCount(chosen)
    : filter.awaitingSupplyPartner === false ? sql<number>`(${kept} - ${rowCount(scoped.where(AWAITING))})` : kept;
  const pageIds = chosen.select('e.id as page_id').orderBy('e.created_at', 'desc').orderBy('e.id', 'desc').$call(onePage(page)).as('p');
  const rows = await exceptionRows(db, pageIds).select(sql<number>`${total}`.as('total_count'))
    .orderBy('e.created_at', 'desc').orderBy('e.id', 'desc').execute();
  return { rows: rows.map(serializeException), total: await totalOfPage(db, rows, page, total) };
}

/** One exception of the kind with its order block (whose exception summary is null here, as the spec says). */
export async function exceptionDetail(db: Kysely<DB>, actor: Actor, kind: ExceptionKind, id: string) {
  const row = await inPartnerScope(exceptionRows(db).where('e.id', '=', id).where('e.kind', '=', kind), actor, 'e.manufacturer_id')
    .executeTakeFirst();
  if (!row) throw notFound('exception');
  const block = row.block_id
    ? await db.selectFrom('order_blocks').selectAll().where('id', '=', row.block_id).executeTakeFirstOrThrow()
    : null;
  return { ...serializeException(row), block: block ? { ...block, exception: null } : null };
}
