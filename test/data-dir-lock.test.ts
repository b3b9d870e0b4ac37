// The embedded database's directory is one process's at a time: a command started next to the running service is
// refused before it opens anything (PGlite would let it write into a copy of its own, and one copy would be lost).
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { connectPGlite } from '../src/db/connect.ts';

const root = new URL('..', import.meta.url).pathname;

function command(dataDir: string): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['src/cli.ts', 'create-admin-key'], {
      cwd: root, env: { ...process.env, DATABASE_URL: '', WMS_DATA_DIR: dataDir },
    });
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('exit', (code) => resolve({ code, stderr }));
  });
}

test('a command on a data directory the service holds is refused; a lock left by a dead process is taken over', { timeout: 60_000 }, async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'wms-lock-'));
  try {
    const held = await connectPGlite(dataDir);
    const refused = await command(dataDir);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, new RegExp(`open in process ${process.pid}`));
    await held.close();
    assert.equal(existsSync(join(dataDir, 'wms.lock')), false, 'closing gives the directory back');

    // A process that died without closing (SIGKILL, power loss) leaves its lock behind.
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    writeFileSync(join(dataDir, 'wms.lock'), dead.stdout);
    const reopened = await connectPGlite(dataDir);
    await reopened.close();
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});
