// The item list (filters, sorts, q) and the item search, in SQL that the indexes of migration 0003 serve.
import { sql, type Expression, type ExpressionBuilder, type Kysely, type SqlBool } from 'kysely';
import { containsPattern } from '../../db/like.ts';
import type { DB } from '../../db/schema.ts';
import { inPartnerScope, type Actor } from '../../http/auth.ts';
import type { Page } from '../../http/pagination.ts';
import type { ITEM_FILTERS, ITEM_STATUSES, MOVEMENT_WINDOWS, VELOCITIES } from './schemas.ts';
import { LIST_COLUMNS, type ListRow } from './serialize.ts';

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
  sort?: string;
  q?: string;
}

/** Velocity buckets over outbound units shipped in the last 365 days (docs/decisions.md). */
export const FAST_MOVER_UNITS = 52;

type ItemsEb = ExpressionBuilder<DB & { i: DB['items'] }, 'i'>;

const STOCK_FILTERS: Record<(typeof ITEM_FILTERS)[number], (eb: ItemsEb) => Expression<SqlBool>> = {
  negative: (eb) => eb('i.qty_on_hand', '<', 0),
  oversold: (eb) => eb('i.qty_available', '<', 0),
  out_of_stock: (eb) => eb('i.qty_on_hand', '=', 0),
  below_reorder: (eb) => eb.and([eb('i.reorder_level', '>', 0), eb('i.qty_available', '<', eb.ref('i.reorder_level'))]),
  missing_price: (eb) => eb('i.price_1', 'is', null),
};

// Items with outbound units in the last year, and how many: read from the partial index of shipments.
const SHIPPED_LAST_YEAR = sql`select m.item_id from inventory_movements m
  where m.movement_type = 'shipment' and m.performed_at >= now() - interval '365 days' group by m.item_id`;
const VELOCITY: Record<(typeof VELOCITIES)[number], ReturnType<typeof sql<SqlBool>>> = {
  fast: sql<SqlBool>`i.id in (${SHIPPED_LAST_YEAR} having sum(-m.quantity) >= ${FAST_MOVER_UNITS})`,
  slow: sql<SqlBool>`i.id in (${SHIPPED_LAST_YEAR} having sum(-m.quantity) > 0 and sum(-m.quantity) < ${FAST_MOVER_UNITS})`,
  dead: sql<SqlBool>`not exists (select 1 from inventory_movements m where m.item_id = i.id
    and m.movement_type = 'shipment' and m.performed_at >= now() - interval '365 days')`,
};

function filteredItems(db: Kysely<DB>, actor: Actor, f: ItemFilter) {
  let query = inPartnerScope(db.selectFrom('items as i'), actor, 'i.manufacturer_id');
  if (!actor.manufacturerId && f.manufacturer) query = query.where('i.manufacturer_id', '=', f.manufacturer);
  query = query.where('i.status', 'in', f.status?.length ? f.status : ['active']);
  if (f.filter?.length) query = query.where((eb) => eb.or(f.filter!.map((name) => STOCK_FILTERS[name](eb))));
  if (f.category?.length) query = query.where('i.category', 'in', f.category);
  if (f.location?.length) query = query.where('i.warehouse_location', 'in', f.location);
  if (f.uom?.length) query = query.where('i.selling_uom', 'in', f.uom);
  if (f.movement) {
    const days = Number.parseInt(f.movement, 10);
    query = query.where((eb) => eb.or([
      eb('i.date_last_movement', 'is', null),
      eb('i.date_last_movement', '<', sql<Date>`now() - make_interval(days => ${days})`),
    ]));
  }
  if (f.velocity) query = query.where(VELOCITY[f.velocity]);
  if (f.q?.trim()) {
    const text = f.q.trim();
    const number = normalizeItemNumber(text);
    // A union of three index lookups (trigram indexes on number, description and alias) rather than one OR,
    // which PostgreSQL could only answer by reading every item.
    query = query.where('i.id', 'in', (eb) => {
      const byDescription = eb.selectFrom('items as d').select('d.id').where('d.description', 'ilike', containsPattern(text));
      if (!number) return byDescription;
      return byDescription
        .union(eb.selectFrom('items as n').select('n.id').where('n.item_number_normalized', 'like', containsPattern(number)))
        .union(eb.selectFrom('item_aliases as a').select('a.item_id as id').where('a.alias_normalized', 'like', containsPattern(number)));
    });
  }
  return query;
}

/** Sorts of the spec; an unknown value falls back to item_number. */
const SORTS: Record<string, [string, 'asc' | 'desc' | 'desc nulls last'][]> = {
  item_number: [['i.item_number_normalized', 'asc']],
  mfg_code: [['m.code', 'asc'], ['i.item_number_normalized', 'asc']],
  description: [['i.description', 'asc']],
  on_hand_asc: [['i.qty_on_hand', 'asc']],
  on_hand_desc: [['i.qty_on_hand', 'desc']],
  available_asc: [['i.qty_available', 'asc']],
  last_movement_desc: [['i.date_last_movement', 'desc nulls last']],
};
export const DEFAULT_SORT = 'item_number';

export async function listItems(db: Kysely<DB>, actor: Actor, f: ItemFilter, page: Page) {
  const order = SORTS[f.sort ?? DEFAULT_SORT] ?? SORTS[DEFAULT_SORT]!;
  let rows = filteredItems(db, actor, f)
    .innerJoin('manufacturers as m', 'm.id', 'i.manufacturer_id')
    .select(LIST_COLUMNS.map((c) => `i.${c}` as const))
    .select(['m.code as manufacturer_code', 'm.name as manufacturer_name']);
  for (const [column, direction] of order) rows = rows.orderBy(sql.raw(`${column} ${direction}`));
  // Ties break by item number, then id, so pages never overlap.
  if (order[order.length - 1]![0] !== 'i.item_number_normalized') rows = rows.orderBy('i.item_number_normalized');
  const [data, total] = await Promise.all([
    rows.orderBy('i.id').limit(page.perPage).offset(page.offset).execute(),
    filteredItems(db, actor, f).select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow(),
  ]);
  return { rows: data, total: total.count };
}

export type SearchHit = ListRow & {
  manufacturer_code: string;
  manufacturer_name: string;
  alias: string | null;
  score: number;
  match_type: 'exact' | 'prefix' | 'fuzzy';
};

const SEARCH_LIMIT = 20;

/**
 * Up to 20 items: exact normalized matches (1.0), prefixes (0.95), substrings (0.75), then trigram look-alikes
 * (their similarity), over item numbers and aliases; each item once, with its best match. The stages are the SQL
 * function search_item_numbers (migration 0007): one round trip, a plan made once per connection.
 */
export async function searchItems(db: Kysely<DB>, actor: Actor, q: string, manufacturer?: string): Promise<SearchHit[]> {
  const n = normalizeItemNumber(q);
  if (!n) return [];
  const partner = actor.manufacturerId ?? manufacturer ?? null;
  const hits = await db
    .selectFrom(sql<{ item_id: string; alias: string | null; score: number; match_type: SearchHit['match_type'] }>`search_item_numbers(${n}, ${partner}::uuid)`.as('h'))
    .innerJoin('items as i', 'i.id', 'h.item_id')
    .innerJoin('manufacturers as m', 'm.id', 'i.manufacturer_id')
    .select(LIST_COLUMNS.map((c) => `i.${c}` as const))
    .select(['m.code as manufacturer_code', 'm.name as manufacturer_name', 'h.alias', 'h.score', 'h.match_type'])
    .orderBy('h.score', 'desc').orderBy('i.item_number_normalized').orderBy('i.id')
    .limit(SEARCH_LIMIT)
    .execute();
  return hits;
}
