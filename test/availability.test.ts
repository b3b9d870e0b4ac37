// Which database failures are "try again shortly" (503) rather than a fault of the request or the service.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isDatabaseUnavailable } from '../src/db/availability.ts';

const failure = (code: string, message: string) => Object.assign(new Error(message), { code });

test('a read replica cancelling a query for its replay is unavailable for now; a serialization failure on the primary is not', () => {
  assert.equal(isDatabaseUnavailable(failure('40001', 'canceling statement due to conflict with recovery')), true);
  assert.equal(isDatabaseUnavailable(failure('40001', 'could not serialize access due to concurrent update')), false);
});
