import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Actor } from '../src/http/auth.ts';
import { RowTexts } from '../src/http/row-texts.ts';
import { getItemText } from '../src/modules/items/service.ts';
import { call, countingStatements, createItem, createManufacturer, expectError, onPostgres, startApp, userWithKey, type TestApp } from './helpers.ts';

let t: TestApp;
let acme: string;
let other: string;
before(async () => {
  t = await startApp();
  acme = await createManufacturer(t, 'ACME');
  other = await createManufacturer(t, 'OTHER');
});
after(() => t.close());

const staff = { manufacturerId: null } as Actor;
const notFoundError = (error: { status: number; code: string }) => error.status === 404 && error.code === 'not_found';
const stored = (id: string) => t.db.selectFrom('items').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

describe('create', () => {
  test('201 with the item: EA by default, normalized number, no join-derived keys; stored and audited', async () => {
    const answer = await call(t.app, 'POST', '/api/v1/items', {
      key: t.adminKey, body: { manufacturer_id: acme, item_number_display: 'ab-12 34', description: 'Hex bolt', category: 'Fasteners', unit_weight: 0.25 },
    });
    assert.equal(answer.status, 201);
    const item = answer.body.data.item;
    assert.equal(item.selling_uom, 'EA');
    assert.equal(item.item_number_display, 'ab-12 34');
    assert.equal(item.item_number_normalized, 'AB1234');
    assert.equal(item.status, 'active');
    assert.equal(item.qty_available, 0);
    assert.equal(item.unit_weight, 0.25);
    assert.equal(item.created_by, null);
    assert.equal('manufacturer_code' in item, false);
    assert.equal('manufacturer_name' in item, false);
    const row = await stored(item.id);
    assert.equal(row.item_number_normalized, 'AB1234');
    assert.equal(row.category, 'Fasteners');
    const history = await t.db.selectFrom('history').select('action').where('entity_id', '=', item.id).execute();
    assert.deepEqual(history.map((h) => h.action), ['created']);
  });

  test('the same partner and display number is 409 duplicate_item_number; another partner may reuse it', async () => {
    await createItem(t, acme, 'DUP-1');
    expectError(await call(t.app, 'POST', '/api/v1/items', { key: t.adminKey, body: { manufacturer_id: acme, item_number_display: 'DUP-1', description: 'x' } }), 409, 'duplicate_item_number');
    assert.equal((await call(t.app, 'POST', '/api/v1/items', { key: t.adminKey, body: { manufacturer_id: other, item_number_display: 'DUP-1', description: 'x' } })).status, 201);
  });

  test('a scoped key creates for its own partner only (403 for another)', async () => {
    const consignor = await userWithKey(t, 'consignor', { manufacturerId: acme });
    expectError(await call(t.app, 'POST', '/api/v1/items', { key: consignor.key, body: { manufacturer_id: other, item_number_display: 'SC-1', description: 'x' } }), 403, 'forbidden');
    assert.equal((await t.db.selectFrom('items').select('id').where('item_number_display', '=', 'SC-1').execute()).length, 0);
    assert.equal((await call(t.app, 'POST', '/api/v1/items', { key: consignor.key, body: { manufacturer_id: acme, item_number_display: 'SC-1', description: 'x' } })).status, 201);
  });

  test('bad input is 4xx and writes nothing', async () => {
    const before = (await t.db.selectFrom('items').select('id').execute()).length;
    const bodies: [unknown, number][] = [
      [{ manufacturer_id: acme, description: 'no number' }, 400],
      [{ manufacturer_id: acme, item_number_display: 'X1', description: '  ' }, 400],
      [{ manufacturer_id: acme, item_number_display: 'X1', description: 'x', unit_weight: 'heavy' }, 400],
      [{ manufacturer_id: acme, item_number_display: 'X1', description: 'x', qty_on_hand: 5 }, 400],
      [{ manufacturer_id: 'acme', item_number_display: 'X1', description: 'x' }, 400],
      [{ manufacturer_id: '00000000-0000-4000-8000-000000000000', item_number_display: 'X1', description: 'x' }, 422],
      [{ manufacturer_id: acme, item_number_display: ' - - ', description: 'x' }, 422],
    ];
    for (const [body, status] of bodies) assert.equal((await call(t.app, 'POST', '/api/v1/items', { key: t.adminKey, body })).status, status, JSON.stringify(body));
    assert.equal((await t.db.selectFrom('items').select('id').execute()).length, before);
  });

  test('without inventory.edit it is 403', async () => {
    const office = await userWithKey(t, 'office');
    expectError(await call(t.app, 'POST', '/api/v1/items', { key: office.key, body: { manufacturer_id: acme, item_number_display: 'OF-1', description: 'x' } }), 403, 'forbidden');
  });
});

describe('get and update', () => {
  test('get carries the join-derived partner keys; another partner’s item is 404 for a scoped key', async () => {
    const id = await createItem(t, other, 'GET-1');
    const answer = await call(t.app, 'GET', `/api/v1/items/${id}`, { key: t.adminKey });
    assert.equal(answer.body.data.manufacturer_code, 'OTHER');
    assert.equal(answer.body.data.manufacturer_name, 'OTHER Inc.');
    const consignor = await userWithKey(t, 'consignor', { manufacturerId: acme });
    expectError(await call(t.app, 'GET', `/api/v1/items/${id}`, { key: consignor.key }), 404, 'not_found');
    expectError(await call(t.app, 'GET', `/api/v1/items/${id}/locations`, { key: consignor.key }), 404, 'not_found');
    expectError(await call(t.app, 'PATCH', `/api/v1/items/${id}`, { key: consignor.key, body: { description: 'mine now' } }), 404, 'not_found');
    assert.equal((await stored(id)).description, 'Item GET-1');
  });

  test('a read is made of the kept text while the item and its partner are unchanged; any write of either shows at once', async () => {
    const id = await createItem(t, acme, 'GET-TEXT', { category: 'Tools' });
    const statements = countingStatements(t.db);
    const texts = new RowTexts();
    const read = async () => {
      statements.reset();
      const text = JSON.parse(await getItemText(statements.db, texts, staff, id));
      return { item: text, statements: statements.count() };
    };
    const first = await read();
    assert.equal(first.statements, 2, 'the version, then the rows whole');
    assert.deepEqual(first.item, (await call(t.app, 'GET', `/api/v1/items/${id}`, { key: t.adminKey })).body.data);
    assert.deepEqual(await read(), { item: first.item, statements: 1 });
    // A stock write through SQL (as a movement makes), a PATCH, a partner's rename: each is in the next read.
    await t.db.updateTable('items').set({ qty_on_hand: 7 }).where('id', '=', id).execute();
    assert.deepEqual(await read(), { item: { ...first.item, qty_on_hand: 7, qty_available: 7 }, statements: 2 });
    await call(t.app, 'PATCH', `/api/v1/items/${id}`, { key: t.adminKey, body: { category: 'Hand tools' } });
    const patched = await read();
    assert.equal(patched.item.category, 'Hand tools');
    assert.deepEqual((await call(t.app, 'GET', `/api/v1/items/${id}`, { key: t.adminKey })).body.data, patched.item);
    try {
      await t.db.updateTable('manufacturers').set({ name: 'Acme Supply Co' }).where('id', '=', acme).execute();
      assert.equal((await read()).item.manufacturer_name, 'Acme Supply Co');
    } finally {
      await t.db.updateTable('manufacturers').set({ name: 'ACME Inc.' }).where('id', '=', acme).execute();
    }
    // Another partner's key does not find it, even with its text kept.
    await assert.rejects(getItemText(statements.db, texts, { manufacturerId: other } as Actor, id), notFoundError);
  });

  test('an item deleted between the version and the whole read is 404', { skip: !onPostgres && 'needs PostgreSQL: PGlite has one connection, which the read holds while the delete waits' }, async () => {
    const id = await createItem(t, acme, 'GET-GONE');
    await t.db.deleteFrom('history').where('entity_id', '=', id).execute();
    let deleted = false;
    const racing = t.db.withPlugin({
      transformQuery: (args) => args.node,
      transformResult: async (args) => {
        if (!deleted) {
          deleted = true;
          await t.db.deleteFrom('items').where('id', '=', id).execute();
        }
        return args.result;
      },
    });
    await assert.rejects(getItemText(racing, new RowTexts(), staff, id), notFoundError);
    assert.ok(deleted);
    assert.equal(await t.db.selectFrom('items').select('id').where('id', '=', id).executeTakeFirst(), undefined);
  });

  test('reads beside an uncommitted change see the item as it was, and the change once it commits', { skip: !onPostgres && 'needs PostgreSQL: a second connection' }, async () => {
    const id = await createItem(t, acme, 'GET-TX');
    const read = async () => (await call(t.app, 'GET', `/api/v1/items/${id}`, { key: t.adminKey })).body.data;
    const before = await read();
    await t.db.transaction().execute(async (tx) => {
      await tx.updateTable('items').set({ lead_time_days: before.lead_time_days + 1 }).where('id', '=', id).execute();
      assert.deepEqual(await read(), before, 'nothing committed yet');
    });
    assert.equal((await read()).lead_time_days, before.lead_time_days + 1);
  });

  test('item reads racing its changes end on what the database holds', async () => {
    const id = await createItem(t, acme, 'GET-RACE');
    const read = () => call(t.app, 'GET', `/api/v1/items/${id}`, { key: t.adminKey });
    const patches = Array.from({ length: 20 }, (_, n) => call(t.app, 'PATCH', `/api/v1/items/${id}`, { key: t.adminKey, body: { unit_weight: n + 1 } }));
    const answers = await Promise.all([...patches, ...Array.from({ length: 40 }, read)]);
    assert.ok(answers.every((answer) => answer.status === 200), JSON.stringify(answers.find((answer) => answer.status !== 200)?.body));
    const { unit_weight } = await stored(id);
    assert.equal((await read()).body.data.unit_weight, unit_weight);
    assert.equal((await read()).body.data.unit_weight, unit_weight, 'and again, from its kept text');
  });

  test('PATCH keeps omitted fields, overwrites sent ones, clears with an empty string', async () => {
    const id = await createItem(t, acme, 'UPD-1', { category: 'Tools', warehouse_location: 'A-1-1', unit_weight: 2 });
    const answer = await call(t.app, 'PATCH', `/api/v1/items/${id}`, { key: t.adminKey, body: { description: 'Renamed', category: '', reorder_level: 7 } });
    assert.equal(answer.status, 200);
    assert.equal(answer.body.data.item.description, 'Renamed');
    assert.equal('manufacturer_code' in answer.body.data.item, false);
    const row = await stored(id);
    assert.equal(row.description, 'Renamed');
    assert.equal(row.category, null);
    assert.equal(row.warehouse_location, 'A-1-1');
    assert.equal(row.unit_weight, 2);
    assert.equal(row.reorder_level, 7);
    const last = await t.db.selectFrom('history').selectAll().where('entity_id', '=', id).where('action', '=', 'updated').executeTakeFirstOrThrow();
    assert.equal((last.before as { description: string }).description, 'Item UPD-1');
  });

  test('a PATCH that changes nothing writes nothing: no history row, updated_at kept', async () => {
    const id = await createItem(t, acme, 'UPD-NOOP', { category: 'Tools', unit_weight: 2 });
    const before = await stored(id);
    for (const body of [{}, { category: 'Tools', unit_weight: 2 }, { description: ` ${before.description} ` }]) {
      const answer = await call(t.app, 'PATCH', `/api/v1/items/${id}`, { key: t.adminKey, body });
      assert.equal(answer.status, 200);
      assert.equal(answer.body.data.item.updated_at, before.updated_at, JSON.stringify(body));
    }
    assert.deepEqual(await stored(id), before);
    assert.deepEqual(await t.db.selectFrom('history').select('action').where('entity_id', '=', id).where('action', '=', 'updated').execute(), []);
    assert.equal((await call(t.app, 'PATCH', `/api/v1/items/${id}`, { key: t.adminKey, body: { unit_weight: 3 } })).body.data.item.unit_weight, 3);
    assert.equal((await t.db.selectFrom('history').select('action').where('entity_id', '=', id).where('action', '=', 'updated').execute()).length, 1);
  });

  test('negative reorder_level, item_number_display and manufacturer_id are 400 and change nothing', async () => {
    const id = await createItem(t, acme, 'UPD-2');
    for (const body of [{ reorder_level: -1 }, { item_number_display: 'NEW' }, { manufacturer_id: other }, { reorder_level: 1.5 }]) {
      expectError(await call(t.app, 'PATCH', `/api/v1/items/${id}`, { key: t.adminKey, body }), 400, 'bad_request');
    }
    const row = await stored(id);
    assert.equal(row.item_number_display, 'UPD-2');
    assert.equal(row.reorder_level, 0);
    assert.equal(row.manufacturer_id, acme);
  });
});

describe('discontinue and reactivate', () => {
  test('discontinue with a successor; stock_warning when on-hand remains', async () => {
    const old = await createItem(t, acme, 'DISC-1');
    const successor = await createItem(t, acme, 'DISC-2');
    await t.db.updateTable('items').set({ qty_on_hand: 4 }).where('id', '=', old).execute();
    const answer = await call(t.app, 'POST', `/api/v1/items/${old}/discontinue`, { key: t.adminKey, body: { superseded_by: successor, reason: 'replaced' } });
    assert.equal(answer.status, 200);
    assert.equal(answer.body.data.item.status, 'discontinued');
    assert.deepEqual(answer.body.data.stock_warning, { qty_on_hand: 4 });
    const row = await stored(old);
    assert.equal(row.status, 'discontinued');
    assert.equal(row.superseded_by, successor);

    const empty = await createItem(t, acme, 'DISC-3');
    // Every field is optional: the body may be left out.
    const quiet = await call(t.app, 'POST', `/api/v1/items/${empty}/discontinue`, { key: t.adminKey });
    assert.equal(quiet.status, 200, JSON.stringify(quiet.body));
    assert.equal('stock_warning' in quiet.body.data, false);
    expectError(await call(t.app, 'POST', `/api/v1/items/${empty}/discontinue`, { key: t.adminKey, body: {} }), 422, 'invalid_status');
  });

  test('the successor must be another active item of the same partner', async () => {
    const item = await createItem(t, acme, 'SUCC-1');
    const foreign = await createItem(t, other, 'SUCC-2');
    const retired = await createItem(t, acme, 'SUCC-3');
    await call(t.app, 'POST', `/api/v1/items/${retired}/discontinue`, { key: t.adminKey, body: {} });
    for (const successor of [item, foreign, retired, '00000000-0000-4000-8000-000000000000']) {
      expectError(await call(t.app, 'POST', `/api/v1/items/${item}/discontinue`, { key: t.adminKey, body: { superseded_by: successor } }), 422, 'invalid_request');
    }
    assert.equal((await stored(item)).status, 'active');
  });

  test('reactivate brings a discontinued item back; an active one is 422 invalid_status', async () => {
    const id = await createItem(t, acme, 'REACT-1');
    expectError(await call(t.app, 'POST', `/api/v1/items/${id}/reactivate`, { key: t.adminKey, body: {} }), 422, 'invalid_status');
    await call(t.app, 'POST', `/api/v1/items/${id}/discontinue`, { key: t.adminKey, body: {} });
    // The reason is optional: so is the body.
    const answer = await call(t.app, 'POST', `/api/v1/items/${id}/reactivate`, { key: t.adminKey });
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.equal(answer.body.data.item.status, 'active');
    assert.equal((await stored(id)).status, 'active');
    const actions = await t.db.selectFrom('history').select('action').where('entity_id', '=', id).orderBy('occurred_at').execute();
    assert.deepEqual(actions.map((a) => a.action), ['created', 'discontinued', 'reactivated']);
  });
});

describe('aliases', () => {
  test('add (normalized), list, find by list q and search, remove', async () => {
    const id = await createItem(t, acme, 'ALI-1');
    const added = await call(t.app, 'POST', `/api/v1/items/${id}/aliases`, { key: t.adminKey, body: { alias: 'old-part 77' } });
    assert.equal(added.status, 201);
    assert.equal(added.body.data.alias_normalized, 'OLDPART77');
    const list = await call(t.app, 'GET', `/api/v1/items/${id}/aliases`, { key: t.adminKey });
    assert.deepEqual(list.body.data.map((a: { alias: string }) => a.alias), ['old-part 77']);
    assert.equal(list.body.meta.total_count, 1);
    const found = await call(t.app, 'GET', '/api/v1/items?q=oldpart', { key: t.adminKey });
    assert.deepEqual(found.body.data.map((i: { id: string }) => i.id), [id]);
    const hit = (await call(t.app, 'GET', '/api/v1/items/search?q=OLD-PART-77', { key: t.adminKey })).body.data[0];
    assert.equal(hit.Item.id, id);
    assert.equal(hit.AliasValue, 'old-part 77');
    assert.equal(hit.Score, 1);
    assert.equal(hit.MatchType, 'exact');

    expectError(await call(t.app, 'POST', `/api/v1/items/${id}/aliases`, { key: t.adminKey, body: { alias: 'OLDPART77' } }), 409, 'conflict');
    const otherItem = await createItem(t, acme, 'ALI-2');
    expectError(await call(t.app, 'DELETE', `/api/v1/items/${otherItem}/aliases/${added.body.data.id}`, { key: t.adminKey }), 404, 'not_found');
    assert.equal((await call(t.app, 'DELETE', `/api/v1/items/${id}/aliases/${added.body.data.id}`, { key: t.adminKey })).status, 204);
    assert.equal((await t.db.selectFrom('item_aliases').select('id').where('item_id', '=', id).execute()).length, 0);
  });
});
