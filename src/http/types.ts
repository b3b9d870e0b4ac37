import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyBaseLogger, FastifyInstance, RawServerDefault } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Kysely } from 'kysely';
import type { Config } from '../config.ts';
import type { DB } from '../db/schema.ts';
import type { DocumentStore } from '../modules/documents/storage.ts';
import type { CounterStore } from './rate-limit.ts';
import type { RowTexts } from './row-texts.ts';

/** The Fastify instance every module registers its routes on. */
export type App = FastifyInstance<RawServerDefault, IncomingMessage, ServerResponse, FastifyBaseLogger, TypeBoxTypeProvider>;

/** What a module's routes get handed. */
export interface ModuleDeps {
  db: Kysely<DB>;
  /**
   * Where lag-tolerant reads go: the top-level paged lists of the warehouse's records, search, reports and the event
   * poll. A read replica when one is configured, so their answers may lag the primary by the replication delay; single
   * records, the lists under one record, security records and every read of a request that writes use `db`.
   */
  reads: Kysely<DB>;
  config: Config;
  /** The JSON texts of list rows by their version, one per process (http/row-texts.ts). */
  rowTexts: RowTexts;
  /** Where document files are kept (src/modules/documents/storage.ts); storeDocument takes it. */
  documents: DocumentStore;
  /** The app's request counters (memory, or Redis shared by every instance): limits that must hold across instances. */
  counters: CounterStore;
}
