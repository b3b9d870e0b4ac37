// Customers, their drop-ship locations and third-party payers: rules, errors, stored rows and history.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { call, createManufacturer, expectError, onPostgres, startApp, userWithKey, type TestApp } from './helpers.ts';

let t: TestApp;
before(async () => {
  t = await startApp();
});
after(() => t.close());

const MISSING = '00000000-0000-4000-8000-000000000000';

const storedCustomer = (id: string) => t.db.selectFrom('customers').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const count = async (table: 'customers' | 'drop_ship_locations' | 'third_party_payers' | 'history') =>
  Number((await t.db.selectFrom(table).select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
const historyOf = (id: string) => t.db.selectFrom('history').selectAll().where('entity_id', '=', id).orderBy('occurred_at').execute();

let accountSeq = 0;
async function createCustomer(extra: Record<string, unknown> = {}): Promise<string> {
  const answer = await call(t.app, 'POST', '/api/v1/customers', { key: t.adminKey, body: { account_number: `ACC-${++accountSeq}`, name: `Customer ${accountSeq}`, ...extra } });
  if (answer.status !== 201) throw new Error(`customer: ${JSON.stringify(answer.body)}`);
  return answer.body.data.id;
}

const validLocation = { name: 'Job site', address_line_1: '1 Main St', city: 'Albany', state: 'ny', zip_code: '12207' };
const validPayer = { name: 'Freight Payer', address_line_1: '9 Dock Rd', city: 'Austin', state: 'tx', zip_code: '73301-0001', carrier_account: 'UPS-778' };

async function addLocation(customerId: string, extra: Record<string, unknown> = {}): Promise<string> {
  const answer = await call(t.app, 'POST', `/api/v1/customers/${customerId}/drop-ship-locations`, { key: t.adminKey, body: { ...validLocation, ...extra } });
  if (answer.status !== 201) throw new Error(`location: ${JSON.stringify(answer.body)}`);
  return answer.body.data.drop_ship_location.id;
}

describe('customers', () => {
  test('create: 201 {data:{..}}, trimmed, state uppercase, empty strings null, status active; stored and audited', async () => {
    const answer = await call(t.app, 'POST', '/api/v1/customers', {
      key: t.adminKey, body: { account_number: ' C-100 ', name: ' Hardware Hut ', state: 'ny', city: 'Albany', region: '', customer_type_code: 'RET' },
    });
    assert.equal(answer.status, 201);
    const customer = answer.body.data;
    assert.deepEqual(
      [customer.account_number, customer.name, customer.state, customer.city, customer.region, customer.customer_type_code, customer.status, customer.zip_code],
      ['C-100', 'Hardware Hut', 'NY', 'Albany', null, 'RET', 'active', null],
    );
    const row = await storedCustomer(customer.id);
    assert.deepEqual([row.account_number, row.name, row.state, row.region], ['C-100', 'Hardware Hut', 'NY', null]);
    const history = await historyOf(customer.id);
    assert.deepEqual(history.map((h) => [h.entity_type, h.action]), [['customer', 'created']]);
    assert.equal((history[0]!.after as { account_number: string }).account_number, 'C-100');
    assert.deepEqual((await call(t.app, 'GET', `/api/v1/customers/${customer.id}`, { key: t.adminKey })).body.data, customer);
  });

  test('a duplicate account number, in any case, is 422 duplicate_account_number and writes nothing', async () => {
    await createCustomer({ account_number: 'DUP-7' });
    const before = [await count('customers'), await count('history')];
    const answer = await call(t.app, 'POST', '/api/v1/customers', { key: t.adminKey, body: { account_number: 'dup-7', name: 'Other' } });
    expectError(answer, 422, 'duplicate_account_number');
    assert.deepEqual([await count('customers'), await count('history')], before);
  });

  test('bad create bodies are 400 and write nothing', async () => {
    const before = await count('customers');
    const bodies: [unknown, RegExp][] = [
      [{ account_number: 'B-1' }, /body\/name is required/],
      [{ name: 'No account' }, /body\/account_number is required/],
      [{ account_number: 'B-1', name: '   ' }, /body\/name/],
      [{ account_number: 'B-1', name: 42 }, /body\/name must be string/],
      [{ account_number: 'B-1', name: 'x', status: 'inactive' }, /body\/status is not a known field/],
      [{ account_number: 'B-1', name: 'x'.repeat(201) }, /body\/name must NOT have more than 200 characters/],
      [{ account_number: 'B-1', name: 'x', city: 'nul\u0000city' }, /body\/city/],
      [{ account_number: 'B-1', name: 'x', zip_code: 12207 }, /body\/zip_code must be string/],
      [{ account_number: 'B-1', name: 'x', state: 'ß'.repeat(21) }, /body\/state must NOT have more than 40 characters once uppercased/],
    ];
    for (const [body, message] of bodies) {
      const answer = await call(t.app, 'POST', '/api/v1/customers', { key: t.adminKey, body });
      expectError(answer, 400, 'bad_request');
      assert.match(answer.body.error.message, message);
    }
    assert.equal(await count('customers'), before);
  });

  test('get: unknown id 404, malformed id 400', async () => {
    expectError(await call(t.app, 'GET', `/api/v1/customers/${MISSING}`, { key: t.adminKey }), 404, 'not_found');
    expectError(await call(t.app, 'GET', '/api/v1/customers/not-a-uuid', { key: t.adminKey }), 400, 'bad_request');
  });

  test('update: name required, omitted fields kept, empty string or null clears; audited with before and after', async () => {
    const id = await createCustomer({ account_number: 'UPD-1', city: 'Troy', zip_code: '12180', region: 'East' });
    expectError(await call(t.app, 'PATCH', `/api/v1/customers/${id}`, { key: t.adminKey, body: { city: 'Utica' } }), 400, 'bad_request');
    const answer = await call(t.app, 'PATCH', `/api/v1/customers/${id}`, { key: t.adminKey, body: { name: 'Renamed', city: '', region: null, state: 'vt' } });
    assert.equal(answer.status, 200);
    assert.equal(answer.body.data.account_number, 'UPD-1');
    const row = await storedCustomer(id);
    assert.deepEqual([row.name, row.city, row.region, row.zip_code, row.state], ['Renamed', null, null, '12180', 'VT']);
    const updated = (await historyOf(id)).filter((h) => h.action === 'updated');
    assert.equal(updated.length, 1);
    assert.equal((updated[0]!.before as { city: string }).city, 'Troy');
    assert.equal((updated[0]!.after as { city: string | null }).city, null);
  });

  test('update: account_number and status cannot change (400), an unknown customer is 404; nothing changes', async () => {
    const id = await createCustomer({ account_number: 'IMM-1' });
    const before = await storedCustomer(id);
    for (const body of [{ name: 'x', account_number: 'IMM-2' }, { name: 'x', status: 'inactive' }, { name: 5 }]) {
      expectError(await call(t.app, 'PATCH', `/api/v1/customers/${id}`, { key: t.adminKey, body }), 400, 'bad_request');
    }
    expectError(await call(t.app, 'PATCH', `/api/v1/customers/${MISSING}`, { key: t.adminKey, body: { name: 'x' } }), 404, 'not_found');
    assert.deepEqual(await storedCustomer(id), before);
    assert.deepEqual((await historyOf(id)).map((h) => h.action), ['created']);
  });

  test('list: q over account number and name (case-insensitive, % literal), status filter, ordered by name', async () => {
    await createCustomer({ account_number: 'ZQ-2', name: 'beta Zquest' });
    await createCustomer({ account_number: 'ZQ-1', name: 'Alpha Zquest' });
    await createCustomer({ account_number: 'ACCT-ZQUEST', name: 'Gamma' });
    await createCustomer({ account_number: 'PCT-1', name: '100% Tools' });
    const names = async (query: string) =>
      (await call(t.app, 'GET', `/api/v1/customers?${query}`, { key: t.adminKey })).body.data.map((c: { name: string }) => c.name);
    assert.deepEqual(await names('q=zquest'), ['Alpha Zquest', 'beta Zquest', 'Gamma']);
    assert.deepEqual(await names('q=zq-1'), ['Alpha Zquest']);
    assert.deepEqual(await names('q=%25'), ['100% Tools']);
    assert.deepEqual(await names('q=zquest&status=inactive'), []);
    assert.deepEqual(await names('q=zquest&status=active'), ['Alpha Zquest', 'beta Zquest', 'Gamma']);
    // Folded as ILIKE folds (migration 0047 keeps the texts folded), letters beyond ASCII too, and kept folded on a
    // rename: the new name is found, the old one no longer.
    const umlaut = await createCustomer({ account_number: 'ÄQ-1', name: 'Ärzte Zquëst' });
    assert.deepEqual(await names('q=%C3%A4RZTE%20ZQU%C3%8B'), ['Ärzte Zquëst']);
    assert.deepEqual(await names('q=%C3%A4q-'), ['Ärzte Zquëst']);
    assert.equal((await call(t.app, 'PATCH', `/api/v1/customers/${umlaut}`, { key: t.adminKey, body: { name: 'Öfen Zquest' } })).status, 200);
    assert.deepEqual(await names('q=%C3%B6FEN'), ['Öfen Zquest']);
    assert.deepEqual(await names('q=%C3%A4rzte'), []);
    expectError(await call(t.app, 'GET', '/api/v1/customers?status=gone', { key: t.adminKey }), 400, 'bad_request');
    expectError(await call(t.app, 'GET', '/api/v1/customers?page=0', { key: t.adminKey }), 400, 'bad_request');
    expectError(await call(t.app, 'GET', '/api/v1/customers?sort=name', { key: t.adminKey }), 400, 'bad_request');
  });

  test('list pages: 50 by default, per_page above 100 reads as 100, meta counts every match', async () => {
    await t.db.insertInto('customers')
      .values(Array.from({ length: 120 }, (_, i) => ({ account_number: `BULK-${String(i).padStart(3, '0')}`, name: `Bulk ${String(i).padStart(3, '0')}` })))
      .execute();
    const first = await call(t.app, 'GET', '/api/v1/customers?q=bulk', { key: t.adminKey });
    assert.equal(first.body.data.length, 50);
    assert.deepEqual(first.body.meta, { page: 1, per_page: 50, total_count: 120, total_pages: 3 });
    const clamped = await call(t.app, 'GET', '/api/v1/customers?q=bulk&per_page=500&page=2', { key: t.adminKey });
    assert.deepEqual(clamped.body.meta, { page: 2, per_page: 100, total_count: 120, total_pages: 2 });
    // However large: a per_page past any number of rows is still 100 (CONTRACT), not a 400.
    const huge = await call(t.app, 'GET', '/api/v1/customers?q=bulk&per_page=9999999999999999999', { key: t.adminKey });
    assert.deepEqual(huge.body.meta, { page: 1, per_page: 100, total_count: 120, total_pages: 2 });
    assert.equal(clamped.body.data[0].name, 'Bulk 100');
    // Past the last page the total is still every match, with a search and without.
    const beyond = await call(t.app, 'GET', '/api/v1/customers?q=bulk&page=4', { key: t.adminKey });
    assert.deepEqual([beyond.body.data, beyond.body.meta.total_count], [[], 120]);
    const { count } = await t.db.selectFrom('customers').select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow();
    const all = await Promise.all([1, 1000].map((n) => call(t.app, 'GET', `/api/v1/customers?page=${n}`, { key: t.adminKey })));
    assert.deepEqual(all.map((a) => a.body.meta.total_count), [Number(count), Number(count)]);
    assert.deepEqual(all.map((a) => a.body.data.length), [Math.min(50, Number(count)), 0]);
  });

  test('permissions: office edits, a consignor reads every customer but cannot write, warehouse staff cannot read', async () => {
    const office = await userWithKey(t, 'office');
    assert.equal((await call(t.app, 'POST', '/api/v1/customers', { key: office.key, body: { account_number: 'OFF-1', name: 'By office' } })).status, 201);
    const consignor = await userWithKey(t, 'consignor', { manufacturerId: await createManufacturer(t, 'CUSTP') });
    const warehouse = await userWithKey(t, 'warehouse');
    const id = await createCustomer();
    const stored = await storedCustomer(id);
    const counted = [await count('customers'), await count('drop_ship_locations'), await count('history')];
    assert.equal((await call(t.app, 'GET', `/api/v1/customers/${id}`, { key: consignor.key })).status, 200);
    assert.equal((await call(t.app, 'GET', `/api/v1/customers/${id}/drop-ship-locations`, { key: consignor.key })).status, 200);
    expectError(await call(t.app, 'POST', '/api/v1/customers', { key: consignor.key, body: { account_number: 'CON-1', name: 'x' } }), 403, 'forbidden');
    expectError(await call(t.app, 'PATCH', `/api/v1/customers/${id}`, { key: consignor.key, body: { name: 'x' } }), 403, 'forbidden');
    expectError(await call(t.app, 'POST', `/api/v1/customers/${id}/drop-ship-locations`, { key: consignor.key, body: validLocation }), 403, 'forbidden');
    expectError(await call(t.app, 'GET', '/api/v1/customers', { key: warehouse.key }), 403, 'forbidden');
    assert.deepEqual(await storedCustomer(id), stored);
    assert.deepEqual([await count('customers'), await count('drop_ship_locations'), await count('history')], counted);
  });
});

describe('address book lists', () => {
  // 60 records, names 00 to 59, plus one hidden: 50 per page by default, ordered by name, meta counts the visible ones.
  for (const [path, table, fill] of [
    ['drop-ship-locations', 'drop_ship_locations', {}],
    ['third-party-payers', 'third_party_payers', { carrier_account: 'UPS-1' }],
  ] as const) {
    test(`${path}: 50 per page by default, per_page and page, meta; hidden ones counted only with include_hidden=1`, async () => {
      const customer = await createCustomer();
      const stranger = await createCustomer();
      const row = (name: string, owner = customer, hidden = false) => ({
        customer_id: owner, name, address_line_1: '1 Main St', city: 'Albany', state: 'NY', zip_code: '12207', is_hidden: hidden, ...fill,
      });
      await t.db.insertInto(table).values([
        ...Array.from({ length: 60 }, (_, i) => row(`Site ${String(59 - i).padStart(2, '0')}`)),
        row('Site hidden', customer, true),
        row('Site elsewhere', stranger),
      ]).execute();
      const list = async (query = '') => (await call(t.app, 'GET', `/api/v1/customers/${customer}/${path}${query}`, { key: t.adminKey })).body;
      const names = (body: { data: { name: string }[] }) => body.data.map((r) => r.name);
      const expected = Array.from({ length: 60 }, (_, i) => `Site ${String(i).padStart(2, '0')}`);

      const first = await list();
      assert.deepEqual(first.meta, { page: 1, per_page: 50, total_count: 60, total_pages: 2 });
      assert.deepEqual(names(first), expected.slice(0, 50));
      const second = await list('?page=2');
      assert.deepEqual(second.meta, { page: 2, per_page: 50, total_count: 60, total_pages: 2 });
      assert.deepEqual(names(second), expected.slice(50));
      const small = await list('?per_page=7&page=3');
      assert.deepEqual(small.meta, { page: 3, per_page: 7, total_count: 60, total_pages: 9 });
      assert.deepEqual(names(small), expected.slice(14, 21));
      const clamped = await list('?per_page=500&include_hidden=1');
      assert.deepEqual(clamped.meta, { page: 1, per_page: 100, total_count: 61, total_pages: 1 });
      assert.deepEqual(names(clamped), [...expected, 'Site hidden']);
      const beyond = await list('?page=4');
      assert.deepEqual([beyond.data, beyond.meta], [[], { page: 4, per_page: 50, total_count: 60, total_pages: 2 }]);
      expectError(await call(t.app, 'GET', `/api/v1/customers/${customer}/${path}?per_page=0`, { key: t.adminKey }), 400, 'bad_request');
    });
  }
});

describe('concurrency on PostgreSQL', { skip: !onPostgres && 'needs TEST_DATABASE_URL (PGlite runs one transaction at a time)' }, () => {
  test('parallel creates of one account number: one 201, the others 422 duplicate_account_number (the unique index on lower())', async () => {
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => call(t.app, 'POST', '/api/v1/customers', {
      key: t.adminKey, body: { account_number: i % 2 ? 'race-1' : 'RACE-1', name: `Racer ${i}` },
    })));
    assert.deepEqual(answers.map((a) => a.status).sort(), [201, 422, 422, 422, 422, 422, 422, 422]);
    for (const answer of answers.filter((a) => a.status === 422)) expectError(answer, 422, 'duplicate_account_number');
    assert.equal((await t.db.selectFrom('customers').select('id').where((eb) => eb(eb.fn('lower', ['account_number']), '=', 'race-1')).execute()).length, 1);
  });
});

describe('drop-ship locations', () => {
  test('create: 201 {data:{drop_ship_location}}, state uppercase, country US by default; stored and audited', async () => {
    const customer = await createCustomer();
    const answer = await call(t.app, 'POST', `/api/v1/customers/${customer}/drop-ship-locations`, {
      key: t.adminKey, body: { ...validLocation, attention: ' Dock 4 ', email: 'site@example.com', phone: '' },
    });
    assert.equal(answer.status, 201);
    const location = answer.body.data.drop_ship_location;
    assert.deepEqual([location.customer_id, location.state, location.country, location.attention, location.phone, location.is_hidden], [customer, 'NY', 'US', 'Dock 4', null, false]);
    const row = await t.db.selectFrom('drop_ship_locations').selectAll().where('id', '=', location.id).executeTakeFirstOrThrow();
    assert.deepEqual([row.customer_id, row.state, row.country, row.email], [customer, 'NY', 'US', 'site@example.com']);
    assert.deepEqual((await historyOf(location.id)).map((h) => [h.entity_type, h.action]), [['drop_ship_location', 'created']]);
  });

  test('outside the US the state and ZIP are free text; country is uppercased', async () => {
    const customer = await createCustomer();
    const answer = await call(t.app, 'POST', `/api/v1/customers/${customer}/drop-ship-locations`, {
      key: t.adminKey, body: { ...validLocation, state: 'Ontario', zip_code: 'K1A 0B1', country: 'ca' },
    });
    assert.equal(answer.status, 201);
    assert.deepEqual([answer.body.data.drop_ship_location.state, answer.body.data.drop_ship_location.country], ['ONTARIO', 'CA']);
  });

  test('country and US state are checked as sent, before uppercasing: letters that uppercase into A-Z do not pass', async () => {
    const customer = await createCustomer();
    const before = [await count('drop_ship_locations'), await count('history')];
    const post = (body: unknown) => call(t.app, 'POST', `/api/v1/customers/${customer}/drop-ship-locations`, { key: t.adminKey, body });
    // 'ß' uppercases to 'SS', 'ı' (dotless i) to 'I', 'ſ' (long s) to 'S', 'ﬀ' to 'FF'.
    for (const country of ['ß', 'ıt', 'uſ', 'ﬀ', ' c a ']) {
      const answer = await post({ ...validLocation, state: 'Bavaria', country });
      expectError(answer, 422, 'invalid_drop_ship_location');
      assert.equal(answer.body.error.message, 'country must be a two-letter country code such as US');
    }
    for (const [state, named] of [['ıd', 'ıd'], ['ſc', 'ſc'], ['Idaho', 'IDAHO']]) {
      const answer = await post({ ...validLocation, state });
      expectError(answer, 422, 'invalid_drop_ship_location');
      assert.equal(answer.body.error.message, `state ${named} is not a US state code`);
    }
    // The length of a state is that of the stored, uppercased text: 21 'ß' are 42 letters once uppercased.
    const long = await post({ ...validLocation, country: 'DE', state: 'ß'.repeat(21) });
    expectError(long, 422, 'invalid_drop_ship_location');
    assert.equal(long.body.error.message, 'state must be at most 40 characters');
    assert.deepEqual([await count('drop_ship_locations'), await count('history')], before);

    const abroad = await post({ ...validLocation, country: ' de ', state: 'ß'.repeat(20), zip_code: '80331' });
    assert.equal(abroad.status, 201);
    assert.deepEqual([abroad.body.data.drop_ship_location.country, abroad.body.data.drop_ship_location.state], ['DE', 'SS'.repeat(20)]);
    const lower = await post({ ...validLocation, state: ' id ', country: 'us' });
    assert.deepEqual([lower.status, lower.body.data.drop_ship_location.state, lower.body.data.drop_ship_location.country], [201, 'ID', 'US']);
  });

  test('every failed rule in one 422 invalid_drop_ship_location, joined with semicolons and named in details; nothing written', async () => {
    const customer = await createCustomer();
    const before = [await count('drop_ship_locations'), await count('history')];
    const answer = await call(t.app, 'POST', `/api/v1/customers/${customer}/drop-ship-locations`, {
      key: t.adminKey, body: { name: '  ', address_line_1: 'x'.repeat(101), state: 'zz', zip_code: '1234', email: 'not-an-address', phone: '5'.repeat(41) },
    });
    expectError(answer, 422, 'invalid_drop_ship_location');
    assert.equal(answer.body.error.message, [
      'name is required', 'address_line_1 must be at most 100 characters', 'city is required', 'state ZZ is not a US state code',
      'zip_code must be 12345 or 12345-6789 for a US address', 'phone must be at most 40 characters', 'email must be an e-mail address',
    ].join('; '));
    assert.deepEqual(answer.body.error.details.map((d: { field: string }) => d.field), ['name', 'address_line_1', 'city', 'state', 'zip_code', 'phone', 'email']);
    for (const body of [{ ...validLocation, country: 'USA' }, { ...validLocation, zip_code: '12207-12' }, { ...validLocation, notes: 'n'.repeat(1001) }]) {
      expectError(await call(t.app, 'POST', `/api/v1/customers/${customer}/drop-ship-locations`, { key: t.adminKey, body }), 422, 'invalid_drop_ship_location');
    }
    assert.deepEqual([await count('drop_ship_locations'), await count('history')], before);
  });

  test('wrong types, unknown fields, NUL and text over 2,000 characters are 400; an unknown customer is 404; a malformed id 400; nothing written', async () => {
    const customer = await createCustomer();
    const before = await count('drop_ship_locations');
    const post = (id: string, body: unknown) => call(t.app, 'POST', `/api/v1/customers/${id}/drop-ship-locations`, { key: t.adminKey, body });
    expectError(await post(customer, { ...validLocation, zip_code: 12207 }), 400, 'bad_request');
    expectError(await post(customer, { ...validLocation, is_hidden: true }), 400, 'bad_request');
    expectError(await post(customer, { ...validLocation, name: 'a\u0000b' }), 400, 'bad_request');
    expectError(await post(customer, { ...validLocation, notes: 'n'.repeat(2001) }), 400, 'bad_request');
    expectError(await post(MISSING, validLocation), 404, 'not_found');
    expectError(await post(MISSING, {}), 404, 'not_found');
    expectError(await post('nope', validLocation), 400, 'bad_request');
    expectError(await call(t.app, 'GET', `/api/v1/customers/${MISSING}/drop-ship-locations`, { key: t.adminKey }), 404, 'not_found');
    assert.equal(await count('drop_ship_locations'), before);
  });

  test('update: sent fields only, empty clears an optional field, the merged record is checked; audited', async () => {
    const customer = await createCustomer();
    const id = await addLocation(customer, { attention: 'Pat', phone: '555-0100' });
    const patch = (body: unknown) => call(t.app, 'PATCH', `/api/v1/customers/${customer}/drop-ship-locations/${id}`, { key: t.adminKey, body });
    const answer = await patch({ attention: '', city: 'Troy' });
    assert.equal(answer.status, 200);
    assert.deepEqual([answer.body.data.drop_ship_location.attention, answer.body.data.drop_ship_location.city, answer.body.data.drop_ship_location.phone], [null, 'Troy', '555-0100']);
    // Moving abroad keeps the US-style state valid; moving back checks the state and ZIP against the US rules again.
    assert.equal((await patch({ country: 'ca', state: 'QC', zip_code: 'H2X 1Y4' })).status, 200);
    const refused = await patch({ country: 'us', name: '' });
    expectError(refused, 422, 'invalid_drop_ship_location');
    assert.equal(refused.body.error.message, 'name is required; state QC is not a US state code; zip_code must be 12345 or 12345-6789 for a US address');
    const row = await t.db.selectFrom('drop_ship_locations').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    assert.deepEqual([row.name, row.city, row.attention, row.country, row.state], ['Job site', 'Troy', null, 'CA', 'QC']);
    assert.deepEqual((await historyOf(id)).map((h) => h.action), ['created', 'updated', 'updated']);
  });

  test('a location of another customer is 404 on update and hide, and stays as it was', async () => {
    const owner = await createCustomer();
    const stranger = await createCustomer();
    const id = await addLocation(owner);
    expectError(await call(t.app, 'PATCH', `/api/v1/customers/${stranger}/drop-ship-locations/${id}`, { key: t.adminKey, body: { name: 'Taken' } }), 404, 'not_found');
    expectError(await call(t.app, 'POST', `/api/v1/customers/${stranger}/drop-ship-locations/${id}/hide`, { key: t.adminKey }), 404, 'not_found');
    expectError(await call(t.app, 'PATCH', `/api/v1/customers/${owner}/drop-ship-locations/${MISSING}`, { key: t.adminKey, body: { name: 'x' } }), 404, 'not_found');
    const row = await t.db.selectFrom('drop_ship_locations').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    assert.deepEqual([row.name, row.is_hidden], ['Job site', false]);
  });

  test('hide: gone from the list unless include_hidden=1, still editable; hiding again changes nothing', async () => {
    const customer = await createCustomer();
    const kept = await addLocation(customer, { name: 'B kept' });
    const hidden = await addLocation(customer, { name: 'A hidden' });
    const answer = await call(t.app, 'POST', `/api/v1/customers/${customer}/drop-ship-locations/${hidden}/hide`, { key: t.adminKey });
    assert.equal(answer.status, 200);
    assert.equal(answer.body.data.drop_ship_location.is_hidden, true);
    assert.equal((await t.db.selectFrom('drop_ship_locations').select('is_hidden').where('id', '=', hidden).executeTakeFirstOrThrow()).is_hidden, true);
    const ids = async (query = '') =>
      (await call(t.app, 'GET', `/api/v1/customers/${customer}/drop-ship-locations${query}`, { key: t.adminKey })).body.data.map((l: { id: string }) => l.id);
    assert.deepEqual(await ids(), [kept]);
    assert.deepEqual(await ids('?include_hidden=1'), [hidden, kept]);
    assert.deepEqual(await ids('?include_hidden=0'), [kept]);
    expectError(await call(t.app, 'GET', `/api/v1/customers/${customer}/drop-ship-locations?include_hidden=yes`, { key: t.adminKey }), 400, 'bad_request');
    const again = await call(t.app, 'POST', `/api/v1/customers/${customer}/drop-ship-locations/${hidden}/hide`, { key: t.adminKey });
    assert.equal(again.status, 200);
    assert.equal(again.body.data.drop_ship_location.is_hidden, true);
    const edited = await call(t.app, 'PATCH', `/api/v1/customers/${customer}/drop-ship-locations/${hidden}`, { key: t.adminKey, body: { notes: 'closed site' } });
    assert.equal(edited.body.data.drop_ship_location.is_hidden, true);
    assert.deepEqual((await historyOf(hidden)).map((h) => h.action), ['created', 'hidden', 'updated']);
  });
});

describe('third-party payers', () => {
  test('create, list, update, hide with their own envelope key and rules', async () => {
    const customer = await createCustomer();
    const created = await call(t.app, 'POST', `/api/v1/customers/${customer}/third-party-payers`, { key: t.adminKey, body: validPayer });
    assert.equal(created.status, 201);
    const payer = created.body.data.third_party_payer;
    assert.deepEqual([payer.state, payer.country, payer.carrier_account, payer.is_hidden], ['TX', 'US', 'UPS-778', false]);
    assert.equal('email' in payer, false);
    const row = await t.db.selectFrom('third_party_payers').selectAll().where('id', '=', payer.id).executeTakeFirstOrThrow();
    assert.equal(row.carrier_account, 'UPS-778');

    const updated = await call(t.app, 'PATCH', `/api/v1/customers/${customer}/third-party-payers/${payer.id}`, { key: t.adminKey, body: { carrier_account: 'FDX-1' } });
    assert.equal(updated.body.data.third_party_payer.carrier_account, 'FDX-1');
    const hidden = await call(t.app, 'POST', `/api/v1/customers/${customer}/third-party-payers/${payer.id}/hide`, { key: t.adminKey });
    assert.equal(hidden.body.data.third_party_payer.is_hidden, true);
    const list = async (query: string) => (await call(t.app, 'GET', `/api/v1/customers/${customer}/third-party-payers${query}`, { key: t.adminKey })).body;
    assert.equal((await list('')).meta.total_count, 0);
    assert.deepEqual((await list('?include_hidden=true')).data.map((p: { id: string }) => p.id), [payer.id]);
    assert.deepEqual((await historyOf(payer.id)).map((h) => [h.entity_type, h.action]), [['third_party_payer', 'created'], ['third_party_payer', 'updated'], ['third_party_payer', 'hidden']]);
  });

  test('an unknown customer is 404 for the payer list, create, update and hide; a payer of no customer is never written', async () => {
    const customer = await createCustomer();
    const payer = (await call(t.app, 'POST', `/api/v1/customers/${customer}/third-party-payers`, { key: t.adminKey, body: validPayer })).body.data.third_party_payer.id;
    const before = [await count('third_party_payers'), await count('history')];
    const base = `/api/v1/customers/${MISSING}/third-party-payers`;
    const list = await call(t.app, 'GET', base, { key: t.adminKey });
    expectError(list, 404, 'not_found');
    assert.match(list.body.error.message, /customer/);
    expectError(await call(t.app, 'POST', base, { key: t.adminKey, body: validPayer }), 404, 'not_found');
    expectError(await call(t.app, 'POST', base, { key: t.adminKey, body: {} }), 404, 'not_found');
    expectError(await call(t.app, 'PATCH', `${base}/${payer}`, { key: t.adminKey, body: { name: 'x' } }), 404, 'not_found');
    expectError(await call(t.app, 'POST', `${base}/${payer}/hide`, { key: t.adminKey }), 404, 'not_found');
    expectError(await call(t.app, 'POST', `${base}/${MISSING}/hide`, { key: t.adminKey }), 404, 'not_found');
    assert.deepEqual([await count('third_party_payers'), await count('history')], before);
    const row = await t.db.selectFrom('third_party_payers').selectAll().where('id', '=', payer).executeTakeFirstOrThrow();
    assert.deepEqual([row.name, row.is_hidden], [validPayer.name, false]);
  });

  test('failures are 422 invalid_third_party_payer (carrier_account required); another customer’s payer is 404', async () => {
    const customer = await createCustomer();
    const before = await count('third_party_payers');
    const blank = await call(t.app, 'POST', `/api/v1/customers/${customer}/third-party-payers`, { key: t.adminKey, body: { ...validPayer, carrier_account: '' } });
    expectError(blank, 422, 'invalid_third_party_payer');
    assert.equal(blank.body.error.message, 'carrier_account is required');
    assert.deepEqual(blank.body.error.details, [{ field: 'carrier_account', message: 'carrier_account is required' }]);
    const unknownField = await call(t.app, 'POST', `/api/v1/customers/${customer}/third-party-payers`, { key: t.adminKey, body: { ...validPayer, email: 'x@y.z' } });
    expectError(unknownField, 400, 'bad_request');
    assert.match(unknownField.body.error.message, /body\/email is not a known field/);
    const invalid = await call(t.app, 'POST', `/api/v1/customers/${customer}/third-party-payers`, { key: t.adminKey, body: { ...validPayer, carrier_account: ' ', zip_code: 'ABCDE' } });
    expectError(invalid, 422, 'invalid_third_party_payer');
    assert.equal(invalid.body.error.message, 'zip_code must be 12345 or 12345-6789 for a US address; carrier_account is required');
    assert.equal(await count('third_party_payers'), before);

    const other = await createCustomer();
    const created = await call(t.app, 'POST', `/api/v1/customers/${customer}/third-party-payers`, { key: t.adminKey, body: validPayer });
    const id = created.body.data.third_party_payer.id;
    expectError(await call(t.app, 'PATCH', `/api/v1/customers/${other}/third-party-payers/${id}`, { key: t.adminKey, body: { name: 'x' } }), 404, 'not_found');
    expectError(await call(t.app, 'POST', `/api/v1/customers/${other}/third-party-payers/${id}/hide`, { key: t.adminKey }), 404, 'not_found');
    expectError(await call(t.app, 'PATCH', `/api/v1/customers/${customer}/third-party-payers/${id}`, { key: t.adminKey, body: { carrier_account: '' } }), 422, 'invalid_third_party_payer');
    const row = await t.db.selectFrom('third_party_payers').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    assert.deepEqual([row.name, row.carrier_account, row.is_hidden], [validPayer.name, 'UPS-778', false]);
  });
});
