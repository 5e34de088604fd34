import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { FileHandle } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import {
  BlobNotFoundError,
  assertBlobKey,
  type BlobFile,
  type BlobStore,
  type ByteRange,
  type PutOptions,
  type PutResult,
  type StagingFile,
  type StagingWriter,
} from '../blob-store.js';
import { DirectorySyncs } from './directory-syncs.js';
import { writeAll } from '../../lib/write-all.js';
import { closeFile, dataSyncFile, nodeFsDurableFiles, openFile, syncFile, type DurableFiles } from './durable-files.js';
import { WriteBehind } from './write-behind.js';

const READ_HIGH_WATER_MARK = 1024 * 1024;
const WRITE_BATCH_BYTES = 1024 * 1024;
/**
 * How much of an upload may wait in the page cache before it is handed to the disk (see
 * write-behind.ts): enough to keep the disk busy while the socket is read, not so much that the
 * end of an upload waits for a large flush (the A/B is in docs/performance.md).
 */
const WRITE_BEHIND_BYTES = 8 * 1024 * 1024;

export interface FsBlobStoreOptions {
  /** Bytes of a put written between background fdatasyncs (see write-behind.ts). */
  writeBehindBytes?: number;
  /** How a directory is made durable (default: fsync of the directory); tests control it. */
  syncDirectory?: (dir: string) => Promise<void>;
  /** How small blobs are written and directories synced (the crypto engine's; default: node:fs). */
  files?: DurableFiles;
}

/**
 * Blobs as files under `<root>/ab/cd/<key>`. A put writes a temp file in `<root>/tmp`, fsyncs
 * it, renames it into place and fsyncs the directory (and the parents of directories it had to
 * create), so a blob is either whole or absent, and present after a crash once put resolves.
 */
export class FsBlobStore implements BlobStore {
  readonly kind = 'fs';
  readonly localFiles = true;
  private readonly tmpDir: string;
  /** Staged writes (resumable uploads), one file per key, kept until completed or aborted. */
  private readonly stagingDir: string;
  /** Key-prefix directories being created, so concurrent uploads wait for the same creation. */
  private readonly creating = new Map<string, Promise<void>>();
  /** Uploads renaming into one directory at the same time share its fsyncs. */
  private readonly directorySyncs: DirectorySyncs;

  private readonly writeBehindBytes: number;
  private readonly files: DurableFiles;

  constructor(
    private readonly root: string,
    options: FsBlobStoreOptions = {},
  ) {
    this.writeBehindBytes = options.writeBehindBytes ?? WRITE_BEHIND_BYTES;
    this.files = options.files ?? nodeFsDurableFiles;
    this.directorySyncs = new DirectorySyncs(options.syncDirectory ?? this.files.syncDirectory);
    this.tmpDir = path.join(root, 'tmp');
    this.stagingDir = path.join(root, 'staging');
    fs.mkdirSync(this.tmpDir, { recursive: true });
    fs.mkdirSync(this.stagingDir, { recursive: true });
  }

  private pathOf(key: string): string {
    assertBlobKey(key);
    return path.join(this.root, key.slice(0, 2), key.slice(2, 4), key);
  }

  async put(key: string, body: Readable, options: PutOptions = {}): Promise<PutResult> {
    // Chunks are gathered into ~1 MiB batches written with one writev each; awaiting each batch
    // keeps back-pressure on the source and memory flat. A blob of one batch at most is written
    // whole at the end.
    const chunks = body[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
    let batch: Buffer[] = [];
    let batchBytes = 0;
    let ended = false;
    const fillBatch = async () => {
      while (batchBytes < WRITE_BATCH_BYTES) {
        const next = await chunks.next();
        if (next.done) return (ended = true);
        batch.push(next.value);
        batchBytes += next.value.length;
      }
    };
    try {
      await fillBatch();
      if (ended) return await this.putSmall(key, batch, batchBytes, options);
      return await this.putFile(
        key,
        async (file) => {
          for (;;) {
            const bytes = batchBytes;
            await writeAll(file.fd, batch);
            batch = [];
            batchBytes = 0;
            file.wrote(bytes);
            if (ended) return;
            await fillBatch();
          }
        },
        options,
      );
    } catch (error) {
      options.visibleAfter?.catch(() => {});
      // A body not read to its end is destroyed, as a for-await loop leaving it would.
      await chunks.return?.();
      throw error;
    }
  }

  /**
   * A blob of one batch at most: once it may be visible, created, written, synced, closed and
   * renamed into place in one go (one threadpool job with the native addon). Waiting for
   * `visibleAfter` first costs it little: its bytes are all here already.
   */
  private async putSmall(key: string, chunks: Buffer[], size: number, options: PutOptions): Promise<PutResult> {
    const target = this.pathOf(key);
    const temp = this.tempPath(key);
    try {
      await options.visibleAfter;
      await this.files.writeFileDurably(temp, chunks, target).catch(async (error: NodeJS.ErrnoException) => {
        // The key's directories do not exist yet: the file is whole under its temp name.
        if (error.syscall !== 'rename' || error.code !== 'ENOENT') throw error;
        await this.renameIntoPlace(temp, target);
      });
    } catch (error) {
      await fsp.rm(temp, { force: true });
      throw error;
    }
    return this.madeDurable(target, size, options);
  }

  /**
   * The blob's bytes are written by `write` into an open temp file (from any thread), which is
   * then made durable and renamed into place as `put` does. `write` settles once nothing of it
   * can still touch the descriptor: the file is closed right after.
   */
  async putFile(key: string, write: (file: BlobFile) => Promise<void>, options: PutOptions = {}): Promise<PutResult> {
    const target = this.pathOf(key);
    // Awaited once the bytes are written: a rejection before then is not an unhandled one.
    options.visibleAfter?.catch(() => {});
    const temp = this.tempPath(key);
    let fd: number | null = null;
    let writeBehind: WriteBehind | null = null;
    let size = 0;
    try {
      fd = await openFile(temp, 'wx', 0o600);
      const behind = (writeBehind = new WriteBehind(fd, this.writeBehindBytes, dataSyncFile));
      await write({
        fd,
        wrote: (bytes) => {
          size += bytes;
          behind.wrote(bytes);
        },
      });
      await writeBehind.settle();
      // The bytes and the file's size are on disk before any name points at them.
      await syncFile(fd);
      // Synced, the descriptor has nothing left to say: the rename need not wait for its close
      // (a threadpool round trip).
      closeFile(fd).catch(() => {});
      fd = null;
      // Until the rename the bytes are a temp file, which removeStaleUploads reclaims after a crash.
      await options.visibleAfter;
      await this.renameIntoPlace(temp, target);
    } catch (error) {
      if (fd !== null) {
        // No sync may still use the descriptor's number once it is closed (and perhaps reused).
        await writeBehind?.settle().catch(() => {});
        await closeFile(fd).catch(() => {});
      }
      await fsp.rm(temp, { force: true });
      throw error;
    }
    return this.madeDurable(target, size, options);
  }

  /**
   * The new entry itself: without this a crash may lose the name (ext4 without a journal writes
   * directory blocks only when asked), and the row about to commit would point at nothing.
   */
  private async madeDurable(target: string, size: number, options: PutOptions): Promise<PutResult> {
    const durable = this.directorySyncs.sync(path.dirname(target));
    if (!options.durableLater) {
      await durable;
      return { size };
    }
    // Awaited by the caller before its commit; a rejection before then is not an unhandled one.
    durable.catch(() => {});
    return { size, durable };
  }

  private tempPath(key: string): string {
    return path.join(this.tmpDir, `${key}.${randomBytes(6).toString('hex')}.part`);
  }

  /**
   * Renames a written temp file to its key's path. The directories of a key prefix exist after
   * their first blob, so the rename is tried first; on ENOENT they are created (once per process
   * however many uploads want them at the same moment) and the rename is tried again.
   */
  private async renameIntoPlace(temp: string, target: string): Promise<void> {
    try {
      await fsp.rename(temp, target);
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    const dir = path.dirname(target);
    let creating = this.creating.get(dir);
    if (!creating) {
      creating = this.createDirectory(dir).finally(() => this.creating.delete(dir));
      this.creating.set(dir, creating);
    }
    await creating;
    await fsp.rename(temp, target);
  }

  /**
   * Creates a directory and its missing parents, each made durable in its parent (the parent's
   * fsync), so a blob renamed into it stays reachable after a crash.
   */
  private async createDirectory(dir: string): Promise<void> {
    const first = await fsp.mkdir(dir, { recursive: true });
    if (first === undefined) return;
    for (let created = dir; created.length >= first.length; created = path.dirname(created))
      await this.directorySyncs.sync(path.dirname(created));
  }

  async openFile(key: string): Promise<FileHandle> {
    return fsp.open(this.pathOf(key), 'r').catch((error: NodeJS.ErrnoException) => {
      throw error.code === 'ENOENT' ? new BlobNotFoundError(key) : error;
    });
  }

  filePath(key: string): string {
    return this.pathOf(key);
  }

  async get(key: string, range?: ByteRange): Promise<Readable> {
    const handle = await this.openFile(key);
    return handle.createReadStream({ start: range?.start, end: range?.end, highWaterMark: READ_HIGH_WATER_MARK });
  }

  async delete(key: string): Promise<void> {
    await fsp.rm(this.pathOf(key), { force: true });
  }

  async exists(key: string): Promise<boolean> {
    try {
      await fsp.stat(this.pathOf(key));
      return true;
    } catch {
      return false;
    }
  }

  async ping(): Promise<void> {
    await fsp.access(this.root, fs.constants.W_OK);
  }

  /** Nothing to release: every descriptor is closed by its own call or stream. */
  async close(): Promise<void> {}

  async beginStaging(key: string): Promise<string> {
    const handle = await fsp.open(this.stagingPath(key), 'wx', 0o600);
    await handle.sync().finally(() => handle.close());
    await this.directorySyncs.sync(this.stagingDir);
    return stagingState(0);
  }

  async openStaging(key: string, state: string): Promise<StagingWriter> {
    const file = await this.openStagingFile(key, state);
    let position = file.position;
    return {
      write: async (chunks) => {
        const bytes = chunks.reduce((sum, chunk) => sum + chunk.length, 0);
        await writeAll(file.fd, chunks, position);
        position += bytes;
        file.wrote(bytes);
      },
      commit: async () => {
        const { state, durable } = file.commit();
        await durable;
        return state;
      },
      close: () => file.close(),
    };
  }

  async openStagingFile(key: string, state: string): Promise<StagingFile> {
    const position = stagedBytes(state);
    const fd = await openFile(this.stagingPath(key), 'r+').catch((error: NodeJS.ErrnoException) => {
      throw error.code === 'ENOENT' ? new BlobNotFoundError(key) : error;
    });
    // As with putFile: the disk writes while the request streams, and the commit's fsync finds little left.
    const behind = new WriteBehind(fd, this.writeBehindBytes, dataSyncFile);
    let written = 0;
    let syncing: Promise<void> | undefined;
    return {
      fd,
      position,
      wrote: (bytes) => {
        written += bytes;
        behind.wrote(bytes);
      },
      commit: () => {
        const durable = behind.settle().then(() => syncFile(fd));
        // Awaited by whoever keeps the state; a failure nobody awaits must not go unhandled.
        syncing = durable.catch(() => {});
        return { state: stagingState(position + written), durable };
      },
      close: async () => {
        await behind.settle().catch(() => {});
        await syncing;
        await closeFile(fd);
      },
    };
  }

  async completeStaging(key: string, state: string, options: PutOptions = {}): Promise<PutResult> {
    const staged = this.stagingPath(key);
    const size = stagedBytes(state);
    // Bytes past the state are a broken request's, superseded: the blob ends where the state says.
    const handle = await fsp.open(staged, 'r+').catch((error: NodeJS.ErrnoException) => {
      throw error.code === 'ENOENT' ? new BlobNotFoundError(key) : error;
    });
    try {
      await handle.truncate(size);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await options.visibleAfter;
    await this.renameIntoPlace(staged, this.pathOf(key));
    return this.madeDurable(this.pathOf(key), size, options);
  }

  async abortStaging(key: string): Promise<void> {
    await fsp.rm(this.stagingPath(key), { force: true });
  }

  private stagingPath(key: string): string {
    return path.join(this.stagingDir, assertBlobKey(key));
  }

  /** Removes temp files left by a crash mid-upload (older than `olderThanMs`); stagings are their uploads' to remove. */
  async removeStaleUploads(olderThanMs: number): Promise<number> {
    let removed = 0;
    const cutoff = Date.now() - olderThanMs;
    for (const name of await fsp.readdir(this.tmpDir)) {
      const file = path.join(this.tmpDir, name);
      const stat = await fsp.stat(file).catch(() => null);
      if (stat && stat.mtimeMs < cutoff) {
        await fsp.rm(file, { force: true });
        removed++;
      }
    }
    return removed;
  }
}

function stagingState(size: number): string {
  return JSON.stringify({ size });
}

function stagedBytes(state: string): number {
  const size = (JSON.parse(state) as { size?: unknown }).size;
  if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 0) throw new Error('invalid staging state');
  return size;
}
