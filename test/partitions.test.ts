// The movement ledger, the event outbox and the webhook delivery log are partitioned by month (migration 0018); the
// hourly maintenance (src/db/partitions.ts) makes the coming months, gives back-dated rows their month, and applies
// retention to deliveries and acknowledged events. The ledger is never trimmed.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql, type Kysely } from 'kysely';
import { ADVISORY_LOCKS } from '../src/db/advisory-locks.ts';
import { connectPGlite, connectPostgres, type Database } from '../src/db/connect.ts';
import { listMigrations, migrate } from '../src/db/migrate.ts';
import { maintainPartitions } from '../src/db/partitions.ts';
import { pruneDeliveryLog } from '../src/workers/webhook-delivery.ts';
import type { DB } from '../src/db/schema.ts';
import { adjust, call, createEmptyServerDatabase, createItem, createLocation, createManufacturer, onPostgres, startApp, type TestApp } from './helpers.ts';

const RETENTION = { eventDays: 90, deliveryLogDays: 30 };
const TABLES = ['inventory_movements', 'outbox_events', 'webhook_deliveries'];

/** The partition that holds each row of `table` matching `where`. */
async function partitionsOf(db: Kysely<DB>, table: string, where = sql`true`): Promise<string[]> {
  const { rows } = await sql<{ p: string }>`select tableoid::regclass::text as p from ${sql.table(table)} where ${where} order by 1`.execute(db);
  return rows.map((row) => row.p);
}

async function monthNames(db: Kysely<DB>, table: string): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
    where i.inhparent = ${table}::regclass order by 1`.execute(db);
  return rows.map((row) => row.name);
}

const monthName = (table: string, at: Date) => `${table}_${at.getUTCFullYear()}_${String(at.getUTCMonth() + 1).padStart(2, '0')}`;
const daysAgo = (days: number) => new Date(Date.now() - days * 86_400_000);

describe('monthly partitions', () => {
  let t: TestApp;
  let partner: string;
  let item: string;
  before(async () => {
    t = await startApp();
    partner = await createManufacturer(t, 'PART');
    item = await createItem(t, partner, 'PART-1');
  });
  after(() => t?.close());

  test('each table is cut by month, with this month, the next three and a default partition', async () => {
    for (const table of TABLES) {
      const names = await monthNames(t.db, table);
      assert.ok(names.includes(`${table}_default`), table);
      for (let ahead = 0; ahead <= 3; ahead++) {
        const month = new Date();
        month.setUTCDate(1);
        month.setUTCMonth(month.getUTCMonth() + ahead);
        assert.ok(names.includes(monthName(table, month)), `${table}: ${monthName(table, month)} in ${names}`);
      }
    }
  });

  test('a back-dated movement waits in the default partition and moves to its month; the ledger reads the same', async () => {
    const bin = await createLocation(t, 'PART-BIN');
    assert.equal((await adjust(t, item, 7, bin)).status, 201);
    const old = daysAgo(400);
    await sql`insert into inventory_movements (item_id, manufacturer_id, movement_type, quantity, balance_after, reference_id, performed_at)
      values (${item}, ${partner}, 'receipt', 3, 3, ${item}, ${old})`.execute(t.db);
    assert.deepEqual(await partitionsOf(t.db, 'inventory_movements', sql`item_id = ${item} and performed_at = ${old}`), ['inventory_movements_default']);
    const before = await call(t.app, 'GET', `/api/v1/inventory/movements?item=${item}`, { key: t.adminKey });

    const result = await maintainPartitions(t.db, RETENTION);
    assert.ok(result.created.includes(monthName('inventory_movements', old)), JSON.stringify(result));
    assert.deepEqual(await partitionsOf(t.db, 'inventory_movements', sql`item_id = ${item} and performed_at = ${old}`), [monthName('inventory_movements', old)]);
    assert.deepEqual(await partitionsOf(t.db, 'inventory_movements_default'), []);
    const afterwards = await call(t.app, 'GET', `/api/v1/inventory/movements?item=${item}`, { key: t.adminKey });
    assert.deepEqual(afterwards.body, before.body);
    assert.equal(afterwards.body.meta.total_count, 2);
    // The ledger is kept whole: a month far past every retention is still there.
    await maintainPartitions(t.db, { eventDays: 1, deliveryLogDays: 1 });
    assert.equal((await partitionsOf(t.db, 'inventory_movements', sql`item_id = ${item}`)).length, 2);
  });

  test('the ledger total of a partner and type comes from the maintained counts and equals count(*)', async () => {
    const other = await createManufacturer(t, 'PART2');
    const otherItem = await createItem(t, other, 'PART2-1');
    const bin = await createLocation(t, 'PART2-BIN');
    assert.equal((await adjust(t, otherItem, 5, bin)).status, 201);
    assert.equal((await adjust(t, otherItem, -2, bin)).status, 201);
    const { rows: [counted] } = await sql<{ all: number; mine: number; adjustments: number }>`
      select count(*)::int as all, count(*) filter (where manufacturer_id = ${other})::int as mine,
        count(*) filter (where manufacturer_id = ${other} and movement_type = 'adjustment')::int as adjustments
      from inventory_movements`.execute(t.db);
    const total = async (path: string) => (await call(t.app, 'GET', path, { key: t.adminKey })).body.meta.total_count;
    assert.equal(await total('/api/v1/inventory/movements'), counted!.all);
    assert.equal(await total(`/api/v1/inventory/movements?manufacturer=${other}`), counted!.mine);
    assert.equal(await total(`/api/v1/inventory/movements?manufacturer=${other}&movement_type=adjustment`), counted!.adjustments);
    assert.equal(await total(`/api/v1/inventory/adjustments?manufacturer=${other}`), counted!.adjustments);
    assert.equal(await total(`/api/v1/inventory/movements?manufacturer=${other}&movement_type=receipt`), 0);
    assert.equal(counted!.mine, 2);
  });

  test('retention: old delivery months go with their attempts unless a delivery is pending; old acknowledged events go, owed ones stay', async () => {
    const { rows: [subscription] } = await sql<{ id: string }>`insert into webhook_subscriptions (url, event_kinds, secret_sealed)
      values ('https://receiver.example/hook', '{*}', 'sealed') returning id`.execute(t.db);
    const event = async (at: Date, unacknowledged = false) => {
      // Events as a ping writes them (any kind would do; this one's data is the smallest to get right).
      const { rows: [row] } = await sql<{ id: string; seq: string }>`insert into outbox_events (kind, data, occurred_at)
        values ('webhook.ping', ${JSON.stringify({ subscription_id: subscription!.id, message: 'ping' })}, ${at}) returning id, seq`.execute(t.db);
      if (unacknowledged) await sql`insert into event_inbox (tenant, event_seq, kind) values ('warehouse', ${row!.seq}, 'webhook.ping')`.execute(t.db);
      return row!;
    };
    const delivery = async (at: Date, status: string, withAttempt = true) => {
      const e = await event(at);
      const { rows: [row] } = await sql<{ id: string }>`insert into webhook_deliveries (subscription_id, event_seq, event_id, event_kind, status, created_at)
        values (${subscription!.id}, ${e.seq}, ${e.id}, 'webhook.ping', ${status}, ${at}) returning id`.execute(t.db);
      if (withAttempt) {
        await sql`insert into webhook_delivery_attempts (delivery_id, attempt, duration_ms, outcome, attempted_at)
          values (${row!.id}, 1, 5, ${status === 'pending' ? 'retry' : status}, ${at})`.execute(t.db);
      }
      return { delivery: row!.id, event: e };
    };
    // Months well apart, so each test row has a month of its own.
    const gone = daysAgo(200);
    const stillOwed = daysAgo(260);
    const mixed = daysAgo(320);
    const recent = daysAgo(1);
    const done = await delivery(gone, 'delivered');
    const dead = await delivery(gone, 'dead');
    const pending = await delivery(stillOwed, 'pending');
    const acknowledged = await event(mixed);
    const unacknowledged = await event(mixed, true);
    const fresh = await delivery(recent, 'delivered');
    // One round: the rows get their months out of the default partition, then retention applies to those months.
    const result = await maintainPartitions(t.db, RETENTION);

    const deliveries = await monthNames(t.db, 'webhook_deliveries');
    assert.ok(!deliveries.includes(monthName('webhook_deliveries', gone)), `${monthName('webhook_deliveries', gone)} dropped`);
    assert.ok(result.dropped.includes(monthName('webhook_deliveries', gone)), JSON.stringify(result));
    assert.ok(deliveries.includes(monthName('webhook_deliveries', stillOwed)), 'a month with a pending delivery stays');
    const { rows: attempts } = await sql<{ delivery_id: string }>`select delivery_id from webhook_delivery_attempts
      where delivery_id in (${done.delivery}, ${dead.delivery}, ${pending.delivery}, ${fresh.delivery})`.execute(t.db);
    assert.deepEqual(attempts.map((a) => a.delivery_id).sort(), [pending.delivery, fresh.delivery].sort());
    // The dropped month's deliveries left the log's kept total (migration 0037) with it.
    const { rows: [log] } = await sql<{ kept: number; stored: number }>`select
      (select coalesce(sum(n), 0)::int from list_counts where list = 'deliveries' and manufacturer_id = ${subscription!.id}) as kept,
      (select count(*)::int from webhook_deliveries where subscription_id = ${subscription!.id}) as stored`.execute(t.db);
    assert.deepEqual([log!.kept, log!.stored], [2, 2], 'the pending and the recent delivery');

    const eventIds = async () => (await sql<{ id: string }>`select id from outbox_events`.execute(t.db)).rows.map((row) => row.id);
    const kept = await eventIds();
    // The delivered and dead deliveries' events are in no stream (acknowledged) and past retention: their month goes.
    assert.ok(!kept.includes(done.event.id) && !kept.includes(dead.event.id));
    assert.ok(result.dropped.includes(monthName('outbox_events', gone)), JSON.stringify(result));
    // Owed events stay: one a webhook still has to deliver, one a poll stream has not acknowledged (its month loses
    // only the acknowledged event beside it).
    assert.ok(kept.includes(pending.event.id));
    assert.ok(kept.includes(unacknowledged.id));
    assert.ok(!kept.includes(acknowledged.id));
    assert.ok(result.eventsDeleted >= 1);
    assert.ok(kept.includes(fresh.event.id), 'recent events stay');
    // The poll stream still serves the unacknowledged event.
    const poll = await call(t.app, 'GET', '/api/v1/shipments/events?per_page=100', { key: t.adminKey });
    assert.equal(poll.status, 200, JSON.stringify(poll.body));
    assert.ok(poll.body.data.some((e: { id: string }) => e.id === unacknowledged.id));
  });

  test('the hourly prune and the maintenance at once count each expired delivery out of the log\'s total once', async () => {
    const { rows: [subscription] } = await sql<{ id: string }>`insert into webhook_subscriptions (url, event_kinds, secret_sealed)
      values ('https://receiver.example/pruned', '{*}', 'sealed') returning id`.execute(t.db);
    // 30 deliveries in a month of their own, long expired: 20 delivered (the prune's), 10 dead (the maintenance's alone).
    const at = daysAgo(400);
    await sql`insert into webhook_deliveries (subscription_id, event_seq, event_id, event_kind, status, delivered_at, created_at)
      select ${subscription!.id}, 900000 + n, gen_random_uuid(), 'webhook.ping', case when n <= 20 then 'delivered' else 'dead' end,
        case when n <= 20 then ${at}::timestamptz end, ${at}
      from generate_series(1, 30) n`.execute(t.db);
    await maintainPartitions(t.db, { ...RETENTION, deliveryLogDays: 10_000 });
    assert.ok((await monthNames(t.db, 'webhook_deliveries')).includes(monthName('webhook_deliveries', at)), 'the month is made and kept');
    // The prune takes the maintenance's lock, so a round that meets it skips the month until the next round.
    const [first] = await Promise.all([maintainPartitions(t.db, RETENTION), pruneDeliveryLog(t.db)]);
    const next = await maintainPartitions(t.db, RETENTION);
    assert.ok([...first.dropped, ...next.dropped].includes(monthName('webhook_deliveries', at)), JSON.stringify([first, next]));
    assert.ok(!(await monthNames(t.db, 'webhook_deliveries')).includes(monthName('webhook_deliveries', at)));
    const { rows: [log] } = await sql<{ kept: number; stored: number }>`select
      (select coalesce(sum(n), 0)::int from list_counts where list = 'deliveries' and manufacturer_id = ${subscription!.id}) as kept,
      (select count(*)::int from webhook_deliveries where subscription_id = ${subscription!.id}) as stored`.execute(t.db);
    assert.deepEqual([log!.kept, log!.stored], [0, 0]);
  });

  test('the ledger as a whole is analyzed once a day, with the day groups its period reports are planned by (migration 0027)', async () => {
    // As on a database whose ledger was never analyzed as a whole (autovacuum analyzes only its months).
    await sql`select pg_stat_reset_single_table_counters('inventory_movements'::regclass)`.execute(t.db);
    await sql`delete from pg_statistic_ext_data where stxoid = (select oid from pg_statistic_ext where stxname = 'inventory_movements_day_groups')`.execute(t.db);
    assert.equal((await maintainPartitions(t.db, RETENTION)).ledgerAnalyzed, true);
    const { rows: [groups] } = await sql<{ inherited: boolean; ndistinct: string | null }>`
      select d.stxdinherit as inherited, d.stxdndistinct::text as ndistinct from pg_statistic_ext s join pg_statistic_ext_data d on d.stxoid = s.oid
      where s.stxname = 'inventory_movements_day_groups'`.execute(t.db);
    assert.equal(groups?.inherited, true);
    assert.ok(groups.ndistinct, 'the day groups are counted');
    assert.equal((await maintainPartitions(t.db, RETENTION)).ledgerAnalyzed, false, 'not again the same day');
  });

  test('instances maintaining at once: one does the work, the others skip that round', async () => {
    const results = await Promise.all([1, 2, 3].map(() => maintainPartitions(t.db, RETENTION)));
    for (const result of results) assert.deepEqual(result.dropped, []);
  });

  test('an instance running its first-start bootstrap does not make the others skip the maintenance', { skip: onPostgres ? false : 'needs TEST_DATABASE_URL' }, async () => {
    // The bootstrap and the maintenance once took one advisory lock number: a month was not made while it was held.
    const ahead = new Date(Date.now());
    ahead.setUTCMonth(ahead.getUTCMonth() + 3, 1);
    const month = monthName('inventory_movements', ahead);
    await sql`drop table ${sql.table(month)}`.execute(t.db);
    await t.db.connection().execute(async (connection) => {
      await sql`select pg_advisory_lock(${ADVISORY_LOCKS.bootstrap})`.execute(connection);
      try {
        assert.ok((await maintainPartitions(t.db, RETENTION)).created.includes(month));
      } finally {
        await sql`select pg_advisory_unlock(${ADVISORY_LOCKS.bootstrap})`.execute(connection);
      }
    });
    assert.ok((await monthNames(t.db, 'inventory_movements')).includes(month));
  });
});

describe('migration 0018 on a database that has data', () => {
  let database: Database;
  let drop = async () => {};
  before(async () => {
    if (onPostgres) {
      const empty = await createEmptyServerDatabase();
      database = connectPostgres(empty.url, { poolSize: 2, statementTimeoutMs: 0 });
      drop = empty.drop;
    } else {
      database = await connectPGlite(null);
    }
  });
  after(async () => {
    await database?.close();
    await drop();
  });

  test('movements, events and deliveries (with their attempts) keep every row, each in its month; the sequences go on', async () => {
    const db = database.db;
    await sql`create table schema_migrations (version text primary key, applied_at timestamptz not null default now())`.execute(db);
    for (const migration of listMigrations().filter((m) => m.version < '0018')) {
      await sql.raw(migration.sql).execute(db);
      await db.insertInto('schema_migrations').values({ version: migration.version }).execute();
    }
    const { rows: [m] } = await sql<{ id: string }>`insert into manufacturers (code, name) values ('UPG', 'Upgrade') returning id`.execute(db);
    const { rows: [i] } = await sql<{ id: string }>`insert into items (manufacturer_id, item_number_display, item_number_normalized, description)
      values (${m!.id}, 'UPG-1', 'UPG1', 'Upgrade item') returning id`.execute(db);
    const times = [daysAgo(500), daysAgo(40), daysAgo(0)];
    for (const at of times) {
      await sql`insert into inventory_movements (item_id, manufacturer_id, movement_type, quantity, balance_after, reference_id, performed_at)
        values (${i!.id}, ${m!.id}, 'receipt', 1, 1, ${i!.id}, ${at})`.execute(db);
      await sql`insert into outbox_events (kind, data, occurred_at) values ('inventory.adjusted', '{}', ${at})`.execute(db);
    }
    const { rows: [s] } = await sql<{ id: string }>`insert into webhook_subscriptions (url, event_kinds, secret_sealed)
      values ('https://receiver.example/hook', '{*}', 'sealed') returning id`.execute(db);
    await sql`insert into webhook_deliveries (subscription_id, event_seq, event_id, event_kind, created_at)
      select ${s!.id}, seq, id, kind, occurred_at from outbox_events`.execute(db);
    await sql`insert into webhook_delivery_attempts (delivery_id, attempt, duration_ms, outcome) select id, 1, 3, 'retry' from webhook_deliveries`.execute(db);
    const { rows: before } = await sql<{ seq: string }>`select max(seq)::text as seq from inventory_movements`.execute(db);

    assert.deepEqual(await migrate(db), listMigrations().filter((m) => m.version >= '0018').map((m) => m.version));
    assert.deepEqual(await partitionsOf(db, 'inventory_movements'), times.map((at) => monthName('inventory_movements', at)).sort());
    assert.deepEqual(await partitionsOf(db, 'outbox_events'), times.map((at) => monthName('outbox_events', at)).sort());
    assert.deepEqual(await partitionsOf(db, 'webhook_deliveries'), times.map((at) => monthName('webhook_deliveries', at)).sort());
    const { rows: [attempts] } = await sql<{ n: number }>`select count(*)::int as n from webhook_delivery_attempts a
      join webhook_deliveries d on d.id = a.delivery_id`.execute(db);
    assert.equal(attempts!.n, 3);
    const { rows: [next] } = await sql<{ seq: string }>`insert into inventory_movements (item_id, manufacturer_id, movement_type, quantity, balance_after, reference_id)
      values (${i!.id}, ${m!.id}, 'receipt', 1, 2, ${i!.id}) returning seq::text`.execute(db);
    assert.ok(BigInt(next!.seq) > BigInt(before[0]!.seq));
    const { rows: counts } = await sql<{ n: string }>`select sum(n)::text as n from list_counts where list = 'movements'`.execute(db);
    assert.equal(counts[0]!.n, '4', 'the ledger total counts the rows it had and the new one');
  });
});
