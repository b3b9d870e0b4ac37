// kill -9 of the service in the middle of writes sent with Idempotency-Keys: after a restart, a retry with the same key
// replays the committed answer or does the work once, at once, and what was cut off left nothing behind.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { printedAdminKey, request, startService, waitFor, type Answer, type Service } from './fault-kit.ts';
import { createEmptyServerDatabase, onPostgres } from './helpers.ts';

const ITEMS = 200;
const ORDERS = 20;
const LINES_PER_ORDER = 20;

describe('kill -9 in the middle of writes', { skip: onPostgres ? false : 'needs TEST_DATABASE_URL (the service runs as a process of its own)' }, () => {
  let database: { url: string; drop(): Promise<void> };
  let sql: pg.Client;
  let service: Service;
  let key: string;
  let partner: string;
  let customer: string;
  let bin: string;
  const items: string[] = [];

  const api = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    request(service, method, `/api/v1${path}`, { key, body, headers });
  const ok = (answer: Answer, status = 200) => {
    assert.equal(answer.status, status, JSON.stringify(answer.body));
    return answer.body.data;
  };
  /** Whether a transaction of the service is writing into the table right now (it holds RowExclusiveLock on it). */
  const writingInto = async (table: string) => (await sql.query(`select count(*)::int as n from pg_locks l
    join pg_class c on c.oid = l.relation
    where l.database = (select oid from pg_database where datname = current_database())
      and c.relname = $1 and l.mode = 'RowExclusiveLock' and l.pid <> pg_backend_pid()`, [table])).rows[0].n > 0;

  async function restart() {
    service.child.kill('SIGKILL');
    await service.exited;
    service = await startService({ DATABASE_URL: database.url });
    await waitFor(async () => (await request(service, 'GET', '/readyz')).status === 200, 15_000, 'the restarted service');
  }

  before(async () => {
    database = await createEmptyServerDatabase();
    sql = new pg.Client({ connectionString: database.url });
    service = await startService({ DATABASE_URL: database.url });
    await waitFor(async () => (await request(service, 'GET', '/readyz')).status === 200, 30_000, 'the service');
    await sql.connect();
    key = printedAdminKey(service);
    partner = ok(await api('POST', '/manufacturers', { code: 'CRASH', name: 'Crash Inc.' }), 201).id;
    bin = ok(await api('POST', '/locations', { location_code: 'CR-01' }), 201).id;
    customer = ok(await api('POST', '/customers', {
      account_number: 'CR-1', name: 'Crash Customer', address_line_1: '1 Main St', city: 'Springfield', state: 'IL', zip_code: '62701',
    }), 201).id;
    for (let i = 0; i < ITEMS; i += 20) {
      const made = await Promise.all(Array.from({ length: 20 }, (_, j) =>
        api('POST', '/items', { manufacturer_id: partner, item_number_display: `CR-${i + j}`, description: 'crash test item' })));
      items.push(...made.map((answer) => ok(answer, 201).item.id));
    }
  });

  after(async () => {
    service?.child.kill('SIGKILL');
    await sql?.end();
    await database?.drop();
  });

  /** Stock equals the ledger for every item: on hand = sum of its bins = last balance_after = sum of its movements. */
  async function assertStockMatchesLedger() {
    const { rows } = await sql.query(`
      select i.id, i.qty_on_hand,
        (select coalesce(sum(qty_on_hand), 0)::int from item_locations where item_id = i.id and inventory_status <> 'quarantine') as bins,
        (select balance_after from inventory_movements where item_id = i.id order by seq desc limit 1) as last_balance,
        (select coalesce(sum(quantity), 0)::int from inventory_movements where item_id = i.id) as moved
      from items i`);
    for (const row of rows) {
      assert.equal(row.qty_on_hand, row.bins, `${row.id}: on hand is the sum of its bins`);
      assert.equal(row.qty_on_hand, row.last_balance ?? 0, `${row.id}: on hand is the last balance_after`);
      assert.equal(row.qty_on_hand, row.moved, `${row.id}: on hand is the sum of its movements`);
    }
  }

  test('during a 200-line receiving post: all or nothing, and the retry posts it once', async () => {
    const imported = ok(await api('POST', '/receiving/import', {
      manufacturer_id: partner, lines: items.map((item) => ({ item_id: item, qty_received: 50, new_location_id: bin })),
    }), 201);
    const batchId: string = imported.batch.id;
    ok(await api('POST', `/receiving/${batchId}/verify`));
    for (let i = 0; i < imported.lines.length; i += 20) {
      const passed = await Promise.all(imported.lines.slice(i, i + 20).map((line: { id: string }) =>
        api('POST', `/receiving/${batchId}/lines/${line.id}/pass`)));
      passed.forEach((answer) => ok(answer));
    }

    const headers = { 'idempotency-key': 'post-the-big-batch' };
    const posting = api('POST', `/receiving/${batchId}/post`, undefined, headers);
    // Killed while it writes the ledger: the work has begun and has not committed.
    await waitFor(() => writingInto('inventory_movements'), 10_000, 'the post to write its movements');
    await restart();
    const cutOff = await posting;
    assert.equal(cutOff.status, 0, 'the post was cut off by the kill');

    const { rows: [state] } = await sql.query(`select b.status, (select count(*)::int from inventory_movements m where m.reference_id = b.id) as movements
      from receiving_batches b where b.id = $1`, [batchId]);
    assert.ok((state.status === 'verified' && state.movements === 0) || (state.status === 'posted' && state.movements === ITEMS),
      `all or nothing after the kill: ${JSON.stringify(state)}`);

    const retry = await api('POST', `/receiving/${batchId}/post`, undefined, headers);
    assert.equal(retry.status, 200, JSON.stringify(retry.body));
    assert.equal(retry.body.data.batch.status, 'posted');
    const again = await api('POST', `/receiving/${batchId}/post`, undefined, headers);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(again.body, retry.body);
    const { rows: [posted] } = await sql.query(`select count(*)::int as n, count(distinct item_id)::int as items from inventory_movements where reference_id = $1`, [batchId]);
    assert.deepEqual(posted, { n: ITEMS, items: ITEMS }, 'one receipt per line, once');
    await assertStockMatchesLedger();
    console.log(`receiving post: killed ${state.status === 'posted' ? 'after its commit (replayed)' : 'mid-work (done by the retry)'}`);
  });

  test('during order entry: every key ends in exactly one order, committed stock counts each once', async () => {
    const bodies = Array.from({ length: ORDERS }, (_, i) => ({
      manufacturer_id: partner, customer_id: customer, customer_po_number: `order-${i}`,
      lines: Array.from({ length: LINES_PER_ORDER }, (_, j) => ({ item_id: items[(i * 7 + j) % ITEMS], qty_ordered: 1, unit_price: 1 })),
    }));
    const headersOf = (i: number) => ({ 'idempotency-key': `order-${i}` });
    const answers: (Answer | undefined)[] = [];
    const sent = bodies.map((body, i) => api('POST', '/orders', body, headersOf(i)).then((answer) => (answers[i] = answer)));
    await waitFor(async () => answers.some((a) => a?.status === 201) && (await writingInto('order_lines')), 15_000, 'orders both done and being written');
    await restart();
    await Promise.all(sent);
    const before = answers.map((a) => a!.status);
    assert.ok(before.includes(201) && before.includes(0), `some orders were answered before the kill and some cut off: ${before}`);

    for (const [i, body] of bodies.entries()) {
      const retry = await api('POST', '/orders', body, headersOf(i));
      assert.equal(retry.status, 201, `order-${i}: ${JSON.stringify(retry.body)}`);
      if (answers[i]!.status === 201) {
        assert.equal(retry.headers.get('idempotent-replayed'), 'true');
        assert.deepEqual(retry.body, answers[i]!.body, 'an answered order replays its answer');
      }
    }
    const { rows } = await sql.query(`select customer_po_number, count(*)::int as n from orders group by customer_po_number`);
    assert.deepEqual(Object.fromEntries(rows.map((r) => [r.customer_po_number, r.n])), Object.fromEntries(bodies.map((b) => [b.customer_po_number, 1])));
    const committed = new Map<string, number>();
    for (const body of bodies) for (const line of body.lines) committed.set(line.item_id!, (committed.get(line.item_id!) ?? 0) + 1);
    const { rows: stock } = await sql.query(`select id, qty_committed from items`);
    for (const row of stock) assert.equal(row.qty_committed, committed.get(row.id) ?? 0, `${row.id}: committed once per order line`);
    await assertStockMatchesLedger();
    console.log(`order entry: ${before.filter((s) => s === 201).length} answered before the kill, ${before.filter((s) => s === 0).length} cut off`);
  });
});
