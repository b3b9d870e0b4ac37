// src/db/schema.ts is generated from the migrations by `npm run db:types` (scripts/db-types.ts): a migration committed
// without the regenerated file, or a hand edit of the file, fails here. On the server of TEST_DATABASE_URL as CI runs
// it, and on an in-memory PGlite (the script's fallback without a server), which must give the same file.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { generateOnPGlite, generateOnServer, SCHEMA_FILE } from '../scripts/db-types.ts';

const serverUrl = process.env.TEST_DATABASE_URL?.trim() || null;

/** Fails with the first line that differs, so the message says what changed as well as what to do. */
function assertSameAsCommitted(generated: string, where: string): void {
  const committed = readFileSync(SCHEMA_FILE, 'utf8');
  if (generated === committed) return;
  const want = generated.split('\n');
  const have = committed.split('\n');
  let line = 0;
  while (line < want.length && want[line] === have[line]) line++;
  assert.fail(
    `src/db/schema.ts differs from what the migrations produce (${where}): run npm run db:types\n` +
      `  line ${line + 1} committed: ${JSON.stringify(have[line] ?? '(end of file)')}\n` +
      `  line ${line + 1} generated: ${JSON.stringify(want[line] ?? '(end of file)')}`,
  );
}

test('src/db/schema.ts is what the migrations produce on PostgreSQL', {
  skip: serverUrl ? false : 'needs TEST_DATABASE_URL (a PostgreSQL server to migrate a throwaway database on)',
}, async () => {
  assertSameAsCommitted(await generateOnServer(serverUrl!), 'PostgreSQL');
});

test('src/db/schema.ts is what the migrations produce on PGlite', async () => {
  assertSameAsCommitted(await generateOnPGlite(), 'PGlite');
});
