// The item list (filters, sorts, q) and the item search, in SQL that the indexes of migrations 0003, 0009 and 0024 serve.
import { sql, type Expression, type ExpressionBuilder, type Kysely, type SelectQueryBuilder, type SqlBool } from 'kysely';
import { unsizedArray } from '../../db/array-parameters.ts';
import { containsPattern } from '../../db/like.ts';
import { closedSet, inLiterals } from '../../db/literals.ts';
import { countedTotalExpression, itemsNotMovedTotalExpression, totalOfPage } from '../../db/list-counts.ts';
import type { DB } from '../../db/schema.ts';
import { inReadSnapshot } from '../../db/transaction.ts';
import { shippedYearIsCurrent } from '../../domain/shipped-year.ts';
import { inPartnerScope, type Actor } from '../../http/auth.ts';
import { onePage, type Page } from '../../http/pagination.ts';
import { textsOfPage, textsOfRows, versionOf, type RowTexts, type Versioned } from '../../http/row-texts.ts';
import type { ITEM_FILTERS, ITEM_STATUSES, MOVEMENT_WINDOWS, VELOCITIES } from './schemas.ts';
import { LIST_COLUMNS, SEARCH_COLUMNS, serializeListItem, type ListRow, type SearchRow } from './serialize.ts';

/** Uppercase, dashes and spaces removed: how item numbers and aliases are matched. */
export function normalizeItemNumber(value: string): string {
  return value.toUpperCase().replace(/[-\s]/g, '');
}

export interface ItemFilter {
  manufacturer?: string;
  status?: (typeof ITEM_STATUSES)[number][];
  filter?: (typeof ITEM_FILTERS)[number][];
  category?: string[];
  location?: string[];
  uom?: string[];
  movement?: (typeof MOVEMENT_WINDOWS)[number];
  velocity?: (typeof VELOCITIES)[number];
  /** Set by withVelocitySource: velocity is read from the kept sums of the year (they are current), else the ledger. */
  velocityKept?: boolean;
  sort?: string;
  q?: string;
}

/**
 * The list's filter as the query string gave it, less blank category, location and uom values: `category=` filters
 * nothing, as a blank `q` does (it matched no item before: items hold no empty category).
 */
export function itemFilterOf<F extends ItemFilter>(query: F): F {
  const given = (values: string[] | undefined) => {
    const kept = values?.filter((value) => value.trim() !== '');
    return kept?.length ? kept : undefined;
  };
  return { ...query, category: given(query.category), location: given(query.location), uom: given(query.uom) };
}

/** The filter with where its velocity is read from: the kept sums when they are of the current year (domain/shipped-year.ts). */
export async function withVelocitySource<F extends ItemFilter>(db: Kysely<DB>, f: F): Promise<F> {
  return f.velocity ? { ...f, velocityKept: await shippedYearIsCurrent(db) } : f;
}

/** Velocity buckets over outbound units shipped in the year that ends today, UTC (docs/decisions.md). */
export const FAST_MOVER_UNITS = 52;

type ItemsEb = ExpressionBuilder<DB & { i: DB['items'] }, 'i'>;
type StockEb = ExpressionBuilder<DB & { s: DB['item_stock_state'] }, 's'>;

// Every stock filter reads item_stock_state (migration 0009), whose partial indexes answer them OR-ed together.
// Their zeros are literals (db/literals.ts): a partial index serves a plan only when its predicate follows from the
// query.
const ZERO = sql.lit(0);
const STOCK_FILTERS: Record<(typeof ITEM_FILTERS)[number], (eb: StockEb) => Expression<SqlBool>> = {
  negative: (eb) => eb('s.qty_on_hand', '<', ZERO),
  oversold: (eb) => eb('s.qty_available', '<', ZERO),
  out_of_stock: (eb) => eb('s.qty_on_hand', '=', ZERO),
  below_reorder: (eb) => eb.and([eb('s.reorder_level', '>', ZERO), eb('s.qty_available', '<', eb.ref('s.reorder_level'))]),
  missing_price: (eb) => eb('s.price_1', 'is', null),
};

// The same filters as bits of item_stock_flags (migration 0017), for the maintained totals, and the velocities
// (migration 0043).
const FLAG_BITS: Record<(typeof ITEM_FILTERS)[number], number> = {
  negative: 1, oversold: 2, out_of_stock: 4, below_reorder: 8, missing_price: 16,
};
const VELOCITY_BITS: Record<(typeof VELOCITIES)[number], number> = { fast: 32, slow: 64, dead: 128 };

// The velocities on the kept sums of the year (migration 0043): fast and slow each have a partial index, whose
// predicate the literals match; dead (the long tail) is found along the number index.
const FAST = sql.lit(FAST_MOVER_UNITS);
const KEPT_VELOCITY: Record<(typeof VELOCITIES)[number], ReturnType<typeof sql<SqlBool>>> = {
  fast: sql<SqlBool>`s.units_shipped_year >= ${FAST}`,
  slow: sql<SqlBool>`s.units_shipped_year > ${ZERO} and s.units_shipped_year < ${FAST}`,
  dead: sql<SqlBool>`s.units_shipped_year = ${ZERO}`,
};
// The same from the ledger, for the minutes after the day turns before the kept year moves on: the items with
// outbound units since the year's first day, and how many, read from the partial index of shipments.
const SHIPPED_IN_YEAR = sql`select m.item_id from inventory_movements m
  where m.movement_type = 'shipment' and m.performed_at >= shipped_year_began() group by m.item_id`;
const LEDGER_VELOCITY: Record<(typeof VELOCITIES)[number], ReturnType<typeof sql<SqlBool>>> = {
  fast: sql<SqlBool>`s.item_id in (${SHIPPED_IN_YEAR} having sum(-m.quantity) >= ${FAST})`,
  slow: sql<SqlBool>`s.item_id in (${SHIPPED_IN_YEAR} having sum(-m.quantity) > 0 and sum(-m.quantity) < ${FAST})`,
  dead: sql<SqlBool>`not exists (select 1 from inventory_movements m where m.item_id = s.item_id
    and m.movement_type = 'shipment' and m.performed_at >= shipped_year_began())`,
};

/** Sorts of the spec; an unknown value falls back to item_number. A bare column is read from the table the query starts at. */
const SORTS: Record<string, [string, 'asc' | 'desc' | 'desc nulls last'][]> = {
  item_number: [['item_number_normalized', 'asc']],
  mfg_code: [['m.code', 'asc'], ['item_number_normalized', 'asc']],
  description: [['i.description', 'asc']],
  on_hand_asc: [['qty_on_hand', 'asc']],
  on_hand_desc: [['qty_on_hand', 'desc']],
  available_asc: [['qty_available', 'asc']],
  last_movement_desc: [['date_last_movement', 'desc nulls last']],
};
const STOCK_SORTS = new Set(['on_hand_asc', 'on_hand_desc', 'available_asc', 'last_movement_desc']);
export const DEFAULT_SORT = 'item_number';
const sortOf = (f: ItemFilter) => (f.sort && Object.hasOwn(SORTS, f.sort) ? f.sort : DEFAULT_SORT);

/** A movement window's days: '30d' -> 30. */
const windowDays = (movement: NonNullable<ItemFilter['movement']>) => Number.parseInt(movement, 10);

/** Conditions only item_stock_state can answer: stock filters, a movement window, velocity. */
function hasStockCondition(f: ItemFilter): boolean {
  return Boolean(f.filter?.length || f.movement || f.velocity);
}

/** A stock condition or a stock sort: the page starts at item_stock_state and its indexes. */
function readsStockState(f: ItemFilter, sort: string): boolean {
  return hasStockCondition(f) || STOCK_SORTS.has(sort);
}

/** Category, location or uom: filters on columns of items that neither the stock state nor q's matches hold. */
function filtersItemColumns(f: ItemFilter): boolean {
  return Boolean(f.category?.length || f.location?.length || f.uom?.length);
}

/** Filters on columns only items holds. */
function hasItemsFilter(f: ItemFilter): boolean {
  return filtersItemColumns(f) || Boolean(f.q?.trim());
}

function itemsConditions(eb: ItemsEb, f: ItemFilter): Expression<SqlBool> {
  const conditions: Expression<SqlBool>[] = [];
  if (f.category?.length) conditions.push(eb('i.category', 'in', f.category));
  if (f.location?.length) conditions.push(eb('i.warehouse_location', 'in', f.location));
  // Units are stored uppercase (items/service.ts), so `uom=bx` means BX; category and location are matched as written.
  if (f.uom?.length) conditions.push(eb('i.selling_uom', 'in', f.uom.map((uom) => uom.trim().toUpperCase())));
  return eb.and(conditions);
}

/**
 * The suffixes that start with `number` (normalized): an item whose number or an alias holds it, once for each place
 * it does.
 */
function numberHolders(db: Kysely<DB>, number: string) {
  // Byte-wise, as the index's text_pattern_ops orders: U+10FFFF sorts after any other character.
  return db.selectFrom('item_number_suffixes as x')
    .where(sql<SqlBool>`x.suffix ~>=~ ${number} and x.suffix ~<~ (${number} || chr(1114111))`);
}

/**
 * The items the list reads, as `i`: every item, or with q the items it matches, each once: those whose description
 * holds q (the description's trigram index), then the rest whose number or an alias holds it (migration 0024's
 * suffixes). Each branch hands over the item's whole row as it reads it, so no match is read twice, and each item
 * comes once without a sort or a hash of whole rows.
 */
function itemsAs(db: Kysely<DB>, f: ItemFilter) {
  const text = f.q?.trim();
  if (!text) return 'items as i';
  const inDescription = containsPattern(text);
  const byDescription = db.selectFrom('items as d').selectAll('d').where('d.description', 'ilike', inDescription);
  const number = normalizeItemNumber(text);
  const matches = !number ? byDescription : byDescription
    .unionAll(db.selectFrom('items as n').selectAll('n')
      .where('n.id', 'in', numberHolders(db, number).select('x.item_id'))
      .where(sql<SqlBool>`(n.description ilike ${inDescription}) is not true`));
  // Typed as the table it stands for: it has every column of items, under the same alias.
  return matches.as('i') as unknown as 'items as i';
}

/**
 * The keys of the items q matches (id, partner, status, number) without their rows: the number matches come from the
 * suffix index alone, not one heap page of items each (q=0033 at 1,000,000 items: 1,684 matches, 16-20 ms through
 * items, 5-6 ms so). A page sorted by those keys reads only its own items after. The SQL function item_matches
 * (migration 0028) holds the matching, so that it is planned once per connection, not for each text.
 */
function matchKeysAs(text: string) {
  const number = normalizeItemNumber(text) || null;
  const matches = sql<{ id: string; manufacturer_id: string; status: string; item_number_normalized: string }>`item_matches(${number}, ${containsPattern(text)})`;
  // Only the columns above may be read from it (the page's sort and conditions below keep to them).
  return matches.as('i') as unknown as 'items as i';
}

/** Sorts that only need the keys matchKeysAs gives (the number, and the partner's code through manufacturers). */
const KEY_SORTS = new Set(['item_number', 'mfg_code']);

const statuses = (f: ItemFilter) => (f.status?.length ? f.status : ['active' as const]);

/** The list without stock conditions: items alone (or, from itemsPage, the keys of q's matches). */
function filteredItems(db: Kysely<DB>, actor: Actor, f: ItemFilter, from = itemsAs(db, f)) {
  let query = inPartnerScope(db.selectFrom(from), actor, 'i.manufacturer_id');
  if (!actor.manufacturerId && f.manufacturer) query = query.where('i.manufacturer_id', '=', f.manufacturer);
  query = query.where(inLiterals('i.status', statuses(f)));
  if (hasItemsFilter(f)) query = query.where((eb) => itemsConditions(eb, f));
  return query;
}

/**
 * Whether the list sums every item's shipments of the year before a first row: fast or slow from the ledger (dead asks
 * item by item and stops).
 */
const sumsShipments = (f: ItemFilter) => !f.velocityKept && (f.velocity === 'fast' || f.velocity === 'slow');

/**
 * A list with q reads every match (itemsAs) before it can sort them, and one of the fast or slow movers from the ledger
 * sums a year of shipments before its first row, so its page carries the total of all of them (`count(*) over ()`,
 * taken before the limit) instead of a second statement that reads them all again: at 1,000,000 items that statement
 * was 40% of the q list's database time, and the velocity list summed the year's shipments twice. Other counted
 * filters (category, location, uom) read their page along an index and stop; counting on the page would make them read
 * every match.
 */
const countsOnPage = (f: ItemFilter, page: Page | null) => page !== null && Boolean(f.q?.trim() || sumsShipments(f));
const TOTAL_OVER_ALL = sql<number>`count(*) over ()`.as('total_count');

/** The sort's columns on `table`, then item number and id: ties never let two pages overlap. */
function sortColumns(sort: string, table: 's' | 'i'): (readonly [string, string])[] {
  const order = SORTS[sort]!.map(([column, direction]) => [column.includes('.') ? column : `${table}.${column}`, direction] as const);
  if (order[order.length - 1]![0] !== `${table}.item_number_normalized`) order.push([`${table}.item_number_normalized`, 'asc']);
  order.push([table === 's' ? 's.item_id' : 'i.id', 'asc']);
  return order;
}

/** Partner, status and the stock conditions, on item_stock_state alone (it holds the partner and status too). */
function filteredStockState(db: Kysely<DB>, actor: Actor, f: ItemFilter) {
  let query = inPartnerScope(db.selectFrom('item_stock_state as s'), actor, 's.manufacturer_id');
  if (!actor.manufacturerId && f.manufacturer) query = query.where('s.manufacturer_id', '=', f.manufacturer);
  query = query.where(inLiterals('s.status', statuses(f)));
  if (f.filter?.length) query = query.where((eb) => eb.or(closedSet(f.filter!).map((name) => STOCK_FILTERS[name](eb))));
  if (f.movement) {
    const days = windowDays(f.movement);
    query = query.where((eb) => eb.or([
      eb('s.date_last_movement', 'is', null),
      eb('s.date_last_movement', '<', sql<string>`now() - make_interval(days => ${sql.lit(days)})`),
    ]));
  }
  if (f.velocity) query = query.where((f.velocityKept ? KEPT_VELOCITY : LEDGER_VELOCITY)[f.velocity]);
  return query;
}

/**
 * A list with stock conditions or a stock sort picks its page of item ids on item_stock_state first (its indexes give
 * the order, or a bitmap OR of its partial indexes the rows), joining items only when a filter or the sort needs it,
 * and reads the page's items by primary key after: joined before the limit, the planner would read every item.
 * With `versions`, the page is its ids and their versions (stockStateVersion) instead, with `total` on every row.
 */
function stockStatePage(
  db: Kysely<DB>, actor: Actor, f: ItemFilter, sort: string, page: Page | null,
  { versions = false, total }: { versions?: boolean; total?: Expression<number> } = {},
) {
  const order = sortColumns(sort, 's');
  const joinsItems = hasItemsFilter(f) || order.some(([column]) => column.startsWith('i.'));
  let query = filteredStockState(db, actor, f)
    .$if(joinsItems, (qb) => qb.innerJoin(itemsAs(db, f), 'i.id', 's.item_id').where((eb) => itemsConditions(eb, f)))
    .$if(versions || order.some(([column]) => column.startsWith('m.')), (qb) => qb.innerJoin('manufacturers as m', 'm.id', 's.manufacturer_id'))
    .$if(!versions, (qb) => qb.select('s.item_id'))
    .$if(versions, (qb) => qb.select(['s.item_id as id', stockStateVersion.as('version')]))
    .$if(total !== undefined, (qb) => qb.select(sql<number>`${total}`.as('total_count')))
    .$if(countsOnPage(f, page), (qb) => qb.select(TOTAL_OVER_ALL));
  for (const [column, direction] of order) query = query.orderBy(sql.raw(`${column} ${direction}`));
  return page ? onePage(page)(query) : query;
}

/**
 * A list with q and no stock condition picks its page of item ids on items first, counting every match on the way, and
 * reads the page's items by primary key after: the count's window then holds ids and sort keys, not whole rows (with
 * whole rows, a q of 66,666 matches wrote 10 MB of temporary files a request).
 */
function itemsPage(db: Kysely<DB>, actor: Actor, f: ItemFilter, sort: string, page: Page) {
  const order = sortColumns(sort, 'i');
  // Without a filter or sort on other columns of items, the page is picked from the matches' keys alone.
  const keysOnly = KEY_SORTS.has(sort) && !filtersItemColumns(f);
  let query = filteredItems(db, actor, f, keysOnly ? matchKeysAs(f.q!.trim()) : itemsAs(db, f))
    .$if(order.some(([column]) => column.startsWith('m.')), (qb) => qb.innerJoin('manufacturers as m', 'm.id', 'i.manufacturer_id'))
    .select('i.id as item_id')
    .select(TOTAL_OVER_ALL);
  for (const [column, direction] of order) query = query.orderBy(sql.raw(`${column} ${direction}`));
  return onePage(page)(query);
}

type PageIds = { item_id: string; total_count?: number };

/**
 * The items of the list joined with their partners, before their columns are chosen: one page of them, or (page null,
 * an export) all. The page's ids come first (on the stock state, or on items when the page counts), then their rows:
 * the stock state's columns are equal to items', so items' sort the same. A page carries its total on every row
 * (total_count): counted on the page, or `total`, the filters' total as a scalar subquery read once.
 */
function listedItems(db: Kysely<DB>, actor: Actor, f: ItemFilter, page: Page | null, total?: Expression<number>) {
  const sort = sortOf(f);
  const counts = countsOnPage(f, page);
  const pageFirst = readsStockState(f, sort) ? stockStatePage(db, actor, f, sort, page).$castTo<PageIds>().as('p')
    : counts ? itemsPage(db, actor, f, sort, page!).$castTo<PageIds>().as('p') : null;
  const totalColumn = counts ? sql<number>`p.total_count` : total;
  const from = (pageFirst ? db.selectFrom(pageFirst).innerJoin('items as i', 'i.id', 'p.item_id') : filteredItems(db, actor, f))
    .innerJoin('manufacturers as m', 'm.id', 'i.manufacturer_id');
  /** The chosen columns' query in the list's order, with the total, limited to the page unless its ids came first. */
  const inOrder = <D extends DB & { i: DB['items'] }, T extends keyof D & string, O>(query: SelectQueryBuilder<D, T, O>) => {
    let rows = query.$if(totalColumn !== undefined, (qb) => qb.select(sql<number>`${totalColumn}`.as('total_count')));
    for (const [column, direction] of sortColumns(sort, 'i')) rows = rows.orderBy(sql.raw(`${column} ${direction}`));
    return pageFirst || !page ? rows : onePage(page)(rows);
  };
  return { from, inOrder };
}

/**
 * A row's version (http/row-texts.ts) is that of the rows its text is made of, the item and its partner: on a page
 * picked on items, the item's row. On a page picked on item_stock_state, its mirror row's, which every write of the
 * item writes anew (migration 0031), so that the page's statement reads no items row: a below_reorder page of 50
 * took PostgreSQL 0.17 ms instead of 0.31 (pgbench, docs/decisions.md, "Row texts"). Each kind keeps its texts apart.
 * The item read (getItemText) versions its whole item's text by the item's row too.
 */
export const itemVersion = versionOf('i', 'm');
const stockStateVersion = versionOf('s', 'm');
const texts = (stockPage: boolean) => (stockPage ? 'items by stock state' : 'items');

/** The list's columns of items `i` and partners `m`, and each row's version of the page's kind. */
function withRowsAndVersions<QB extends SelectQueryBuilder<DB & { i: DB['items']; m: DB['manufacturers'] }, 'i' | 'm', object>>(query: QB, stockPage: boolean) {
  return stockPage
    ? withListColumns(query.innerJoin('item_stock_state as s', 's.item_id', 'i.id')).select(stockStateVersion.as('version'))
    : withListColumns(query).select(itemVersion.as('version'));
}

/** A page's rows, whole, with their version. */
function itemRows(db: Kysely<DB>, actor: Actor, f: ItemFilter, page: Page, stockPage: boolean, total?: Expression<number>) {
  const { from, inOrder } = listedItems(db, actor, f, page, total);
  return inOrder(withRowsAndVersions(from, stockPage));
}

/** The page's rows as their ids and versions only, with the total. */
async function itemVersions(db: Kysely<DB>, actor: Actor, f: ItemFilter, page: Page, stockPage: boolean, total?: Expression<number>): Promise<(Versioned & PageIds)[]> {
  if (stockPage) return stockStatePage(db, actor, f, sortOf(f), page, { versions: true, total }).$castTo<Versioned & PageIds>().execute();
  const { from, inOrder } = listedItems(db, actor, f, page, total);
  return inOrder(from.select(['i.id', itemVersion.as('version')])).$castTo<Versioned & PageIds>().execute();
}

/** The rows of these ids, whole, with their version. */
function itemsById(db: Kysely<DB>, ids: string[], stockPage: boolean) {
  return withRowsAndVersions(db.selectFrom('items as i').innerJoin('manufacturers as m', 'm.id', 'i.manufacturer_id')
    .where('i.id', '=', sql<string>`any(${unsizedArray(ids, 'uuid')})`), stockPage).execute();
}

/** What a list row shows of an item and its partner. */
const withListColumns = <QB extends SelectQueryBuilder<DB & { i: DB['items']; m: DB['manufacturers'] }, 'i' | 'm', object>>(query: QB) =>
  query.select(LIST_COLUMNS.map((c) => `i.${c}` as const)).select(['m.code as manufacturer_code', 'm.name as manufacturer_name']);

type ListedItem = ListRow & { manufacturer_code: string; manufacturer_name: string };
const toText = (row: ListedItem) => JSON.stringify(serializeListItem(row));

/**
 * A page of the list as the JSON texts of its rows (http/row-texts.ts), and its total. One statement reads the page's
 * ids with each row's version and the total (a round trip costs the service and PostgreSQL more than reading a
 * maintained total), all in one snapshot. A page past the last has no row to carry the total: counted on its own.
 */
export async function listItems(db: Kysely<DB>, actor: Actor, f: ItemFilter, page: Page, kept: RowTexts) {
  const counted = countsOnPage(f, page);
  const total = counted ? undefined : itemTotal(db, actor, f);
  const totalOfItems = total ?? (() => itemTotal(db, actor, f));
  // A page counted on itself (q=, the fast or slow movers from the ledger) is read whole at once, without texts:
  // matching is most of its cost; for q the queries people type rarely repeat, so the versions would seldom find texts
  // and the read by id would come on top (the bench's varied q: 2,061 -> 1,154 req/s with texts), and a velocity page
  // pays a year of shipments against which the texts' saving is nothing.
  if (counted) {
    const rows = await plainRows(db, actor, f, page).execute();
    return { rows: rows.map(toText), total: await totalOfPage(db, rows, page, totalOfItems) };
  }
  const stockPage = readsStockState(f, sortOf(f));
  const versions = await itemVersions(db, actor, f, page, stockPage, total);
  const rows = await textsOfPage<ListedItem & Versioned>(kept, texts(stockPage), versions, (ids) => itemsById(db, ids, stockPage), toText);
  if (rows) return { rows, total: await totalOfPage(db, versions, page, totalOfItems) };
  const whole = await itemRows(db, actor, f, page, stockPage, total).execute();
  return { rows: textsOfRows(kept, texts(stockPage), whole, toText), total: await totalOfPage(db, whole, page, totalOfItems) };
}

/**
 * A page of the list as asked: a velocity list decides between the kept year and the ledger in the snapshot its page
 * is read in, so that a request at midnight answers for one year, even when the year moves on meanwhile.
 */
export function listItemsAsAsked(db: Kysely<DB>, actor: Actor, f: ItemFilter, page: Page, kept: RowTexts) {
  if (!f.velocity) return listItems(db, actor, f, page, kept);
  return inReadSnapshot(db, async (tx) => listItems(tx, actor, await withVelocitySource(tx, f), page, kept));
}

/** The list's rows without versions: a page, or every item the filters match in the list's order (page null). */
function plainRows(db: Kysely<DB>, actor: Actor, f: ItemFilter, page: Page | null) {
  const { from, inOrder } = listedItems(db, actor, f, page);
  return inOrder(withListColumns(from));
}

/** Every item the list's filters match, in its order (the CSV export). */
export const allItemRows = (db: Kysely<DB>, actor: Actor, f: ItemFilter) => plainRows(db, actor, f, null);

/**
 * The exact total, as a scalar subquery: from the maintained counts (migrations 0017, 0019, 0043) when only partner,
 * status and either stock filters and a kept velocity, or a movement window, narrow the list, as they do on most
 * screens. Otherwise counted, reading one table when it can: item_stock_state when no filter needs a column only items
 * holds, items when no stock condition does (a stock sort does not change the count), both joined only when both kinds
 * of filter are present.
 */
function itemTotal(db: Kysely<DB>, actor: Actor, f: ItemFilter): Expression<number> {
  const partner = actor.manufacturerId ?? f.manufacturer;
  if (!hasItemsFilter(f) && !f.velocity && f.movement && !f.filter?.length) {
    return itemsNotMovedTotalExpression({ manufacturerId: partner, statuses: statuses(f), days: windowDays(f.movement) });
  }
  if (!hasItemsFilter(f) && !f.movement && (!f.velocity || f.velocityKept)) {
    return countedTotalExpression({
      list: 'items',
      manufacturerId: partner,
      statuses: statuses(f),
      anyFlags: (f.filter ?? []).reduce((bits, name) => bits | FLAG_BITS[name], 0),
      allFlags: f.velocity ? VELOCITY_BITS[f.velocity] : 0,
    });
  }
  const countAll = sql<number>`count(*)::int`.as('count');
  const count = !hasItemsFilter(f)
    ? filteredStockState(db, actor, f).select(countAll)
    : !hasStockCondition(f)
      ? filteredItems(db, actor, f).select(countAll)
      : filteredStockState(db, actor, f).innerJoin(itemsAs(db, f), 'i.id', 's.item_id').where((eb) => itemsConditions(eb, f)).select(countAll);
  return count.$asScalar();
}

export type SearchHit = SearchRow & {
  manufacturer_code: string;
  manufacturer_name: string;
  alias: string | null;
  score: number;
  match_type: 'exact' | 'prefix' | 'fuzzy';
};

// The hit's columns, written once: the statement is the same text on every call (a named statement), built from a
// template instead of the query builder, whose building and compiling was a third of a search's CPU in Node.
const SEARCH_HIT_COLUMNS = sql.raw([...SEARCH_COLUMNS.map((column) => `i.${column}`),
  'm.code as manufacturer_code', 'm.name as manufacturer_name', 'h.alias', 'h.score', 'h.match_type'].join(', '));

/**
 * Up to 20 items: exact normalized matches (1.0), prefixes (0.95), substrings (0.75), then look-alikes (their trigram
 * similarity): those one typo away, or, when no stage found anything, those holding half the query's trigrams; over
 * item numbers and aliases, each item once, with its match of the earliest stage. The stages are the SQL function
 * search_item_numbers (migrations 0007-0030): one round trip, its statements planned once per connection.
 * Ordered by the spec's match order (exact, then prefix or substring, then look-alikes), then score: a look-alike of
 * a long number can score above a substring hit's 0.75.
 */
export async function searchItems(db: Kysely<DB>, actor: Actor, q: string, manufacturer?: string): Promise<SearchHit[]> {
  const n = normalizeItemNumber(q);
  if (!n) return [];
  const partner = actor.manufacturerId ?? manufacturer ?? null;
  const { rows } = await sql<SearchHit>`
    select ${SEARCH_HIT_COLUMNS}
      from search_item_numbers(${n}, ${partner}::uuid) as h
      join items as i on i.id = h.item_id
      join manufacturers as m on m.id = i.manufacturer_id
     order by h.stage, h.score desc, i.item_number_normalized, i.id
     limit 20`.execute(db);
  return rows;
}
