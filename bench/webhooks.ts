// Event and webhook targets of issue 14: 1,000 events fanned out to 10 subscriptions and delivered to a local receiver
// (deliveries/s, counted from the commit that wrote them to the last answer), what emit() costs the change that
// writes an event (with those 10 subscriptions), and the poll of 100 events with 1,000,000 events stored.
import { sql } from 'kysely';
import { connectPostgres } from '../src/db/connect.ts';
import { countingReceiver } from './client.ts';
import { percentile } from './stats.ts';
import { emit } from '../src/domain/events.ts';

const EVENTS = 1000;
const SUBSCRIPTIONS = 10;
const STORED = 1_000_000;
const POLLS = 200;
const WARMUP_POLLS = 20;

export interface WebhookRow {
  operation: string;
  value: number;
  unit: string;
  target: string;
  met: boolean;
}


/** `instances`: how many service instances run delivery workers against the database (the bench starts two). */
export async function measureWebhooks(service: string, headers: Record<string, string>, databaseUrl: string, instances: number): Promise<WebhookRow[]> {
  const receiver = await countingReceiver(204);
  const url = receiver.url('/events');
  const database = connectPostgres(databaseUrl, { poolSize: 2, statementTimeoutMs: 0 });
  const subscriptions: string[] = [];
  try {
    for (let i = 0; i < SUBSCRIPTIONS; i++) {
      const response = await fetch(`${service}/api/v1/webhooks`, {
        method: 'POST', headers: { ...headers, 'content-type': 'application/json' },
        body: JSON.stringify({ url: `${url}?s=${i}`, event_kinds: ['inventory.adjusted'] }),
      });
      if (response.status !== 201) throw new Error(`subscription: ${response.status} ${await response.text()}`);
      subscriptions.push(((await response.json()) as { data: { id: string } }).data.id);
    }
    // All events in one transaction, so every delivery becomes due at once: the clock starts at its commit.
    const data = { movement_id: '00000000-0000-4000-8000-000000000000', item_id: '00000000-0000-4000-8000-000000000001', location_id: null, movement_type: 'adjustment', quantity: 1, balance_after: 1, reason: 'bench' };
    const emitMs: number[] = [];
    await database.db.transaction().execute(async (tx) => {
      for (let i = 0; i < EVENTS; i++) {
        const begun = performance.now();
        await emit(tx, 'inventory.adjusted', data);
        emitMs.push(performance.now() - begun);
      }
    });
    const committed = performance.now();
    const expected = EVENTS * SUBSCRIPTIONS;
    while (receiver.received() < expected && performance.now() - committed < 180_000) await new Promise((resolve) => setTimeout(resolve, 20));
    const perSecond = Math.round(receiver.received() / ((performance.now() - committed) / 1000));

    // The stored history the poll must not read: events no tenant is still waiting for (already acknowledged).
    await sql`insert into outbox_events (kind, data) select 'inventory.adjusted', jsonb_build_object('n', g) from generate_series(1, ${STORED}::int) g`.execute(database.db);
    // What autovacuum would have done by then (the CI server runs without it), and the million rows' pages written out,
    // so a checkpoint does not land in the middle of the polls: as the data generation leaves its tables.
    await sql`vacuum analyze outbox_events, event_inbox`.execute(database.db);
    await sql`checkpoint`.execute(database.db);
    const poll = async () => {
      const begun = performance.now();
      const response = await fetch(`${service}/api/v1/shipments/events?per_page=100`, { headers });
      if (!response.ok) throw new Error(`poll: ${response.status}`);
      await response.arrayBuffer();
      return performance.now() - begun;
    };
    // A warm-up, as every read of the bench has (the first answers prepare their statements).
    for (let i = 0; i < WARMUP_POLLS; i++) await poll();
    const pollMs: number[] = [];
    for (let i = 0; i < POLLS; i++) pollMs.push(await poll());
    const emitP50 = Math.round(percentile(emitMs, 50) * 100) / 100;
    const pollP99 = Math.round(percentile(pollMs, 99) * 10) / 10;
    return [
      { operation: `fan-out: ${EVENTS} events to ${SUBSCRIPTIONS} subscriptions, ${instances} instances delivering`, value: perSecond, unit: 'deliveries/s', target: `>= ${500 * instances} (500 per instance)`, met: perSecond >= 500 * instances && receiver.received() >= expected },
      { operation: `event write with ${SUBSCRIPTIONS} subscriptions (p50 of ${EVENTS})`, value: emitP50, unit: 'ms', target: '< 1', met: emitP50 < 1 },
      { operation: `poll of 100 events, ${STORED.toLocaleString('en')} more stored (p99 of ${POLLS})`, value: pollP99, unit: 'ms', target: '< 20', met: pollP99 < 20 },
    ];
  } finally {
    for (const id of subscriptions) await fetch(`${service}/api/v1/webhooks/${id}`, { method: 'DELETE', headers }).catch(() => {});
    await database.close();
    receiver.close();
  }
}

export function printWebhooks(rows: WebhookRow[]): void {
  console.log('\nevents and webhooks');
  for (const row of rows) console.log(`  ${row.operation}: ${row.value} ${row.unit} (target ${row.target}: ${row.met ? 'met' : 'NOT met'})`);
}
