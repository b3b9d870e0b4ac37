import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { call, createManufacturer, expectError, startApp, userWithKey, type TestApp } from './helpers.ts';

let t: TestApp;
before(async () => {
  t = await startApp();
});
after(() => t.close());

describe('manufacturers', () => {
  test('create stores the code uppercase, audits, and reads back', async () => {
    const created = await call(t.app, 'POST', '/api/v1/manufacturers', { key: t.adminKey, body: { code: 'acme-1', name: ' Acme Corp ' } });
    assert.equal(created.status, 201);
    assert.equal(created.body.data.code, 'ACME-1');
    assert.equal(created.body.data.name, 'Acme Corp');
    const stored = await t.db.selectFrom('manufacturers').selectAll().where('id', '=', created.body.data.id).executeTakeFirstOrThrow();
    assert.equal(stored.code, 'ACME-1');
    const history = await t.db.selectFrom('history').selectAll().where('entity_id', '=', stored.id).execute();
    assert.deepEqual(history.map((h) => [h.entity_type, h.action, h.manufacturer_id]), [['manufacturer', 'created', stored.id]]);
    const read = await call(t.app, 'GET', `/api/v1/manufacturers/${stored.id}`, { key: t.adminKey });
    assert.deepEqual(read.body.data, created.body.data);
  });

  test('a duplicate code, in any case, is 409', async () => {
    await createManufacturer(t, 'DUPE');
    expectError(await call(t.app, 'POST', '/api/v1/manufacturers', { key: t.adminKey, body: { code: 'dupe', name: 'x' } }), 409, 'conflict');
  });

  test('patch changes what is sent; rename onto another code is 409 and changes nothing', async () => {
    const id = await createManufacturer(t, 'PATCHME');
    await createManufacturer(t, 'TAKEN');
    const patched = await call(t.app, 'PATCH', `/api/v1/manufacturers/${id}`, { key: t.adminKey, body: { name: 'Renamed', is_active: false } });
    assert.equal(patched.status, 200);
    assert.equal(patched.body.data.code, 'PATCHME');
    assert.equal(patched.body.data.is_active, false);
    expectError(await call(t.app, 'PATCH', `/api/v1/manufacturers/${id}`, { key: t.adminKey, body: { code: 'taken' } }), 409, 'conflict');
    const stored = await t.db.selectFrom('manufacturers').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    assert.equal(stored.code, 'PATCHME');
    assert.equal(stored.name, 'Renamed');
    const actions = await t.db.selectFrom('history').select('action').where('entity_id', '=', id).orderBy('occurred_at').execute();
    assert.deepEqual(actions.map((a) => a.action), ['created', 'updated']);
  });

  test('list filters by q and is_active', async () => {
    await createManufacturer(t, 'FINDME');
    const found = await call(t.app, 'GET', '/api/v1/manufacturers?q=indm', { key: t.adminKey });
    assert.deepEqual(found.body.data.map((m: { code: string }) => m.code), ['FINDME']);
    const inactive = await call(t.app, 'GET', '/api/v1/manufacturers?is_active=false', { key: t.adminKey });
    assert.ok(inactive.body.data.every((m: { is_active: boolean }) => !m.is_active));
    expectError(await call(t.app, 'GET', '/api/v1/manufacturers?is_active=maybe', { key: t.adminKey }), 400, 'bad_request');
  });

  test('a consignor key can neither create nor change partners (consignors lack manufacturers.edit)', async () => {
    const own = await createManufacturer(t, 'OWNP');
    const other = await createManufacturer(t, 'OTHERP');
    const consignor = await userWithKey(t, 'consignor', { manufacturerId: own });
    expectError(await call(t.app, 'POST', '/api/v1/manufacturers', { key: consignor.key, body: { code: 'NEWP', name: 'x' } }), 403, 'forbidden');
    expectError(await call(t.app, 'PATCH', `/api/v1/manufacturers/${other}`, { key: consignor.key, body: { name: 'x' } }), 403, 'forbidden');
    expectError(await call(t.app, 'PATCH', '/api/v1/manufacturers/00000000-0000-4000-8000-000000000000', { key: t.adminKey, body: { name: 'x' } }), 404, 'not_found');
  });
});

describe('warehouses', () => {
  test('MAIN and its QUARANTINE location exist after first start', async () => {
    const list = await call(t.app, 'GET', '/api/v1/warehouses', { key: t.adminKey });
    const main = list.body.data.find((w: { code: string }) => w.code === 'MAIN');
    assert.ok(main);
    const quarantine = await t.db.selectFrom('locations').selectAll().where('location_code', '=', 'QUARANTINE').executeTakeFirstOrThrow();
    assert.equal(quarantine.warehouse_id, main.id);
    assert.equal(quarantine.location_type, 'quarantine');
    assert.equal(quarantine.is_active, true);
  });

  test('an administrator creates a warehouse; others may only read', async () => {
    const created = await call(t.app, 'POST', '/api/v1/warehouses', { key: t.adminKey, body: { code: 'east', name: 'East annex' } });
    assert.equal(created.status, 201);
    assert.equal(created.body.data.code, 'EAST');
    assert.ok(await t.db.selectFrom('warehouses').select('id').where('code', '=', 'EAST').executeTakeFirst());
    expectError(await call(t.app, 'POST', '/api/v1/warehouses', { key: t.adminKey, body: { code: 'EAST', name: 'again' } }), 409, 'conflict');
    const manager = await userWithKey(t, 'manager');
    expectError(await call(t.app, 'POST', '/api/v1/warehouses', { key: manager.key, body: { code: 'WEST', name: 'West' } }), 403, 'forbidden');
    assert.equal((await call(t.app, 'GET', '/api/v1/warehouses', { key: manager.key })).status, 200);
  });
});

describe('ship-via', () => {
  test('seeded carriers come parcel first, then LTL, then will call', async () => {
    const office = await userWithKey(t, 'office');
    const list = await call(t.app, 'GET', '/api/v1/ship-via', { key: office.key });
    assert.equal(list.status, 200);
    assert.deepEqual(list.body.data.map((s: { code: string; mode: string }) => `${s.mode}:${s.code}`), [
      'parcel:FEDEX', 'parcel:UPS', 'parcel:USPS', 'ltl:LTL', 'will_call:WILL-CALL',
    ]);
    assert.deepEqual(Object.keys(list.body.data[0]).sort(), ['carrier_name', 'code', 'description', 'id', 'is_active', 'mode']);
  });

  test('an administrator adds carriers; they sort into their mode; inactive ones are not listed', async () => {
    assert.equal((await call(t.app, 'POST', '/api/v1/ship-via', { key: t.adminKey, body: { code: 'dhl', description: 'DHL', carrier_name: 'DHL', mode: 'parcel' } })).status, 201);
    assert.equal((await call(t.app, 'POST', '/api/v1/ship-via', { key: t.adminKey, body: { code: 'OLD', description: 'Retired', mode: 'ltl', is_active: false } })).status, 201);
    const codes = (await call(t.app, 'GET', '/api/v1/ship-via', { key: t.adminKey })).body.data.map((s: { code: string }) => s.code);
    assert.deepEqual(codes, ['DHL', 'FEDEX', 'UPS', 'USPS', 'LTL', 'WILL-CALL']);
    const stored = await t.db.selectFrom('ship_via').selectAll().where('code', '=', 'OLD').executeTakeFirstOrThrow();
    assert.equal(stored.is_active, false);
    expectError(await call(t.app, 'POST', '/api/v1/ship-via', { key: t.adminKey, body: { code: 'UPS', description: 'again', mode: 'parcel' } }), 409, 'conflict');
  });

  test('needs orders.view to read and an administrator to write', async () => {
    const qc = await userWithKey(t, 'qc');
    expectError(await call(t.app, 'GET', '/api/v1/ship-via', { key: qc.key }), 403, 'forbidden');
    const office = await userWithKey(t, 'office');
    expectError(await call(t.app, 'POST', '/api/v1/ship-via', { key: office.key, body: { code: 'X', description: 'x', mode: 'ltl' } }), 403, 'forbidden');
  });
});
