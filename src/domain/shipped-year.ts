// The units each item shipped in the year that ends today (UTC), kept by every shipment (migration 0043): what the
// item list's velocity reads. Shipments add to today; this module moves the year's first day on when the day turns.
import { sql, type Kysely } from 'kysely';
import { ADVISORY_LOCKS } from '../db/advisory-locks.ts';
import type { DB } from '../db/schema.ts';

/** Whether the kept sums are of the year that ends today; when not, the year has turned and not yet moved on. */
export async function shippedYearIsCurrent(db: Kysely<DB>): Promise<boolean> {
  const { rows: [row] } = await sql<{ current: boolean }>`select starts_on = shipped_year_start() as current from shipped_year`.execute(db);
  return row?.current ?? false;
}

/**
 * Takes the days before the year's first day off their items' sums and forgets them, then marks the year current. A
 * no-op once it is (one row read). One instance at a time: the others skip the round. The items are locked in id
 * order first, as every stock writer locks them, so a shipment or an order entered meanwhile waits, never deadlocks.
 * Returns how many items' sums fell.
 */
export async function advanceShippedYear(db: Kysely<DB>): Promise<number> {
  if (await shippedYearIsCurrent(db)) return 0;
  return db.transaction().execute(async (tx) => {
    const { rows: [lock] } = await sql<{ got: boolean }>`select pg_try_advisory_xact_lock(${ADVISORY_LOCKS.shippedYear}) as got`.execute(tx);
    if (!lock!.got || (await shippedYearIsCurrent(tx))) return 0;
    const { rows: [moved] } = await sql<{ items: number }>`
      with locked as materialized (
        select id from items where id in (select item_id from item_shipped_days where day < shipped_year_start()) order by id for update
      ), expired as (
        delete from item_shipped_days where day < shipped_year_start() and (select count(*) from locked) >= 0 returning item_id, units
      ), fallen as (
        update items i set units_shipped_year = i.units_shipped_year - e.units
        from (select item_id, sum(units)::int units from expired group by item_id) e
        where i.id = e.item_id
        returning 1
      ), marked as (
        update shipped_year set starts_on = shipped_year_start()
      )
      select count(*)::int items from fallen`.execute(tx);
    return moved!.items;
  });
}
