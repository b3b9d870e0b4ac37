// Contacts of supply partners and customers: links and roles, bare responses, ordering, permissions, partner scope.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { activeContactsWithRole } from '../src/modules/contacts/service.ts';
import { call, createManufacturer, expectError, onPostgres, startApp, userWithKey, type TestApp } from './helpers.ts';

let t: TestApp;
let acme: string;
let other: string;
let customer: string;
let adminUserId: string;
before(async () => {
  t = await startApp();
  acme = await createManufacturer(t, 'ACME');
  other = await createManufacturer(t, 'OTHER');
  const created = await call(t.app, 'POST', '/api/v1/customers', { key: t.adminKey, body: { account_number: 'C-1', name: 'Hardware Hut' } });
  customer = created.body.data.id;
  adminUserId = (await call(t.app, 'GET', '/api/v1/me', { key: t.adminKey })).body.data.user.id;
});
after(() => t.close());

const MISSING = '00000000-0000-4000-8000-000000000000';
const CONTACT_KEYS = [
  'created_at', 'created_by', 'email', 'first_name', 'id', 'is_primary', 'last_name', 'mobile', 'notes', 'phone', 'status', 'title',
  'updated_at', 'updated_by',
];

const storedContact = (id: string) => t.db.selectFrom('contacts').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const linksOf = (id: string) => t.db.selectFrom('contact_associations').selectAll().where('contact_id', '=', id).orderBy('created_at').execute();
const actionsOf = async (id: string) =>
  (await t.db.selectFrom('history').select('action').where('entity_type', '=', 'contact').where('entity_id', '=', id).orderBy('occurred_at').execute()).map((h) => h.action);
const counts = async () => Promise.all(['contacts', 'contact_associations', 'history'].map(async (table) =>
  Number((await t.db.selectFrom(table as 'contacts').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n)));

async function addContact(entity: string, entityType: 'manufacturer' | 'customer', body: Record<string, unknown>, key = t.adminKey): Promise<string> {
  const answer = await call(t.app, 'POST', `/api/v1/contacts/${entityType}/${entity}`, { key, body });
  if (answer.status !== 201) throw new Error(`contact: ${JSON.stringify(answer.body)}`);
  return answer.body.id;
}

const listed = async (entityType: string, entity: string, key = t.adminKey, query = '') =>
  (await call(t.app, 'GET', `/api/v1/contacts/${entityType}/${entity}${query}`, { key })).body;

describe('create and read', () => {
  test('create answers 201 with the bare contact, its association_id and role; contact, link and history stored together', async () => {
    const answer = await call(t.app, 'POST', `/api/v1/contacts/manufacturer/${acme}`, {
      key: t.adminKey, body: { last_name: ' Rivera ', first_name: 'Ana', email: 'ana@acme.example', phone: '', role: ' direct_ship ', is_primary: true },
    });
    assert.equal(answer.status, 201);
    const contact = answer.body;
    assert.equal('data' in contact, false);
    assert.deepEqual(Object.keys(contact).sort(), [...CONTACT_KEYS, 'association_id', 'role'].sort());
    assert.deepEqual(
      [contact.last_name, contact.first_name, contact.phone, contact.role, contact.is_primary, contact.status, contact.created_by, contact.updated_by],
      ['Rivera', 'Ana', null, 'direct_ship', true, 'active', adminUserId, adminUserId],
    );
    const row = await storedContact(contact.id);
    assert.deepEqual([row.last_name, row.email, row.is_primary, row.created_by], ['Rivera', 'ana@acme.example', true, adminUserId]);
    const links = await linksOf(contact.id);
    assert.deepEqual(links.map((l) => [l.id, l.manufacturer_id, l.customer_id, l.role]), [[contact.association_id, acme, null, 'direct_ship']]);
    const history = await t.db.selectFrom('history').selectAll().where('entity_id', '=', contact.id).execute();
    assert.deepEqual(history.map((h) => [h.entity_type, h.action, h.manufacturer_id]), [['contact', 'created', acme]]);
  });

  test('a customer contact without a role has role "" and is_primary false', async () => {
    const answer = await call(t.app, 'POST', `/api/v1/contacts/customer/${customer}`, { key: t.adminKey, body: { last_name: 'Buyer' } });
    assert.equal(answer.status, 201);
    assert.deepEqual([answer.body.role, answer.body.is_primary, answer.body.first_name], ['', false, null]);
    const links = await linksOf(answer.body.id);
    assert.deepEqual(links.map((l) => [l.customer_id, l.manufacturer_id]), [[customer, null]]);
  });

  test('get answers the bare contact without link keys, also once inactive', async () => {
    const id = await addContact(acme, 'manufacturer', { last_name: 'Getter', role: 'billing' });
    const read = await call(t.app, 'GET', `/api/v1/contacts/${id}`, { key: t.adminKey });
    assert.equal(read.status, 200);
    assert.deepEqual(Object.keys(read.body).sort(), CONTACT_KEYS);
    assert.equal((await call(t.app, 'POST', `/api/v1/contacts/${id}/deactivate`, { key: t.adminKey })).status, 204);
    const inactive = await call(t.app, 'GET', `/api/v1/contacts/${id}`, { key: t.adminKey });
    assert.equal(inactive.status, 200);
    assert.equal(inactive.body.status, 'inactive');
    expectError(await call(t.app, 'GET', `/api/v1/contacts/${MISSING}`, { key: t.adminKey }), 404, 'not_found');
  });
});

describe('entity lists', () => {
  test('active contacts only, primary first, then last name (case-insensitive), each with its link; paged with meta', async () => {
    const partner = await createManufacturer(t, 'ORDERED');
    const zed = await addContact(partner, 'manufacturer', { last_name: 'Zed', role: 'sales' });
    const adams = await addContact(partner, 'manufacturer', { last_name: 'adams' });
    const primary = await addContact(partner, 'manufacturer', { last_name: 'Young', is_primary: true, role: 'direct_ship' });
    const baker = await addContact(partner, 'manufacturer', { last_name: 'Baker' });
    const gone = await addContact(partner, 'manufacturer', { last_name: 'Aaron' });
    await call(t.app, 'POST', `/api/v1/contacts/${gone}/deactivate`, { key: t.adminKey });

    const all = await listed('manufacturer', partner);
    assert.deepEqual(all.data.map((c: { id: string }) => c.id), [primary, adams, baker, zed]);
    assert.deepEqual(all.meta, { page: 1, per_page: 50, total_count: 4, total_pages: 1 });
    const links = await t.db.selectFrom('contact_associations').select(['id', 'contact_id']).where('manufacturer_id', '=', partner).execute();
    const linkOf = new Map(links.map((l) => [l.contact_id, l.id]));
    for (const row of all.data) assert.equal(row.association_id, linkOf.get(row.id));
    assert.deepEqual(all.data.map((c: { role: string }) => c.role), ['direct_ship', '', '', 'sales']);

    const second = await listed('manufacturer', partner, t.adminKey, '?per_page=3&page=2');
    assert.deepEqual(second.data.map((c: { id: string }) => c.id), [zed]);
    assert.deepEqual(second.meta, { page: 2, per_page: 3, total_count: 4, total_pages: 2 });
    expectError(await call(t.app, 'GET', `/api/v1/contacts/manufacturer/${partner}?per_page=0`, { key: t.adminKey }), 400, 'bad_request');
  });

  test('an unknown entity is 404, an unknown entity type or a malformed id 400', async () => {
    expectError(await call(t.app, 'GET', `/api/v1/contacts/customer/${MISSING}`, { key: t.adminKey }), 404, 'not_found');
    expectError(await call(t.app, 'GET', `/api/v1/contacts/manufacturer/${MISSING}`, { key: t.adminKey }), 404, 'not_found');
    expectError(await call(t.app, 'GET', `/api/v1/contacts/supplier/${acme}`, { key: t.adminKey }), 400, 'bad_request');
    expectError(await call(t.app, 'GET', '/api/v1/contacts/customer/123', { key: t.adminKey }), 400, 'bad_request');
  });
});

describe('update and deactivate', () => {
  test('update: last_name required, omitted fields kept, empty or null clears; bare answer; updated_by and history', async () => {
    const office = await userWithKey(t, 'office');
    const id = await addContact(customer, 'customer', { last_name: 'Old', first_name: 'Kim', title: 'Buyer', mobile: '555-0199' });
    expectError(await call(t.app, 'PATCH', `/api/v1/contacts/${id}`, { key: office.key, body: { title: 'x' } }), 400, 'bad_request');
    const answer = await call(t.app, 'PATCH', `/api/v1/contacts/${id}`, { key: office.key, body: { last_name: 'New', title: '', mobile: null, is_primary: true } });
    assert.equal(answer.status, 200);
    assert.deepEqual(Object.keys(answer.body).sort(), CONTACT_KEYS);
    const row = await storedContact(id);
    assert.deepEqual([row.last_name, row.first_name, row.title, row.mobile, row.is_primary, row.created_by, row.updated_by], ['New', 'Kim', null, null, true, adminUserId, office.userId]);
    assert.deepEqual(await actionsOf(id), ['created', 'updated']);
  });

  test('e-mail is trimmed like every other field: surrounding whitespace is dropped, whitespace only clears', async () => {
    const created = await call(t.app, 'POST', `/api/v1/contacts/customer/${customer}`, { key: t.adminKey, body: { last_name: 'Spaced', email: ' a@b.co ' } });
    assert.equal(created.status, 201);
    assert.equal(created.body.email, 'a@b.co');
    const id = created.body.id;
    assert.equal((await storedContact(id)).email, 'a@b.co');
    const patched = await call(t.app, 'PATCH', `/api/v1/contacts/${id}`, { key: t.adminKey, body: { last_name: 'Spaced', email: '\tnew@b.co\n' } });
    assert.equal(patched.body.email, 'new@b.co');
    const cleared = await call(t.app, 'PATCH', `/api/v1/contacts/${id}`, { key: t.adminKey, body: { last_name: 'Spaced', email: '   ' } });
    assert.equal(cleared.status, 200);
    assert.equal(cleared.body.email, null);
    assert.equal((await storedContact(id)).email, null);
    const blank = await call(t.app, 'POST', `/api/v1/contacts/customer/${customer}`, { key: t.adminKey, body: { last_name: 'Blank', email: '  ' } });
    assert.deepEqual([blank.status, blank.body.email], [201, null]);
    for (const email of [' a b@c.de ', ' no-at-sign ', ' x@y ']) {
      expectError(await call(t.app, 'PATCH', `/api/v1/contacts/${id}`, { key: t.adminKey, body: { last_name: 'Spaced', email } }), 400, 'bad_request');
    }
    assert.equal((await storedContact(id)).email, null);
  });

  test('deactivate: 204, inactive, links kept, gone from lists and role lookups; again changes nothing', async () => {
    const partner = await createManufacturer(t, 'DEACT');
    const id = await addContact(partner, 'manufacturer', { last_name: 'Leaving', email: 'l@deact.example', role: 'direct_ship' });
    assert.equal((await activeContactsWithRole(t.db, 'manufacturer', partner, 'direct_ship')).length, 1);
    const answer = await call(t.app, 'POST', `/api/v1/contacts/${id}/deactivate`, { key: t.adminKey });
    assert.equal(answer.status, 204);
    assert.equal(answer.body, null);
    assert.equal((await storedContact(id)).status, 'inactive');
    assert.equal((await linksOf(id)).length, 1);
    assert.equal((await listed('manufacturer', partner)).meta.total_count, 0);
    assert.deepEqual(await activeContactsWithRole(t.db, 'manufacturer', partner, 'direct_ship'), []);
    assert.equal((await call(t.app, 'POST', `/api/v1/contacts/${id}/deactivate`, { key: t.adminKey })).status, 204);
    assert.deepEqual(await actionsOf(id), ['created', 'deactivated']);
    expectError(await call(t.app, 'POST', `/api/v1/contacts/${MISSING}/deactivate`, { key: t.adminKey }), 404, 'not_found');
  });
});

describe('history', () => {
  test('a partner contact\'s rows are filed under its partner: created, updated and deactivated under the first one, links under the one concerned', async () => {
    const id = await addContact(acme, 'manufacturer', { last_name: 'Filed', role: 'sales' });
    assert.equal((await call(t.app, 'PATCH', `/api/v1/contacts/${id}`, { key: t.adminKey, body: { last_name: 'Filed', title: 'Rep' } })).status, 200);
    assert.equal((await call(t.app, 'PUT', `/api/v1/contacts/${id}/associations/manufacturer/${other}`, { key: t.adminKey, body: { role: 'billing' } })).status, 200);
    assert.equal((await call(t.app, 'PUT', `/api/v1/contacts/${id}/associations/customer/${customer}`, { key: t.adminKey, body: { role: 'billing' } })).status, 200);
    assert.equal((await call(t.app, 'PUT', `/api/v1/contacts/${id}/associations/manufacturer/${acme}`, { key: t.adminKey, body: { role: 'direct_ship' } })).status, 200);
    assert.equal((await call(t.app, 'POST', `/api/v1/contacts/${id}/deactivate`, { key: t.adminKey })).status, 204);
    const rows = await t.db.selectFrom('history').select(['action', 'manufacturer_id']).where('entity_type', '=', 'contact').where('entity_id', '=', id).orderBy('occurred_at').execute();
    assert.deepEqual(rows.map((h) => [h.action, h.manufacturer_id]), [
      ['created', acme], ['updated', acme], ['linked', other], ['linked', null], ['role_changed', acme], ['deactivated', acme],
    ]);
  });
});

describe('links', () => {
  test('PUT links an existing contact to another entity, PUT again re-roles the same link, the same role again changes nothing', async () => {
    const id = await addContact(acme, 'manufacturer', { last_name: 'Linked', role: 'sales' });
    const url = `/api/v1/contacts/${id}/associations/customer/${customer}`;
    const linked = await call(t.app, 'PUT', url, { key: t.adminKey, body: { role: 'billing' } });
    assert.equal(linked.status, 200);
    assert.equal(linked.body.role, 'billing');
    assert.deepEqual(Object.keys(linked.body).sort(), [...CONTACT_KEYS, 'association_id', 'role'].sort());
    const rerole = await call(t.app, 'PUT', url, { key: t.adminKey, body: { role: 'direct_ship' } });
    assert.equal(rerole.body.association_id, linked.body.association_id);
    assert.equal(rerole.body.role, 'direct_ship');
    const same = await call(t.app, 'PUT', url, { key: t.adminKey, body: { role: 'direct_ship' } });
    assert.equal(same.status, 200);
    assert.equal(same.body.association_id, linked.body.association_id);
    const links = await linksOf(id);
    assert.deepEqual(links.map((l) => [l.manufacturer_id, l.customer_id, l.role]), [[acme, null, 'sales'], [null, customer, 'direct_ship']]);
    assert.deepEqual(await actionsOf(id), ['created', 'linked', 'role_changed']);
    assert.ok((await listed('customer', customer)).data.some((c: { id: string; role: string }) => c.id === id && c.role === 'direct_ship'));
  });

  test('DELETE removes one link (204); the contact and its other links stay; an absent link is 404', async () => {
    const id = await addContact(acme, 'manufacturer', { last_name: 'Unlinked' });
    await call(t.app, 'PUT', `/api/v1/contacts/${id}/associations/customer/${customer}`, { key: t.adminKey, body: { role: '' } });
    const url = `/api/v1/contacts/${id}/associations/customer/${customer}`;
    const answer = await call(t.app, 'DELETE', url, { key: t.adminKey });
    assert.equal(answer.status, 204);
    assert.deepEqual((await linksOf(id)).map((l) => l.manufacturer_id), [acme]);
    assert.equal((await call(t.app, 'GET', `/api/v1/contacts/${id}`, { key: t.adminKey })).status, 200);
    assert.equal((await listed('customer', customer)).data.some((c: { id: string }) => c.id === id), false);
    expectError(await call(t.app, 'DELETE', url, { key: t.adminKey }), 404, 'not_found');
    expectError(await call(t.app, 'DELETE', `/api/v1/contacts/${MISSING}/associations/customer/${customer}`, { key: t.adminKey }), 404, 'not_found');
    assert.deepEqual(await actionsOf(id), ['created', 'linked', 'unlinked']);
  });

  test('linking an inactive contact is 422 invalid_status; unknown contact or entity 404; bad type or role 400; nothing changes', async () => {
    const id = await addContact(acme, 'manufacturer', { last_name: 'Dormant' });
    await call(t.app, 'POST', `/api/v1/contacts/${id}/deactivate`, { key: t.adminKey });
    const before = await counts();
    const put = (url: string, body: unknown) => call(t.app, 'PUT', url, { key: t.adminKey, body });
    expectError(await put(`/api/v1/contacts/${id}/associations/customer/${customer}`, { role: 'x' }), 422, 'invalid_status');
    expectError(await put(`/api/v1/contacts/${MISSING}/associations/customer/${customer}`, { role: 'x' }), 404, 'not_found');
    expectError(await put(`/api/v1/contacts/${id}/associations/customer/${MISSING}`, { role: 'x' }), 404, 'not_found');
    expectError(await put(`/api/v1/contacts/${id}/associations/warehouse/${customer}`, { role: 'x' }), 400, 'bad_request');
    expectError(await put(`/api/v1/contacts/${id}/associations/customer/${customer}`, {}), 400, 'bad_request');
    expectError(await put(`/api/v1/contacts/${id}/associations/customer/${customer}`, { role: 'r'.repeat(61) }), 400, 'bad_request');
    expectError(await put(`/api/v1/contacts/${id}/associations/customer/${customer}`, { role: 7 }), 400, 'bad_request');
    assert.deepEqual(await counts(), before);
  });
});

describe('concurrency on PostgreSQL', { skip: !onPostgres && 'needs TEST_DATABASE_URL (PGlite runs one transaction at a time)' }, () => {
  test('parallel PUTs of one link all answer 200 and leave one link (the contact row lock makes them take turns)', async () => {
    const id = await addContact(acme, 'manufacturer', { last_name: 'Racing' });
    const roles = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'];
    const answers = await Promise.all(roles.map((role) =>
      call(t.app, 'PUT', `/api/v1/contacts/${id}/associations/customer/${customer}`, { key: t.adminKey, body: { role } })));
    assert.deepEqual(answers.map((a) => a.status), roles.map(() => 200), JSON.stringify(answers.filter((a) => a.status !== 200).map((a) => a.body)));
    assert.equal(new Set(answers.map((a) => a.body.association_id)).size, 1);
    const links = (await linksOf(id)).filter((l) => l.customer_id === customer);
    assert.equal(links.length, 1);
    // One link row, re-roled by every PUT after the first: one 'linked' and seven 'role_changed' rows (history's
    // occurred_at is each transaction's start, so their order is not the order in which the lock let them through).
    assert.deepEqual((await actionsOf(id)).sort(), ['created', 'linked', ...roles.slice(1).map(() => 'role_changed')].sort());
  });
});

describe('role lookup', () => {
  test('activeContactsWithRole: active contacts whose link has the role (any case), primary first; other entities and roles left out', async () => {
    const partner = await createManufacturer(t, 'ROLES');
    const plain = await addContact(partner, 'manufacturer', { last_name: 'Able', role: 'Direct_Ship', email: 'a@roles.example' });
    const primary = await addContact(partner, 'manufacturer', { last_name: 'Zulu', role: 'direct_ship', is_primary: true });
    await addContact(partner, 'manufacturer', { last_name: 'Billing', role: 'billing', email: 'b@roles.example' });
    await addContact(other, 'manufacturer', { last_name: 'Elsewhere', role: 'direct_ship', email: 'e@other.example' });
    const found = await activeContactsWithRole(t.db, 'manufacturer', partner, ' DIRECT_SHIP ');
    assert.deepEqual(found.map((c) => [c.id, c.role]), [[primary, 'direct_ship'], [plain, 'Direct_Ship']]);
    assert.equal(found.find((c) => c.id === plain)!.email, 'a@roles.example');
    assert.deepEqual(await activeContactsWithRole(t.db, 'customer', customer, 'nobody'), []);
  });
});

describe('permissions and partner scope', () => {
  test('office: customer contacts read and write, supply-partner contacts read only; warehouse staff none', async () => {
    const office = await userWithKey(t, 'office');
    const partnerContact = await addContact(acme, 'manufacturer', { last_name: 'PartnerOnly' });
    assert.equal((await call(t.app, 'POST', `/api/v1/contacts/customer/${customer}`, { key: office.key, body: { last_name: 'ByOffice' } })).status, 201);
    const before = await counts();
    expectError(await call(t.app, 'POST', `/api/v1/contacts/manufacturer/${acme}`, { key: office.key, body: { last_name: 'x' } }), 403, 'forbidden');
    assert.equal((await call(t.app, 'GET', `/api/v1/contacts/manufacturer/${acme}`, { key: office.key })).status, 200);
    assert.equal((await call(t.app, 'GET', `/api/v1/contacts/${partnerContact}`, { key: office.key })).status, 200);
    expectError(await call(t.app, 'PATCH', `/api/v1/contacts/${partnerContact}`, { key: office.key, body: { last_name: 'Hijacked' } }), 403, 'forbidden');
    expectError(await call(t.app, 'POST', `/api/v1/contacts/${partnerContact}/deactivate`, { key: office.key }), 403, 'forbidden');
    expectError(await call(t.app, 'DELETE', `/api/v1/contacts/${partnerContact}/associations/manufacturer/${acme}`, { key: office.key }), 403, 'forbidden');
    assert.deepEqual(await counts(), before);
    assert.deepEqual([(await storedContact(partnerContact)).last_name, (await storedContact(partnerContact)).status], ['PartnerOnly', 'active']);

    // Linked to a customer too (by a key that may), the same contact is the office's to edit (edit on at least one linked entity).
    assert.equal((await call(t.app, 'PUT', `/api/v1/contacts/${partnerContact}/associations/customer/${customer}`, { key: t.adminKey, body: { role: 'billing' } })).status, 200);
    assert.equal((await call(t.app, 'PATCH', `/api/v1/contacts/${partnerContact}`, { key: office.key, body: { last_name: 'Shared' } })).status, 200);
    assert.equal((await storedContact(partnerContact)).last_name, 'Shared');

    const warehouse = await userWithKey(t, 'warehouse');
    expectError(await call(t.app, 'GET', `/api/v1/contacts/customer/${customer}`, { key: warehouse.key }), 403, 'forbidden');
    expectError(await call(t.app, 'GET', `/api/v1/contacts/${partnerContact}`, { key: warehouse.key }), 403, 'forbidden');
  });

  test('an office key cannot take over a supply partner\'s contact by linking it to a customer: 403, no link, still not editable', async () => {
    const office = await userWithKey(t, 'office');
    const id = await addContact(acme, 'manufacturer', { last_name: 'Guarded', email: 'guarded@acme.example', role: 'direct_ship' });
    const contactBefore = await storedContact(id);
    const linksBefore = await t.db.selectFrom('contact_associations').selectAll().orderBy('id').execute();
    const historyBefore = await actionsOf(id);
    for (const role of ['billing', '']) {
      const answer = await call(t.app, 'PUT', `/api/v1/contacts/${id}/associations/customer/${customer}`, { key: office.key, body: { role } });
      expectError(answer, 403, 'forbidden');
      assert.match(answer.body.error.message, /edit permission of every entity the contact is linked to/);
    }
    assert.deepEqual(await t.db.selectFrom('contact_associations').selectAll().orderBy('id').execute(), linksBefore);
    expectError(await call(t.app, 'PATCH', `/api/v1/contacts/${id}`, { key: office.key, body: { last_name: 'Hijacked', email: 'office@example.com' } }), 403, 'forbidden');
    expectError(await call(t.app, 'POST', `/api/v1/contacts/${id}/deactivate`, { key: office.key }), 403, 'forbidden');
    assert.deepEqual(await storedContact(id), contactBefore);
    assert.deepEqual(await actionsOf(id), historyBefore);
  });

  test('a contact with no links left: any view permission reads it; changing or linking it needs both edit permissions or a system_admin key', async () => {
    const id = await addContact(acme, 'manufacturer', { last_name: 'Orphan' });
    assert.equal((await call(t.app, 'DELETE', `/api/v1/contacts/${id}/associations/manufacturer/${acme}`, { key: t.adminKey })).status, 204);
    assert.deepEqual(await linksOf(id), []);
    const office = await userWithKey(t, 'office');
    const partnerEditor = await userWithKey(t, 'manager', { scopes: ['manufacturers.view', 'manufacturers.edit'] });
    const bothEdits = await userWithKey(t, 'manager', { scopes: ['customers.edit', 'manufacturers.edit'] });
    const admin = await userWithKey(t, 'system_admin', { scopes: ['customers.view', 'customers.edit'] });
    const stored = await storedContact(id);
    const before = await counts();

    assert.equal((await call(t.app, 'GET', `/api/v1/contacts/${id}`, { key: office.key })).status, 200);
    assert.equal((await call(t.app, 'GET', `/api/v1/contacts/${id}`, { key: partnerEditor.key })).status, 200);
    for (const key of [office.key, partnerEditor.key]) {
      const refused = await call(t.app, 'PATCH', `/api/v1/contacts/${id}`, { key, body: { last_name: 'Claimed' } });
      expectError(refused, 403, 'forbidden');
      assert.match(refused.body.error.message, /linked to no entity/);
      expectError(await call(t.app, 'POST', `/api/v1/contacts/${id}/deactivate`, { key }), 403, 'forbidden');
    }
    expectError(await call(t.app, 'PUT', `/api/v1/contacts/${id}/associations/customer/${customer}`, { key: office.key, body: { role: 'x' } }), 403, 'forbidden');
    expectError(await call(t.app, 'PUT', `/api/v1/contacts/${id}/associations/manufacturer/${other}`, { key: partnerEditor.key, body: { role: 'x' } }), 403, 'forbidden');
    assert.deepEqual(await storedContact(id), stored);
    assert.deepEqual(await counts(), before);

    // A key with both edit permissions, or a system_admin's key with one of them, may.
    assert.equal((await call(t.app, 'PATCH', `/api/v1/contacts/${id}`, { key: bothEdits.key, body: { last_name: 'Kept' } })).status, 200);
    assert.equal((await call(t.app, 'PATCH', `/api/v1/contacts/${id}`, { key: admin.key, body: { last_name: 'Kept again' } })).status, 200);
    assert.equal((await call(t.app, 'PUT', `/api/v1/contacts/${id}/associations/customer/${customer}`, { key: admin.key, body: { role: 'billing' } })).status, 200);
    // Linked to a customer again, it is the office's to edit.
    assert.equal((await call(t.app, 'PATCH', `/api/v1/contacts/${id}`, { key: office.key, body: { last_name: 'Customer side' } })).status, 200);
    assert.deepEqual(await actionsOf(id), ['created', 'unlinked', 'updated', 'updated', 'linked', 'updated']);
  });

  test('a consignor reaches only contacts linked to its own partner; everything else is 404; it cannot write', async () => {
    const consignor = await userWithKey(t, 'consignor', { manufacturerId: acme });
    const own = await addContact(acme, 'manufacturer', { last_name: 'Own' });
    const foreign = await addContact(other, 'manufacturer', { last_name: 'Foreign' });
    const customerOnly = await addContact(customer, 'customer', { last_name: 'CustomerOnly' });
    const shared = await addContact(customer, 'customer', { last_name: 'Shared2' });
    await call(t.app, 'PUT', `/api/v1/contacts/${shared}/associations/manufacturer/${acme}`, { key: t.adminKey, body: { role: 'billing' } });

    assert.ok((await listed('manufacturer', acme, consignor.key)).data.some((c: { id: string }) => c.id === own));
    expectError(await call(t.app, 'GET', `/api/v1/contacts/manufacturer/${other}`, { key: consignor.key }), 404, 'not_found');
    expectError(await call(t.app, 'GET', `/api/v1/contacts/customer/${customer}`, { key: consignor.key }), 404, 'not_found');
    assert.equal((await call(t.app, 'GET', `/api/v1/contacts/${own}`, { key: consignor.key })).status, 200);
    assert.equal((await call(t.app, 'GET', `/api/v1/contacts/${shared}`, { key: consignor.key })).status, 200);
    expectError(await call(t.app, 'GET', `/api/v1/contacts/${foreign}`, { key: consignor.key }), 404, 'not_found');
    expectError(await call(t.app, 'GET', `/api/v1/contacts/${customerOnly}`, { key: consignor.key }), 404, 'not_found');

    const before = await counts();
    expectError(await call(t.app, 'PATCH', `/api/v1/contacts/${own}`, { key: consignor.key, body: { last_name: 'x' } }), 403, 'forbidden');
    expectError(await call(t.app, 'POST', `/api/v1/contacts/manufacturer/${acme}`, { key: consignor.key, body: { last_name: 'x' } }), 403, 'forbidden');
    assert.deepEqual(await counts(), before);

    // Once its last link to the partner is gone the contact is out of the consignor's reach.
    await call(t.app, 'DELETE', `/api/v1/contacts/${own}/associations/manufacturer/${acme}`, { key: t.adminKey });
    expectError(await call(t.app, 'GET', `/api/v1/contacts/${own}`, { key: consignor.key }), 404, 'not_found');
    assert.equal((await call(t.app, 'GET', `/api/v1/contacts/${own}`, { key: t.adminKey })).status, 200);
  });

  test('a key holding only manufacturers.edit and manufacturers.view cannot link a contact it can read to a customer', async () => {
    const manager = await userWithKey(t, 'manager', { scopes: ['manufacturers.view', 'manufacturers.edit'] });
    const id = await addContact(acme, 'manufacturer', { last_name: 'Narrow' });
    expectError(await call(t.app, 'PUT', `/api/v1/contacts/${id}/associations/customer/${customer}`, { key: manager.key, body: { role: 'x' } }), 403, 'forbidden');
    assert.equal((await call(t.app, 'PUT', `/api/v1/contacts/${id}/associations/manufacturer/${other}`, { key: manager.key, body: { role: 'x' } })).status, 200);
    assert.deepEqual((await linksOf(id)).map((l) => l.manufacturer_id), [acme, other]);
  });
});

describe('bad input', () => {
  test('malformed e-mail, over-long or blank fields, wrong types, unknown fields, unknown entity: 4xx and nothing written', async () => {
    const before = await counts();
    const post = (url: string, body: unknown) => call(t.app, 'POST', url, { key: t.adminKey, body });
    const cases: [string, unknown, number, RegExp][] = [
      [`/api/v1/contacts/customer/${customer}`, { last_name: 'x', email: 'no-at-sign' }, 400, /body\/email/],
      [`/api/v1/contacts/customer/${customer}`, { last_name: 'x', email: 'a b@c.de' }, 400, /body\/email/],
      [`/api/v1/contacts/customer/${customer}`, { last_name: 'x'.repeat(101) }, 400, /body\/last_name must NOT have more than 100/],
      [`/api/v1/contacts/customer/${customer}`, { last_name: '  ' }, 400, /body\/last_name/],
      [`/api/v1/contacts/customer/${customer}`, { first_name: 'no last name' }, 400, /body\/last_name is required/],
      [`/api/v1/contacts/customer/${customer}`, { last_name: 'x', is_primary: 'yes' }, 400, /body\/is_primary must be boolean/],
      [`/api/v1/contacts/customer/${customer}`, { last_name: 'x', status: 'inactive' }, 400, /body\/status is not a known field/],
      [`/api/v1/contacts/customer/${customer}`, { last_name: 'x', notes: 'n'.repeat(2001) }, 400, /body\/notes/],
      [`/api/v1/contacts/vendor/${customer}`, { last_name: 'x' }, 400, /params\/entityType must be one of: manufacturer, customer/],
      [`/api/v1/contacts/customer/${MISSING}`, { last_name: 'x' }, 404, /customer not found/],
      [`/api/v1/contacts/manufacturer/${MISSING}`, { last_name: 'x' }, 404, /manufacturer not found/],
    ];
    for (const [url, body, status, message] of cases) {
      const answer = await post(url, body);
      expectError(answer, status, status === 404 ? 'not_found' : 'bad_request');
      assert.match(answer.body.error.message, message);
    }
    const id = await addContact(customer, 'customer', { last_name: 'Stable', email: 'stable@example.com' });
    const stable = await storedContact(id);
    const after = await counts();
    for (const body of [{ last_name: 'x', email: 'broken@' }, { last_name: 'x', role: 'billing' }, { last_name: 'x', id: MISSING }]) {
      expectError(await call(t.app, 'PATCH', `/api/v1/contacts/${id}`, { key: t.adminKey, body }), 400, 'bad_request');
    }
    expectError(await call(t.app, 'PATCH', '/api/v1/contacts/not-a-uuid', { key: t.adminKey, body: { last_name: 'x' } }), 400, 'bad_request');
    expectError(await call(t.app, 'PATCH', `/api/v1/contacts/${MISSING}`, { key: t.adminKey, body: { last_name: 'x' } }), 404, 'not_found');
    assert.deepEqual(await storedContact(id), stable);
    assert.deepEqual(await counts(), after);
    const [contactsBefore, linksBefore] = before;
    assert.deepEqual((await counts()).slice(0, 2), [contactsBefore! + 1, linksBefore! + 1]);
  });
});
