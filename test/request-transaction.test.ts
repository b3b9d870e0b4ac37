// The request transaction (src/db/request-transaction.ts): everything run inside it is one transaction on one
// connection, services' transactions become savepoints, and its end waits for queries still holding the connection.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import type { Database } from '../src/db/connect.ts';
import { requestTransaction } from '../src/db/request-transaction.ts';
import { inTransaction } from '../src/db/transaction.ts';
import { freshDatabase, onPostgres } from './helpers.ts';

let database: Database;
before(async () => {
  database = await freshDatabase();
});
after(() => database.close());

const partner = (code: string) => database.db.insertInto('manufacturers').values({ code, name: code }).execute();
const partners = async (...codes: string[]) =>
  (await database.db.selectFrom('manufacturers').select('code').where('code', 'in', codes).orderBy('code').execute()).map((r) => r.code);

describe('a request transaction', () => {
  test('commits what ran inside it, services\' transactions included, as one', async () => {
    const request = requestTransaction();
    await request.run(async () => {
      await inTransaction(database.db, (tx) => tx.insertInto('manufacturers').values({ code: 'RQ1', name: 'a' }).execute());
      await partner('RQ2');
    });
    if (onPostgres) assert.deepEqual(await partners('RQ1', 'RQ2'), [], 'nothing is seen outside before the commit');
    await request.commit();
    assert.deepEqual(await partners('RQ1', 'RQ2'), ['RQ1', 'RQ2']);
  });

  test('rolls back everything, a service transaction that committed its savepoint included', async () => {
    const request = requestTransaction();
    await request.run(async () => {
      await inTransaction(database.db, (tx) => tx.insertInto('manufacturers').values({ code: 'RQ3', name: 'a' }).execute());
      await partner('RQ4');
    });
    await request.rollback();
    assert.deepEqual(await partners('RQ3', 'RQ4'), []);
  });

  test('a service transaction that fails rolls back to its savepoint; the rest goes on', async () => {
    const request = requestTransaction();
    await request.run(async () => {
      await partner('RQ5');
      await assert.rejects(inTransaction(database.db, async (tx) => {
        await tx.insertInto('manufacturers').values({ code: 'RQ6', name: 'a' }).execute();
        await tx.insertInto('manufacturers').values({ code: 'RQ5', name: 'duplicate' }).execute();
      }));
      await partner('RQ7');
    });
    await request.commit();
    assert.deepEqual(await partners('RQ5', 'RQ6', 'RQ7'), ['RQ5', 'RQ7']);
  });

  test('its end waits for a query still running, and gives the connection back once', async () => {
    const request = requestTransaction();
    const running = request.run(() => sql`select pg_sleep(0.3), 1 as one`.execute(database.db));
    await sleep(50);
    await request.rollback();
    // A second release of the pooled client would make the query fail ("already been released to the pool").
    assert.deepEqual((await running).rows.map((row) => (row as { one: number }).one), [1]);
    // The connection serves others afterwards: a query outside, and a new request transaction.
    assert.equal((await sql<{ two: number }>`select 2 as two`.execute(database.db)).rows[0]!.two, 2);
    const next = requestTransaction();
    await next.run(() => partner('RQ8'));
    await next.commit();
    assert.deepEqual(await partners('RQ8'), ['RQ8']);
  });

  test('queries started after its end go their own way', async () => {
    const request = requestTransaction();
    await request.run(() => partner('RQ9'));
    await request.commit();
    await request.run(() => partner('RQ10'));
    assert.deepEqual(await partners('RQ10', 'RQ9'), ['RQ10', 'RQ9']);
  });
});
