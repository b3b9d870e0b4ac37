// Totals of the order, item, pick-batch, receiving and exception lists, the movement ledger, the event poll and the
// webhook delivery log from the counts the database maintains (migrations 0017-0019, 0026, 0032, 0034, 0037, 0038,
// 0040), the count of a list whose total is not kept, and the fold that keeps those counts and the location list's
// stock figures (0046) a row per key. A total is the sum of its key's rows, read in the caller's snapshot: as exact
// as count(*).
import { sql, type Expression, type Kysely, type RawBuilder, type SelectQueryBuilder } from 'kysely';
import { ADVISORY_LOCKS } from './advisory-locks.ts';
import { inLiterals } from './literals.ts';
import type { DB } from './schema.ts';

export interface CountedList {
  list: 'orders' | 'items' | 'movements' | 'events' | 'pick_batches' | 'deliveries' | 'receiving' | 'exceptions';
  /**
   * One partner's rows; all partners' when absent (events: the stream's key, `event_stream_key(tenant)`; deliveries:
   * the subscription).
   */
  manufacturerId?: string | RawBuilder<string>;
  /** Any of these statuses (movements: types; events: kinds); every status when absent or empty. */
  statuses?: readonly string[];
  /**
   * Rows with any of these bits, every row when absent or 0. items: the stock flags (item_stock_flags); orders: the
   * priorities (order_priority_flag).
   */
  anyFlags?: number;
  /** Rows with all of these bits as well. items: a velocity's bit. */
  allFlags?: number;
}

/**
 * The total as a scalar subquery, for a list's page statement to carry (one round trip for the page and its total,
 * both read in one snapshot).
 */
export function countedTotalExpression(key: CountedList): RawBuilder<number> {
  // The list, statuses and flags as literals (db/literals.ts): with them as parameters, a plan made for any value
  // estimates a key of every list and the page's statement carrying this total is planned on every request.
  const conditions = [sql`list = ${sql.lit(key.list)}`];
  if (key.manufacturerId) conditions.push(sql`manufacturer_id = ${key.manufacturerId}`);
  if (key.statuses?.length) conditions.push(inLiterals('status', key.statuses));
  if (key.anyFlags) conditions.push(sql`flags & ${sql.lit(key.anyFlags)}::smallint <> 0`);
  if (key.allFlags) conditions.push(sql`flags & ${sql.lit(key.allFlags)}::smallint = ${sql.lit(key.allFlags)}`);
  return sql<number>`(select coalesce(sum(n), 0)::int from list_counts where ${sql.join(conditions, sql` and `)})`;
}

/**
 * The items of a partner (or all) in these statuses that have not moved in the last `days` days, never-moved ones
 * included (the item list's movement window): the item total less the items whose last movement counts on a later day
 * than the window's first, less those that moved on that first day after the window began (one day's items, counted
 * from item_stock_state_status_movement_idx). Exact, as count(*), in the caller's snapshot. A scalar subquery, as
 * above.
 */
export function itemsNotMovedTotalExpression(key: { manufacturerId?: string; statuses: readonly string[]; days: number }): RawBuilder<number> {
  const partner = (column: string) => (key.manufacturerId ? sql`and ${sql.ref(column)} = ${key.manufacturerId}` : sql``);
  return sql<number>`(
    with window_start as (select now() - make_interval(days => ${sql.lit(key.days)}) as at),
    first_day as (select at, (at at time zone 'UTC')::date as day from window_start)
    select (
      (select coalesce(sum(n), 0) from list_counts
        where list = 'items' and ${inLiterals('status', key.statuses)} ${partner('manufacturer_id')})
      - (select coalesce(sum(c.n), 0) from list_counts c, first_day f
        where c.list = 'items_moved' and c.moved_on > f.day and ${inLiterals('c.status', key.statuses)} ${partner('c.manufacturer_id')})
      - (select count(*) from item_stock_state s, first_day f
        where ${inLiterals('s.status', key.statuses)} ${partner('s.manufacturer_id')}
          and s.date_last_movement >= f.at and s.date_last_movement < (f.day + 1)::timestamp at time zone 'UTC')
    )::int)`;
}

/**
 * The rows a list's filtered query selects, counted: the total of a list (or a filter) whose count is not kept, as a
 * scalar subquery for the page's statement to carry.
 */
export function rowCount<D, TB extends keyof D>(query: SelectQueryBuilder<D, TB, object>): Expression<number> {
  return sql<number>`${query.select(sql<number>`count(*)::int`.as('count'))}`;
}

/** A total expression read on its own (a page past the last has no row to carry it). */
export async function totalOf(db: Kysely<DB>, total: Expression<number>): Promise<number> {
  const { rows } = await sql<{ total: number }>`select ${total} as total`.execute(db);
  return rows[0]!.total;
}

/**
 * The total a page's statement carried on its rows (`total_count`). A page with no row carries none: an empty first
 * page means nothing matches (0); a later one may lie past the last, and its total (an expression, or a function
 * making it only then) is read on its own.
 */
export async function totalOfPage(db: Kysely<DB>, rows: readonly { total_count?: number }[], page: { offset: number },
  total: Expression<number> | (() => Expression<number>)): Promise<number> {
  if (rows.length > 0) return rows[0]!.total_count!;
  if (page.offset === 0) return 0;
  return totalOf(db, typeof total === 'function' ? total() : total);
}

/**
 * Sums the rows of each key written since the last fold into one, marked folded (the list totals and the location
 * stock figures), and drops day counts before the movement windows' horizon. One instance folds at a time (the
 * others skip the round): two folds at once could each write a folded row for the same key, which the next fold,
 * looking only at rows not yet folded, would leave as two. Readers see the rows either before or after.
 */
export async function foldListCounts(db: Kysely<DB>): Promise<void> {
  const deleted = await db.transaction().execute(async (tx) => {
    const { rows: [lock] } = await sql<{ got: boolean }>`select pg_try_advisory_xact_lock(${ADVISORY_LOCKS.foldListCounts}) as got`.execute(tx);
    if (!lock!.got) return { lists: 0, locations: 0 };
    const { rows: [fold] } = await sql<{ deleted: number }>`
      with aged as (
        delete from list_counts where list = 'items_moved' and moved_on < movement_day_horizon() returning 1
      ), busy as (
        -- The keys of the rows written since the last fold (list_counts_unfolded_idx).
        select distinct list, manufacturer_id, status, flags, moved_on from list_counts
        where not folded and not (list = 'items_moved' and moved_on < movement_day_horizon())
      ), gone as (
        delete from list_counts c using busy b
        where c.list = b.list and c.manufacturer_id = b.manufacturer_id and c.status = b.status and c.flags = b.flags
          and c.moved_on = b.moved_on
        returning c.list, c.manufacturer_id, c.status, c.flags, c.moved_on, c.n
      ), folded as (
        insert into list_counts (list, manufacturer_id, status, flags, moved_on, n, folded)
        select list, manufacturer_id, status, flags, moved_on, sum(n), true from gone group by 1, 2, 3, 4, 5 having sum(n) <> 0
      )
      select (select count(*) from gone)::int + (select count(*) from aged)::int as deleted`.execute(tx);
    // The location list's figures (migration 0046), folded the same way in the same round.
    const { rows: [locations] } = await sql<{ deleted: number }>`
      with busy as (
        select distinct location_id, manufacturer_id from location_stock_counts where not folded
      ), gone as (
        delete from location_stock_counts c using busy b
        where c.location_id = b.location_id and c.manufacturer_id = b.manufacturer_id
        returning c.location_id, c.manufacturer_id, c.bins, c.qty
      ), folded as (
        insert into location_stock_counts (location_id, manufacturer_id, bins, qty, folded)
        select location_id, manufacturer_id, sum(bins), sum(qty), true from gone group by 1, 2
        having sum(bins) <> 0 or sum(qty) <> 0
      )
      select count(*)::int as deleted from gone`.execute(tx);
    return { lists: fold!.deleted, locations: locations!.deleted };
  });
  // A fold leaves dead rows, which totals read through: under a day's writes, thousands a minute, more than autovacuum
  // (a minute between rounds at best, or turned off) clears in time, and totals slowed from under a millisecond to
  // 20-40 ms (measured on the bench). Vacuumed after each fold that left dead rows (an idle warehouse's instances do
  // not vacuum every 2 s for nothing), it stays small; an instance that finds another vacuuming it skips this round.
  // Without workers: the server would start two parallel workers for the three indexes' cleanup, and starting them
  // cost 40 ms a vacuum (two backend processes forked every 2 s under writes) against 0.3 ms for the vacuum itself.
  if (deleted.lists > 0) await sql`vacuum (parallel 0, skip_locked) list_counts`.execute(db);
  if (deleted.locations > 0) await sql`vacuum (parallel 0, skip_locked) location_stock_counts`.execute(db);
}
