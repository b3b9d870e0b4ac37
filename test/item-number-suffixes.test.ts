// item_number_suffixes (migration 0024): every suffix of every item number and alias, kept by triggers through every
// write of items and aliases (API and direct SQL, in parallel on PostgreSQL), and what reads it: the item list's q=
// (numbers, aliases, descriptions; each item once, exact totals; status and partner narrowing) and item search's
// substring stage (which alias held the query).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql, type Kysely } from 'kysely';
import { connectPGlite } from '../src/db/connect.ts';
import { listMigrations, migrate } from '../src/db/migrate.ts';
import type { DB } from '../src/db/schema.ts';
import { call, createItem, createManufacturer, onPostgres, startApp, type TestApp } from './helpers.ts';

let t: TestApp;
let north: string;
let south: string;
before(async () => {
  t = await startApp();
  north = await createManufacturer(t, 'SUFN');
  south = await createManufacturer(t, 'SUFS');
});
after(() => t.close());

/**
 * Rows where the table differs from the suffixes recomputed from items and aliases as they are (either side missing
 * included), as text.
 */
async function drift(db: Kysely<DB> = t.db): Promise<string[]> {
  const { rows } = await sql<{ row: string }>`
    with expected as (
      select distinct substr(t.t, p) suffix, i.id item_id, i.manufacturer_id, i.status::text status, i.item_number_normalized
        from items i
        cross join lateral (select i.item_number_normalized union select a.alias_normalized from item_aliases a where a.item_id = i.id) t (t)
        cross join generate_series(1, length(t.t)) p)
    select coalesce(e.suffix, s.suffix) || ' of ' || coalesce(e.item_id, s.item_id)::text
           || case when e.suffix is null then ' (extra)' when s.suffix is null then ' (missing)' else ' (stale)' end as row
      from expected e full join item_number_suffixes s on s.suffix = e.suffix and s.item_id = e.item_id
     where (e.suffix, e.item_id, e.manufacturer_id, e.status, e.item_number_normalized)
       is distinct from (s.suffix, s.item_id, s.manufacturer_id, s.status, s.item_number_normalized)`.execute(db);
  return rows.map((r) => r.row);
}

const suffixesOf = async (itemId: string) => (await t.db.selectFrom('item_number_suffixes').select('suffix')
  .where('item_id', '=', itemId).orderBy('suffix').execute()).map((r) => r.suffix);

const addAlias = async (itemId: string, alias: string) => {
  const added = await call(t.app, 'POST', `/api/v1/items/${itemId}/aliases`, { key: t.adminKey, body: { alias } });
  assert.equal(added.status, 201, JSON.stringify(added.body));
  return added.body.data.id as string;
};

const list = async (query: string) => {
  const answer = await call(t.app, 'GET', `/api/v1/items?${query}`, { key: t.adminKey });
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  return {
    numbers: answer.body.data.map((i: { item_number_display: string }) => i.item_number_display) as string[],
    total: answer.body.meta.total_count as number,
  };
};

describe('upkeep', () => {
  test('a new item has one row per suffix of its number', async () => {
    const id = await createItem(t, north, 'up-123');
    assert.deepEqual(await suffixesOf(id), ['123', '23', '3', 'P123', 'UP123']);
    assert.deepEqual(await drift(), []);
  });

  test('aliases: added and removed, the number\'s suffixes stay', async () => {
    const id = await createItem(t, north, 'AL-77');
    const alias = await addAlias(id, 'old 877');
    // 877, 77, 7 from the alias; 77 and 7 are the number's too: one row each.
    assert.deepEqual(await suffixesOf(id), ['7', '77', '877', 'AL77', 'L77', 'OLD877', 'D877', 'LD877'].sort());
    assert.deepEqual(await drift(), []);
    assert.equal((await call(t.app, 'DELETE', `/api/v1/items/${id}/aliases/${alias}`, { key: t.adminKey })).status, 204);
    assert.deepEqual(await suffixesOf(id), ['7', '77', 'AL77', 'L77']);
    assert.deepEqual(await drift(), []);
  });

  test('discontinue and reactivate carry the status to every row', async () => {
    const id = await createItem(t, north, 'ST-5');
    await addAlias(id, 'ST-OLD');
    assert.equal((await call(t.app, 'POST', `/api/v1/items/${id}/discontinue`, { key: t.adminKey, body: {} })).status, 200);
    const statuses = await t.db.selectFrom('item_number_suffixes').select('status').distinct().where('item_id', '=', id).execute();
    assert.deepEqual(statuses, [{ status: 'discontinued' }]);
    assert.equal((await call(t.app, 'POST', `/api/v1/items/${id}/reactivate`, { key: t.adminKey, body: {} })).status, 200);
    assert.deepEqual(await drift(), []);
  });

  test('direct SQL: number, partner and status changes, alias moves, deletes; stock writes leave the rows alone', async () => {
    const a = await createItem(t, north, 'SQL-1');
    const b = await createItem(t, north, 'SQL-2');
    await addAlias(a, 'SQL-A');
    // Stock columns and the description are not copied: such an update writes no row (the trigger names its columns,
    // and a status set to itself changes nothing). Counts not yet flushed to the statistics, read in the transaction.
    await t.db.transaction().execute(async (tx) => {
      const written = async () => (await sql<{ n: number }>`select coalesce(sum(n_tup_ins + n_tup_upd + n_tup_del), 0)::int as n
        from pg_stat_xact_user_tables where relname = 'item_number_suffixes'`.execute(tx)).rows[0]!.n;
      const before = await written();
      await sql`update items set qty_on_hand = 5, description = 'changed', status = status where id = ${a}`.execute(tx);
      assert.equal(await written(), before, 'a stock or description update wrote suffix rows');
    });
    for (const change of [
      sql`update items set item_number_display = 'SQL-9', item_number_normalized = 'SQL9' where id = ${a}`,
      sql`update items set manufacturer_id = ${south} where id = ${a}`,
      sql`update item_aliases set manufacturer_id = ${south} where item_id = ${a}`,
      sql`update items set status = 'inactive' where id = ${a}`,
      sql`update item_aliases set alias_normalized = 'SQLB' where item_id = ${a}`,
      sql`update item_aliases set item_id = ${b}, manufacturer_id = ${north} where item_id = ${a}`,
      sql`insert into item_aliases (item_id, manufacturer_id, alias, alias_normalized) values (${b}, ${north}, 'SQL 2', 'SQL2')`,
      sql`delete from items where id = ${b}`,
    ]) {
      await change.execute(t.db);
      assert.deepEqual(await drift(), [], `after ${change.compile(t.db).sql}`);
    }
    assert.deepEqual(await suffixesOf(b), []);
    assert.deepEqual(await suffixesOf(a), ['9', 'L9', 'QL9', 'SQL9']);
  });

  test('two direct writes of one item that each make its rows again run one after the other', { skip: !onPostgres && 'PostgreSQL only' }, async () => {
    const id = await createItem(t, north, 'LOCK-77');
    const alias = await addAlias(id, 'LOCK-OLD-77');
    // The first holds the item's row, having made its rows again; the second (a removed alias) must wait for it and
    // then read its rows, not insert the same suffixes beside them (a unique violation without the lock).
    let updated!: () => void;
    let release!: () => void;
    const isUpdated = new Promise<void>((resolve) => { updated = resolve; });
    const released = new Promise<void>((resolve) => { release = resolve; });
    const first = t.db.transaction().execute(async (tx) => {
      await sql`update items set status = 'inactive' where id = ${id}`.execute(tx);
      updated();
      await released;
    });
    await isUpdated;
    const second = t.db.transaction().execute(async (tx) => {
      await sql`delete from item_aliases where id = ${alias}`.execute(tx);
    });
    const waiting = async () => (await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity
      where datname = current_database() and wait_event_type = 'Lock'`.execute(t.db)).rows[0]!.n;
    for (let tries = 0; (await waiting()) === 0 && tries < 100; tries++) await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(await waiting(), 1, 'the second write waits for the first');
    release();
    await first;
    await second;
    assert.deepEqual(await drift(), []);
    assert.deepEqual(await suffixesOf(id), ['77', '7', 'CK77', 'K77', 'LOCK77', 'OCK77'].sort());
  });

  test('parallel alias adds and removals, with status changes of the same items', { skip: !onPostgres && 'PostgreSQL only' }, async () => {
    const items = await Promise.all([0, 1, 2].map((k) => createItem(t, north, `PAR-${k}00`)));
    const aliases = await Promise.all(items.map((id, k) => addAlias(id, `PAR-${k}01`)));
    await Promise.all(items.flatMap((id, k) => [
      ...[2, 3, 4, 5].map((n) => addAlias(id, `PAR-${k}0${n}`)),
      call(t.app, 'DELETE', `/api/v1/items/${id}/aliases/${aliases[k]}`, { key: t.adminKey }),
      call(t.app, 'POST', `/api/v1/items/${id}/discontinue`, { key: t.adminKey, body: {} }),
      call(t.app, 'PATCH', `/api/v1/items/${id}`, { key: t.adminKey, body: { description: `parallel ${k}` } }),
    ]));
    assert.deepEqual(await drift(), []);
    const statuses = await t.db.selectFrom('item_number_suffixes').select('status').distinct().where('item_id', 'in', items).execute();
    assert.deepEqual(statuses, [{ status: 'discontinued' }]);
  });
});

test('the migration fills the table from the items and aliases already there', async () => {
  const database = await connectPGlite(null);
  try {
    const { db } = database;
    // The migrations before the table's; then a catalogue; then the rest.
    const [earlier, later] = [listMigrations().filter((m) => m.version < '0024'), listMigrations().filter((m) => m.version >= '0024')];
    await migrate(db, earlier);
    await sql`insert into manufacturers (code, name) values ('OLD', 'Old partner')`.execute(db);
    await sql`insert into items (manufacturer_id, item_number_display, item_number_normalized, description, status)
      select m.id, 'OLD-' || n, 'OLD' || n, 'Old part ' || n, case when n % 3 = 0 then 'inactive' else 'active' end
      from manufacturers m, generate_series(1, 30) n`.execute(db);
    await sql`insert into item_aliases (item_id, manufacturer_id, alias, alias_normalized)
      select id, manufacturer_id, 'X-' || item_number_normalized, 'X' || item_number_normalized from items where item_number_normalized like '%1'`.execute(db);
    assert.deepEqual(await migrate(db), later.map((m) => m.version));
    assert.deepEqual(await drift(db), []);
    assert.equal((await sql<{ n: number }>`select count(*)::int as n from item_number_suffixes`.execute(db)).rows[0]!.n > 30 * 4, true);
  } finally {
    await database.close();
  }
});

describe('q= on the item list', () => {
  let ids: Record<string, string>;
  before(async () => {
    ids = {};
    for (const [partner, number, description] of [
      [north, 'QQ-4512-A', 'Brass fitting'],
      [north, 'QQ-7000', 'Hose clamp 4512'],
      [north, 'QQ-4512-4512', 'Double number'],
      [north, 'QQ-8000', 'Aliased part'],
      [south, 'QQ-0451-2', 'Southern part'],
      [north, 'QQ-9000', 'Dropped part'],
    ] as const) ids[number] = await createItem(t, partner, number, { description });
    await addAlias(ids['QQ-8000']!, 'OLD-45-12');
    await addAlias(ids['QQ-4512-A']!, 'ALT 4512');
    assert.equal((await call(t.app, 'POST', `/api/v1/items/${ids['QQ-9000']}/discontinue`, { key: t.adminKey, body: {} })).status, 200);
    await addAlias(ids['QQ-9000']!, 'X4512');
  });

  test('by number, alias or description; each item once; exact totals on every page', async () => {
    const all = ['QQ-0451-2', 'QQ-4512-4512', 'QQ-4512-A', 'QQ-7000', 'QQ-8000'];
    assert.deepEqual(await list('q=4512'), { numbers: all, total: 5 });
    // A number or alias matches normalized, a description as written: "clamp 4512" does not hold 45-12.
    assert.deepEqual(await list('q=45-12&per_page=2&page=2'), { numbers: ['QQ-4512-A', 'QQ-8000'], total: 4 });
    assert.deepEqual(await list('q=4512&per_page=2&page=4'), { numbers: [], total: 5 });
    assert.deepEqual(await list('q=clamp%204512'), { numbers: ['QQ-7000'], total: 1 });
    assert.deepEqual(await list('q=OLD45'), { numbers: ['QQ-8000'], total: 1 });
  });

  test('status and partner narrow the matches; partner code sort', async () => {
    assert.deepEqual(await list('q=4512&status=discontinued'), { numbers: ['QQ-9000'], total: 1 });
    assert.deepEqual(await list(`q=4512&manufacturer=${south}`), { numbers: ['QQ-0451-2'], total: 1 });
    assert.deepEqual(await list('q=4512&sort=mfg_code'),
      { numbers: ['QQ-4512-4512', 'QQ-4512-A', 'QQ-7000', 'QQ-8000', 'QQ-0451-2'], total: 5 });
    // Sorts and filters on other columns read the matches' rows: the same items.
    assert.deepEqual(await list('q=4512&sort=description'),
      { numbers: ['QQ-8000', 'QQ-4512-A', 'QQ-4512-4512', 'QQ-7000', 'QQ-0451-2'], total: 5 });
    assert.deepEqual((await list('q=4512&filter=out_of_stock')).total, 5);
  });

  test('a status change moves an item out of and into the default list at once', async () => {
    const id = ids['QQ-7000']!;
    await call(t.app, 'POST', `/api/v1/items/${id}/discontinue`, { key: t.adminKey, body: {} });
    assert.deepEqual((await list('q=QQ-7000')).total, 0);
    await call(t.app, 'POST', `/api/v1/items/${id}/reactivate`, { key: t.adminKey, body: {} });
    assert.deepEqual(await list('q=QQ-7000'), { numbers: ['QQ-7000'], total: 1 });
  });
});

describe('search, substring stage', () => {
  test('a number holding q has no alias; an alias holding it is named', async () => {
    const own = await createItem(t, south, 'ZZ-31-555');
    const aliased = await createItem(t, south, 'ZZ-90');
    await addAlias(aliased, 'legacy 31555 b');
    const hits = (await call(t.app, 'GET', '/api/v1/items/search?q=31555', { key: t.adminKey })).body.data as
      { Item: { id: string }; AliasValue?: string; Score: number; MatchType: string }[];
    const byId = Object.fromEntries(hits.map((h) => [h.Item.id, h]));
    assert.deepEqual([byId[own]?.Score, byId[own]?.MatchType], [0.75, 'prefix']);
    assert.equal('AliasValue' in byId[own]!, false);
    assert.deepEqual([byId[aliased]?.AliasValue, byId[aliased]?.Score], ['legacy 31555 b', 0.75]);
  });
});
