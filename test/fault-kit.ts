// What the fault tests break and restart: a PostgreSQL cluster and a Redis server of their own (never the shared ones),
// and the service itself as a child process (`node src/main.ts`), so that a crash or a kill is a real one.
import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import pg from 'pg';

const run = promisify(execFile);
const root = new URL('..', import.meta.url).pathname;
// The installed PostgreSQL major version, as .ci/run finds it.
const PG_VERSION = existsSync('/etc/postgresql') ? readdirSync('/etc/postgresql').sort().at(-1)! : '15';

/** Why the fault tests cannot run here, or false when they can (they need root for pg_createcluster, and redis-server). */
export function faultTestsSkipped(): string | false {
  if (!process.env.TEST_DATABASE_URL) return 'fault tests run in the PostgreSQL pass (TEST_DATABASE_URL)';
  if (process.getuid?.() !== 0) return 'fault tests need root to create their own PostgreSQL cluster';
  for (const tool of ['pg_createcluster', 'redis-server']) {
    if (spawnSync('which', [tool]).status !== 0) return `${tool} is not installed`;
  }
  return false;
}

/** One query on a connection of its own (the test's view of the database, outside the service's pool). */
export async function queryOnce<T extends pg.QueryResultRow>(url: string, text: string, values: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(text, values)).rows;
  } finally {
    await client.end();
  }
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export async function waitFor(condition: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const started = Date.now();
  while (!(await condition())) {
    if (Date.now() - started > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(50);
  }
}

export interface Cluster {
  url: string;
  port: number;
  start(): Promise<void>;
  stop(): Promise<void>;
  restart(): Promise<void>;
  /** SIGSTOP every process of the cluster: the server hangs, connections stay open. */
  freeze(): void;
  thaw(): void;
  drop(): Promise<void>;
}

const ctl = (name: string, action: 'start' | 'stop' | 'restart') =>
  run('pg_ctlcluster', ['--skip-systemctl-redirect', PG_VERSION, name, action, ...(action === 'start' ? [] : ['-m', 'fast'])]);

const dropCluster = (name: string) =>
  run('pg_dropcluster', [PG_VERSION, name, '--stop']).catch(() => run('pg_dropcluster', [PG_VERSION, name])).then(() => {});

/** A PostgreSQL cluster of the test's own on a free port, trust auth, no fsync; dropped by `drop()`. */
export async function createCluster(): Promise<Cluster> {
  const name = `wmsfault_${process.pid}_${randomBytes(3).toString('hex')}`;
  const port = await freePort();
  const created = run('pg_createcluster', [
    PG_VERSION, name, '--port', String(port), '--start-conf', 'manual',
    '-o', 'fsync=off', '-o', 'synchronous_commit=off', '-o', 'full_page_writes=off',
    '--', '--auth-host=trust', '--auth-local=trust',
  ]);
  const drop = () => dropCluster(name);
  try {
    await created;
    await ctl(name, 'start');
  } catch (error) {
    await drop().catch(() => {});
    throw error;
  }
  await run('psql', ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', '-qc', 'create database wms']);
  return clusterHandle(name, port, drop);
}

/**
 * A hot standby of `primary` on a port of its own: a cluster whose data directory is replaced by a pg_basebackup of
 * the primary with standby.signal and the primary's address written (-R), so it streams and replays what the primary
 * writes and answers read-only queries meanwhile.
 */
export async function createStandby(primary: Cluster): Promise<Cluster> {
  const name = `wmsstandby_${process.pid}_${randomBytes(3).toString('hex')}`;
  const port = await freePort();
  const drop = () => dropCluster(name);
  try {
    await run('pg_createcluster', [PG_VERSION, name, '--port', String(port), '--start-conf', 'manual', '--', '--auth-host=trust', '--auth-local=trust']);
    const dataDir = `/var/lib/postgresql/${PG_VERSION}/${name}`;
    // Emptied, not removed: the directory above belongs to root, and pg_basebackup (as postgres) fills an empty one.
    for (const entry of readdirSync(dataDir)) rmSync(`${dataDir}/${entry}`, { recursive: true, force: true });
    await run('runuser', ['-u', 'postgres', '--', 'pg_basebackup', '-h', '127.0.0.1', '-p', String(primary.port), '-U', 'postgres',
      '-D', dataDir, '-R', '-X', 'stream', '--checkpoint=fast']);
    await ctl(name, 'start');
  } catch (error) {
    await drop().catch(() => {});
    throw error;
  }
  return clusterHandle(name, port, drop);
}

function clusterHandle(name: string, port: number, drop: () => Promise<void>): Cluster {
  // The postmaster is signalled before its children are listed: stopped, it forks no backend that the list would
  // miss (one that escaped a freeze would go on serving, and the test would measure something else).
  const signal = (which: NodeJS.Signals) => {
    const file = `/var/lib/postgresql/${PG_VERSION}/${name}/postmaster.pid`;
    if (!existsSync(file)) return;
    const kill = (pid: number) => { try { process.kill(pid, which); } catch { /* gone */ } };
    const postmaster = Number(readFileSync(file, 'utf8').split('\n')[0]!.trim());
    kill(postmaster);
    spawnSync('pgrep', ['-P', String(postmaster)]).stdout.toString().split('\n').filter(Boolean).map(Number).forEach(kill);
  };
  return {
    url: `postgres://postgres@127.0.0.1:${port}/wms`,
    port,
    start: async () => void (await ctl(name, 'start')),
    stop: async () => void (await ctl(name, 'stop')),
    restart: async () => void (await ctl(name, 'restart')),
    freeze: () => signal('SIGSTOP'),
    thaw: () => signal('SIGCONT'),
    drop: async () => {
      signal('SIGCONT');
      await drop();
    },
  };
}

/** Why the PgBouncer test cannot run here (.ci/run installs Debian's pgbouncer), or false. */
export function pgBouncerSkipped(): string | false {
  return faultTestsSkipped() || (spawnSync('which', ['pgbouncer']).status !== 0 && 'pgbouncer is not installed (apt-get install pgbouncer)');
}

export interface PgBouncer {
  /** The url of `database` through the pooler. */
  url(database: string): string;
  /** PgBouncer 1.21 and later keep protocol-level prepared statements across server connections (Debian 12 has 1.18). */
  keepsPreparedStatements: boolean;
  stop(): Promise<void>;
}

/**
 * A PgBouncer of the test's own in transaction pooling mode in front of the PostgreSQL server at `serverPort`, with
 * only `serverConnections` server connections per database: many clients share few sessions, so anything that leans
 * on a session surviving from one transaction to the next breaks.
 */
export async function startPgBouncer(serverPort: number, serverConnections: number): Promise<PgBouncer> {
  const port = await freePort();
  const [major = 0, minor = 0] = (/PgBouncer (\d+)\.(\d+)/.exec((await run('pgbouncer', ['--version'])).stdout) ?? []).slice(1).map(Number);
  const keepsPreparedStatements = major > 1 || (major === 1 && minor >= 21);
  const dir = mkdtempSync(join(tmpdir(), 'wms-pgbouncer-'));
  writeFileSync(join(dir, 'users.txt'), '"postgres" ""\n');
  writeFileSync(join(dir, 'pgbouncer.ini'), [
    '[databases]', `* = host=127.0.0.1 port=${serverPort}`,
    '[pgbouncer]', 'listen_addr = 127.0.0.1', `listen_port = ${port}`, 'unix_socket_dir =',
    'auth_type = trust', `auth_file = ${join(dir, 'users.txt')}`, 'pool_mode = transaction',
    `default_pool_size = ${serverConnections}`, 'max_client_conn = 500', `logfile = ${join(dir, 'pgbouncer.log')}`,
    ...(keepsPreparedStatements ? ['max_prepared_statements = 500'] : []),
  ].join('\n'));
  // PgBouncer refuses to run as root.
  await run('chown', ['-R', 'postgres', dir]);
  const child = spawn('runuser', ['-u', 'postgres', '--', 'pgbouncer', join(dir, 'pgbouncer.ini')], { stdio: 'ignore' });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  await waitFor(() => spawnSync('pg_isready', ['-q', '-h', '127.0.0.1', '-p', String(port)]).status === 0, 10_000, 'pgbouncer');
  return {
    url: (database) => `postgres://postgres@127.0.0.1:${port}/${database}`,
    keepsPreparedStatements,
    stop: async () => {
      spawnSync('pkill', ['-f', join(dir, 'pgbouncer.ini')]);
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface RedisServer {
  url: string;
  process: ChildProcess;
  kill(): Promise<void>;
  start(): Promise<void>;
  freeze(): void;
  thaw(): void;
}

/** A Redis server of the test's own, keeping nothing on disk. */
export async function startRedis(): Promise<RedisServer> {
  const port = await freePort();
  let child: ChildProcess;
  const start = async () => {
    child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    await waitFor(() => spawnSync('redis-cli', ['-p', String(port), 'ping']).stdout?.toString().trim() === 'PONG', 5000, 'redis-server');
  };
  await start();
  const server: RedisServer = {
    url: `redis://127.0.0.1:${port}`,
    get process() {
      return child;
    },
    kill: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGCONT');
      child.kill('SIGKILL');
      await exited;
    },
    start,
    freeze: () => void child.kill('SIGSTOP'),
    thaw: () => void child.kill('SIGCONT'),
  };
  return server;
}

export interface Service {
  url: string;
  child: ChildProcess;
  output(): string;
  /** Resolves with the exit code (or signal) once the process has ended. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  alive(): boolean;
}

/** `node src/main.ts` with the given environment; resolves once it listens (the database may not be ready yet). */
export async function startService(env: Record<string, string>): Promise<Service> {
  const port = await freePort();
  const child = spawn(process.execPath, ['src/main.ts'], {
    cwd: root,
    env: { ...process.env, LOG_LEVEL: 'info', HOST: '127.0.0.1', PORT: String(port), WMS_RATE_LIMIT_PER_KEY: '1000000', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })));
  const alive = () => child.exitCode === null && child.signalCode === null;
  await waitFor(() => {
    if (!alive()) throw new Error(`the service exited at start:\n${output}`);
    return output.includes('Server listening at');
  }, 30_000, 'the service to listen');
  return { url: `http://127.0.0.1:${port}`, child, output: () => output, exited, alive };
}

export interface Answer {
  status: number;
  body: any;
  headers: Headers;
  ms: number;
}

/** One HTTP request; a refused or reset connection is status 0 (the process is gone or going). */
export async function request(
  service: { url: string },
  method: string,
  path: string,
  options: { key?: string; body?: unknown; headers?: Record<string, string>; timeoutMs?: number } = {},
): Promise<Answer> {
  const started = performance.now();
  const headers: Record<string, string> = { ...options.headers };
  if (options.key) headers.authorization = `Bearer ${options.key}`;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  try {
    const response = await fetch(`${service.url}${path}`, {
      method, headers, body: options.body === undefined ? undefined : JSON.stringify(options.body),
      signal: AbortSignal.timeout(options.timeoutMs ?? 60_000),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : null, headers: response.headers, ms: performance.now() - started };
  } catch (error) {
    if ((error as Error).name === 'TimeoutError') throw error;
    return { status: 0, body: null, headers: new Headers(), ms: performance.now() - started };
  }
}

/** The first admin's key, from the service's start-up output. */
export function printedAdminKey(service: Service): string {
  const key = /\b(jwc_[0-9A-Za-z]{32})\b/.exec(service.output())?.[1];
  if (!key) throw new Error(`no admin key printed:\n${service.output()}`);
  return key;
}

export const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
};
