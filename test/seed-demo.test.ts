// npm run wms -- seed-demo: the demo warehouse it builds (through the services: real stock rows, ledger, events), its
// refusal of a database that holds data, and that a seed failing halfway leaves nothing behind.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Kysely } from 'kysely';
import { ensureFirstAdmin } from '../src/bootstrap.ts';
import { connectPostgres, type Database } from '../src/db/connect.ts';
import type { DB } from '../src/db/schema.ts';
import { DatabaseNotEmpty, seedDemo, warehouseDataFound, type DemoSummary } from '../src/demo/seed-demo.ts';
import { sha256 } from '../src/domain/secrets.ts';
import { directoryStore, type DocumentStore } from '../src/modules/documents/storage.ts';
import { call, createEmptyServerDatabase, freshDatabase, onPostgres, startApp } from './helpers.ts';

const root = new URL('..', import.meta.url).pathname;
const documentsDir = mkdtempSync(join(tmpdir(), 'wms-seed-demo-'));
let database: Database;
let db: Kysely<DB>;
let summary: DemoSummary;
let closed = false;

before(async () => {
  database = await freshDatabase();
  db = database.db;
  // As after a first start: the administrator and its bootstrap key exist already.
  await ensureFirstAdmin(db, null);
});
after(async () => {
  if (!closed) await database.close();
  rmSync(documentsDir, { recursive: true, force: true });
});

const TABLES = [
  'users', 'api_keys', 'manufacturers', 'locations', 'items', 'item_locations', 'inventory_movements', 'customers', 'drop_ship_locations',
  'orders', 'order_lines', 'pick_batches', 'pick_batch_lines', 'pick_exceptions', 'order_blocks', 'receiving_batches', 'receiving_lines',
  'documents', 'history', 'outbox_events',
] as const;

async function rowCounts(): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const table of TABLES) {
    counts[table] = Number((await db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
  }
  return counts;
}

const countBy = <T>(rows: T[], key: (row: T) => string) =>
  rows.reduce<Record<string, number>>((counts, row) => ({ ...counts, [key(row)]: (counts[key(row)] ?? 0) + 1 }), {});

describe('seed-demo', () => {
  test('only the first administrator counts as empty; any other user does not', async () => {
    assert.deepEqual(await warehouseDataFound(db), []);
    await assert.rejects(db.transaction().execute(async (tx) => {
      await tx.insertInto('users').values({
        name: 'carla', email: null, role: 'office', manufacturer_id: null, password_hash: null, invite_token_hash: null, invite_expires_at: null, deactivated_at: null,
      }).execute();
      assert.deepEqual(await warehouseDataFound(tx), ['users besides the first administrator']);
      throw new Error('roll back');
    }), /roll back/);
  });

  test('a seed that fails halfway (the packing list cannot be filed) leaves nothing behind', async () => {
    const before = await rowCounts();
    const stored: string[] = [];
    const failing: DocumentStore = {
      put: async (key) => {
        stored.push(key);
        throw new Error('disk full');
      },
      get: async () => null,
      delete: async () => {},
    };
    await assert.rejects(seedDemo(db, failing), /disk full/);
    assert.equal(stored.length, 1, 'it got as far as packing the first order');
    assert.deepEqual(await rowCounts(), before);
    assert.deepEqual(await warehouseDataFound(db), []);
  });

  test('an empty database gets partners, bins, stocked items, customers and orders in every state', async () => {
    summary = await seedDemo(db, directoryStore(documentsDir));
    assert.match(summary.adminKey, /^jwc_[0-9A-Za-z]{32}$/);

    const partners = await db.selectFrom('manufacturers').select('code').orderBy('code').execute();
    assert.deepEqual(partners.map((p) => p.code), ['ACME', 'BRIGHT', 'CASCADE']);
    const locations = await db.selectFrom('locations').select(['location_code', 'location_type']).execute();
    assert.deepEqual(countBy(locations, (l) => l.location_type), { storage: 5, staging: 1, shipping: 1, quarantine: 1 });

    // Stock: every item sits in a bin, and each item's ledger adds up to its on-hand.
    const items = await db.selectFrom('items').select(['id', 'item_number_display', 'qty_on_hand']).execute();
    assert.equal(items.length, 7);
    const ledger = await db.selectFrom('inventory_movements').select(['item_id', 'movement_type', 'quantity', 'inventory_status']).execute();
    for (const item of items) {
      assert.ok(item.qty_on_hand > 0, `${item.item_number_display} is in stock`);
      const bins = await db.selectFrom('item_locations').select('qty_on_hand').where('item_id', '=', item.id).where('inventory_status', '=', 'available').execute();
      assert.equal(bins.reduce((sum, b) => sum + b.qty_on_hand, 0), item.qty_on_hand, `${item.item_number_display}: bins hold its on-hand`);
      const moved = ledger.filter((m) => m.item_id === item.id && m.inventory_status === 'available').reduce((sum, m) => sum + m.quantity, 0);
      assert.equal(moved, item.qty_on_hand, `${item.item_number_display}: the ledger adds up to its on-hand`);
    }
    // Opening counts, the posted batch's two lines and its failed units, and the lines of the four shipped batches.
    assert.deepEqual(countBy(ledger, (m) => `${m.movement_type}/${m.inventory_status}`), {
      'adjustment/available': 5, 'receipt/available': 2, 'receipt/quarantine': 1, 'shipment/available': 6,
    });

    const receiving = await db.selectFrom('receiving_batches').select('status').execute();
    assert.deepEqual(countBy(receiving, (b) => b.status), { posted: 1, draft: 1 });

    const orders = await db.selectFrom('orders').select(['status', 'drop_ship_location_id']).execute();
    assert.deepEqual(countBy(orders, (o) => o.status), { entered: 1, released: 3, shipped: 1, partial: 1, cancelled: 1, billed: 1, closed: 1 });
    assert.equal(orders.filter((o) => o.drop_ship_location_id).length, 1, 'one order ships to the drop-ship location');
    const batches = await db.selectFrom('pick_batches').select(['status', 'staged_slot']).execute();
    assert.deepEqual(countBy(batches, (b) => b.status), { in_progress: 1, packed: 1, shipped: 4 });
    assert.equal(batches.find((b) => b.status === 'packed')!.staged_slot, 'STAGE-1');
    const exceptions = await db.selectFrom('pick_exceptions').select(['kind', 'status']).execute();
    assert.deepEqual(exceptions, [{ kind: 'short_pick', status: 'reviewed' }]);

    // Nothing committed to cancelled or shipped orders is still held: committed stock is exactly the open lines'.
    const committed = await db.selectFrom('items').select((eb) => eb.fn.sum<number>('qty_committed').as('n')).executeTakeFirstOrThrow();
    const open = await db.selectFrom('order_lines').select((eb) => eb.fn.sum<number>('qty_committed').as('n')).executeTakeFirstOrThrow();
    assert.equal(Number(committed.n), Number(open.n));

    // The real history and events, by the administrator through the key the seed printed.
    const key = await db.selectFrom('api_keys as k').innerJoin('users as u', 'u.id', 'k.user_id').select(['k.id', 'u.name'])
      .where('k.key_hash', '=', sha256(summary.adminKey)).executeTakeFirstOrThrow();
    assert.equal(key.name, 'admin');
    assert.equal((await db.selectFrom('users').select('id').execute()).length, 1, 'the existing administrator, no new user');
    const authors = await db.selectFrom('history').select('api_key_id').distinct().where('entity_type', 'in', ['order', 'pick_batch', 'item']).execute();
    assert.deepEqual(authors, [{ api_key_id: key.id }]);
    const kinds = new Set((await db.selectFrom('outbox_events').select('kind').execute()).map((e) => e.kind));
    for (const kind of ['inventory.adjusted', 'receiving.posted', 'order.created', 'order.released', 'pick_batch.packed', 'pick_batch.shipped',
      'order.shipped', 'exception.opened', 'exception.reviewed', 'order.cancelled', 'order.billed', 'order.closed']) {
      assert.ok(kinds.has(kind), `event ${kind}`);
    }
    const lists = await db.selectFrom('documents').select('storage_key').execute();
    assert.equal(lists.length, 5, 'a packing list per packed batch');
    for (const list of lists) assert.ok(existsSync(join(documentsDir, list.storage_key)));
  });

  test('a second run is refused and changes nothing', async () => {
    const before = await rowCounts();
    await assert.rejects(seedDemo(db, directoryStore(documentsDir)), (error: Error) => {
      assert.ok(error instanceof DatabaseNotEmpty);
      assert.match(error.message, /only an empty database; this one already holds supply partners, customers, items/);
      return true;
    });
    assert.deepEqual(await rowCounts(), before);
  });

  test('the printed key opens the API onto the demo warehouse', async () => {
    const t = await startApp({ database });
    try {
      const open = await call(t.app, 'GET', '/api/v1/orders?status=open', { key: summary.adminKey });
      assert.equal(open.status, 200);
      assert.equal(open.body.data.length, 5, 'entered, three released, partial');
      assert.deepEqual(open.body.data.map((o: { display_substatus?: string }) => o.display_substatus ?? '').filter(Boolean).sort(), ['packed', 'picking']);
    } finally {
      closed = true;
      await t.close();
    }
  });
});

/** The command itself on a database no service has started on: it migrates, seeds and prints; a second run exits 1. */
function cli(env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['src/cli.ts', 'seed-demo'], { cwd: root, env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => {
      child.kill();
      reject(new Error(`seed-demo timed out\n${stdout}\n${stderr}`));
    }, 60_000);
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('npm run wms -- seed-demo', { skip: !onPostgres && 'the command migrates a database of its own: run with TEST_DATABASE_URL' }, () => {
  test('seeds a never-started database, then refuses it', async () => {
    const empty = await createEmptyServerDatabase();
    const documents = mkdtempSync(join(tmpdir(), 'wms-seed-cli-'));
    try {
      const env = { DATABASE_URL: empty.url, WMS_DOCUMENTS_DIR: documents, WMS_PUBLIC_URL: 'http://wms.example:8080' };
      const first = await cli(env);
      assert.equal(first.code, 0, first.stderr);
      assert.match(first.stdout, /Demo warehouse created/);
      assert.match(first.stdout, /^ {2}jwc_[0-9A-Za-z]{32}$/m);
      assert.match(first.stdout, /curl -s "http:\/\/wms\.example:8080\/api\/v1\/orders\?status=open"/);
      const second = await cli(env);
      assert.equal(second.code, 1);
      assert.equal(second.stdout, '');
      assert.match(second.stderr, /seed-demo fills only an empty database; this one already holds supply partners/);
      // A database with data on an older schema (a migration pending) is refused before the migration runs.
      const { db: database, close } = connectPostgres(empty.url, { poolSize: 1, statementTimeoutMs: 0 });
      const newest = await database.selectFrom('schema_migrations').select('version').orderBy('version', 'desc').executeTakeFirstOrThrow();
      await database.deleteFrom('schema_migrations').where('version', '=', newest.version).execute();
      const older = await cli(env);
      assert.equal(older.code, 1);
      assert.match(older.stderr, /Nothing was changed/);
      assert.equal(await database.selectFrom('schema_migrations').select('version').where('version', '=', newest.version).executeTakeFirst(), undefined,
        'the pending migration did not run');
      await close();
    } finally {
      rmSync(documents, { recursive: true, force: true });
      await empty.drop();
    }
  });
});
