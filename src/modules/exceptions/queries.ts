// The exceptions' SQL: one row shape for the three kinds (the other kinds' fields zero), filters, and the detail with
// the exception's order block.
import { sql, type Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { inPartnerScope, type Actor } from '../../http/auth.ts';
import { notFound } from '../../domain/errors.ts';
import { onePage, type Page } from '../../http/pagination.ts';
import { blockExceptionId } from '../orders/queries.ts';

export type ExceptionKind = 'short_pick' | 'mispick' | 'quality';

// The block an exception opened (at most one: a block names one exception).
const BLOCK_OF = sql<boolean>`k.id = (select k2.id from order_blocks k2
  where ${blockExceptionId('k2')} = e.id
  order by k2.created_at desc limit 1)`;

function exceptionRows(db: Kysely<DB>) {
  return db
    .selectFrom('pick_exceptions as e')
    .innerJoin('items as i', 'i.id', 'e.item_id')
    .leftJoin('items as ai', 'ai.id', 'e.actual_item_id')
    .leftJoin('orders as o', 'o.id', 'e.order_id')
    .leftJoin('pick_batches as b', 'b.id', 'e.pick_batch_id')
    .leftJoin('order_blocks as k', (join) => join.on(BLOCK_OF))
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

export async function listExceptions(db: Kysely<DB>, actor: Actor, filter: ExceptionFilter, page: Page) {
  let query = inPartnerScope(exceptionRows(db), actor, 'e.manufacturer_id');
  if (filter.kind) query = query.where('e.kind', '=', filter.kind);
  if (filter.status) query = query.where('e.status', '=', filter.status);
  if (filter.order) query = query.where('e.order_id', '=', filter.order);
  if (filter.item) query = query.where('e.item_id', '=', filter.item);
  if (filter.awaitingSupplyPartner !== undefined) {
    const awaiting = sql<boolean>`coalesce(k.status = 'open' and k.awaiting_supply_partner_at is not null, false)`;
    query = query.where(filter.awaitingSupplyPartner ? awaiting : sql<boolean>`not ${awaiting}`);
  }
  const [rows, total] = await Promise.all([
    query.orderBy('e.created_at', 'desc').orderBy('e.id', 'desc').$call(onePage(page)).execute(),
    query.clearSelect().select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { rows: rows.map(serializeException), total: Number(total.n) };
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
