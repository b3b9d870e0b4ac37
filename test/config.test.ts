// The database settings that decide where queries go: primary, read replica, LISTEN connection, pooler.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadConfig } from '../src/config.ts';

const PRIMARY = 'postgres://wms@db:5432/wms';

test('a read replica needs a primary, and both are postgres urls', () => {
  assert.equal(loadConfig({ DATABASE_URL: PRIMARY, DATABASE_READ_URL: 'postgres://wms@replica/wms' }).databaseReadUrl, 'postgres://wms@replica/wms');
  assert.equal(loadConfig({ DATABASE_URL: PRIMARY }).databaseReadUrl, null);
  assert.throws(() => loadConfig({ DATABASE_READ_URL: 'postgres://wms@replica/wms' }), /DATABASE_READ_URL needs DATABASE_URL/);
  assert.throws(() => loadConfig({ DATABASE_URL: PRIMARY, DATABASE_READ_URL: 'mysql://replica' }), /DATABASE_READ_URL must start with postgres/);
});

test('directly on PostgreSQL: named prepared statements, LISTEN on the primary', () => {
  const config = loadConfig({ DATABASE_URL: PRIMARY });
  assert.equal(config.dbPooler, 'none');
  assert.equal(config.dbPreparedStatements, true);
  assert.equal(config.databaseListenUrl, PRIMARY);
});

test('behind a transaction pooler: unnamed statements and no LISTEN unless a direct url is given; both can be set', () => {
  const pooled = loadConfig({ DATABASE_URL: PRIMARY, WMS_DB_POOLER: 'transaction' });
  assert.equal(pooled.dbPreparedStatements, false);
  assert.equal(pooled.databaseListenUrl, null);
  const tuned = loadConfig({ DATABASE_URL: PRIMARY, WMS_DB_POOLER: 'transaction', WMS_DB_PREPARED_STATEMENTS: '1', DATABASE_LISTEN_URL: 'postgres://wms@db-direct/wms' });
  assert.equal(tuned.dbPreparedStatements, true);
  assert.equal(tuned.databaseListenUrl, 'postgres://wms@db-direct/wms');
  assert.throws(() => loadConfig({ WMS_DB_POOLER: 'session' }), /WMS_DB_POOLER must be one of none, transaction/);
  assert.throws(() => loadConfig({ WMS_DB_PREPARED_STATEMENTS: 'yes' }), /WMS_DB_PREPARED_STATEMENTS must be 0 or 1/);
});
