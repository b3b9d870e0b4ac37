// One transaction for a whole request: every query a request makes inside `RequestTransaction.run` goes to one
// connection, inside one transaction, and the transactions its services open become savepoints of it. The request
// decides at the end whether it all commits. Idempotent requests use it so that the record of their answer and the
// work it answers for commit together or not at all: a process killed at any moment leaves both or neither.
//
// The pinning happens in the Kysely driver, keyed by an AsyncLocalStorage context, so services and queries keep taking
// the plain `db` and need not know whether they run inside a request transaction.
import { AsyncLocalStorage } from 'node:async_hooks';
import {
  CompiledQuery, type DatabaseConnection, type Dialect, type Driver, type Kysely, type TransactionSettings,
} from 'kysely';

interface Pin {
  driver: Driver | null;
  connection: Promise<DatabaseConnection> | null;
  /** Names of the savepoints open on the connection, innermost last. */
  savepoints: string[];
  /** Queries of the request still holding the connection: the transaction ends only after they have let go. */
  inUse: number;
  letGo: (() => void) | null;
  finished: boolean;
}

const current = new AsyncLocalStorage<Pin>();
const pinOf = new WeakMap<DatabaseConnection, Pin>();

export interface RequestTransaction {
  /** Runs `work` (and everything it starts) inside the transaction. */
  run<T>(work: () => T): T;
  /** Commits what ran inside it and gives the connection back; a failure means nothing may have been kept. */
  commit(): Promise<void>;
  /** Rolls back what ran inside it and gives the connection back. */
  rollback(): Promise<void>;
}

/** A transaction that opens on the first query made inside `run`. */
export function requestTransaction(): RequestTransaction {
  const pin: Pin = { driver: null, connection: null, savepoints: [], inUse: 0, letGo: null, finished: false };
  const end = async (statement: 'commit' | 'rollback') => {
    if (pin.finished) return;
    // From here on, queries the request still starts go their own way (acquireConnection).
    pin.finished = true;
    if (!pin.connection || !pin.driver) return;
    const connection = await pin.connection;
    // A query still running (one of several started together, say) must not be released after the connection is gone.
    if (pin.inUse > 0) await new Promise<void>((resolve) => (pin.letGo = resolve));
    pinOf.delete(connection);
    try {
      await connection.executeQuery(CompiledQuery.raw(statement));
    } finally {
      await pin.driver.releaseConnection(connection);
    }
  };
  return {
    run: (work) => current.run(pin, work),
    commit: () => end('commit'),
    rollback: () => end('rollback'),
  };
}

class RequestTransactionDriver implements Driver {
  readonly #inner: Driver;
  constructor(inner: Driver) {
    this.#inner = inner;
  }

  init() {
    return this.#inner.init();
  }

  acquireConnection(): Promise<DatabaseConnection> {
    const pin = current.getStore();
    // Work a request leaves running after it has finished goes its own way.
    if (!pin || pin.finished) return this.#inner.acquireConnection();
    pin.driver = this.#inner;
    pin.connection ??= this.#open(pin);
    pin.inUse++;
    return pin.connection.catch((error) => {
      pin.inUse--;
      throw error;
    });
  }

  async #open(pin: Pin): Promise<DatabaseConnection> {
    const connection = await this.#inner.acquireConnection();
    try {
      await this.#inner.beginTransaction(connection, {});
    } catch (error) {
      pin.finished = true;
      await this.#inner.releaseConnection(connection);
      throw error;
    }
    pinOf.set(connection, pin);
    return connection;
  }

  // Inside a request transaction a service's transaction is a savepoint: it keeps the request's isolation level, and
  // two of them at once on one request would share the stack of savepoint names (no service does that).
  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const pin = pinOf.get(connection);
    if (!pin) return this.#inner.beginTransaction(connection, settings);
    const name = `request_work_${pin.savepoints.length + 1}`;
    await connection.executeQuery(CompiledQuery.raw(`savepoint ${name}`));
    pin.savepoints.push(name);
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    const pin = pinOf.get(connection);
    if (!pin) return this.#inner.commitTransaction(connection);
    await connection.executeQuery(CompiledQuery.raw(`release savepoint ${pin.savepoints.pop()}`));
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    const pin = pinOf.get(connection);
    if (!pin) return this.#inner.rollbackTransaction(connection);
    const name = pin.savepoints.pop();
    await connection.executeQuery(CompiledQuery.raw(`rollback to savepoint ${name}`));
    await connection.executeQuery(CompiledQuery.raw(`release savepoint ${name}`));
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    const pin = pinOf.get(connection);
    if (!pin) return this.#inner.releaseConnection(connection);
    // The request transaction gives its connection back when it ends.
    if (--pin.inUse === 0) pin.letGo?.();
  }

  destroy() {
    return this.#inner.destroy();
  }
}

/** The dialect with request transactions: every Kysely instance of the service is made with it. */
export function withRequestTransactions(inner: Dialect): Dialect {
  return {
    createAdapter: () => inner.createAdapter(),
    createDriver: () => new RequestTransactionDriver(inner.createDriver()),
    createQueryCompiler: () => inner.createQueryCompiler(),
    createIntrospector: (db: Kysely<any>) => inner.createIntrospector(db),
  };
}
