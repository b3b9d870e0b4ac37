// Adjustments through the stock mover: bins, on-hand, the ledger and its invariant, history, events, concurrency.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { adjust, call, createItem, createLocation, createManufacturer, expectError, onPostgres, startApp, userWithKey, type TestApp } from './helpers.ts';

let t: TestApp;
let partner: string;
let binA: string;
let binB: string;
before(async () => {
  t = await startApp();
  partner = await createManufacturer(t, 'STOCK');
  binA = await createLocation(t, 'S-A-01');
  binB = await createLocation(t, 'S-B-01');
});
after(() => t.close());

const item = (id: string) => t.db.selectFrom('items').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const bins = (id: string) => t.db.selectFrom('item_locations').selectAll().where('item_id', '=', id).orderBy('created_at').execute();
const ledger = (id: string) => t.db.selectFrom('inventory_movements').selectAll().where('item_id', '=', id).orderBy('seq').execute();

/** Each row's balance_after is the previous one's plus its quantity, and the last is the item's on-hand. */
async function assertLedgerChains(itemId: string) {
  const rows = await ledger(itemId);
  let balance = 0;
  for (const row of rows) {
    balance += row.quantity;
    assert.equal(row.balance_after, balance, `movement ${row.seq}`);
  }
  assert.equal((await item(itemId)).qty_on_hand, balance);
}

describe('adjustments', () => {
  test('a positive adjustment fills a bin (the item’s first becomes primary), raises on-hand, writes ledger, history and event', async () => {
    const id = await createItem(t, partner, 'ADJ-1');
    const answer = await adjust(t, id, 12, binA);
    assert.equal(answer.status, 201);
    const movement = answer.body.data;
    assert.equal(movement.movement_type, 'adjustment');
    assert.equal(movement.quantity, 12);
    assert.equal(movement.balance_after, 12);
    assert.equal(movement.item_number_display, 'ADJ-1');
    assert.equal(movement.manufacturer_name, 'STOCK Inc.');
    assert.equal(movement.performed_by_name, 'admin');
    assert.equal(movement.reason, 'test');
    assert.equal(movement.reference_id, movement.id);

    const stored = await item(id);
    assert.equal(stored.qty_on_hand, 12);
    assert.equal(stored.qty_available, 12);
    assert.ok(stored.date_last_movement);
    const [bin] = await bins(id);
    assert.equal(bin!.location_id, binA);
    assert.equal(bin!.qty_on_hand, 12);
    assert.equal(bin!.is_primary, true);
    const history = await t.db.selectFrom('history').selectAll().where('entity_id', '=', id).where('action', '=', 'adjustment').execute();
    assert.equal(history.length, 1);
    const events = await t.db.selectFrom('outbox_events').selectAll().where('kind', '=', 'inventory.adjusted').execute();
    assert.ok(events.some((e) => (e.data as { movement_id: string }).movement_id === movement.id && e.manufacturer_id === partner));
  });

  test('without location_id the primary bin is used; an item without bins needs one (422)', async () => {
    const id = await createItem(t, partner, 'ADJ-2');
    expectError(await adjust(t, id, 5), 422, 'invalid_request');
    await adjust(t, id, 5, binB);
    await adjust(t, id, 3, binA);
    const answer = await adjust(t, id, -2);
    assert.equal(answer.status, 201);
    const byLocation = Object.fromEntries((await bins(id)).map((b) => [b.location_id, [b.qty_on_hand, b.is_primary]]));
    assert.deepEqual(byLocation[binB], [3, true]);
    assert.deepEqual(byLocation[binA], [3, false]);
    await assertLedgerChains(id);
  });

  test('a bin cannot go below zero: 422 insufficient_stock, nothing changed', async () => {
    const id = await createItem(t, partner, 'ADJ-3');
    await adjust(t, id, 4, binA);
    const before = await ledger(id);
    expectError(await adjust(t, id, -5, binA), 422, 'insufficient_stock');
    expectError(await adjust(t, id, -1, binB), 422, 'insufficient_stock');
    assert.equal((await item(id)).qty_on_hand, 4);
    assert.equal((await ledger(id)).length, before.length);
    assert.deepEqual((await bins(id)).map((b) => [b.location_id, b.qty_on_hand]), [[binA, 4]]);
  });

  test('zero, fractional and missing values are 400; a retired, quarantine or unknown location 422; another partner’s item 404', async () => {
    const id = await createItem(t, partner, 'ADJ-4');
    const zero = await call(t.app, 'POST', '/api/v1/inventory/adjustments', { key: t.adminKey, body: { item_id: id, quantity: 0, reason: 'x', location_id: binA } });
    assert.equal(zero.body.error.message, 'body/quantity must not be 0');
    for (const body of [
      { item_id: id, quantity: 0, reason: 'x', location_id: binA },
      { item_id: id, quantity: 1.5, reason: 'x', location_id: binA },
      { item_id: id, quantity: '3', reason: 'x', location_id: binA },
      { item_id: id, quantity: 3, location_id: binA },
      { item_id: id, quantity: 3, reason: '  ', location_id: binA },
    ]) expectError(await call(t.app, 'POST', '/api/v1/inventory/adjustments', { key: t.adminKey, body }), 400, 'bad_request');
    const retired = await createLocation(t, 'S-RETIRED');
    await call(t.app, 'POST', `/api/v1/locations/${retired}/retire`, { key: t.adminKey });
    expectError(await adjust(t, id, 3, retired), 422, 'invalid_request');
    const quarantine = (await t.db.selectFrom('locations').select('id').where('location_code', '=', 'QUARANTINE').executeTakeFirstOrThrow()).id;
    expectError(await adjust(t, id, 3, quarantine), 422, 'invalid_request');
    expectError(await adjust(t, id, 3, '00000000-0000-4000-8000-000000000000'), 422, 'invalid_request');
    const elsewhere = await createManufacturer(t, 'ELSEWHERE');
    const consignor = await userWithKey(t, 'consignor', { manufacturerId: elsewhere });
    expectError(await adjust(t, id, 3, binA, consignor.key), 404, 'not_found');
    assert.equal((await ledger(id)).length, 0);
    assert.equal((await item(id)).qty_on_hand, 0);
  });

  test('a consignor adjusts its own items; an office key (no inventory.edit) cannot', async () => {
    const id = await createItem(t, partner, 'ADJ-5');
    const consignor = await userWithKey(t, 'consignor', { manufacturerId: partner });
    assert.equal((await adjust(t, id, 2, binA, consignor.key)).status, 201);
    const office = await userWithKey(t, 'office');
    expectError(await adjust(t, id, 2, binA, office.key), 403, 'forbidden');
  });
});

describe('ledgers', () => {
  test('a ledger page carries the total (maintained or counted) on every page, past the last one, and 0 when nothing matches', async () => {
    const id = await createItem(t, partner, 'LED-PAGES');
    for (const quantity of [5, -1, 2]) await adjust(t, id, quantity, binA);
    const ledgerPartner = await createManufacturer(t, 'LEDGERLESS');
    // Maintained: partner and type. Counted: item, dates.
    for (const [path, where] of [
      [`movements?manufacturer=${partner}`, sql`manufacturer_id = ${partner}`],
      [`movements?manufacturer=${partner}&movement_type=transfer`, sql`manufacturer_id = ${partner} and movement_type = 'transfer'`],
      [`adjustments?manufacturer=${partner}`, sql`manufacturer_id = ${partner} and movement_type in ('adjustment', 'cycle_count_correction')`],
      [`movements?item=${id}`, sql`item_id = ${id}`], [`movements?item=${id}&to=2000-01-01`, sql`false`],
      [`movements?manufacturer=${ledgerPartner}`, sql`manufacturer_id = ${ledgerPartner}`],
    ] as const) {
      const { rows: [counted] } = await sql<{ n: number }>`select count(*)::int as n from inventory_movements where ${where}`.execute(t.db);
      const expected = counted!.n;
      const pages = await Promise.all(Array.from({ length: expected + 2 }, (_, i) =>
        call(t.app, 'GET', `/api/v1/inventory/${path}&per_page=1&page=${i + 1}`, { key: t.adminKey })));
      assert.deepEqual(pages.map((answer) => answer.body.meta.total_count), pages.map(() => expected), path);
      assert.equal(pages.filter((answer) => answer.body.data.length === 1).length, expected, path);
    }
    // A partner-scoped key naming another partner: its own partner's ledger total (none here), on every page.
    const consignor = await userWithKey(t, 'consignor', { manufacturerId: ledgerPartner });
    const scoped = await Promise.all([1, 2].map((page) =>
      call(t.app, 'GET', `/api/v1/inventory/movements?manufacturer=${partner}&per_page=1&page=${page}`, { key: consignor.key })));
    assert.deepEqual(scoped.map((answer) => [answer.status, answer.body.meta.total_count, answer.body.data.length]), [[200, 0, 0], [200, 0, 0]]);
  });

  test('movements: newest first, filtered by item, partner, type and dates; adjustments ledger holds adjustments only', async () => {
    const id = await createItem(t, partner, 'LED-1');
    await adjust(t, id, 10, binA);
    await call(t.app, 'POST', `/api/v1/locations/${binA}/relocate`, { key: t.adminKey, body: { item_id: id, qty: 4, to_location_code: 'S-B-01' } });
    await adjust(t, id, -1, binB);
    const movements = await call(t.app, 'GET', `/api/v1/inventory/movements?item=${id}`, { key: t.adminKey });
    assert.deepEqual(movements.body.data.map((m: { movement_type: string; quantity: number }) => `${m.movement_type}:${m.quantity}`),
      ['adjustment:-1', 'transfer:4', 'transfer:-4', 'adjustment:10']);
    assert.equal(movements.body.meta.total_count, 4);
    const transfers = await call(t.app, 'GET', `/api/v1/inventory/movements?item=${id}&movement_type=transfer`, { key: t.adminKey });
    assert.equal(transfers.body.data.length, 2);
    assert.equal(transfers.body.data[0].reference_id, transfers.body.data[1].reference_id, 'a transfer pair shares its reference');
    const adjustments = await call(t.app, 'GET', `/api/v1/inventory/adjustments?item=${id}`, { key: t.adminKey });
    assert.deepEqual(adjustments.body.data.map((m: { quantity: number }) => m.quantity), [-1, 10]);
    expectError(await call(t.app, 'GET', '/api/v1/inventory/adjustments?movement_type=transfer', { key: t.adminKey }), 400, 'bad_request');
    const today = new Date().toISOString().slice(0, 10);
    assert.equal((await call(t.app, 'GET', `/api/v1/inventory/movements?item=${id}&from=${today}&to=${today}`, { key: t.adminKey })).body.data.length, 4);
    assert.equal((await call(t.app, 'GET', `/api/v1/inventory/movements?item=${id}&to=2000-01-01`, { key: t.adminKey })).body.data.length, 0);
    expectError(await call(t.app, 'GET', '/api/v1/inventory/movements?from=yesterday', { key: t.adminKey }), 400, 'bad_request');
    await assertLedgerChains(id);
  });

  test('a scoped key sees only its partner’s movements', async () => {
    const mine = await createItem(t, partner, 'LED-2');
    await adjust(t, mine, 1, binA);
    const elsewhere = await createManufacturer(t, 'LEDOTHER');
    const theirs = await createItem(t, elsewhere, 'LED-3');
    await adjust(t, theirs, 1, binA);
    const consignor = await userWithKey(t, 'consignor', { manufacturerId: partner });
    const rows = (await call(t.app, 'GET', `/api/v1/inventory/movements?manufacturer=${elsewhere}&per_page=100`, { key: consignor.key })).body.data;
    assert.ok(rows.length > 0 && rows.every((m: { manufacturer_id: string }) => m.manufacturer_id === partner));
  });
});

describe('concurrency', { skip: onPostgres ? false : 'needs TEST_DATABASE_URL (PGlite runs one transaction at a time)' }, () => {
  test('50 parallel adjustments on one item end at the exact sum, with a ledger that chains', async () => {
    const id = await createItem(t, partner, 'PAR-1');
    await adjust(t, id, 1000, binA);
    const quantities = Array.from({ length: 50 }, (_, i) => (i % 5 === 0 ? -(i + 1) : i + 1));
    const answers = await Promise.all(quantities.map((q, i) => adjust(t, id, q, i % 2 ? binA : binB)));
    const failed = answers.filter((a) => a.status !== 201);
    // Taking from bin B may fail while B is still empty; every failure must be that and nothing else.
    assert.ok(failed.every((a) => a.body.error.code === 'insufficient_stock'), JSON.stringify(failed.map((a) => a.body)));
    const applied = quantities.filter((_, i) => answers[i]!.status === 201).reduce((sum, q) => sum + q, 0);
    const stored = await item(id);
    assert.equal(stored.qty_on_hand, 1000 + applied);
    const binTotal = (await bins(id)).reduce((sum, b) => sum + b.qty_on_hand, 0);
    assert.equal(binTotal, stored.qty_on_hand);
    assert.equal((await ledger(id)).length, 1 + answers.length - failed.length);
    await assertLedgerChains(id);
  });

  test('parallel relocations of the same stock never move more than the bin holds', async () => {
    const id = await createItem(t, partner, 'PAR-2');
    await adjust(t, id, 10, binA);
    const answers = await Promise.all(Array.from({ length: 8 }, () =>
      call(t.app, 'POST', `/api/v1/locations/${binA}/relocate`, { key: t.adminKey, body: { item_id: id, qty: 3, to_location_code: 'S-B-01' } })));
    assert.equal(answers.filter((a) => a.status === 200).length, 3);
    assert.ok(answers.filter((a) => a.status !== 200).every((a) => a.status === 422 && a.body.error.code === 'insufficient_stock'));
    const byLocation = Object.fromEntries((await bins(id)).map((b) => [b.location_id, b.qty_on_hand]));
    assert.deepEqual(byLocation, { [binA]: 1, [binB]: 9 });
    assert.equal((await item(id)).qty_on_hand, 10);
    await assertLedgerChains(id);
  });
});
