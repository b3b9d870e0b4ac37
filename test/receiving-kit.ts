// Shared by the receiving test files: the app under test, requests, batch builders and views of the stored stock.
import assert from 'node:assert/strict';
import { call, createLocation, createManufacturer, startApp, type Answer, type TestApp } from './helpers.ts';

/** Set by startReceiving() in each test file's before(): the app and the supply partner its batches belong to. */
export const kit = { t: null as unknown as TestApp, partner: '' };

/** The app of a receiving test file: two partners, two storage bins, and the ids its assertions name. */
export async function startReceiving() {
  const t = await startApp();
  const partner = await createManufacturer(t, 'RCV');
  const other = await createManufacturer(t, 'RCVOTHER');
  Object.assign(kit, { t, partner });
  const binA = await createLocation(t, 'R-A-01');
  const binB = await createLocation(t, 'R-B-01');
  const quarantine = (await t.db.selectFrom('locations').select('id').where('location_code', '=', 'QUARANTINE').executeTakeFirstOrThrow()).id;
  const adminId = (await t.db.selectFrom('users').select('id').where('name', '=', 'admin').executeTakeFirstOrThrow()).id;
  return { t, partner, other, binA, binB, quarantine, adminId };
}

export const api = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown, key = kit.t.adminKey) =>
  call(kit.t.app, method, `/api/v1${path}`, { key, ...(body !== undefined ? { body } : {}) });

export async function newBatch(body: Record<string, unknown> = {}, key = kit.t.adminKey): Promise<string> {
  const answer = await api('POST', '/receiving', { manufacturer_id: kit.partner, ...body }, key);
  assert.equal(answer.status, 201, JSON.stringify(answer.body));
  return answer.body.data.batch.id;
}

export async function addLine(batchId: string, body: Record<string, unknown>): Promise<string> {
  const answer = await api('POST', `/receiving/${batchId}/lines`, body);
  assert.equal(answer.status, 201, JSON.stringify(answer.body));
  return answer.body.data.line.id;
}

export const item = (id: string) => kit.t.db.selectFrom('items').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
export const bins = (id: string) => kit.t.db.selectFrom('item_locations').select(['location_id', 'inventory_status', 'qty_on_hand'])
  .where('item_id', '=', id).where('qty_on_hand', '<>', 0).orderBy('location_id').orderBy('inventory_status').execute();
export const ledger = (id: string) => kit.t.db.selectFrom('inventory_movements').selectAll().where('item_id', '=', id).orderBy('seq').execute();
export const batchHistory = (id: string) => kit.t.db.selectFrom('history').select('action').where('entity_id', '=', id).orderBy('occurred_at').execute()
  .then((rows) => rows.map((r) => r.action));
export const eventsOf = (kind: string, batchId: string) => kit.t.db.selectFrom('outbox_events').selectAll().where('kind', '=', kind).execute()
  .then((rows) => rows.filter((e) => (e.data as { batch_id: string }).batch_id === batchId));

/**
 * balance_after chains over the item's ledger and ends at its on-hand: available rows move it, quarantine rows repeat
 * it; and the quarantine rows add up to what the item's quarantine bins hold.
 */
export async function assertLedgerChains(itemId: string) {
  let balance = 0;
  let quarantined = 0;
  for (const row of await ledger(itemId)) {
    if (row.inventory_status === 'quarantine') quarantined += row.quantity;
    else balance += row.quantity;
    assert.equal(row.balance_after, balance, `movement ${row.seq}`);
  }
  assert.equal((await item(itemId)).qty_on_hand, balance);
  const held = (await bins(itemId)).filter((b) => b.inventory_status === 'quarantine').reduce((sum, b) => sum + b.qty_on_hand, 0);
  assert.equal(held, quarantined, 'every quarantined unit is in the ledger');
}

/** Ledger rows of the item that moved on-hand (not the quarantine rows). */
export const onHandLedger = async (id: string) => (await ledger(id)).filter((m) => m.inventory_status === 'available');

/** A batch taken to verified with the given lines, each inspected by `inspect` (pass, waive or counts). */
export async function verifiedBatch(lines: { body: Record<string, unknown>; inspect?: 'pass' | 'waive' | { qty_passed: number; qty_failed: number } }[]) {
  const batchId = await newBatch({ received_date: '2026-03-02' });
  const ids = [];
  for (const line of lines) ids.push(await addLine(batchId, line.body));
  assert.equal((await api('POST', `/receiving/${batchId}/verify`)).status, 200);
  for (const [i, line] of lines.entries()) {
    if (!line.inspect) continue;
    const answer: Answer = typeof line.inspect === 'string'
      ? await api('POST', `/receiving/${batchId}/lines/${ids[i]}/${line.inspect}`)
      : await api('POST', `/receiving/${batchId}/lines/${ids[i]}/inspection`, line.inspect);
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
  }
  return { batchId, lineIds: ids };
}
