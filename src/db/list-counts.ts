// Totals of the order and item lists and of the movement ledger from the counts the database maintains (migrations
// 0017, 0018), and the fold that keeps them a row per key. A total is the sum of its key's rows, read in the caller's
// snapshot: as exact as count(*).
import { sql, type Kysely } from 'kysely';
import type { DB } from './schema.ts';

export interface CountedList {
  list: 'orders' | 'items' | 'movements';
  /** One partner's rows; all partners' when absent. */
  manufacturerId?: string;
  /** Any of these statuses (movements: types); every status when absent or empty. */
  statuses?: readonly string[];
  /** items: rows with any of these stock-flag bits (item_stock_flags); every row when absent or 0. */
  anyFlags?: number;
}

export async function countedTotal(db: Kysely<DB>, key: CountedList): Promise<number> {
  const conditions = [sql`list = ${key.list}`];
  if (key.manufacturerId) conditions.push(sql`manufacturer_id = ${key.manufacturerId}`);
  if (key.statuses?.length) conditions.push(sql`status = any(${[...key.statuses]}::text[])`);
  if (key.anyFlags) conditions.push(sql`flags & ${key.anyFlags}::smallint <> 0`);
  const { rows } = await sql<{ total: number }>`
    select coalesce(sum(n), 0)::int as total from list_counts where ${sql.join(conditions, sql` and `)}`.execute(db);
  return rows[0]!.total;
}

/**
 * Sums each key that has several rows into one. Safe in every instance at once: a row another fold deleted first is
 * skipped by this one's delete (and so left out of its sum), and readers see the rows either before or after.
 */
export async function foldListCounts(db: Kysely<DB>): Promise<void> {
  const { rows: [fold] } = await sql<{ deleted: number }>`
    with busy as (
      select list, manufacturer_id, status, flags from list_counts group by 1, 2, 3, 4 having count(*) > 1
    ), gone as (
      delete from list_counts c using busy b
      where c.list = b.list and c.manufacturer_id = b.manufacturer_id and c.status = b.status and c.flags = b.flags
      returning c.list, c.manufacturer_id, c.status, c.flags, c.n
    ), folded as (
      insert into list_counts (list, manufacturer_id, status, flags, n)
      select list, manufacturer_id, status, flags, sum(n) from gone group by 1, 2, 3, 4 having sum(n) <> 0
    )
    select count(*)::int as deleted from gone`.execute(db);
  // Every total reads the whole table, which a fold leaves full of dead rows: under a day's writes, thousands a minute,
  // more than autovacuum (a minute between rounds at best, or turned off) clears in time, and totals slowed from
  // under a millisecond to 20-40 ms (measured on the bench). Vacuumed after each fold that left dead rows (an idle
  // warehouse's instances do not vacuum every 2 s for nothing), it stays a few pages; an instance that finds another
  // vacuuming it skips this round.
  if (fold!.deleted > 0) await sql`vacuum (skip_locked) list_counts`.execute(db);
}
