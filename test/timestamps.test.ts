// timestamptz values as the API's ISO text (src/db/timestamps.ts): the same text a Date made by the driver's own parser
// would have written, on the rearranging path and on every other.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import pg from 'pg';
import type { Database } from '../src/db/connect.ts';
import { isoTimeOfJson, isoTimestamp, TIMESTAMPTZ } from '../src/db/timestamps.ts';
import { freshDatabase } from './helpers.ts';

const driverDate = pg.types.getTypeParser(TIMESTAMPTZ) as (text: string) => Date;

describe('timestamptz text as ISO 8601 in UTC', () => {
  test('UTC text is written as Date#toISOString writes it, the fraction cut to milliseconds', () => {
    const forms = [
      '2026-11-27 08:21:09+00', '2026-11-27 08:21:09.7+00', '2026-11-27 08:21:09.73+00', '2026-11-27 08:21:09.739+00',
      '2026-11-27 08:21:09.7391+00', '2026-11-27 08:21:09.73912+00', '2026-11-27 08:21:09.739129+00', '2026-11-27 08:21:09.999999+00',
      '2024-02-29 23:59:59.000001+00', '0099-01-01 00:00:00+00', '1000-01-01 00:00:00.5+00', '9999-12-31 23:59:59.999999+00',
    ];
    for (const text of forms) assert.equal(isoTimestamp(text), driverDate(text).toISOString(), text);
    assert.equal(isoTimestamp('2026-11-27 08:21:09.739129+00'), '2026-11-27T08:21:09.739Z');
    assert.equal(isoTimestamp('2026-11-27 08:21:09+00'), '2026-11-27T08:21:09.000Z');
  });

  test('every microsecond of a second cuts as a Date does', () => {
    for (let us = 0; us < 1_000_000; us += 7) {
      const text = `2026-01-02 03:04:05.${String(us).padStart(6, '0').replace(/0+$/, '')}+00`.replace('.+', '+');
      assert.equal(isoTimestamp(text), driverDate(text).toISOString(), text);
    }
  });

  test('a time in JSON that PostgreSQL built (T, +00:00) is written as a Date of it writes, every microsecond of a second', () => {
    for (let us = 0; us < 1_000_000; us += 7) {
      const text = `2026-01-02T03:04:05.${String(us).padStart(6, '0').replace(/0+$/, '')}+00:00`.replace('.+', '+');
      assert.equal(isoTimeOfJson(text), new Date(text).toISOString(), text);
    }
    for (const text of ['2026-11-27T10:21:09.739+02:00', '2026-11-27T03:21:09-05:00', '+010000-01-01T00:00:00+00:00']) {
      assert.equal(isoTimeOfJson(text), new Date(text).toISOString(), text);
    }
  });

  test('another time zone\'s offset, a year past 9999 and BC go through a Date; infinity stays as written', () => {
    assert.equal(isoTimestamp('2026-11-27 10:21:09.739+02'), '2026-11-27T08:21:09.739Z');
    assert.equal(isoTimestamp('2026-11-27 13:51:09.739129+05:30'), '2026-11-27T08:21:09.739Z');
    assert.equal(isoTimestamp('2026-11-27 03:21:09-05'), '2026-11-27T08:21:09.000Z');
    for (const text of ['10000-01-01 00:00:00+00', '0044-03-15 12:00:00+00 BC']) assert.equal(isoTimestamp(text), driverDate(text).toISOString(), text);
    assert.equal(isoTimestamp('infinity'), 'infinity');
    assert.equal(isoTimestamp('-infinity'), '-infinity');
  });
});

for (const timeZone of ['UTC', 'Asia/Kolkata']) {
  describe(`timestamps read from the database (session time zone ${timeZone})`, () => {
    let database: Database;
    before(async () => {
      database = await freshDatabase({ timeZone });
    });
    after(() => database.close());

    test('arrive as ISO text in UTC, to the millisecond', async () => {
      const { rows } = await sql<{ at: string; now: string }>`select '2026-11-27 08:21:09.739129+00'::timestamptz as at, now() as now`.execute(database.db);
      assert.equal(rows[0]!.at, '2026-11-27T08:21:09.739Z');
      assert.match(rows[0]!.now, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      assert.ok(Math.abs(Date.parse(rows[0]!.now) - Date.now()) < 60_000);
    });

    test('a time nested in JSON that PostgreSQL built is written the same way', async () => {
      const { rows } = await sql<{ doc: { at: string } }>`select json_build_object('at', '2026-11-27 08:21:09.739129+00'::timestamptz) as doc`.execute(database.db);
      assert.notEqual(rows[0]!.doc.at, '2026-11-27T08:21:09.739Z');
      assert.equal(isoTimeOfJson(rows[0]!.doc.at), '2026-11-27T08:21:09.739Z');
      assert.equal(isoTimeOfJson(null), null);
      assert.equal(isoTimeOfJson('infinity'), 'infinity');
    });
  });
}
