import type { FileHandle } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { InternalError } from '../errors.js';

/** A byte range, both ends inclusive, like HTTP `Range`. */
export interface ByteRange {
  start: number;
  end: number;
}

/** A blob the database refers to is not in the store (lost, or removed by hand): 500 CONTENT_MISSING when asked for. */
export class BlobNotFoundError extends InternalError {
  constructor(key: string) {
    super('CONTENT_MISSING', `blob ${key} not found`);
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

/** An open temp file of a store of local files, which a writer fills (see `BlobStore.putFile`). */
export interface BlobFile {
  fd: number;
  /** Told of each write once it is done, in order; it throws when the store cannot go on (a failed background sync). */
  wrote(bytes: number): void;
}

/** Appends to a staged write (see `BlobStore.openStaging`); one call at a time. */
export interface StagingWriter {
  /** Appends the chunks' bytes, in order, after what was written before. */
  write(chunks: Buffer[]): Promise<void>;
  /** Makes everything written durable; resolves with the staging's new state, for the caller to keep. */
  commit(): Promise<string>;
  /** Releases the writer (after a commit, or to give up what followed the last one). */
  close(): Promise<void>;
}

/**
 * A staged write's file, for an engine that appends to it itself (see `BlobStore.openStagingFile`):
 * writes go at `position` and after, each told to `wrote` once done, in order.
 */
export interface StagingFile extends BlobFile {
  /** Where the staged bytes end when the file was opened: the first write goes here. */
  readonly position: number;
  /**
   * The staging's state with every byte told to `wrote` (as StagingWriter.commit), at once, and
   * `durable`, which settles once those bytes are on disk (it rejects with the sync's error). The
   * state may be passed on before then (a writer of it goes on after those bytes), but it must
   * not be kept anywhere that outlives a crash of the machine until `durable` resolves.
   */
  commit(): { state: string; durable: Promise<void> };
  /** Releases the file, once no write of the caller's can still touch it and `durable` has settled. */
  close(): Promise<void>;
}

/** A store that does not keep blobs as local files was asked for a file (`localFiles` is false). */
export class NotLocalFilesError extends Error {
  constructor(kind: string) {
    super(`the ${kind} blob store does not keep blobs as local files`);
    this.name = 'NotLocalFilesError';
  }
}

/**
 * Where encrypted content lives. Keys are random (never derived from names or content); values
 * are opaque bytes. Every method is required; every implementation passes the same contract
 * suite (test/blobs/blob-store.contract.ts). Only the content core (src/content/) calls them,
 * but for `ping` and `kind`.
 */
export interface BlobStore {
  /** Short name for logs and readiness output, e.g. `fs`. */
  readonly kind: string;
  /**
   * Capability: blobs are local files. When true, `putFile`, `openFile` and `openStagingFile` hand
   * out descriptors (an engine seals into and opens files itself, off the event loop); when false,
   * they reject with NotLocalFilesError and the content core streams through `put`, `get` and
   * `openStaging` instead.
   */
  readonly localFiles: boolean;
  /**
   * Stores the stream under `key`. Resolves only once the bytes are durable (but see
   * `durableLater`). If the stream fails or is destroyed, or the store fails (its error: a
   * system error with its `code`, or the remote store's), nothing is left under `key`, nor
   * anywhere else that `removeStaleUploads` cannot reclaim.
   */
  put(key: string, body: Readable, options?: PutOptions): Promise<PutResult>;
  /**
   * As `put`, but `write` writes the bytes itself into an open temp file (from any thread of the
   * process), from offset 0, and settles once nothing of it can still touch the descriptor. If
   * `write` rejects, its error is this call's, and nothing is left under `key`. NotLocalFilesError
   * when `localFiles` is false.
   */
  putFile(key: string, write: (file: BlobFile) => Promise<void>, options?: PutOptions): Promise<PutResult>;
  /**
   * The blob's file, open for reading (the caller closes it). BlobNotFoundError for an unknown
   * key; NotLocalFilesError when `localFiles` is false.
   */
  openFile(key: string): Promise<FileHandle>;
  /**
   * Where the blob's file is, for a reader that opens it itself (the engine's whole reads of small
   * blobs). Says nothing of whether it exists. NotLocalFilesError when `localFiles` is false.
   */
  filePath(key: string): string;
  /**
   * Reads a blob, or one byte range of it (inside the blob). BlobNotFoundError for an unknown
   * key; a read that fails later fails the stream.
   */
  get(key: string, range?: ByteRange): Promise<Readable>;
  /** Deletes a blob; deleting a missing blob is not an error. Rejects when the store cannot delete. */
  delete(key: string): Promise<void>;
  /** Whether a blob is under `key`; rejects only when the store cannot tell. */
  exists(key: string): Promise<boolean>;
  /** Cheap reachability check for `/readyz`; rejects when the store is unusable. */
  ping(): Promise<void>;
  /**
   * Removes what interrupted puts left behind (temp files, unfinished multipart uploads) older
   * than `olderThanMs`; resolves with how many it removed. Staged writes under a key in `keep`
   * (resumable uploads still open) are left alone.
   */
  removeStaleUploads(olderThanMs: number, keep?: ReadonlySet<string>): Promise<number>;
  /**
   * Starts a staged write under `key`: bytes appended over many requests, from any instance, and
   * shown under `key` only by `completeStaging`. Resolves with the staging's state (opaque text),
   * which the caller keeps (in the database) and passes back; nothing is visible under `key`.
   */
  beginStaging(key: string): Promise<string>;
  /**
   * A writer appending after the bytes `state` says are staged. Bytes written after the last
   * `commit` are not part of the staging: the next writer, from the same state, writes over them.
   * Rejects with the store's error; BlobNotFoundError when the staging is gone.
   */
  openStaging(key: string, state: string): Promise<StagingWriter>;
  /**
   * As `openStaging`, but the caller writes into the staging's file itself (an engine sealing off
   * the event loop, as with `putFile`). NotLocalFilesError when `localFiles` is false.
   */
  openStagingFile(key: string, state: string): Promise<StagingFile>;
  /**
   * Makes the staged bytes of `state` the blob under `key`, whole (see `put` for `options`).
   * BlobNotFoundError when the staging is gone.
   */
  completeStaging(key: string, state: string, options?: PutOptions): Promise<PutResult>;
  /** Deletes a staging and its bytes; one already gone is not an error. */
  abortStaging(key: string, state: string): Promise<void>;
  /** Releases connections and handles; the store is not used afterwards. */
  close(): Promise<void>;
}

const BLOB_KEY = /^[A-Za-z0-9_-]{16,128}$/;

/** Blob keys come from `newBlobKey`; anything else (a path, `..`) is refused before reaching storage. */
export function assertBlobKey(key: string): string {
  if (!BLOB_KEY.test(key)) throw new Error(`invalid blob key ${JSON.stringify(key)}`);
  return key;
}
