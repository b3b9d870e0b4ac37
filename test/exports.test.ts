// Exports: `Accept: text/csv` on the item list, the order list, the two ledgers and the reports answers every matching
// row (past the page size and past one cursor batch), with the same filters and partner scope as the JSON; an Accept a
// route cannot meet is 406; a client that goes away mid-export leaves no transaction open.
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { parse } from 'csv-parse/sync';
import { sql } from 'kysely';
import { waitFor } from './fault-kit.ts';
import { adjust, call, createItem, createLocation, createManufacturer, startApp, userWithKey, type TestApp } from './helpers.ts';

let t: TestApp;
let acme: string;
let bolt: string;
let partnerKey: string;
const BULK = 2_100; // several cursor batches of 250

/** A GET with an Accept header, answered as text. */
async function get(url: string, accept: string | undefined, key = t.adminKey) {
  const answer = await t.app.inject({ method: 'GET', url: `/api/v1${url}`, headers: { authorization: `Bearer ${key}`, ...(accept !== undefined ? { accept } : {}) } });
  return { status: answer.statusCode, type: String(answer.headers['content-type']), disposition: answer.headers['content-disposition'], text: answer.body };
}

const csvRows = (text: string) => parse(text, { columns: true }) as Record<string, string>[];

/** The export of a list: 200 and its rows. */
async function exported(url: string, key = t.adminKey) {
  const answer = await get(url, 'text/csv', key);
  assert.equal(answer.status, 200, `${url}: ${answer.text.slice(0, 300)}`);
  return csvRows(answer.text);
}

/** Every page of a JSON list, concatenated. */
async function allPages(url: string, key = t.adminKey) {
  const rows: Record<string, unknown>[] = [];
  for (let page = 1; ; page++) {
    const answer = await call(t.app, 'GET', `/api/v1${url}${url.includes('?') ? '&' : '?'}per_page=100&page=${page}`, { key });
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    rows.push(...answer.body.data);
    if (page >= answer.body.meta.total_pages) return rows;
  }
}

before(async () => {
  t = await startApp();
  acme = await createManufacturer(t, 'EXPA');
  const other = await createManufacturer(t, 'EXPB');
  const bin = await createLocation(t, 'E-01-01');
  bolt = await createItem(t, acme, 'EX-BOLT', { description: '=cmd|calc', selling_uom: 'EA' });
  await createItem(t, other, 'EX-OTHER');
  assert.equal((await adjust(t, bolt, 40, bin)).status, 201);
  assert.equal((await adjust(t, bolt, -3, bin)).status, 201);
  // Many items of one partner at once (the API would take a minute): the export must cross several cursor batches.
  await sql`insert into items (manufacturer_id, item_number_display, item_number_normalized, description, status)
    select ${acme}, 'BULK-' || lpad(g::text, 5, '0'), 'BULK' || lpad(g::text, 5, '0'), 'Bulk item ' || g, 'active'
    from generate_series(1, ${BULK}) g`.execute(t.db);
  partnerKey = (await userWithKey(t, 'consignor', { manufacturerId: other, scopes: ['inventory.view', 'orders.view'] })).key;
});
after(() => t.close());

describe('the item list', () => {
  test('exports every matching item as CSV, past the page and the cursor batch, in the list\'s order', async () => {
    const answer = await get('/items?manufacturer=' + acme, 'text/csv');
    assert.equal(answer.status, 200, answer.text.slice(0, 300));
    assert.match(answer.type, /^text\/csv; charset=utf-8/);
    assert.match(String(answer.disposition), /attachment; filename="items.csv"/);
    assert.equal((await t.app.inject({ method: 'GET', url: '/api/v1/items?per_page=1', headers: { authorization: `Bearer ${t.adminKey}` } })).headers.vary, 'Accept',
      'a cache keeps the JSON and the CSV apart');
    const rows = csvRows(answer.text);
    assert.equal(rows.length, BULK + 1);
    const json = await call(t.app, 'GET', `/api/v1/items?manufacturer=${acme}&per_page=100`, { key: t.adminKey });
    assert.equal(json.body.meta.total_count, rows.length);
    assert.deepEqual(rows.slice(0, 100).map((row) => row.id), json.body.data.map((item: { id: string }) => item.id));
    // The columns are the fields a list row fills, with the JSON's values; a cell a spreadsheet would run as a formula is quoted.
    assert.deepEqual(Object.keys(rows[0]!), ['id', 'manufacturer_id', 'item_number_display', 'description', 'category', 'selling_uom',
      'warehouse_location', 'price_1', 'qty_on_hand', 'qty_committed', 'reorder_level', 'qty_available', 'status', 'date_last_movement',
      'created_at', 'updated_at', 'manufacturer_code', 'manufacturer_name']);
    for (const [field, value] of Object.entries(rows[0]!)) assert.equal(value, String(json.body.data[0][field] ?? ''), field);
    const exported = rows.find((row) => row.id === bolt)!;
    assert.equal(exported.description, '\'=cmd|calc');
    assert.equal(exported.qty_on_hand, '37');
  });

  test('applies the filters and the partner scope of the JSON list', async () => {
    const filtered = await exported('/items?q=EX-&status=active');
    assert.deepEqual(filtered.map((row) => row.item_number_display).sort(), ['EX-BOLT', 'EX-OTHER']);
    const scoped = await exported('/items', partnerKey);
    assert.deepEqual(scoped.map((row) => row.item_number_display), ['EX-OTHER']);
    const stocked = await exported('/items?sort=on_hand_desc&filter=missing_price');
    assert.deepEqual(stocked.map((row) => row.id), (await allPages('/items?sort=on_hand_desc&filter=missing_price')).map((row) => row.id));
  });

  test('is never answered from the read cache, which keeps JSON only', async () => {
    const url = `/items?manufacturer=${acme}&per_page=5`;
    await get(url, undefined);
    const json = await get(url, undefined);
    assert.match(json.type, /application\/json/);
    const csv = await get(url, 'text/csv');
    assert.match(csv.type, /text\/csv/);
    assert.equal(csvRows(csv.text).length, BULK + 1, 'all rows, not the cached page');
  });
});

describe('the order list and the ledgers', () => {
  test('orders: every order the filters match, the same rows as the JSON pages', async () => {
    const customer = await call(t.app, 'POST', '/api/v1/customers', {
      key: t.adminKey, body: { account_number: 'EX-1', name: 'Export Supply', address_line_1: '1 Main St', city: 'Springfield', state: 'IL', zip_code: '62701' },
    });
    for (let i = 0; i < 3; i++) {
      const entered = await call(t.app, 'POST', '/api/v1/orders', {
        key: t.adminKey, body: { manufacturer_id: acme, customer_id: customer.body.data.id, lines: [{ item_id: bolt, qty_ordered: 1, unit_price: 2 }] },
      });
      assert.equal(entered.status, 201, JSON.stringify(entered.body));
    }
    const rows = await exported(`/orders?manufacturer=${acme}&status=open`);
    const pages = await allPages(`/orders?manufacturer=${acme}&status=open`);
    assert.equal(rows.length, 3);
    assert.deepEqual(rows.map((row) => row.id), pages.map((row) => row.id));
    assert.deepEqual(rows.map((row) => row.status), ['entered', 'entered', 'entered']);
    assert.equal((await exported('/orders', partnerKey)).length, 0, 'another partner\'s orders are not exported');
  });

  test('the movement ledger and the adjustments ledger, with their filters', async () => {
    const movements = await exported(`/inventory/movements?item=${bolt}`);
    assert.deepEqual(movements.map((row) => [row.movement_type, row.quantity, row.balance_after]), [['adjustment', '-3', '37'], ['adjustment', '40', '40']]);
    const stored = await t.db.selectFrom('inventory_movements').select('id').where('item_id', '=', bolt).orderBy('seq', 'desc').execute();
    assert.deepEqual(movements.map((row) => row.id), stored.map((row) => row.id));
    assert.equal((await exported(`/inventory/adjustments?item=${bolt}`)).length, 2);
    assert.equal((await exported('/inventory/movements', partnerKey)).length, 0);
  });
});

describe('reports', () => {
  test('a report exports all its rows, not the page', async () => {
    const json = await call(t.app, 'GET', `/api/v1/reports/stock-status?manufacturer=${acme}&per_page=10`, { key: t.adminKey });
    assert.equal(json.status, 200, JSON.stringify(json.body));
    assert.ok(json.body.meta.total_count > 10);
    const csv = await get(`/reports/stock-status?manufacturer=${acme}&per_page=10`, 'text/csv');
    assert.match(String(csv.disposition), /filename="stock-status.csv"/);
    const rows = csvRows(csv.text);
    assert.equal(rows.length, json.body.meta.total_count);
    // Booleans as the JSON has them, not 1 and an empty cell.
    assert.deepEqual([...new Set(rows.map((row) => row.below_reorder))].sort(), [...new Set(json.body.data.map((row: { below_reorder: boolean }) => String(row.below_reorder)))].sort());
    assert.ok(rows.every((row) => row.below_reorder === 'true' || row.below_reorder === 'false'));
  });

  test('the consignor statement exports every item of the period, not the page', async () => {
    const bin = await createLocation(t, 'E-02-01');
    for (const number of ['EX-S1', 'EX-S2']) assert.equal((await adjust(t, await createItem(t, acme, number), 5, bin)).status, 201);
    const json = await call(t.app, 'GET', `/api/v1/manufacturers/${acme}/statement?per_page=1`, { key: t.adminKey });
    assert.equal(json.status, 200, JSON.stringify(json.body));
    assert.equal(json.body.meta.total_count, 3);
    const rows = await exported(`/manufacturers/${acme}/statement?per_page=1`);
    assert.deepEqual(rows.filter((row) => row.entry === 'opening').map((row) => row.item_number_display).sort(), ['EX-BOLT', 'EX-S1', 'EX-S2']);
  });
});

describe('Accept', () => {
  test('a type the route cannot produce is 406 in the envelope; */* and no Accept are JSON', async () => {
    for (const [url, accept] of [['/items', 'application/xml'], [`/items/${bolt}`, 'text/csv'], ['/reports/stock-status', 'text/html'], ['/orders', 'application/pdf']] as const) {
      const answer = await get(url, accept);
      assert.equal(answer.status, 406, `${url} ${accept}: ${answer.text}`);
      assert.equal(JSON.parse(answer.text).error.code, 'not_acceptable');
    }
    for (const accept of ['*/*', 'application/json', 'application/json; charset=utf-8', 'text/csv;q=0.5, application/json', '', undefined]) {
      const answer = await get('/items?per_page=1', accept);
      assert.equal(answer.status, 200);
      assert.match(answer.type, /application\/json/, String(accept));
    }
    assert.match((await get('/items?per_page=1', 'text/csv; charset=utf-8')).type, /^text\/csv/, 'a parameter does not hide the type');
  });
});

describe('exports that hold a connection', { skip: process.env.TEST_DATABASE_URL ? false : 'needs the server (pg_stat_activity)' }, () => {
  /** Sessions of this database inside an export, waiting for its client to read (the cursor's transaction is open). */
  const exportSessions = async () => (await sql<{ open: number }>`select count(*)::int as open from pg_stat_activity
    where datname = current_database() and state like 'idle in transaction%' and query like 'fetch forward%'`.execute(t.db)).rows[0]!.open;

  test('three at once; a fourth is 503; a client that stops reading and goes away ends its export\'s transaction', async () => {
    // Far more than the loopback socket buffers hold, so an export whose client does not read waits with its cursor open.
    await sql`insert into items (manufacturer_id, item_number_display, item_number_normalized, description, status)
      select ${acme}, 'MANY-' || lpad(g::text, 6, '0'), 'MANY' || lpad(g::text, 6, '0'), repeat('Wide description ', 10) || g, 'active'
      from generate_series(1, 40000) g`.execute(t.db);
    const url = await t.app.listen({ host: '127.0.0.1', port: 0 });
    const open = (): Promise<{ status: number; abort: () => void }> => new Promise((resolve, reject) => {
      const request = httpRequest(`${url}/api/v1/items`, { headers: { authorization: `Bearer ${t.adminKey}`, accept: 'text/csv' } }, (response) => {
        // Nothing is read: the service's writes stall once the socket is full.
        response.pause();
        resolve({ status: response.statusCode!, abort: () => request.destroy() });
      });
      request.on('error', (error) => (error.message.includes('socket hang up') ? undefined : reject(error)));
      request.end();
    });
    const stalled = [await open(), await open(), await open()];
    assert.deepEqual(stalled.map((s) => s.status), [200, 200, 200]);
    await waitFor(async () => (await exportSessions()) === 3, 10_000, 'three exports waiting for their clients');
    const fourth = await get('/items', 'text/csv');
    assert.equal(fourth.status, 503);
    assert.equal(JSON.parse(fourth.text).error.code, 'unavailable');
    // The JSON list is still answered meanwhile.
    assert.equal((await get('/items?per_page=1', undefined)).status, 200);

    for (const s of stalled) s.abort();
    await waitFor(async () => (await exportSessions()) === 0, 10_000, 'the exports\' transactions to end');
    assert.equal((await get(`/items?manufacturer=${acme}&q=EX-BOLT`, 'text/csv')).status, 200, 'a new export runs again');
  });
});
