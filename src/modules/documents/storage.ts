// Where document files live: a small key -> bytes store, so that an S3-compatible bucket can replace the directory.
import { randomUUID } from 'node:crypto';
import type { FileHandle } from 'node:fs/promises';
import { mkdir, open, rename, unlink } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import type { Readable } from 'node:stream';

export interface StoredFile {
  stream: Readable;
  size: number;
}

export interface DocumentStore {
  /** Stores the bytes under a new key; they are durable when the promise resolves. */
  put(key: string, bytes: Uint8Array): Promise<void>;
  /** The bytes stored under the key, or null when there are none. */
  get(key: string): Promise<StoredFile | null>;
  /** Removes the key; a key that holds nothing is no error. */
  delete(key: string): Promise<void>;
}

// yyyy/mm/<uuid>: made by the service, never from a client's file name, so no key can climb out of the store.
const KEY_PATTERN = /^\d{4}\/\d{2}\/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The storage key of a document: the month it was stored in (UTC) and its id. */
export function storageKeyOf(documentId: string, at = new Date()): string {
  const key = `${at.getUTCFullYear()}/${String(at.getUTCMonth() + 1).padStart(2, '0')}/${documentId.toLowerCase()}`;
  if (!KEY_PATTERN.test(key)) throw new Error(`not a document id: ${documentId}`);
  return key;
}

const isMissing = (error: unknown) => (error as { code?: string }).code === 'ENOENT';

/** Files under one directory, created on the first write. */
export function directoryStore(directory: string): DocumentStore {
  const root = resolve(directory);
  const pathOf = (key: string) => {
    if (!KEY_PATTERN.test(key)) throw new Error(`not a storage key: ${JSON.stringify(key)}`);
    return join(root, key);
  };

  return {
    async put(key, bytes) {
      const path = pathOf(key);
      await mkdir(dirname(path), { recursive: true });
      // Written beside its place and renamed into it: a reader never sees half a file.
      const partial = `${path}.${randomUUID()}.part`;
      let file: FileHandle | null = await open(partial, 'wx');
      try {
        await file.writeFile(bytes);
        await file.sync();
        await file.close();
        file = null;
        await rename(partial, path);
      } catch (error) {
        await file?.close().catch(() => {});
        await unlink(partial).catch(() => {});
        throw error;
      }
      // The rename itself is durable only once the directory is synced.
      const folder = await open(dirname(path), 'r');
      try {
        await folder.sync();
      } finally {
        await folder.close();
      }
    },

    async get(key) {
      let file: FileHandle;
      try {
        file = await open(pathOf(key), 'r');
      } catch (error) {
        if (isMissing(error)) return null;
        throw error;
      }
      try {
        const { size } = await file.stat();
        return { stream: file.createReadStream(), size };
      } catch (error) {
        await file.close();
        throw error;
      }
    },

    async delete(key) {
      try {
        await unlink(pathOf(key));
      } catch (error) {
        if (!isMissing(error)) throw error;
      }
    },
  };
}
