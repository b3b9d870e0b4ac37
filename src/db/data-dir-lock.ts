// The embedded database's directory belongs to one process at a time (PGlite has no lock of its own: a second process
// opening it — a command next to the running service — writes into a copy of its own, and one of the two copies is
// lost). A lock file with the owner's pid keeps the second out; a lock left by a process that died is taken over.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const LOCK_FILE = 'wms.lock';

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, under another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/** Takes the data directory for this process; returns its release. Throws when a live process holds it. */
export function lockDataDir(dataDir: string): () => void {
  const file = join(dataDir, LOCK_FILE);
  for (;;) {
    try {
      writeFileSync(file, String(process.pid), { flag: 'wx' });
      return () => rmSync(file, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const owner = Number.parseInt(readFileSync(file, 'utf8'), 10);
    if (owner !== process.pid && Number.isInteger(owner) && owner > 0 && alive(owner)) {
      throw new Error(`the embedded database in ${dataDir} is open in process ${owner} (the service, or another command): ` +
        'it allows one process at a time; stop that process first');
    }
    rmSync(file, { force: true });
  }
}
