// CPU time per operation, of the service and of PostgreSQL, beside each throughput figure. On a shared 2-core host
// requests per second swing 20-40% between runs of the same code (the floor measured 5,000-23,000 req/s across
// sessions); the CPU an operation costs is steadier, and it says which side a change made cheaper.
import { readFileSync } from 'node:fs';
import pidusage from 'pidusage';
import pg from 'pg';

export interface CpuFigures {
  /** Microseconds of the service's CPU per operation. */
  service_us: number;
  /** Microseconds of PostgreSQL's CPU per operation (its processes), null when the server is not on this machine. */
  postgres_us: number | null;
}

export type CpuMeter = Awaited<ReturnType<typeof cpuMeter>>;

/** Whether `pid` is a PostgreSQL process on this machine (its title starts "postgres:"). */
function isLocalPostgres(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').startsWith('postgres:');
  } catch {
    return false;
  }
}

/**
 * Measures the CPU of a service process and of the PostgreSQL server the bench database is on. The server's processes
 * are those pg_stat_activity lists (backends and background processes) when a measurement starts; one that starts
 * later (an autovacuum worker, a new connection) or exits before it ends is not counted.
 */
export async function cpuMeter(databaseUrl: string) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const { rows: [self] } = await client.query<{ pid: number }>('select pg_backend_pid() as pid');
  // A server on another machine has pids of its own: this connection's backend is a PostgreSQL process here or not.
  const local = isLocalPostgres(self!.pid);
  const serverPids = async () => local
    ? (await client.query<{ pid: number }>('select pid from pg_stat_activity where pid <> pg_backend_pid()')).rows.map((row) => row.pid)
    : [];
  const cpuOf = async (pids: number[]) => {
    const usage = await pidusage(pids);
    return new Map(Object.values(usage).filter((status) => status != null).map((status) => [status.pid, status.ctime]));
  };
  return {
    /** Starts counting for `servicePid`; the returned stop takes the number of operations done meanwhile. */
    async start(servicePid: number) {
      const server = await serverPids();
      const before = await cpuOf([servicePid, ...server]);
      return async (operations: number): Promise<CpuFigures | null> => {
        if (operations === 0) return null;
        const after = await cpuOf([servicePid, ...server]);
        const used = (pids: number[]) => pids.reduce((sum, pid) => {
          const [from, to] = [before.get(pid), after.get(pid)];
          return from === undefined || to === undefined ? sum : sum + to - from;
        }, 0);
        const perOperation = (ms: number) => Math.round((ms * 1000) / operations);
        return { service_us: perOperation(used([servicePid])), postgres_us: local ? perOperation(used(server)) : null };
      };
    },
    async close() {
      pidusage.clear();
      await client.end();
    },
  };
}
