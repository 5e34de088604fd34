import type { FileHandle } from 'node:fs/promises';
import type { Readable } from 'node:stream';

/** A byte range, both ends inclusive, like HTTP `Range`. */
export interface ByteRange {
  start: number;
  end: number;
}

export class BlobNotFoundError extends Error {
  constructor(key: string) {
    super(`blob ${key} not found`);
    this.name = 'BlobNotFoundError';
  }
}

export interface PutOptions {
  /**
   * Nothing appears under the key before this has resolved; if it rejects, the put rejects and
   * leaves nothing. The caller records the blob (so that the collector knows it) while the bytes
   * are being written, instead of before.
   */
  visibleAfter?: Promise<unknown>;
  /**
   * The put may resolve once the bytes are under the key and before the key itself is durable,
   * with `durable` in its result resolving when it is. For a caller that records the blob in a
   * transaction: the transaction's first statements run while the store syncs, and only its
   * commit waits for `durable`. Stores whose put is durable when it resolves give no `durable`.
   */
  durableLater?: boolean;
}

export interface PutResult {
  size: number;
  /** With `durableLater`: resolves once the blob survives a crash; nothing durable may point at it before. */
  durable?: Promise<void>;
}

/** An open temp file of a store of local files, which a writer fills (see `BlobStore.putFromWriter`). */
export interface BlobFile {
  fd: number;
  /** Told of each write once it is done, in order; it throws when the store cannot go on (a failed background sync). */
  wrote(bytes: number): void;
}

/**
 * Where encrypted content lives. Keys are random (never derived from names or content); values
 * are opaque bytes. Every implementation passes the same contract suite (test/blobs/).
 */
export interface BlobStore {
  /** Short name for logs and readiness output, e.g. `fs`. */
  readonly kind: string;
  /**
   * Capability: every chunk a `get` stream emits sits in memory of its own that the store never
   * touches again, so a reader may move it to another thread instead of copying it.
   */
  readonly exclusiveReadChunks: boolean;
  /**
   * Stores the stream under `key`. Resolves only once the bytes are durable (but see
   * `durableLater`); if the stream fails or is destroyed, nothing is left under `key` (nor
   * anywhere else that the store cannot reclaim).
   */
  put(key: string, body: Readable, options?: PutOptions): Promise<PutResult>;
  /**
   * Capability of stores of local files: as `put`, but `write` writes the bytes itself into the
   * temp file's descriptor (from any thread of the process), from offset 0, and resolves or
   * rejects once nothing of it can still touch the descriptor. A cipher thread writing its output
   * there spares the event loop the output of an upload.
   */
  putFromWriter?(key: string, write: (file: BlobFile) => Promise<void>, options?: PutOptions): Promise<PutResult>;
  /**
   * Capability of stores of local files: the blob's file, open for reading, for a reader that
   * reads it itself (a download decrypted on the threadpool, see file-decrypt-stream.ts); the
   * caller closes it. Rejects with BlobNotFoundError for an unknown key.
   */
  openForRead?(key: string): Promise<FileHandle>;
  /** Reads a blob, or one byte range of it. Rejects with BlobNotFoundError for an unknown key. */
  get(key: string, range?: ByteRange): Promise<Readable>;
  /** Deletes a blob; deleting a missing blob is not an error. */
  delete(key: string): Promise<void>;
  exists(key: string): Promise<boolean>;
  /** Cheap reachability check for `/readyz`. */
  ping(): Promise<void>;
  /** Removes partial writes a crash left behind, older than `olderThanMs` (stores that have any). */
  removeStaleUploads?(olderThanMs: number): Promise<number>;
  /** Releases connections (stores that hold any). */
  close?(): Promise<void>;
}

const BLOB_KEY = /^[A-Za-z0-9_-]{16,128}$/;

/** Blob keys come from `newBlobKey`; anything else (a path, `..`) is refused before reaching storage. */
export function assertBlobKey(key: string): string {
  if (!BLOB_KEY.test(key)) throw new Error(`invalid blob key ${JSON.stringify(key)}`);
  return key;
}
