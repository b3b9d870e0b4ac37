// The order's SQL: the header with its joins, lines with the item's availability, the list with its filters, and the
// includes of the detail response (fulfilment, shipments, blocks, documents).
import { sql, type Expression, type Kysely, type Transaction } from 'kysely';
import { jsonArrayFrom } from 'kysely/helpers/postgres';
import { unsizedArray } from '../../db/array-parameters.ts';
import { countedTotalExpression, totalOfPage } from '../../db/list-counts.ts';
import { containsPattern, foldedContainsPattern } from '../../db/like.ts';
import { inLiterals } from '../../db/literals.ts';
import { isoTimeOfJson } from '../../db/timestamps.ts';
import type { OrderStatus, Priority } from '../../db/column-types.ts';
import type { DB } from '../../db/schema.ts';
import { inPartnerScope, type Actor } from '../../http/auth.ts';
import { notFound } from '../../domain/errors.ts';
import { onePage, type Page } from '../../http/pagination.ts';
import { textsOfPage, textsOfRows, versionOf, type RowTexts } from '../../http/row-texts.ts';
import { serializeOrder, type DisplaySubstatus, type OrderJoins, type OrderRow } from './serialize.ts';

type Executor = Kysely<DB> | Transaction<DB>;

/** Batches still on their way out (not shipped, not cancelled). */
const ACTIVE_BATCH = ['released', 'in_progress', 'completed', 'packed'] as const;

// picking while any active batch is being picked; packed when all are packed; picked when the least-progressed is
// completed. Null without an active batch.
const DISPLAY_SUBSTATUS = sql<DisplaySubstatus | null>`(select case
    when count(*) = 0 then null
    when bool_or(b.status in ('released', 'in_progress')) then 'picking'
    when bool_and(b.status = 'packed') then 'packed'
    else 'picked' end
  from pick_batches b where b.order_id = o.id and b.status in (${sql.join(ACTIVE_BATCH)}))`;

/**
 * Where an order's row is read: its table, or `entered_order`, the row order entry's statement inserts (the
 * statement's own select cannot read it from the table).
 */
type OrderSource = 'orders' | 'entered_order';

/** An order with the rows its header shows: partner, customer, ship-via, who recorded LTL freight. */
function joined(db: Executor, source: OrderSource = 'orders') {
  return db
    .selectFrom(sql<OrderRow>`${sql.table(source)}`.as('o'))
    .innerJoin('manufacturers as m', 'm.id', 'o.manufacturer_id')
    .innerJoin('customers as c', 'c.id', 'o.customer_id')
    .leftJoin('ship_via as sv', 'sv.id', 'o.ship_via_id')
    .leftJoin('users as lu', 'lu.id', 'o.ltl_recorded_by');
}

export function withJoins(db: Executor, source: OrderSource = 'orders') {
  return joined(db, source)
    .selectAll('o')
    .select([
      'm.code as manufacturer_code', 'm.name as manufacturer_name', 'c.name as customer_name', 'c.account_number as customer_account',
      'sv.code as ship_via_code', 'sv.description as ship_via_description', 'sv.carrier_name as ship_via_carrier_name',
      'sv.mode as ship_via_mode', 'lu.name as ltl_recorded_by_name',
    ]);
}

/** The header with its join-derived keys; 404 outside the key's partner scope. */
export async function orderWithJoins(db: Executor, actor: Actor, id: string): Promise<OrderRow & OrderJoins> {
  const row = await inPartnerScope(withJoins(db).where('o.id', '=', id), actor, 'o.manufacturer_id').executeTakeFirst();
  if (!row) throw notFound('order');
  return row;
}

/** Locks the order row: the writes to one order take turns. 404 outside the key's partner scope. */
export async function lockOrder(tx: Transaction<DB>, actor: Actor, id: string): Promise<OrderRow> {
  const row = await inPartnerScope(tx.selectFrom('orders').selectAll().where('id', '=', id), actor, 'orders.manufacturer_id')
    .forUpdate()
    .executeTakeFirst();
  if (!row) throw notFound('order');
  return row;
}

export function linesWithAvailability(db: Executor, orderId: string) {
  return db
    .selectFrom('order_lines as l')
    .innerJoin('items as i', 'i.id', 'l.item_id')
    .selectAll('l')
    .select('i.qty_available as item_qty_available')
    .where('l.order_id', '=', orderId)
    .orderBy('l.line_number')
    .execute();
}

export interface OrderFilter {
  manufacturer?: string;
  customer?: string;
  statuses: OrderStatus[];
  priorities: Priority[];
  q?: string;
  aged_hours?: number;
  awaiting_direct_ship?: '1';
  from?: string;
  to?: string;
}

/** `aged_hours`: the orders created at or before this. */
const agedCutoff = (hours: number) => sql<string>`now() - make_interval(hours => ${hours})`;

function filteredOrders(db: Kysely<DB>, actor: Actor, f: OrderFilter) {
  let query = inPartnerScope(db.selectFrom('orders as o'), actor, 'o.manufacturer_id');
  if (!actor.manufacturerId && f.manufacturer) query = query.where('o.manufacturer_id', '=', f.manufacturer);
  if (f.customer) query = query.where('o.customer_id', '=', f.customer);
  // Statuses and priorities are checked against their enums, then written as literals (status=open reads the partial
  // index of open orders).
  if (f.statuses.length) query = query.where(inLiterals('o.status', f.statuses));
  if (f.priorities.length) query = query.where(inLiterals('o.priority', f.priorities));
  if (f.aged_hours) query = query.where('o.created_at', '<=', agedCutoff(f.aged_hours));
  if (f.from) query = query.where('o.order_date', '>=', f.from);
  if (f.to) query = query.where('o.order_date', '<=', f.to);
  if (f.awaiting_direct_ship) {
    query = query
      .where('o.status', 'not in', ['shipped', 'billed', 'closed', 'cancelled'])
      .where(({ exists, selectFrom }) => exists(selectFrom('order_lines as l').select(sql`1`.as('one'))
        .whereRef('l.order_id', '=', 'o.id').where('l.qty_direct', '>', 0).where('l.direct_shipped_at', 'is', null)));
  }
  const text = f.q?.trim();
  if (text) {
    const pattern = containsPattern(text);
    // A union of index lookups (trigram indexes on each text), not one OR that only a full read could answer.
    query = query.where('o.id', 'in', (eb) => eb.selectFrom('orders as n').select('n.id').where(sql`n.order_number::text`, 'like', pattern)
      .union(eb.selectFrom('orders as p').select('p.id').where('p.customer_po_number', 'ilike', pattern))
      .union(eb.selectFrom('orders as r').select('r.id').where(sql`r.release_number::text`, 'like', pattern))
      .union(eb.selectFrom('orders as g').select('g.id').where(sql`g.original_release_number::text`, 'like', pattern))
      .union(eb.selectFrom('orders as oc').innerJoin('customers as cn', 'cn.id', 'oc.customer_id').select('oc.id').where('cn.name_folded', 'like', foldedContainsPattern(text))));
  }
  return query;
}

/**
 * The version of an order's list row (http/row-texts.ts): its own and its joined rows', and its pick batches' state,
 * which the row shows (display_substatus) while no column of the order changes.
 */
const LIST_ROW_VERSION = sql<string>`concat_ws(':', ${versionOf('o', 'm', 'c', 'sv', 'lu')}, ${DISPLAY_SUBSTATUS})`;

type ListedOrder = Parameters<typeof serializeOrder>[0] & { version: string };
const toText = (row: ListedOrder) => JSON.stringify(serializeOrder(row, 'list'));

/**
 * A page of the list, newest first (the order number grows with every order), as the JSON texts of its rows, and its
 * total. One statement reads the page's ids along the index, each row's version and the total (a round trip costs more
 * than the maintained total it reads), all in one snapshot; rows not answered before at that version are read by id
 * with their joins (http/row-texts.ts). A page past the last has no row to carry the total: counted on its own.
 */
export async function listOrders(db: Kysely<DB>, actor: Actor, f: OrderFilter, page: Page, texts: RowTexts) {
  const totalOfAll = orderTotal(db, actor, f);
  const pageIds = () => filteredOrders(db, actor, f).select('o.id as page_id').orderBy('o.order_number', 'desc').$call(onePage(page)).as('p');
  const versions = await joined(db).innerJoin(pageIds(), 'p.page_id', 'o.id')
    .select(['o.id', LIST_ROW_VERSION.as('version'), sql<number>`${totalOfAll}`.as('total_count')])
    .orderBy('o.order_number', 'desc')
    .execute();
  const rows = await textsOfPage<ListedOrder>(texts, 'orders', versions, (ids) => withListColumns(db).where('o.id', '=', sql<string>`any(${unsizedArray(ids, 'uuid')})`).execute(), toText);
  if (rows) return { rows, total: await totalOfPage(db, versions, page, totalOfAll) };
  const whole = await withListColumns(db).innerJoin(pageIds(), 'p.page_id', 'o.id')
    .select(sql<number>`${totalOfAll}`.as('total_count'))
    .orderBy('o.order_number', 'desc')
    .execute();
  return { rows: textsOfRows(texts, 'orders', whole, toText), total: await totalOfPage(db, whole, page, totalOfAll) };
}

/** An order's list row with its version. */
const withListColumns = (db: Executor) =>
  withJoins(db).select([DISPLAY_SUBSTATUS.as('display_substatus'), LIST_ROW_VERSION.as('version')]);

/** Every order the list's filters match, newest first, with the list's columns (the CSV export). */
export function allOrderRows(db: Kysely<DB>, actor: Actor, f: OrderFilter) {
  return withJoins(db)
    .select(DISPLAY_SUBSTATUS.as('display_substatus'))
    .where('o.id', 'in', filteredOrders(db, actor, f).select('o.id'))
    .orderBy('o.order_number', 'desc');
}

/** An order's priority as its bit in the maintained counts' flags (migration 0032: order_priority_flag). */
const PRIORITY_BITS: Record<Priority, number> = { normal: 1, high: 2, rush: 4 };

/**
 * The exact total, as a scalar subquery: from the maintained counts (migrations 0017, 0032) when only partner, status
 * and priority narrow the list, else counted. `aged_hours` is the maintained total less the orders created since its
 * cutoff: for the usual ages a few hours' orders read, where the aged ones are nearly the whole order book (the planner
 * read orders whole to count them).
 */
function orderTotal(db: Kysely<DB>, actor: Actor, f: OrderFilter): Expression<number> {
  const count = sql<number>`count(*)::int`.as('count');
  const narrowedFurther = f.customer || f.from || f.to || f.awaiting_direct_ship || f.q?.trim();
  if (narrowedFurther) return filteredOrders(db, actor, f).select(count).$asScalar();
  const kept = countedTotalExpression({
    list: 'orders', manufacturerId: actor.manufacturerId ?? f.manufacturer, statuses: f.statuses,
    anyFlags: f.priorities.reduce((bits, priority) => bits | PRIORITY_BITS[priority], 0),
  });
  if (!f.aged_hours) return kept;
  const younger = filteredOrders(db, actor, { ...f, aged_hours: undefined })
    .where('o.created_at', '>', agedCutoff(f.aged_hours)).select(count);
  return sql<number>`(${kept} - (${younger}))`;
}

type LifecycleAction = 'created' | 'released' | 'shipped' | 'picked_up' | 'cancelled' | 'started' | 'packed';

/**
 * Who and when, from the history rows of the order and of its latest live pick batch. An order without an entry row
 * (loaded outside the API) counts as entered when it was created, by its creator.
 */
export async function lifecycleOf(db: Executor, order: { id: string; created_at: string; created_by: string | null }) {
  const orderId = order.id;
  const batch = await db
    .selectFrom('pick_batches')
    .select(['id', 'status'])
    .where('order_id', '=', orderId)
    .where('status', '<>', 'cancelled')
    .orderBy('created_at', 'desc')
    .limit(1)
    .executeTakeFirst();
  const rows = await db
    .selectFrom('history as h')
    .leftJoin('users as u', 'u.id', 'h.user_id')
    .select(['h.action', 'h.occurred_at', 'u.name', 'h.after'])
    .where((eb) => eb.or([
      eb.and([eb('h.entity_type', '=', 'order'), eb('h.entity_id', '=', orderId)]),
      ...(batch ? [eb.and([eb('h.entity_type', '=', 'pick_batch'), eb('h.entity_id', '=', batch.id)])] : []),
    ]))
    .where('h.action', 'in', ['created', 'released', 'shipped', 'picked_up', 'cancelled', 'started', 'packed'])
    .orderBy('h.occurred_at')
    .execute();
  // The latest row of each action wins (an action repeated after a reopen, say).
  const last = new Map<LifecycleAction, (typeof rows)[number]>();
  for (const row of rows) last.set(row.action as LifecycleAction, row);
  const at = (action: LifecycleAction) => last.get(action)?.occurred_at ?? null;
  const by = (action: LifecycleAction) => last.get(action)?.name ?? null;
  const cancelled = last.get('cancelled')?.after as { reason?: string | null } | null | undefined;
  const creator = last.has('created') || !order.created_by ? null
    : await db.selectFrom('users').select('name').where('id', '=', order.created_by).executeTakeFirst();
  return {
    entered_at: at('created') ?? order.created_at,
    released_at: at('released'),
    pick_started_at: at('started'),
    packed_at: at('packed'),
    shipped_at: at('shipped'),
    picked_up_at: at('picked_up'),
    cancelled_at: at('cancelled'),
    entered_by_name: by('created') ?? creator?.name ?? null,
    released_by_name: by('released'),
    pick_started_by_name: by('started'),
    packed_by_name: by('packed'),
    shipped_by_name: by('shipped'),
    picked_up_by_name: by('picked_up'),
    cancelled_by_name: by('cancelled'),
    batch_id: batch?.id ?? null,
    batch_status: batch?.status ?? null,
    cancelled_reason: cancelled?.reason ?? null,
  };
}

export async function displaySubstatusOf(db: Executor, orderId: string): Promise<DisplaySubstatus | ''> {
  const row = await db.selectFrom('orders as o').select(DISPLAY_SUBSTATUS.as('value')).where('o.id', '=', orderId).executeTakeFirst();
  return row?.value ?? '';
}

/** The order's pick batches (cancelled ones left out) with their parcels, oldest first. */
export async function pickBatchesOf(db: Executor, orderId: string) {
  const batches = await db
    .selectFrom('pick_batches as b')
    .leftJoin('users as pu', 'pu.id', 'b.packed_by')
    .select((eb) => [
      'b.id as batch_id', 'b.batch_number', 'b.status', 'b.packed_at', 'pu.name as packed_by_name', 'b.tracking_number',
      'b.tracking_carrier', 'b.tracking_captured_at', 'b.staged_at', 'b.staged_slot',
      jsonArrayFrom(eb.selectFrom('pick_batch_parcels as p')
        .select(['p.id', 'p.parcel_seq', 'p.tracking_number', 'p.carrier', 'p.captured_at'])
        .whereRef('p.pick_batch_id', '=', 'b.id')
        .orderBy('p.parcel_seq')).as('parcels'),
    ])
    .where('b.order_id', '=', orderId)
    .where('b.status', '<>', 'cancelled')
    .orderBy('b.created_at')
    .execute();
  // Parcels arrive as JSON, their times as PostgreSQL writes them there.
  return batches.map((batch) => ({ ...batch, parcels: batch.parcels.map((parcel) => ({ ...parcel, captured_at: isoTimeOfJson(parcel.captured_at) })) }));
}

/** The exception an order block names: each block names exactly one, in the column of its kind. */
export function blockExceptionId(block?: string) {
  const column = (name: string) => sql.ref(block ? `${block}.${name}` : name);
  return sql<string>`coalesce(${column('short_pick_exception_id')}, ${column('mispick_exception_id')}, ${column('quality_exception_id')})`;
}

/** Open blocks of the order, each with a summary of its exception. */
export function openBlocksOf(db: Executor, orderId: string) {
  return db
    .selectFrom('order_blocks as k')
    .leftJoin('pick_exceptions as e', (join) => join.on(sql<boolean>`e.id = ${blockExceptionId('k')}`))
    .leftJoin('pick_batches as b', 'b.id', 'e.pick_batch_id')
    .leftJoin('items as i', 'i.id', 'e.item_id')
    .leftJoin('items as ai', 'ai.id', 'e.actual_item_id')
    .selectAll('k')
    .select([
      'e.id as exception_id', 'e.kind as exception_kind', 'e.status as exception_status', 'b.batch_number', 'i.item_number_display',
      'i.description as item_description', 'e.qty_short', 'e.short_reason', 'e.flag_reason',
      'ai.item_number_display as actual_item_number_display', 'e.actual_qty',
    ])
    .where('k.order_id', '=', orderId)
    .where('k.status', '=', 'open')
    .orderBy('k.created_at')
    .execute();
}

/** Documents filed under the order, newest first, with the uploader's name. */
export function documentsOf(db: Executor, orderId: string) {
  return db
    .selectFrom('documents as d')
    .leftJoin('users as u', 'u.id', 'd.uploaded_by')
    .selectAll('d')
    .select('u.name as uploaded_by_name')
    .where('d.entity_type', '=', 'order')
    .where('d.entity_id', '=', orderId)
    .orderBy('d.uploaded_at', 'desc')
    .execute();
}
