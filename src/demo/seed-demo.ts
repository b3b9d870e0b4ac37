// npm run wms -- seed-demo: a small consignment warehouse in an empty database, so a newcomer has partners, stock and
// orders in every state to look at a minute after the first start.
//
// Built by calling the services themselves (not the HTTP API through app.inject): they apply every rule and write the
// real ledger movements, history rows and outbox events, and calling them in one request transaction
// (db/request-transaction.ts, the mechanism idempotent POSTs use; each service's own transaction becomes a savepoint)
// makes the whole seed commit or roll back as one. Through app.inject each request would commit on its own, and a
// failure halfway would leave half a warehouse behind. What the route schemas check (code patterns, lengths) the fixed
// data below meets by construction.
import { sql, type Kysely } from 'kysely';
import { createAdminKey } from '../bootstrap.ts';
import { requestTransaction } from '../db/request-transaction.ts';
import type { Carrier } from '../db/column-types.ts';
import type { DB } from '../db/schema.ts';
import { effectivePermissions, isRole } from '../domain/roles.ts';
import { sha256 } from '../domain/secrets.ts';
import type { Actor } from '../http/auth.ts';
import type { ModuleDeps } from '../http/types.ts';
import { addToAddressBook, createCustomer, DROP_SHIP_LOCATIONS } from '../modules/customers/service.ts';
import { discardUncommittedFiles } from '../modules/documents/service.ts';
import type { DocumentStore } from '../modules/documents/storage.ts';
import { reviewException } from '../modules/exceptions/service.ts';
import { postAdjustment } from '../modules/inventory/service.ts';
import { createItem } from '../modules/items/service.ts';
import { createLocation } from '../modules/locations/service.ts';
import { createManufacturer } from '../modules/manufacturers/service.ts';
import { advanceOrder, cancelOrder, createOrder, releaseOrder } from '../modules/orders/service.ts';
import { packBatch } from '../modules/picking/packing.ts';
import { completeBatch, pickLine, readSession, shortLine, startBatch, verifyLine } from '../modules/picking/service.ts';
import { shipBatch, stageBatch } from '../modules/picking/shipping.ts';
import { markLinePassed, recordInspection, verifyBatch } from '../modules/receiving/inspection.ts';
import { postBatch } from '../modules/receiving/posting.ts';
import { addLine, createBatch } from '../modules/receiving/service.ts';

/** The database already holds warehouse data: the seed refused and changed nothing. */
export class DatabaseNotEmpty extends Error {}

/**
 * What makes a database "not empty" for the seed: any supply partner, customer, item, location besides the QUARANTINE
 * the migrations make, order, receiving batch or stock movement, or any user besides the first administrator (the
 * oldest system_admin, which the first start or create-admin-key makes). Reference data the migrations bring (the MAIN
 * warehouse, ship-via codes) and the administrator's keys do not count. Each check is an exists(), so a large
 * database is refused as fast as a small one.
 */
export async function warehouseDataFound(db: Kysely<DB>): Promise<string[]> {
  const { rows: [found] } = await sql<Record<string, boolean>>`select
    exists (select 1 from manufacturers) as "supply partners",
    exists (select 1 from customers) as "customers",
    exists (select 1 from items) as "items",
    exists (select 1 from locations where location_code <> 'QUARANTINE') as "locations",
    exists (select 1 from orders) as "orders",
    exists (select 1 from receiving_batches) as "receiving batches",
    exists (select 1 from inventory_movements) as "stock movements",
    exists (select 1 from users where id is distinct from (
      select id from users where role = 'system_admin' order by created_at limit 1)) as "users besides the first administrator"`.execute(db);
  return Object.entries(found!).filter(([, present]) => present).map(([what]) => what);
}

/** DatabaseNotEmpty when the database holds warehouse data (what warehouseDataFound names). */
export async function refuseWarehouseData(db: Kysely<DB>): Promise<void> {
  const found = await warehouseDataFound(db);
  if (found.length) throw new DatabaseNotEmpty(`seed-demo fills only an empty database; this one already holds ${found.join(', ')}. Nothing was changed.`);
}

/** The seed acts as the administrator, through the key it prints: every history row names that user and key. */
async function actorOfKey(db: Kysely<DB>, key: string): Promise<Actor> {
  const row = await db.selectFrom('api_keys as k').innerJoin('users as u', 'u.id', 'k.user_id')
    .select(['k.id as key_id', 'k.name as key_name', 'k.scopes', 'u.id as user_id', 'u.name', 'u.email', 'u.role'])
    .where('k.key_hash', '=', sha256(key)).executeTakeFirstOrThrow();
  if (!isRole(row.role)) throw new Error(`the administrator has an unknown role ${row.role}`);
  return {
    userId: row.user_id, userName: row.name, email: row.email, role: row.role, manufacturerId: null,
    apiKeyId: row.key_id, keyName: row.key_name, scopes: row.scopes, expiresAt: null,
    permissions: new Set(effectivePermissions(row.scopes, row.role)),
  };
}

/**
 * Packing files a packing list PDF per batch. The services remove the file of a pack that fails; this remembers every
 * file the seed wrote, so that a seed rolled back later (after the pack succeeded) leaves no file behind either.
 */
function rememberingStore(store: DocumentStore) {
  const written: string[] = [];
  const remembering: DocumentStore = {
    put: async (key, bytes) => {
      written.push(key);
      await store.put(key, bytes);
    },
    get: (key) => store.get(key),
    delete: (key) => store.delete(key),
  };
  return { written, store: remembering };
}

export interface DemoSummary {
  adminKey: string;
  partners: string[];
  locations: string[];
  items: number;
  customers: string[];
  orders: { order_number: number; status: string; floor: string }[];
  receiving: { batch_number: string; status: string }[];
}

/**
 * Fills an empty database with the demo warehouse and returns what it made, with a new full-scope key of the
 * administrator (created too when the database never saw a first start). Refuses (DatabaseNotEmpty) a database holding
 * data. All of it is one transaction; only sequence numbers (order and batch numbers) a failed seed drew stay used.
 */
export async function seedDemo(db: Kysely<DB>, documents: DocumentStore): Promise<DemoSummary> {
  const files = rememberingStore(documents);
  const transaction = requestTransaction();
  try {
    const summary = await transaction.run(async () => {
      await refuseWarehouseData(db);
      const adminKey = await createAdminKey(db);
      return { adminKey, ...(await buildDemo(db, await actorOfKey(db, adminKey), files.store)) };
    });
    await transaction.commit();
    return summary;
  } catch (error) {
    await transaction.rollback().catch(() => {});
    // After a failed commit its outcome is unknown: only files no committed document names are removed.
    await discardUncommittedFiles(db, documents, files.written).catch(() => {});
    throw error;
  }
}

interface Line {
  item: string;
  qty: number;
  price: number;
}

/** The seed's working state: who acts, and the ids of what it made so far, by the codes and numbers people read. */
interface Demo {
  db: Kysely<DB>;
  actor: Actor;
  documents: DocumentStore;
  partners: Map<string, string>;
  bins: Map<string, string>;
  items: Map<string, string>;
  customers: Map<string, string>;
  jobSite: string;
  ups: string;
  labels: number;
  /** By order id: its number, its status and what the floor has done with it, for the summary. */
  orders: Map<string, DemoSummary['orders'][number]>;
  receiving: DemoSummary['receiving'];
}

/** The demo warehouse, built in the order the office and the floor would: each step one service call. */
async function buildDemo(db: Kysely<DB>, actor: Actor, documents: DocumentStore): Promise<Omit<DemoSummary, 'adminKey'>> {
  const demo: Demo = {
    db, actor, documents, partners: new Map(), bins: new Map(), items: new Map(), customers: new Map(), jobSite: '', ups: '', labels: 0,
    orders: new Map(), receiving: [],
  };
  await addSupplyPartners(demo);
  await addLocations(demo);
  await addCatalogue(demo);
  await countOpeningStock(demo);
  await receiveDeliveries(demo);
  await addCustomers(demo);
  await fillOrdersInEveryState(demo);
  // The order statuses as the services left them.
  const statuses = await db.selectFrom('orders').select(['id', 'status']).execute();
  for (const { id, status } of statuses) demo.orders.get(id)!.status = status;
  return {
    partners: [...demo.partners.keys()], locations: [...demo.bins.keys()], items: demo.items.size, customers: [...demo.customers.keys()],
    orders: [...demo.orders.values()].sort((a, b) => a.order_number - b.order_number), receiving: demo.receiving,
  };
}

async function addSupplyPartners(demo: Demo) {
  for (const [code, name] of [['ACME', 'Acme Tools'], ['BRIGHT', 'Brightline Lighting'], ['CASCADE', 'Cascade Fasteners']] as const) {
    demo.partners.set(code, (await createManufacturer(demo.db, demo.actor, { code, name })).id);
  }
}

/** Two aisles of shelving bins, a staging slot where packed orders wait, and the shipping dock. */
async function addLocations(demo: Demo) {
  for (const [zone, aisle, rack] of [['A', '01', '01'], ['A', '01', '02'], ['A', '02', '01'], ['B', '01', '01'], ['B', '01', '02']] as const) {
    const bin = await createLocation(demo.db, demo.actor, { zone, aisle, rack, shelf: '1', location_code: `${zone}-${aisle}-${rack}` });
    demo.bins.set(bin.location_code, bin.id);
  }
  for (const [code, type] of [['STAGE-1', 'staging'], ['DOCK-1', 'shipping']] as const) {
    demo.bins.set(code, (await createLocation(demo.db, demo.actor, { location_code: code, location_type: type })).id);
  }
}

/** Each item's usual bin is its warehouse_location; its stock goes there below. */
async function addCatalogue(demo: Demo) {
  const items = [
    ['ACME', 'ABC-1243', 'Brass hinge 3 in', 'EA', 'A-01-01'],
    ['ACME', 'ACM-2001', 'Claw hammer 16 oz', 'EA', 'A-01-02'],
    ['ACME', 'ACM-3300', 'Tape measure 25 ft', 'EA', 'A-02-01'],
    ['BRIGHT', 'BL-100', 'LED bulb A19 9 W', 'EA', 'B-01-01'],
    ['BRIGHT', 'BL-220', 'Shop light 4 ft', 'EA', 'B-01-02'],
    ['CASCADE', 'CF-0832', 'Hex bolt 5/16 x 2 in, box of 50', 'BX', 'A-02-01'],
    ['CASCADE', 'CF-1010', 'Wood screw #10 x 1-1/2 in, box of 100', 'BX', 'B-01-01'],
  ] as const;
  for (const [partner, number, description, uom, bin] of items) {
    const item = await createItem(demo.db, demo.actor, {
      manufacturer_id: demo.partners.get(partner)!, item_number_display: number, description, selling_uom: uom, warehouse_location: bin,
    });
    demo.items.set(number, item.id);
  }
}

/** Acme's and Cascade's stock was counted in when the warehouse opened: adjustments into their bins. */
async function countOpeningStock(demo: Demo) {
  const counts = [['ABC-1243', 120, 'A-01-01'], ['ACM-2001', 40, 'A-01-02'], ['ACM-3300', 60, 'A-02-01'], ['CF-0832', 80, 'A-02-01'], ['CF-1010', 50, 'B-01-01']] as const;
  for (const [item, quantity, bin] of counts) {
    await postAdjustment(demo.db, demo.actor, { item_id: demo.items.get(item)!, quantity, reason: 'opening count', location_id: demo.bins.get(bin)! });
  }
}

/**
 * Brightline's stock came in on a receiving batch: verified, inspected (two shop lights failed QC and go to
 * QUARANTINE) and posted. Acme's next delivery is on the dock in a draft batch, not checked yet.
 */
async function receiveDeliveries(demo: Demo) {
  const { db, actor, items, bins } = demo;
  const posted = await createBatch(db, actor, { manufacturer_id: demo.partners.get('BRIGHT')!, notes: 'PO 4471, two pallets' });
  const bulbs = await addLine(db, actor, posted.id, { item_id: items.get('BL-100')!, qty_received: 200, new_unit_cost: 1.85, new_location_id: bins.get('B-01-01')!, reference_number: 'PO-4471' });
  const lights = await addLine(db, actor, posted.id, { item_id: items.get('BL-220')!, qty_received: 24, new_unit_cost: 21.5, new_location_id: bins.get('B-01-02')!, reference_number: 'PO-4471' });
  await verifyBatch(db, actor, posted.id);
  await markLinePassed(db, actor, posted.id, bulbs.id);
  await recordInspection(db, actor, posted.id, lights.id, { qty_passed: 22, qty_failed: 2, inspection_notes: 'two housings cracked' });
  await postBatch(db, actor, posted.id);
  demo.receiving.push({ batch_number: posted.batch_number, status: 'posted' });

  const open = await createBatch(db, actor, { manufacturer_id: demo.partners.get('ACME')!, notes: 'arrived this morning' });
  await addLine(db, actor, open.id, { item_id: items.get('ABC-1243')!, qty_received: 48, new_unit_cost: 2.4, new_location_id: bins.get('A-01-01')!, reference_number: 'PO-881' });
  await addLine(db, actor, open.id, { item_id: items.get('ACM-2001')!, qty_received: 12, new_unit_cost: 9.75, reference_number: 'PO-881' });
  demo.receiving.push({ batch_number: open.batch_number, status: 'draft' });
}

/** Two customers; Lakeside has a job site its orders may ship to instead of its own address. */
async function addCustomers(demo: Demo) {
  const lakeside = await createCustomer(demo.db, demo.actor, {
    account_number: 'C-100', name: 'Lakeside Supply', address_line_1: '1 Main St', city: 'Springfield', state: 'IL', zip_code: '62701',
  });
  const northgate = await createCustomer(demo.db, demo.actor, {
    account_number: 'C-200', name: 'Northgate Hardware', address_line_1: '400 Market Ave', city: 'Madison', state: 'WI', zip_code: '53703',
  });
  demo.customers.set('C-100 Lakeside Supply', lakeside.id).set('C-200 Northgate Hardware', northgate.id);
  const site = await addToAddressBook(demo.db, demo.actor, DROP_SHIP_LOCATIONS, lakeside.id, {
    name: 'Lakeside Supply, Riverside job site', attention: 'Site foreman', address_line_1: '77 River Rd', city: 'Springfield', state: 'IL', zip_code: '62702',
  });
  demo.jobSite = site.id;
  // Orders go by UPS, one of the carriers the migrations bring.
  demo.ups = (await demo.db.selectFrom('ship_via').select('id').where('code', '=', 'UPS').executeTakeFirstOrThrow()).id;
}

/**
 * One order per state the office and the floor see: entered, released, being picked, packed and staged, shipped,
 * partly shipped (a short pick reviewed as a backorder), cancelled, billed and closed. `selected` has no operation
 * that leads to it (spec: "Moves into selected ... not shown"), so no order is in it.
 */
async function fillOrdersInEveryState(demo: Demo) {
  const { db, actor } = demo;
  const lakeside = demo.customers.get('C-100 Lakeside Supply')!;
  const northgate = demo.customers.get('C-200 Northgate Hardware')!;

  const entered = await enterOrder(demo, 'ACME', northgate, [{ item: 'ABC-1243', qty: 10, price: 4.95 }, { item: 'ACM-3300', qty: 4, price: 12.5 }]);
  note(demo, entered, 'waiting for release');

  const released = await enterOrder(demo, 'ACME', lakeside, [{ item: 'ACM-2001', qty: 3, price: 18 }]);
  await releaseOrder(db, actor, released);
  note(demo, released, 'released, waiting to be picked');

  const picking = await enterOrder(demo, 'BRIGHT', northgate, [{ item: 'BL-100', qty: 24, price: 3.6 }, { item: 'BL-220', qty: 2, price: 39 }]);
  await releaseOrder(db, actor, picking);
  const session = await startPicking(demo, picking);
  const bulbs = session.Lines!.find((line) => line.ItemNumberDisplay === 'BL-100')!;
  await pickLine(db, actor, session.ID, bulbs.PickBatchLineID, bulbs.QtyToPick);
  note(demo, picking, 'being picked: one line picked, one to go');

  const packed = await enterOrder(demo, 'ACME', lakeside, [{ item: 'ABC-1243', qty: 6, price: 4.95 }], { priority: 'high' });
  await releaseOrder(db, actor, packed);
  await stageBatch(db, actor, await pickAndPack(demo, packed), 'STAGE-1');
  note(demo, packed, 'packed, staged at STAGE-1 (high priority)');

  const shipped = await enterOrder(demo, 'BRIGHT', lakeside, [{ item: 'BL-100', qty: 12, price: 3.6 }, { item: 'BL-220', qty: 1, price: 39 }], { drop_ship_location_id: demo.jobSite });
  await shipInFull(demo, shipped);
  note(demo, shipped, 'shipped to the Riverside job site');

  const partial = await enterOrder(demo, 'ACME', northgate, [{ item: 'ACM-3300', qty: 5, price: 12.5 }, { item: 'ACM-2001', qty: 4, price: 18 }]);
  await shipWithShortPick(demo, partial, { item: 'ACM-2001', qty: 1 });
  note(demo, partial, 'shipped all but 1 ACM-2001 (short pick, backordered)');

  const cancelled = await enterOrder(demo, 'CASCADE', lakeside, [{ item: 'CF-0832', qty: 5, price: 11 }]);
  await cancelOrder(db, actor, cancelled);
  note(demo, cancelled, 'cancelled by the customer; its stock is free again');

  const billed = await enterOrder(demo, 'CASCADE', northgate, [{ item: 'CF-1010', qty: 6, price: 8.25 }]);
  await shipInFull(demo, billed);
  await advanceOrder(db, actor, billed, 'billed');
  note(demo, billed, 'shipped and billed');

  const closed = await enterOrder(demo, 'ACME', lakeside, [{ item: 'ABC-1243', qty: 2, price: 4.95 }]);
  await shipInFull(demo, closed);
  await advanceOrder(db, actor, closed, 'closed');
  note(demo, closed, 'shipped and closed');
}

async function enterOrder(demo: Demo, partner: string, customer: string, lines: Line[], extra: { priority?: 'high'; drop_ship_location_id?: string } = {}) {
  const { order } = await createOrder(demo.db, demo.actor, {
    manufacturer_id: demo.partners.get(partner)!, customer_id: customer, ship_via_id: demo.ups, customer_po_number: `PO-${7701 + demo.orders.size}`,
    lines: lines.map((line) => ({ item_id: demo.items.get(line.item)!, qty_ordered: line.qty, unit_price: line.price })),
    ...extra,
  });
  demo.orders.set(order.id, { order_number: order.order_number, status: order.status, floor: '' });
  return order.id;
}

/** What the summary says about the order beside its status. */
function note(demo: Demo, orderId: string, floor: string) {
  demo.orders.get(orderId)!.floor = floor;
}

/** A batch for the order, read again: the answer that starts it carries no line ids (spec). */
async function startPicking(demo: Demo, orderId: string) {
  const started = await startBatch(demo.db, demo.actor, orderId);
  return readSession(demo.db, demo.actor, started.ID);
}

/**
 * The picker takes every line (in full, or all but `short`, which closes short), the pack station verifies each
 * picked line, and the batch is packed with its packing list filed. Returns the batch id.
 */
async function pickAndPack(demo: Demo, orderId: string, short?: { item: string; qty: number }) {
  const { db, actor } = demo;
  const session = await startPicking(demo, orderId);
  for (const line of session.Lines!) {
    const missing = short?.item === line.ItemNumberDisplay ? short.qty : 0;
    await pickLine(db, actor, session.ID, line.PickBatchLineID, line.QtyToPick - missing);
    if (missing) await shortLine(db, actor, session.ID, line.PickBatchLineID, { qty_short: missing, reason: 'bin ran out' });
  }
  await completeBatch(db, actor, session.ID);
  for (const line of session.Lines!) await verifyLine(db, actor, session.ID, line.PickBatchLineID);
  // packBatch reads only the database and the document store of the deps a route hands it; the test runs it.
  await packBatch({ db, reads: db, documents: demo.documents } as ModuleDeps, actor, session.ID);
  return session.ID;
}

/** Out of the door with a UPS-shaped demo label, one per shipment. */
async function ship(demo: Demo, batchId: string) {
  const carrier: Carrier = 'ups';
  await shipBatch(demo.db, demo.actor, batchId, { tracking_number: `1Z999AA1012345678${++demo.labels}`, carrier });
}

async function shipInFull(demo: Demo, orderId: string) {
  await releaseOrder(demo.db, demo.actor, orderId);
  await ship(demo, await pickAndPack(demo, orderId));
}

/** The short pick opens an exception that blocks the order; the office reviews it as a backorder, and the rest ships. */
async function shipWithShortPick(demo: Demo, orderId: string, short: { item: string; qty: number }) {
  await releaseOrder(demo.db, demo.actor, orderId);
  const batchId = await pickAndPack(demo, orderId, short);
  const exception = await demo.db.selectFrom('pick_exceptions').select('id').where('pick_batch_id', '=', batchId).executeTakeFirstOrThrow();
  await reviewException(demo.db, demo.actor, 'short_pick', exception.id, { disposition: 'backorder', note: 'more due on the next Acme delivery' });
  await ship(demo, batchId);
}

/** What the command prints: what was made, the key, and where to look. */
export function summaryText(summary: DemoSummary, baseUrl: string): string {
  const key = summary.adminKey;
  return [
    'Demo warehouse created:',
    `  supply partners  ${summary.partners.join(', ')}`,
    `  locations        ${summary.locations.join(', ')}`,
    `  items            ${summary.items}, stocked by opening counts and a posted receiving batch (2 units in QUARANTINE)`,
    `  customers        ${summary.customers.join(', ')} (C-100 with a drop-ship location)`,
    `  receiving        ${summary.receiving.map((batch) => `${batch.batch_number} ${batch.status}`).join(', ')}`,
    '  orders',
    ...summary.orders.map((order) => `    ${order.order_number}  ${order.status.padEnd(9)} ${order.floor}`),
    '',
    'A new API key of the administrator "admin" (full scope), shown once:',
    '',
    `  ${key}`,
    '',
    'Start the service (npm start) and look around:',
    `  curl -s "${baseUrl}/api/v1/orders?status=open" -H "Authorization: Bearer ${key}"`,
    `  curl -s "${baseUrl}/api/v1/pick-batches" -H "Authorization: Bearer ${key}"`,
    `  curl -s "${baseUrl}/api/v1/reports/stock-status" -H "Authorization: Bearer ${key}"`,
    `  ${baseUrl}/docs   (the reference of every route)`,
  ].join('\n');
}
