// The monthly partitions of the movement ledger, the event outbox and the webhook delivery log (migration 0018): the
// months ahead are made before anything is written to them, and months past their retention go whole.
import { sql, type Kysely, type Transaction } from 'kysely';
import { ADVISORY_LOCKS } from './advisory-locks.ts';
import type { DB } from './schema.ts';

/** Each partitioned table and the time column its months are cut by. */
export const PARTITIONED_TABLES = { inventory_movements: 'performed_at', outbox_events: 'occurred_at', webhook_deliveries: 'created_at' } as const;
type PartitionedTable = keyof typeof PARTITIONED_TABLES;

/** Months made ahead of the current one: a service that runs for weeks without this job still never writes to the default partition. */
const MONTHS_AHEAD = 3;

export interface Retention {
  /** Days an acknowledged event is kept (`WMS_EVENT_RETENTION_DAYS`). */
  eventDays: number;
  /** Days the webhook delivery log keeps a delivery and its attempts. */
  deliveryLogDays: number;
}

export interface MaintenanceResult {
  created: string[];
  dropped: string[];
  eventsDeleted: number;
  /** Whether the ledger as a whole was analyzed (once a day). */
  ledgerAnalyzed: boolean;
}

// Autovacuum analyzes each month of the ledger, never the partitioned table: its statistics, which the reports over a
// period are planned by (the day groups of migration 0027 among them), come only from an explicit ANALYZE. It recurses
// into every month (5.7 s on the bench's 1,000,000 movements), so once a day is enough: the shape of the ledger changes
// slowly.
const LEDGER_ANALYZE_INTERVAL = '1 day';

/**
 * Makes the coming months' partitions (and a month's own partition for rows that landed in the default one), then
 * applies retention: a delivery-log month older than the log's days with nothing pending is dropped with its attempts;
 * an outbox month older than the event retention is dropped when none of its events is still owed (unacknowledged in a
 * poll stream, or pending for a webhook), else its acknowledged events are deleted. The movement ledger is kept whole.
 * Each step is a short transaction of its own: a dropped month's exclusive lock on its table is held only for the drop,
 * not while the next month's events are deleted.
 */
export async function maintainPartitions(db: Kysely<DB>, retention: Retention): Promise<MaintenanceResult> {
  const result: MaintenanceResult = { created: [], dropped: [], eventsDeleted: 0, ledgerAnalyzed: false };
  for (const table of Object.keys(PARTITIONED_TABLES) as PartitionedTable[]) {
    await step(db, async (tx) => {
      result.created.push(...await ensureMonths(tx, table));
    });
  }
  await dropDeliveryMonths(db, retention.deliveryLogDays, result);
  await expireEventMonths(db, retention.eventDays, result);
  await step(db, async (tx) => {
    result.ledgerAnalyzed = await analyzeLedgerWhenDue(tx);
  });
  return result;
}

async function analyzeLedgerWhenDue(tx: Kysely<DB>): Promise<boolean> {
  const { rows: [last] } = await sql<{ due: boolean }>`select coalesce(greatest(last_analyze, last_autoanalyze) < now() - ${LEDGER_ANALYZE_INTERVAL}::interval, true) as due
    from pg_stat_all_tables where relid = 'inventory_movements'::regclass`.execute(tx);
  if (last && !last.due) return false;
  // A ledger of millions of movements may take longer than a request may; nothing waits on this one.
  await sql`set local statement_timeout = 0`.execute(tx);
  await sql`analyze (skip_locked) inventory_movements`.execute(tx);
  return true;
}

/**
 * One step of the maintenance in a transaction of its own, skipped while another instance holds the maintenance lock.
 * Attaching and dropping a month lock its table briefly; behind a long transaction the step gives up after 5 s. It
 * answers what the work returned, or undefined when skipped.
 */
async function step<T>(db: Kysely<DB>, work: (tx: Transaction<DB>) => Promise<T>): Promise<T | undefined> {
  return db.transaction().execute(async (tx) => {
    const { rows: [lock] } = await sql<{ got: boolean }>`select pg_try_advisory_xact_lock(${ADVISORY_LOCKS.partitions}) as got`.execute(tx);
    if (!lock!.got) return undefined;
    await sql`set local lock_timeout = '5s'`.execute(tx);
    return work(tx);
  });
}

/**
 * The months from now to MONTHS_AHEAD and every month some row of the default partition belongs to. The ledger, kept
 * whole, also gets every month between its oldest and now: a report or ledger range inside them never has to look in
 * the default partition. (The tables with retention do not: their empty old months would be made and dropped again.)
 */
async function ensureMonths(tx: Kysely<DB>, table: PartitionedTable): Promise<string[]> {
  const column = sql.ref(PARTITIONED_TABLES[table]);
  const { rows: backDated } = await sql<{ made: string | null }>`select wms_month_partition(${table}, m) as made
    from (select distinct date_trunc('month', ${column} at time zone 'UTC')::date m from ${sql.table(`${table}_default`)}) d`.execute(tx);
  const [oldest] = table === 'inventory_movements' ? await months(tx, table) : [];
  const from = oldest ? new Date(oldest.end.getTime() - 86_400_000) : new Date();
  const { rows: ahead } = await sql<{ made: string }>`select made from wms_month_partitions(${table}, ${from.toISOString().slice(0, 10)}::date,
    (now() + make_interval(months => ${MONTHS_AHEAD}))::date) as made`.execute(tx);
  return [...backDated, ...ahead].flatMap((row) => (row.made ? [row.made] : []));
}

interface Month {
  name: string;
  /** The month's first instant (UTC). */
  start: Date;
  /** The start of the month after it (UTC): every row of the partition is older. */
  end: Date;
}

/** The month partitions of a table (named <table>_YYYY_MM by wms_month_partition), oldest first. */
async function months(tx: Kysely<DB>, table: PartitionedTable): Promise<Month[]> {
  const { rows } = await sql<{ name: string }>`
    select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
    where i.inhparent = ${table}::regclass and c.relname ~ ${`^${table}_[0-9]{4}_[0-9]{2}$`} order by c.relname`.execute(tx);
  return rows.map(({ name }) => {
    const [year, month] = name.slice(table.length + 1).split('_').map(Number) as [number, number];
    return { name, start: new Date(Date.UTC(year, month - 1, 1)), end: new Date(Date.UTC(year, month, 1)) };
  });
}

const olderThan = (month: Month, days: number) => month.end.getTime() <= Date.now() - days * 86_400_000;

async function dropDeliveryMonths(db: Kysely<DB>, days: number, result: MaintenanceResult): Promise<void> {
  for (const month of await months(db, 'webhook_deliveries')) {
    if (!olderThan(month, days)) continue;
    const partition = sql.table(month.name);
    // Whether the month's deliveries went (false: one is pending; undefined: another instance holds the step).
    const emptied = await step(db, async (tx) => {
      const { rows: [pending] } = await sql<{ any: boolean }>`select exists (select 1 from ${partition} where status = 'pending') as any`.execute(tx);
      if (pending!.any) return false;
      // Deleted through the table before the month is dropped (a drop deletes no row): the delete is what the log's
      // kept totals count (migration 0037), and its row locks order it against a prune or a retry of the same
      // deliveries at the same moment, so none is counted out twice. A delivery put back to pending meanwhile stays,
      // and its month with it, until a later round.
      await sql`with gone as (
          delete from webhook_deliveries where created_at >= ${month.start} and created_at < ${month.end} and status <> 'pending' returning id
        )
        delete from webhook_delivery_attempts where delivery_id in (select id from gone)`.execute(tx);
      return true;
    });
    if (!emptied) continue;
    // The drop is a transaction of its own. Dropping a partition locks the whole table first; in the delete's
    // transaction that lock would wait for a prune that itself waits for the delete's row locks: a deadlock. The lock
    // is taken before the month is checked, so no row can come into it between the check and the drop.
    await step(db, async (tx) => {
      await sql`lock table webhook_deliveries in access exclusive mode`.execute(tx);
      const { rows: [left] } = await sql<{ any: boolean }>`select exists (select 1 from ${partition}) as any`.execute(tx);
      if (left!.any) return;
      await sql`drop table ${partition}`.execute(tx);
      result.dropped.push(month.name);
    });
  }
}

async function expireEventMonths(db: Kysely<DB>, days: number, result: MaintenanceResult): Promise<void> {
  for (const month of await months(db, 'outbox_events')) {
    if (!olderThan(month, days)) continue;
    await step(db, async (tx) => {
      const partition = sql.table(month.name);
      // Owed: still in a poll stream (unacknowledged), or waiting for a webhook delivery. Both checks read an index.
      const { rows: [state] } = await sql<{ owed: boolean }>`
        select exists (select 1 from event_inbox i where i.event_seq between r.lo and r.hi)
          or exists (select 1 from webhook_deliveries d where d.status = 'pending' and d.event_seq between r.lo and r.hi) as owed
        from (select min(seq) as lo, max(seq) as hi from ${partition}) r`.execute(tx);
      if (!state!.owed) {
        await sql`drop table ${partition}`.execute(tx);
        result.dropped.push(month.name);
        return;
      }
      const deleted = await sql`
        delete from ${partition} e where not exists (select 1 from event_inbox i where i.event_seq = e.seq)
          and not exists (select 1 from webhook_deliveries d where d.status = 'pending' and d.event_seq = e.seq)`.execute(tx);
      result.eventsDeleted += Number(deleted.numAffectedRows ?? 0);
    });
  }
}
