// Rows from the PostgreSQL pool (src/db/connect.ts): fetched as arrays and made objects by a function per column list,
// they must be what the driver's own rows were, whatever the columns are called.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import type { Database } from '../src/db/connect.ts';
import { freshDatabase, onPostgres } from './helpers.ts';

describe('rows of the PostgreSQL pool', { skip: onPostgres ? false : 'needs TEST_DATABASE_URL (the PGlite driver makes its own rows)' }, () => {
  let database: Database;
  before(async () => {
    database = await freshDatabase();
  });
  after(() => database?.close());

  const rowsOf = async (query: ReturnType<typeof sql>) => (await query.execute(database.db)).rows as Record<string, unknown>[];

  test('named, unnamed and parameterless statements give plain objects with every column, typed by the parsers', async () => {
    for (const query of [
      sql`select ${1}::int as n, ${'a'}::text as t, null::text as nothing, '2026-11-27 08:21:09.739129+00'::timestamptz as at`,
      sql`select 1::int8 as n, 'a' as t, null::text as nothing, '2026-11-27 08:21:09.739129+00'::timestamptz as at`,
      sql`select 1 as n, 'a' as t, null::text as nothing, '2026-11-27 08:21:09.739129+00'::timestamptz as at where 'a' like ${'%'}`,
    ]) {
      const rows = await rowsOf(query);
      assert.deepEqual(rows, [{ n: 1, t: 'a', nothing: null, at: '2026-11-27T08:21:09.739Z' }]);
      assert.equal(Object.getPrototypeOf(rows[0]), Object.prototype);
    }
  });

  test('every row of a statement, in order; none when nothing matches', async () => {
    assert.deepEqual(await rowsOf(sql`select g as n from generate_series(1, ${3}::int) g`), [{ n: 1 }, { n: 2 }, { n: 3 }]);
    assert.deepEqual(await rowsOf(sql`select g as n from generate_series(1, ${0}::int) g`), []);
  });

  test('any column name is a key as written; a repeated name keeps its last value, as the driver did', async () => {
    // With a parameter: a text with a semicolon and none would go as a script, which keeps the driver's rows.
    const [row] = await rowsOf(sql`select 1 as "we""ird
name", 2 as "}; throw 1; ({", 3 as "__proto__", 4 as a, ${5}::int as a, 6 as "constructor"`);
    assert.deepEqual(Object.keys(row!), ['we"ird\nname', '}; throw 1; ({', '__proto__', 'a', 'constructor']);
    assert.equal(row!['we"ird\nname'], 1);
    assert.equal(row!['}; throw 1; ({'], 2);
    assert.ok(Object.hasOwn(row!, '__proto__'));
    assert.equal(Object.getPrototypeOf(row), Object.prototype);
    assert.equal(row!.a, 5);
    assert.equal(row!.constructor, 6);
  });

  test('a write\'s returning rows and its row count', async () => {
    await sql`create table t (id int, label text)`.execute(database.db);
    const result = await sql`insert into t values (1, ${'x'}), (2, ${'y'}) returning id, label`.execute(database.db);
    assert.deepEqual(result.rows, [{ id: 1, label: 'x' }, { id: 2, label: 'y' }]);
    assert.equal(result.numAffectedRows, 2n);
  });
});
