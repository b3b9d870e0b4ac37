// Documents: files filed under an order, a pick batch, an exception or another record. The bytes go to the document
// store, the metadata to the documents table, and every stored document leaves a history row in the same transaction.
import { randomUUID } from 'node:crypto';
import { sql, type Kysely, type Transaction } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { inTransaction } from '../../db/transaction.ts';
import { historyInsert, type HistoryEntry } from '../../domain/history.ts';
import { inPartnerScope, type Actor } from '../../http/auth.ts';
import { notFound } from '../../domain/errors.ts';
import { lockEntityForFiling, requireReadable, type DocumentEntityType } from './entities.ts';
import { ACCEPTED_TYPES, sniffFileType } from './file-types.ts';
import { serializeDocument, type Document } from './serialize.ts';
import { storageKeyOf, type DocumentStore, type StoredFile } from './storage.ts';
import type { UploadedFile } from './upload-form.ts';

type Executor = Kysely<DB> | Transaction<DB>;

export interface NewDocument {
  entityType: DocumentEntityType;
  entityId: string;
  /** The supply partner of the entity (null for customers): partner-scoped keys see the document only with it. */
  manufacturerId: string | null;
  fileName: string;
  /** The MIME type served on download. */
  fileType: string;
  bytes: Uint8Array;
  description?: string | null;
  tags?: string[] | null;
}

/** Who stores it: the uploader (uploaded_by, and the name the document shows) and the key used, for the history row. */
export interface DocumentAuthor {
  userId: string;
  userName: string;
  apiKeyId: string | null;
}

// Files stored inside a transaction opened by inTransactionWithDocuments, by transaction, to be removed if it fails.
const filesOfTransaction = new WeakMap<Transaction<DB>, string[]>();

/**
 * A new document's file, put in the store inside the caller's transaction (a transaction opened with
 * inTransactionWithDocuments removes it again if it fails), and what writes its row: `insert` for a WITH clause of the
 * caller's statement, `history` the audit entry to write with it, `document` the row as the API shows it.
 */
export async function putDocument(tx: Transaction<DB>, store: DocumentStore, author: DocumentAuthor, input: NewDocument) {
  const id = randomUUID();
  const storageKey = storageKeyOf(id);
  await store.put(storageKey, input.bytes);
  filesOfTransaction.get(tx)?.push(storageKey);
  // The times are given, not defaulted, so the document the history row keeps is the row as written.
  const at = new Date().toISOString();
  const row = {
    id, entity_type: input.entityType, entity_id: input.entityId, manufacturer_id: input.manufacturerId, file_name: input.fileName,
    file_type: input.fileType, storage_key: storageKey, file_size: input.bytes.byteLength, description: input.description ?? null,
    tags: input.tags?.length ? input.tags : null, uploaded_by: author.userId, uploaded_at: at, created_at: at, updated_at: at,
  };
  const document = serializeDocument({ ...row, uploaded_by_name: author.userName });
  return {
    document,
    insert: sql`insert into documents (id, entity_type, entity_id, manufacturer_id, file_name, file_type, storage_key, file_size,
      description, tags, uploaded_by, uploaded_at, created_at, updated_at)
      select id, entity_type, entity_id, manufacturer_id, file_name, file_type, storage_key, file_size, description, tags, uploaded_by,
        uploaded_at, created_at, updated_at
      from json_populate_record(null::documents, ${JSON.stringify(row)})`,
    history: { entityType: 'document', entityId: id, action: 'created', manufacturerId: input.manufacturerId, after: document } satisfies HistoryEntry,
  };
}

/**
 * Stores a document inside the caller's transaction: the file first, then its row and history row in one statement. A
 * failed insert removes the file again; a transaction that fails after this returned leaves its file behind unless it
 * was opened with inTransactionWithDocuments.
 */
export async function storeDocument(tx: Transaction<DB>, store: DocumentStore, author: DocumentAuthor, input: NewDocument): Promise<Document> {
  const { document, insert, history } = await putDocument(tx, store, author, input);
  try {
    await sql`with document as (${insert}) ${historyInsert(author, [history])}`.execute(tx);
    return document;
  } catch (error) {
    await store.delete(document.storage_key).catch(() => {});
    throw error;
  }
}

/** Removes the files of these keys that no committed row names (a failed lookup keeps them: a file without a row is the lesser harm). */
export async function discardUncommittedFiles(db: Kysely<DB>, store: DocumentStore, keys: string[]): Promise<void> {
  if (!keys.length) return;
  const kept = await db.selectFrom('documents').select('storage_key').where('storage_key', 'in', keys).execute();
  const committed = new Set(kept.map((row) => row.storage_key));
  await Promise.all(keys.filter((key) => !committed.has(key)).map((key) => store.delete(key)));
}

/**
 * inTransaction for work that stores documents: the files of an attempt that did not commit are removed, so a failed
 * transaction leaves neither rows nor files.
 */
export async function inTransactionWithDocuments<T>(db: Kysely<DB>, store: DocumentStore, work: (tx: Transaction<DB>) => Promise<T>): Promise<T> {
  const stored: string[] = [];
  try {
    return await inTransaction(db, async (tx) => {
      // A retried attempt: the first one rolled back, its files are orphans.
      await Promise.all(stored.splice(0).map((key) => store.delete(key)));
      filesOfTransaction.set(tx, stored);
      return work(tx);
    });
  } catch (error) {
    await discardUncommittedFiles(db, store, stored).catch(() => {});
    throw error;
  }
}

export interface UploadInput {
  entity_type: DocumentEntityType;
  entity_id: string;
  description?: string;
  tags?: string[];
  file: UploadedFile;
}

/** POST /documents: permission and entity first (403, 404), then the bytes' type (415), then file and row. */
export async function uploadDocument(db: Kysely<DB>, store: DocumentStore, actor: Actor, form: UploadInput, onStored: (key: string) => void): Promise<Document> {
  return inTransactionWithDocuments(db, store, async (tx) => {
    const { manufacturerId } = await lockEntityForFiling(tx, actor, form.entity_type, form.entity_id);
    const fileType = await sniffFileType(form.file.bytes, form.file.file_name, form.file.declared_type);
    const fileName = form.file.file_name || `document.${ACCEPTED_TYPES[fileType]?.extensions[0] ?? 'bin'}`;
    const document = await storeDocument(tx, store, actor, {
      entityType: form.entity_type, entityId: form.entity_id, manufacturerId, fileName, fileType,
      bytes: form.file.bytes, description: form.description ?? null, tags: form.tags ?? null,
    });
    onStored(document.storage_key);
    return document;
  });
}

/** A document the key may read: 404 outside its partner's scope or when missing, 403 without the entity's read permission. */
export async function getDocument(db: Executor, actor: Actor, id: string): Promise<Document> {
  const row = await inPartnerScope(
    db.selectFrom('documents as d')
      .leftJoin('users as u', 'u.id', 'd.uploaded_by')
      .selectAll('d')
      .select('u.name as uploaded_by_name')
      .where('d.id', '=', id),
    actor, 'd.manufacturer_id',
  ).executeTakeFirst();
  if (!row) throw notFound('document');
  requireReadable(actor, row.entity_type);
  return serializeDocument(row);
}

/** The document and its bytes; a row whose file is gone is 404 (and logged by the route). */
export async function openDocument(db: Executor, store: DocumentStore, actor: Actor, id: string): Promise<{ document: Document; file: StoredFile | null }> {
  const document = await getDocument(db, actor, id);
  return { document, file: await store.get(document.storage_key) };
}
