// On a catalogue large enough for the planner to care (20,000 items, 60,000 movements, 20,000 orders), no query that
// the item list, item search, ledgers and order list run reads items, their stock state, aliases, movements or orders
// sequentially. On PostgreSQL only:
// the benchmark and production run on the server.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createQueryId, sql } from 'kysely';
import { functionPlans, ITEM_MATCHES_FUNCTION, literal, pagedReads, planOf, plansOfRecorded, queryRecorder, relationsOf, scansOf, SEARCH_FUNCTION, seqScans } from '../bench/plan-check.ts';
import { connectPostgres, PLANNED_EACH_TIME, type Database } from '../src/db/connect.ts';
import { maintainPartitions } from '../src/db/partitions.ts';
import { inTransaction } from '../src/db/transaction.ts';
import { adjustStock, commitStock } from '../src/domain/stock.ts';
import { RowTexts } from '../src/http/row-texts.ts';
import type { Actor } from '../src/http/auth.ts';
import { pageOf } from '../src/http/pagination.ts';
import { listItems } from '../src/modules/items/queries.ts';
import { listOrders } from '../src/modules/orders/queries.ts';
import { adjust, call, createItem, createLocation, createManufacturer, freshDatabase, onPostgres, serverUrl, startApp, type TestApp } from './helpers.ts';

const { plugin: capture, captured } = queryRecorder();

let t: TestApp;
let partner: string;
let customer: string;
before(async () => {
  if (!onPostgres) return;
  const database = await freshDatabase();
  t = await startApp({ database: { ...database, db: database.db.withPlugin(capture) } });
  partner = await createManufacturer(t, 'PLAN');
  const item = await createItem(t, partner, 'PLAN-1');
  await call(t.app, 'POST', `/api/v1/items/${item}/aliases`, { key: t.adminKey, body: { alias: 'PLAN-ALIAS' } });
  // Ten partners, so that a partner's share is a tenth of the catalogue as in a real warehouse.
  await sql`insert into manufacturers (code, name) select 'GEN' || k, 'Generated ' || k from generate_series(1, 9) k`.execute(t.db);
  await sql`insert into items (manufacturer_id, item_number_display, item_number_normalized, description, category, qty_on_hand, reorder_level, price_1)
    select (select id from manufacturers order by code offset n % 10 limit 1), 'GEN-' || n, 'GEN' || n, 'Generated part ' || n, 'C' || (n % 20),
      n % 50, n % 7, case when n % 9 = 0 then null else 1 end
    from generate_series(1, 20000) n`.execute(t.db);
  await sql`insert into item_aliases (item_id, manufacturer_id, alias, alias_normalized)
    select id, manufacturer_id, 'ALT-' || item_number_normalized, 'ALT' || item_number_normalized from items where item_number_normalized like 'GEN%'`.execute(t.db);
  await sql`insert into inventory_movements (item_id, manufacturer_id, movement_type, quantity, balance_after, reference_id, performed_at)
    select id, manufacturer_id, m.kind, case when m.kind = 'shipment' then -k else k end, 0, id, now() - make_interval(days => k * 60)
    from items, generate_series(1, 3) k,
      lateral (select case when k = 1 and item_number_normalized like '%0' then 'shipment' when k = 2 then 'adjustment' else 'receipt' end as kind) m
    where item_number_normalized like 'GEN%'`.execute(t.db);
  await sql`update items set date_last_movement = now() - interval '1 day' where item_number_normalized like 'GEN%0'`.execute(t.db);
  // Written to the ledger directly: the kept year of shipments (migration 0043) is counted from it.
  await sql`select count_shipped_year()`.execute(t.db);
  // 20,000 orders over a year and 2,000 customers, most of them done, as in a warehouse's order book.
  await sql`insert into customers (account_number, name, address_line_1, city, state, zip_code)
    select 'PLAN' || k, 'Plan customer ' || k, k || ' Main St', 'Springfield', 'IL', '62701' from generate_series(1, 2000) k`.execute(t.db);
  customer = (await sql<{ id: string }>`select id from customers where account_number = 'PLAN7'`.execute(t.db)).rows[0]!.id;
  await sql`insert into orders (manufacturer_id, customer_id, status, priority, customer_po_number, order_date, created_at)
    select m.id, c.id, (array['entered', 'released', 'partial', 'shipped', 'billed', 'closed', 'closed', 'closed', 'closed', 'cancelled'])[1 + n % 10],
      (array['normal', 'normal', 'high', 'rush'])[1 + n % 4], 'PO-' || n, (now() - make_interval(hours => n / 2))::date, now() - make_interval(hours => n / 2)
    from generate_series(1, 20000) n
      join lateral (select id from manufacturers order by code offset n % 10 limit 1) m on true
      join lateral (select id from customers where account_number = 'PLAN' || (1 + n % 2000)) c on true`.execute(t.db);
  // A shipped batch for each of 10,000 orders, as the floor's work leaves them.
  await sql`insert into pick_batches (order_id, manufacturer_id, batch_number, status, shipped_at, created_at,
      shipped_lines, shipped_lines_in_full, shipped_units_to_pick, shipped_units_picked)
    select id, manufacturer_id, 'PBPLAN' || order_number, 'shipped', created_at + interval '1 day', created_at, 2, 2, 4, 4
    from orders order by order_number limit 10000`.execute(t.db);
  // 200 locations holding the generated items 100 to a location; 60 cycle counts of 5 lines each.
  await sql`insert into locations (warehouse_id, location_code) select (select id from warehouses limit 1), 'PLAN-LOC-' || lpad(n::text, 3, '0') from generate_series(1, 200) n`.execute(t.db);
  await sql`insert into item_locations (item_id, location_id, qty_on_hand, is_primary)
    select i.id, l.id, 1 + i.n % 9, true from (select id, row_number() over (order by id) as n from items where item_number_normalized like 'GEN%') i
    join (select id, row_number() over (order by location_code) - 1 as k from locations where location_code like 'PLAN-LOC-%') l on l.k = i.n % 200`.execute(t.db);
  await sql`insert into cycle_count_batches (batch_number, triggered_by) select 'CCPLAN' || n, 'manual' from generate_series(1, 60) n`.execute(t.db);
  await sql`insert into cycle_count_lines (batch_id, item_id, location_id, system_qty)
    select b.id, il.item_id, il.location_id, il.qty_on_hand from (select id, row_number() over (order by batch_number) as k from cycle_count_batches) b
    join (select item_id, location_id, qty_on_hand, row_number() over (order by id) / 5 as k from item_locations) il on il.k = b.k`.execute(t.db);
  // The hourly maintenance gives the back-dated movements their months, as it would in a running warehouse.
  await maintainPartitions(t.db, { eventDays: 90, deliveryLogDays: 30 });
  await sql`vacuum analyze`.execute(t.db);
});
after(() => t?.close());

/** `run` on a pool of one connection to the test's database: each statement meets the prepared statements of the ones before. */
async function withOneConnection(run: (single: Database) => Promise<void>): Promise<void> {
  const url = new URL(serverUrl!);
  url.pathname = `/${(await sql<{ name: string }>`select current_database() as name`.execute(t.db)).rows[0]!.name}`;
  const single = connectPostgres(url.toString(), { poolSize: 1 });
  try {
    await run(single);
  } finally {
    await single.close();
  }
}

/** The UTC day `days` days ago, as a report's from or to. */
const day = (days: number) => new Date(Date.now() - days * 86_400_000).toISOString().slice(0, 10);

/** Five custom plans are PostgreSQL's trial; from then on each statement's kept plan runs. */
function assertPlansKept(rows: { statement: string; generic_plans: number; custom_plans: number }[]) {
  for (const row of rows) assert.ok(row.generic_plans >= 3 && row.custom_plans <= 5, `${row.generic_plans} generic, ${row.custom_plans} custom: ${row.statement}`);
}

/** The plans of the queries on the big tables that a GET of `url` ran, prepared and explained with the request's values. */
async function plansOf(url: string): Promise<{ sql: string; plan: unknown }[]> {
  captured.length = 0;
  const answer = await call(t.app, 'GET', url, { key: t.adminKey });
  assert.equal(answer.status, 200, url);
  const plans = await plansOfRecorded(t.db, captured);
  assert.ok(plans.length > 0, `${url} ran a query on the big tables`);
  return plans;
}

test('no list, search or ledger query reads items, their stock state, aliases, bins, movements, orders or pick batches sequentially', { skip: onPostgres ? false : 'needs TEST_DATABASE_URL' }, async () => {
  const urls = pagedReads(partner, customer);
  const failures: string[] = [];
  for (const url of urls) {
    for (const { sql: text, plan } of await plansOf(url)) {
      if (seqScans(plan).length) failures.push(`${url}: sequential scan of ${seqScans(plan).join(', ')} in ${text}`);
    }
  }
  assert.deepEqual(failures, []);
});

/** Every node of a plan, depth first. */
const nodesOf = (node: unknown): Record<string, unknown>[] =>
  [node as Record<string, unknown>, ...((node as { Plans?: unknown[] }).Plans ?? []).flatMap(nodesOf)];
/** The index reads of a plan, as node type and index name. */
const indexReadsOf = (plan: unknown) =>
  nodesOf(plan).map((n) => `${n['Node Type']} ${n['Index Name'] ?? ''}`.trim()).filter((n) => n.includes('Index'));

test('every stage of the search function has an index path in the generic plan it runs with', { skip: onPostgres ? false : 'needs TEST_DATABASE_URL' }, async () => {
  const plans = await functionPlans(t.db, SEARCH_FUNCTION, [['PALN1', null], ['GEN1', partner]]);
  for (const plan of plans) assert.deepEqual(seqScans(plan), []);
  // The prefix stage for all partners reads its index in number order and stops at 40 hits (migration 0022); as a
  // bitmap it read every number of the prefix first (83,333 at 1,000,000 items). A partner's branch may take a bitmap
  // of that partner's hits, as it does on this small catalogue.
  const bitmapsOf = (plan: unknown) =>
    nodesOf(plan).filter((node) => node['Node Type'] === 'Bitmap Index Scan').map((node) => node['Index Name'] as string);
  for (const plan of plans) {
    assert.deepEqual(bitmapsOf(plan).filter((index) => ['items_number_prefix_idx', 'item_aliases_prefix_idx'].includes(index)), []);
    // The look-alikes one typo away are looked up by their variants (migration 0023).
    assert.deepEqual(bitmapsOf(plan).filter((index) => index.endsWith('_typo_idx')).sort(), ['item_aliases_typo_idx', 'items_number_typo_idx']);
    // The substring stage reads the suffixes of numbers and aliases (migration 0025), not their trigram indexes.
    assert.ok(JSON.stringify(plan).includes('"Index Name":"item_number_suffixes_idx"'));
  }
});

test('a q= page sorted by number reads its number matches from the suffix index alone, and only its own items', { skip: onPostgres ? false : 'needs TEST_DATABASE_URL' }, async () => {
  // GEN1 is in the numbers (GEN1, GEN1x, ..., GEN1xxxx) and so the aliases (ALTGEN1...) of 11,111 generated items.
  // The matches come from item_matches (migration 0028), run with a generic plan: with a number and without one.
  const plans = await functionPlans(t.db, ITEM_MATCHES_FUNCTION, [['GEN1', 'gen1'], [null, 'part']]);
  for (const plan of plans) {
    const indexes = indexReadsOf(plan);
    assert.deepEqual(seqScans(plan), []);
    assert.ok(indexes.includes('Index Only Scan item_number_suffixes_idx'), indexes.join(', '));
    assert.ok(indexes.includes('Bitmap Index Scan items_description_trgm_idx'), indexes.join(', '));
  }
  // The page's statement reads items by primary key for its own rows only: not once per match.
  const { plan } = (await plansOf('/api/v1/items?q=gen1&per_page=10')).at(-1)!;
  const indexes = indexReadsOf(plan);
  assert.deepEqual(indexes.filter((n) => / items_/.test(n)), ['Index Scan items_pkey'], indexes.join(', '));
  assert.ok(JSON.stringify(plan).includes('"Function Name":"item_matches"'));
  assert.equal((await call(t.app, 'GET', '/api/v1/items?q=gen1&per_page=10', { key: t.adminKey })).body.meta.total_count, 11_111);
});

test('the total of a stock filter is read from the maintained counts (migration 0017), not counted over the stock state', { skip: onPostgres ? false : 'needs TEST_DATABASE_URL' }, async () => {
  captured.length = 0;
  const answer = await call(t.app, 'GET', '/api/v1/items?filter=below_reorder&per_page=7', { key: t.adminKey });
  assert.equal(answer.status, 200);
  const compiled = captured.map((node) => t.db.getExecutor().compileQuery(node, createQueryId()).sql);
  assert.ok(!compiled.some((q) => /count\(\*\)/i.test(q)), 'nothing is counted');
  // One round trip: the page's statement carries the total, a sum over list_counts.
  const totals = compiled.filter((q) => q.includes('list_counts'));
  assert.equal(totals.length, 1, totals.join('\n'));
  assert.match(totals[0]!, /\(select coalesce\(sum\(n\), 0\)::int from list_counts where .*\) as "total_count" from "item_stock_state" as "s"/);
  const { rows } = await sql<{ n: number }>`select count(*)::int as n from item_stock_state
    where status = 'active' and reorder_level > 0 and qty_available < reorder_level`.execute(t.db);
  assert.equal(answer.body.meta.total_count, rows[0]!.n);
  assert.ok(rows[0]!.n > 1000, 'the generated catalogue has many items below their reorder level');
});

test('the total of an order list by status and priority is read from the maintained counts (migration 0032), not counted over the orders', { skip: onPostgres ? false : 'needs TEST_DATABASE_URL' }, async () => {
  captured.length = 0;
  const answer = await call(t.app, 'GET', '/api/v1/orders?status=open&priority=rush&per_page=7', { key: t.adminKey });
  assert.equal(answer.status, 200);
  // The page's statement carries the total as a sum over list_counts (its row's display substatus counts pick batches).
  const compiled = captured.map((node) => t.db.getExecutor().compileQuery(node, createQueryId()).sql);
  const total = /\(select coalesce\(sum\(n\), 0\)::int from list_counts where list = 'orders' and "status" in \('entered', 'partial', 'released'\) and flags & 4::smallint <> 0\) as "total_count"/;
  assert.ok(compiled.some((q) => total.test(q)), compiled.join('\n'));
  const { rows } = await sql<{ n: number }>`select count(*)::int as n from orders
    where status in ('entered', 'released', 'partial') and priority = 'rush'`.execute(t.db);
  assert.equal(answer.body.meta.total_count, rows[0]!.n);
  assert.equal(rows[0]!.n, 1000, 'one generated order in 20 is open and rush');
  assert.deepEqual(answer.body.data.map((order: { status: string }) => order.status).filter((s: string) => !['entered', 'released', 'partial'].includes(s)), []);
});

test('the pick-batch list\'s total by partner and status is read from the maintained counts (migration 0034), not counted over the batches', { skip: onPostgres ? false : 'needs TEST_DATABASE_URL' }, async () => {
  for (const [url, where] of [
    ['/api/v1/pick-batches?status=shipped&per_page=5', sql`status = 'shipped'`],
    [`/api/v1/pick-batches?manufacturer=${partner}&per_page=5`, sql`manufacturer_id = ${partner}`],
  ] as const) {
    captured.length = 0;
    const answer = await call(t.app, 'GET', url, { key: t.adminKey });
    assert.equal(answer.status, 200);
    const compiled = captured.map((node) => t.db.getExecutor().compileQuery(node, createQueryId()).sql);
    assert.ok(compiled.some((q) => /\(select coalesce\(sum\(n\), 0\)::int from list_counts where list = 'pick_batches' and .*\) as "total_count" from "pick_batches"/.test(q)), compiled.join('\n'));
    assert.ok(!compiled.some((q) => /count\(\*\)[^;]* from "pick_batches"/.test(q)), compiled.join('\n'));
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from pick_batches where ${where}`.execute(t.db);
    assert.equal(answer.body.meta.total_count, rows[0]!.n, url);
    assert.ok(rows[0]!.n > 0, url);
  }
});

test('the receiving list\'s total by partner and status is read from the maintained counts (migration 0038), its lines summed for the page only', { skip: onPostgres ? false : 'needs TEST_DATABASE_URL' }, async () => {
  await sql`insert into receiving_batches (manufacturer_id, batch_number, received_date, status)
    select ${partner}, 'RPLAN' || n, current_date - n / 50, case when n % 10 = 0 then 'draft' else 'posted' end from generate_series(1, 2000) n`.execute(t.db);
  for (const [url, where] of [
    ['/api/v1/receiving?status=draft&per_page=5&page=3', sql`status = 'draft'`],
    [`/api/v1/receiving?manufacturer=${partner}&per_page=5`, sql`manufacturer_id = ${partner}`],
  ] as const) {
    captured.length = 0;
    const answer = await call(t.app, 'GET', url, { key: t.adminKey });
    assert.equal(answer.status, 200);
    const compiled = captured.map((node) => t.db.getExecutor().compileQuery(node, createQueryId()).sql);
    assert.ok(compiled.some((q) => /\(select coalesce\(sum\(n\), 0\)::int from list_counts where list = 'receiving' and .*\) as "total_count"/.test(q)), compiled.join('\n'));
    assert.ok(!compiled.some((q) => /count\(\*\)(::int)? as "count" from "receiving_batches"/.test(q)), compiled.join('\n'));
    // The page's five batches are chosen before their lines are summed: each sum runs five times, not for every row
    // the offset skips too (explain analyze of the page's statement as it ran).
    const node = captured[compiled.findIndex((q) => q.includes('receiving_lines'))]!;
    const analyzed = await planOf(t.db, t.db.getExecutor().compileQuery(node, createQueryId()), { analyze: true });
    const sums = nodesOf(analyzed).filter((n) => n['Relation Name'] === 'receiving_lines').map((n) => n['Actual Loops']);
    assert.deepEqual(sums, [5, 5], url);
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from receiving_batches where ${where}`.execute(t.db);
    assert.deepEqual([answer.body.meta.total_count, answer.body.data.length], [rows[0]!.n, 5], url);
  }
});

test('the location and cycle-count lists sum the stock and count the lines of their page only, the stock from kept figures and indexes alone', { skip: onPostgres ? false : 'needs TEST_DATABASE_URL' }, async () => {
  for (const [url, table, scan, passes] of [
    // The kept figures (migration 0046) and the quarantined bins once a location, an available bin only beside a
    // quarantined one with stock (none here): migration 0045. No bin with stock is read.
    ['/api/v1/locations?q=PLAN-LOC&per_page=5&page=7', 'location_stock_counts', 'Index Only Scan', {
      location_stock_counts_key_idx: 5, item_locations_quarantined_idx: 5, item_locations_item_location_status_key: 0,
    }],
    ['/api/v1/cycle-counts?per_page=5&page=7', 'cycle_count_lines', undefined, undefined],
  ] as const) {
    captured.length = 0;
    const answer = await call(t.app, 'GET', url, { key: t.adminKey });
    assert.equal(answer.status, 200, url);
    assert.equal(answer.body.data.length, 5, url);
    const compiled = captured.map((node) => t.db.getExecutor().compileQuery(node, createQueryId()).sql);
    const node = captured[compiled.findIndex((q) => q.includes(table))]!;
    const analyzed = await planOf(t.db, t.db.getExecutor().compileQuery(node, createQueryId()), { analyze: true });
    const reads = nodesOf(analyzed).filter((n) => (passes ? String(n['Index Name']) in passes : n['Relation Name'] === table));
    // One pass over each of the page's five rows, none for the 30 rows the offset skips.
    if (passes) {
      assert.deepEqual(Object.fromEntries(reads.map((n) => [n['Index Name'], n['Actual Loops']])), passes, url);
      const others = nodesOf(analyzed).filter((n) => ['item_locations', table].includes(String(n['Relation Name'])) && !reads.includes(n));
      assert.deepEqual(others.map((n) => [n['Node Type'], n['Index Name']]), [], `${url}: no other read of the bins`);
    }
    else assert.deepEqual(reads.map((n) => n['Actual Loops']), [5], url);
    if (scan) assert.deepEqual(reads.filter((n) => Number(n['Actual Loops']) > 0).map((n) => [n['Node Type'], n['Heap Fetches']]), [[scan, 0], [scan, 0]], url);
  }
  // The bins are vacuumed often enough for their visibility map to stay whole under the floor's writes (migration 0042).
  const { rows: [bins] } = await sql<{ reloptions: string[] }>`select reloptions from pg_class where relname = 'item_locations'`.execute(t.db);
  assert.ok(bins!.reloptions.includes('autovacuum_vacuum_scale_factor=0.02'), String(bins!.reloptions));
});

/** 2,000 exceptions, a quarter open, each with its order block; one open block in ten waits for the supply partner. */
let exceptionsLoaded: Promise<void> | undefined;
function loadExceptions(): Promise<void> {
  exceptionsLoaded ??= (async () => {
    await sql`insert into pick_exceptions (kind, status, manufacturer_id, item_id, order_id, qty_short, short_reason, created_at)
      select 'short_pick', case when n % 4 = 0 then 'open' else 'reviewed' end, o.manufacturer_id,
        (select id from items where manufacturer_id = o.manufacturer_id limit 1), o.id, 1, 'plan', now() - n * interval '1 minute'
      from (select id, manufacturer_id, row_number() over (order by order_number) as n from orders limit 2000) o`.execute(t.db);
    await sql`insert into order_blocks (order_id, kind, status, short_pick_exception_id, awaiting_supply_partner_at)
      select e.order_id, e.kind, case when e.status = 'open' then 'open' else 'resolved' end, e.id,
        case when e.status = 'open' and e.n % 10 = 0 then now() end
      from (select *, row_number() over (partition by status order by created_at) as n from pick_exceptions) e`.execute(t.db);
    await sql`analyze pick_exceptions, order_blocks`.execute(t.db);
  })();
  return exceptionsLoaded;
}

test('the exception list\'s total by partner and status is read from the kept counts (migration 0040), its rows joined for the page only', { skip: onPostgres ? false : 'needs TEST_DATABASE_URL' }, async () => {
  await loadExceptions();
  for (const [url, where] of [
    ['/api/v1/exceptions?per_page=5&page=7', sql`true`],
    ['/api/v1/exceptions?status=open&per_page=5&page=7', sql`status = 'open'`],
  ] as const) {
    captured.length = 0;
    const answer = await call(t.app, 'GET', url, { key: t.adminKey });
    assert.equal(answer.status, 200, url);
    const compiled = captured.map((node) => t.db.getExecutor().compileQuery(node, createQueryId()).sql);
    assert.ok(compiled.some((q) => /\(select coalesce\(sum\(n\), 0\)::int from list_counts where list = 'exceptions'.*\) as "total_count"/.test(q)), compiled.join('\n'));
    assert.ok(!compiled.some((q) => /count\(\*\)/.test(q)), compiled.join('\n'));
    // The orders (and every other joined table) are read for the page's five exceptions, not the 30 the offset skips.
    const node = captured[compiled.findIndex((q) => q.includes('"pick_exceptions"') && q.includes('"orders"'))]!;
    const analyzed = await planOf(t.db, t.db.getExecutor().compileQuery(node, createQueryId()), { analyze: true });
    assert.deepEqual(nodesOf(analyzed).filter((n) => n['Relation Name'] === 'orders').map((n) => n['Actual Loops']), [5], url);
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from pick_exceptions where ${where}`.execute(t.db);
    assert.deepEqual([answer.body.meta.total_count, answer.body.data.length], [rows[0]!.n, 5], url);
  }
});

test('the awaiting filter reads only the blocks that wait (migration 0041): its total not waiting is the kept total less them', { skip: onPostgres ? false : 'needs TEST_DATABASE_URL' }, async () => {
  await loadExceptions();
  const waiting = sql`exists (select 1 from order_blocks k where k.short_pick_exception_id = pick_exceptions.id and k.status = 'open' and k.awaiting_supply_partner_at is not null)`;
  for (const [url, where] of [
    ['/api/v1/exceptions?awaiting_supply_partner=0&per_page=5&page=7', sql`not ${waiting}`],
    ['/api/v1/exceptions?awaiting_supply_partner=1&per_page=5&page=7', waiting],
  ] as const) {
    captured.length = 0;
    const answer = await call(t.app, 'GET', url, { key: t.adminKey });
    assert.equal(answer.status, 200, url);
    const compiled = captured.map((node) => t.db.getExecutor().compileQuery(node, createQueryId()).sql);
    const index = compiled.findIndex((q) => q.includes('"pick_exceptions"') && q.includes('"orders"'));
    if (url.includes('=0')) assert.match(compiled[index]!, /\(\(select coalesce\(sum\(n\), 0\)::int from list_counts where list = 'exceptions'\) - \(select count\(\*\)/, url);
    const analyzed = await planOf(t.db, t.db.getExecutor().compileQuery(captured[index]!, createQueryId()), { analyze: true });
    // The filter's blocks come from the index of the few that wait, wherever it is asked; the page is joined for its
    // five rows only.
    const nodes = nodesOf(analyzed);
    assert.deepEqual(nodes.filter((n) => n['Relation Name'] === 'order_blocks' && n['Node Type'] === 'Seq Scan'), [], url);
    assert.ok(nodes.some((n) => n['Index Name'] === 'order_blocks_awaiting_idx'), url);
    const otherBlockIndexes = nodes.filter((n) => String(n['Index Name'] ?? '').startsWith('order_blocks_') && n['Index Name'] !== 'order_blocks_awaiting_idx');
    assert.ok(otherBlockIndexes.length > 0 && otherBlockIndexes.every((n) => n['Actual Loops'] === 5), url);
    assert.deepEqual(nodes.filter((n) => n['Relation Name'] === 'orders').map((n) => n['Actual Loops']), [5], url);
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from pick_exceptions where ${where}`.execute(t.db);
    assert.deepEqual([answer.body.meta.total_count, answer.body.data.length], [rows[0]!.n, 5], url);
  }
});

test('velocity is read from the kept year: its bucket\'s index, no ledger, the maintained total; before the year moves on, the ledger once a request', { skip: onPostgres ? false : 'needs TEST_DATABASE_URL' }, async () => {
  const urls = ['/api/v1/items?velocity=fast', '/api/v1/items?velocity=slow&page=3', '/api/v1/items?velocity=dead'];
  const sent = () => {
    // The recorder sees subqueries as well: the statements sent are the ones no other contains.
    const all = captured.map((node) => t.db.getExecutor().compileQuery(node, createQueryId()).sql);
    return all.filter((q) => !all.some((other) => other !== q && other.includes(q)));
  };
  for (const url of urls) {
    const plans = await plansOf(url);
    const compiled = sent();
    assert.deepEqual(compiled.filter((q) => q.includes('inventory_movements')), [], url);
    assert.ok(compiled.some((q) => q.includes("from list_counts where list = 'items'")), url);
    const indexes = plans.flatMap(({ plan }) => indexReadsOf(plan)).join(', ');
    if (url.includes('fast')) assert.match(indexes, /item_stock_state_fast_idx/, url);
    if (url.includes('slow')) assert.match(indexes, /item_stock_state_slow_idx/, url);
  }
  const { rows: [year] } = await sql<{ starts_on: string }>`select starts_on::text from shipped_year`.execute(t.db);
  await sql`update shipped_year set starts_on = starts_on - 1`.execute(t.db);
  try {
    for (const url of urls.slice(0, 2)) {
      captured.length = 0;
      assert.equal((await call(t.app, 'GET', url, { key: t.adminKey })).status, 200, url);
      const compiled = sent();
      const sums = compiled.flatMap((q) => q.match(/having sum\(-m\.quantity\)/g) ?? []);
      assert.deepEqual([compiled.filter((q) => q.includes('inventory_movements')).length, sums.length], [1, 1], compiled.join('\n'));
      assert.ok(compiled.some((q) => q.includes('count(*) over ()')), url);
    }
  } finally {
    await sql`update shipped_year set starts_on = ${year!.starts_on}::date`.execute(t.db);
  }
});

test('the webhook delivery log\'s total by status is read from the kept counts (migration 0037), its page from the log\'s index', { skip: onPostgres ? false : 'needs TEST_DATABASE_URL' }, async () => {
  // 20,000 deliveries over the last 20 days, 1% failed, as a subscription to every event leaves them; pages of 50.
  const { rows: [subscription] } = await sql<{ id: string }>`insert into webhook_subscriptions (url, event_kinds, secret_sealed, is_active)
    values ('https://receiver.example/plans', '{*}', 'sealed', false) returning id`.execute(t.db);
  await sql`insert into webhook_deliveries (subscription_id, event_seq, event_id, event_kind, status, attempts, created_at)
    select ${subscription!.id}, n, gen_random_uuid(), 'inventory.adjusted', case when n % 100 = 0 then 'failed' else 'delivered' end, 1,
      now() - make_interval(secs => (20000 - n) * 86.4)
    from generate_series(1, 20000) n`.execute(t.db);
  await sql`analyze webhook_deliveries`.execute(t.db);
  for (const [query, where] of [['', sql`true`], ['?status=failed', sql`status = 'failed'`]] as const) {
    const url = `/api/v1/webhooks/${subscription!.id}/deliveries${query}`;
    const plans = await plansOf(url);
    assert.deepEqual(plans.flatMap(({ plan }) => seqScans(plan)), [], url);
    const compiled = captured.map((node) => t.db.getExecutor().compileQuery(node, createQueryId()).sql);
    assert.ok(compiled.some((q) => /\(select coalesce\(sum\(n\), 0\)::int from list_counts where list = 'deliveries' and .*\) as "total_count" from \(select .* from "webhook_deliveries"/.test(q)), compiled.join('\n'));
    assert.ok(!compiled.some((q) => /count\(\*\)[^;]* from "webhook_deliveries"/.test(q)), compiled.join('\n'));
    const answer = await call(t.app, 'GET', url, { key: t.adminKey });
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from webhook_deliveries where subscription_id = ${subscription!.id} and ${where}`.execute(t.db);
    assert.deepEqual([answer.body.meta.total_count, answer.body.data.length], [rows[0]!.n, 50], url);
  }
});

test('a page of a stock filter or sort whose rows\' texts are known reads the stock state and partners alone, no items row', { skip: onPostgres ? false : 'needs TEST_DATABASE_URL' }, async () => {
  // Its rows' versions are their mirror rows' (migration 0031); the first request reads the rows and keeps their texts.
  // The second asks for the same page by another URL, which the read cache has not answered.
  for (const url of ['/api/v1/items?filter=below_reorder&per_page=50', '/api/v1/items?sort=on_hand_desc&per_page=50']) {
    await plansOf(url);
    const plans = await plansOf(`${url}&page=1`);
    assert.equal(plans.length, 1, `one statement: ${plans.map((p) => p.sql).join('\n')}`);
    assert.deepEqual([...new Set(relationsOf(plans[0]!.plan))].sort(), ['item_stock_state', 'list_counts', 'manufacturers'], url);
  }
});

test('the event poll\'s total is read from the kept counts (migration 0026) with its page, and the page from the inbox\'s index', { skip: onPostgres ? false : 'needs TEST_DATABASE_URL' }, async () => {
  // 20,000 unacknowledged events in the warehouse's stream: a stream nobody polls.
  await sql`with e as (insert into outbox_events (kind, data) select 'webhook.ping', jsonb_build_object('subscription_id', gen_random_uuid(), 'message', 'ping ' || g) from generate_series(1, 20000) g
    returning seq, kind) insert into event_inbox (tenant, event_seq, kind) select 'warehouse', seq, kind from e`.execute(t.db);
  await sql`analyze outbox_events, event_inbox`.execute(t.db);
  captured.length = 0;
  const answer = await call(t.app, 'GET', '/api/v1/shipments/events?per_page=5', { key: t.adminKey });
  assert.equal(answer.status, 200);
  const compiled = captured.map((node) => t.db.getExecutor().compileQuery(node, createQueryId()))
    .filter((q) => q.sql.includes('list_counts'));
  assert.ok(!compiled.some((q) => /count\(\*\)/i.test(q.sql)), 'nothing is counted');
  // One round trip: the page's statement (its events joined to the inbox's page) carries the total.
  assert.equal(compiled.length, 1, compiled.map((q) => q.sql).join('\n'));
  assert.match(compiled[0]!.sql, /from \(select "i"."event_seq" from "event_inbox" as "i" .*\) as "p" inner join "outbox_events"/);
  assert.match(compiled[0]!.sql, /\(select coalesce\(sum\(n\), 0\)::int from list_counts where .*\) as "total_count"/);
  const { rows } = await sql<{ n: number }>`select count(*)::int as n from event_inbox where tenant = 'warehouse'`.execute(t.db);
  assert.equal(answer.body.meta.total_count, rows[0]!.n);
  assert.ok(rows[0]!.n >= 20_000);
  const scans = scansOf(await planOf(t.db, compiled[0]!));
  assert.deepEqual(scans.filter((s) => s.relation === 'event_inbox').map((s) => s.type), ['Index Scan'], JSON.stringify(scans));
  // Months without events may be read whole (nothing to read); the month holding them only by its index.
  for (const scan of scans.filter((s) => s.type === 'Seq Scan')) {
    const { rows: [held] } = await sql<{ n: number }>`select count(*)::int as n from ${sql.table(scan.relation)}`.execute(t.db);
    assert.equal(held!.n, 0, `${scan.relation} read whole`);
  }
});

test('a ledger or report over a date range reads only the months of its range', { skip: onPostgres ? false : 'needs TEST_DATABASE_URL' }, async () => {
  // The generated movements are 60, 120 and 180 days old: a range around the 120-day ones lies in one or two months.
  const [from, to] = [day(125), day(115)];
  const wanted = new Set([from, to].map((date) => `inventory_movements_${date.slice(0, 4)}_${date.slice(5, 7)}`));
  for (const url of [
    `/api/v1/inventory/movements?from=${from}&to=${to}`, `/api/v1/inventory/movements?manufacturer=${partner}&from=${from}&to=${to}`,
    `/api/v1/reports/movements?from=${from}&to=${to}`, `/api/v1/reports/velocity?from=${from}&to=${to}`,
  ]) {
    const months = (await plansOf(url)).flatMap(({ plan }) => relationsOf(plan)).filter((name) => name.startsWith('inventory_movements_'));
    assert.ok(months.length > 0, `${url} reads the ledger`);
    assert.deepEqual([...new Set(months)].filter((name) => !wanted.has(name)), [], `${url} reads only ${[...wanted]}`);
  }
});

test('a consignor statement reads its page\'s movements item by item through the ledger\'s item index, with the plan it keeps', { skip: onPostgres ? false : 'needs TEST_DATABASE_URL' }, async () => {
  captured.length = 0;
  const answer = await call(t.app, 'GET', `/api/v1/manufacturers/${partner}/statement?from=${day(364)}&to=${day(0)}`, { key: t.adminKey });
  assert.equal(answer.status, 200);
  assert.ok(answer.body.data.items.some((item: { movements: unknown[] }) => item.movements.length > 0), 'the page has movements');
  // From its sixth call on the statement runs with its generic plan, which knows neither the page's length nor the period.
  const pageMovements = (await plansOfRecorded(t.db, captured, { kept: true })).filter(({ sql: text }) => text.includes('performed_by_name'));
  assert.equal(pageMovements.length, 1);
  // The months that hold thousands of movements (a month of a few rows is rightly read whole).
  const { rows: large } = await sql<{ name: string }>`select relname as name from pg_class where relname like 'inventory_movements_2%' and relkind = 'r' and reltuples > 1000`.execute(t.db);
  const months = scansOf(pageMovements[0]!.plan).filter((scan) => large.some((month) => month.name === scan.relation));
  assert.ok(months.length >= 3, months.map((scan) => scan.relation).join());
  for (const scan of months) assert.match(scan.index ?? scan.type, /_item_id_/, `${scan.relation}: ${scan.type} ${scan.index ?? ''}`);
});

test('a stock write\'s answer is made from the rows it wrote: the ledger is not read back, and shows the same row', { skip: onPostgres ? false : 'needs TEST_DATABASE_URL' }, async () => {
  const item = await createItem(t, partner, 'PLAN-ADJ');
  const bin = await createLocation(t, 'PLAN-BIN-1');
  captured.length = 0;
  const answer = await adjust(t, item, 5, bin);
  assert.equal(answer.status, 201);
  // A read back by id would be planned over the ledger's months on every call (0.8 ms at 29 months, more than the write).
  const reads = (await plansOfRecorded(t.db, captured)).filter(({ sql: text }) => /^\s*select/i.test(text) && text.includes('"inventory_movements"'));
  assert.deepEqual(reads.map(({ sql: text }) => text), []);
  const ledger = await call(t.app, 'GET', `/api/v1/inventory/movements?item=${item}`, { key: t.adminKey });
  assert.deepEqual(ledger.body.data, [answer.body.data]);
});

test('a one-line stock change and commitment keep their plans: PostgreSQL stops planning them after its trial runs', { skip: onPostgres ? false : 'needs TEST_DATABASE_URL' }, async () => {
  const item = await createItem(t, partner, 'PLAN-KEPT');
  const bin = await createLocation(t, 'PLAN-BIN-2');
  const { rows: [user] } = await sql<{ id: string; name: string }>`select id, name from users order by created_at limit 1`.execute(t.db);
  const author = { userId: user!.id, userName: user!.name, apiKeyId: null };
  await withOneConnection(async (single) => {
    for (let run = 0; run < 8; run++) {
      await inTransaction(single.db, async (tx) => {
        await adjustStock(tx, author, { itemId: item, locationId: bin, quantity: 1, movementType: 'adjustment', reason: 'plan', referenceType: 'inventory_adjustment' });
        await commitStock(tx, [{ itemId: item, quantity: 1, allowNegative: false }]);
      });
    }
    const { rows } = await sql<{ statement: string; generic_plans: number; custom_plans: number }>`
      select statement, generic_plans, custom_plans from pg_prepared_statements
      where statement ~ '(from items[[:space:]]+where id = any|insert into item_locations|with updated as|with locked as materialized)'
        and statement not like '%pg_prepared_statements%'`.execute(single.db);
    // The item locks, the bin, the movement with on-hand and history, and the commitment.
    assert.equal(rows.length, 4, rows.map((row) => `${row.generic_plans}/${row.custom_plans} ${row.statement.trim().slice(0, 60)}`).join(' | '));
    assertPlansKept(rows);
  });
});

test('the first page of a screen\'s list keeps its plan: PostgreSQL stops planning it after its trial runs', { skip: onPostgres ? false : 'needs TEST_DATABASE_URL' }, async () => {
  await withOneConnection(async (single) => {
    const staff = { manufacturerId: null } as Actor;
    const firstPage = pageOf({}, 50);
    const texts = new RowTexts();
    for (let run = 0; run < 8; run++) {
      await listItems(single.db, staff, { filter: ['below_reorder'] }, firstPage, texts);
      await listItems(single.db, staff, { manufacturer: partner }, firstPage, texts);
      await listOrders(single.db, staff, { statuses: ['entered', 'released', 'partial'], priorities: [] }, firstPage, texts);
    }
    const { rows } = await sql<{ statement: string; generic_plans: number; custom_plans: number }>`
      select statement, generic_plans, custom_plans from pg_prepared_statements
      where statement like '%total_count%'`.execute(single.db);
    assert.equal(rows.length, 3, rows.map((row) => row.statement).join('\n'));
    assertPlansKept(rows);
  });
});

test('a set of statuses or stock filters is one statement whatever its order or repeats', { skip: onPostgres ? false : 'needs TEST_DATABASE_URL' }, async () => {
  await withOneConnection(async (single) => {
    const staff = { manufacturerId: null } as Actor;
    const firstPage = pageOf({}, 50);
    const texts = new RowTexts();
    const totals = new Set<number>();
    for (const [status, filter] of [
      [['active', 'discontinued'], ['below_reorder', 'negative']], [['discontinued', 'active'], ['negative', 'below_reorder']],
      [['active', 'discontinued', 'active'], ['negative', 'below_reorder', 'negative']],
    ] as const) {
      totals.add((await listItems(single.db, staff, { status: [...status], filter: [...filter] }, firstPage, texts)).total);
    }
    await listOrders(single.db, staff, { statuses: ['released', 'entered'], priorities: ['rush', 'high'] }, firstPage, texts);
    await listOrders(single.db, staff, { statuses: ['entered', 'released'], priorities: ['high', 'rush'] }, firstPage, texts);
    assert.equal(totals.size, 1, 'the same list');
    const { rows } = await sql<{ statement: string }>`select statement from pg_prepared_statements where statement like '%total_count%'`.execute(single.db);
    assert.equal(rows.length, 2, rows.map((row) => row.statement).join('\n'));
  });
});

test('an order\'s commitment locks its items in id order before the update reads a row (a one-time filter over the locks)', { skip: onPostgres ? false : 'needs TEST_DATABASE_URL' }, async () => {
  const items = (await sql<{ id: string }>`select id from items where manufacturer_id = ${partner} limit 3`.execute(t.db)).rows.map((row) => row.id);
  await sql`update items set qty_on_hand = 100 where id = any(${items}::uuid[])`.execute(t.db);
  captured.length = 0;
  const answer = await call(t.app, 'POST', '/api/v1/orders', {
    key: t.adminKey, body: { manufacturer_id: partner, customer_id: customer, lines: items.map((item_id) => ({ item_id, qty_ordered: 1 })) },
  });
  assert.equal(answer.status, 201);
  const commitment = captured.map((node) => t.db.getExecutor().compileQuery(node, createQueryId()))
    .find((query) => query.sql.includes('with locked as materialized'));
  assert.ok(commitment, 'the commitment ran');
  const plan = await t.db.connection().execute(async (connection) => {
    await sql.raw(`prepare commit_probe as ${commitment.sql}`).execute(connection);
    try {
      const values = commitment.parameters.map(literal);
      return (await sql.raw<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(`explain (format json) execute commit_probe(${values.join(', ')})`)
        .execute(connection)).rows[0]!['QUERY PLAN'][0].Plan;
    } finally {
      await sql`deallocate commit_probe`.execute(connection);
    }
  });
  // Update <- Result with the one-time filter over the InitPlan counting `locked` <- the scan of the rows to update.
  const gate = plan.Plans?.find((node) => node['Node Type'] === 'Result');
  assert.ok(gate && gate['One-Time Filter'], JSON.stringify(plan));
  const lockRows = plan.Plans?.find((node) => node['Subplan Name'] === 'CTE locked');
  assert.equal(lockRows?.['Node Type'], 'LockRows', JSON.stringify(plan));
});

interface PlanNode {
  'Node Type': string;
  'Subplan Name'?: string;
  'One-Time Filter'?: string;
  Plans?: PlanNode[];
}

test('statements without parameters are named (plan kept) up to 1,000 a pool, then sent as text', { skip: onPostgres ? false : 'needs TEST_DATABASE_URL' }, async () => {
  await withOneConnection(async (single) => {
    for (let n = 0; n < 1010; n++) await sql.raw(`select ${n} as probe_${n}`).execute(single.db);
    // Named twice over: run again, still one prepared statement each.
    await sql.raw('select 0 as probe_0').execute(single.db);
    const { rows: [prepared] } = await sql<{ n: number }>`select count(*)::int as n from pg_prepared_statements where statement like 'select % as probe_%'`.execute(single.db);
    assert.equal(prepared!.n, 1000);
    // Scripts and transaction control stay text.
    await sql.raw('select 1 as script_a; select 2 as script_b').execute(single.db);
    const { rows: [scripts] } = await sql<{ n: number }>`select count(*)::int as n from pg_prepared_statements where statement like '%script_%'`.execute(single.db);
    assert.equal(scripts!.n, 0);
  });
});

test('a statement marked PLANNED_EACH_TIME keeps no plan, with or without parameters, and answers as any other', { skip: onPostgres ? false : 'needs TEST_DATABASE_URL' }, async () => {
  await withOneConnection(async (single) => {
    const { rows } = await sql<{ each_time_a: number }>`select 1 as each_time_a ${PLANNED_EACH_TIME}`.execute(single.db);
    assert.deepEqual(rows, [{ each_time_a: 1 }]);
    await sql`select ${2}::int as each_time_b ${PLANNED_EACH_TIME}`.execute(single.db);
    await sql`select 3 as kept_c`.execute(single.db);
    const { rows: prepared } = await sql<{ statement: string }>`select statement from pg_prepared_statements
      where statement like '%each_time_%' or statement like '%kept_c%'`.execute(single.db);
    assert.deepEqual(prepared.map((row) => row.statement), ['select 3 as kept_c']);
  });
});
