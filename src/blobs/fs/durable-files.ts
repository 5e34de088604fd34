import fs from 'node:fs';
import fsp from 'node:fs/promises';
import { promisify } from 'node:util';
import { writeAll } from '../../lib/write-all.js';

// Plain descriptors: a FileHandle (an object tracked for its close, with promise plumbing per
// call) costs a visible share of a small upload's CPU (docs/performance.md).
export const openFile = promisify(fs.open);
export const syncFile = promisify(fs.fsync);
export const dataSyncFile = promisify(fs.fdatasync);
export const closeFile = promisify(fs.close);

/**
 * The durable small-file steps of the filesystem store, given by the crypto engine: one threadpool
 * job each with the native addon (native/durable-files.c), else the same system calls through
 * node:fs, a job each (a small blob takes eight: file open, write, fsync, close, rename;
 * directory open, fsync, close; each wakes a pool thread and then the event loop).
 */
export interface DurableFiles {
  /**
   * Creates `file` (which must not exist, mode 0600), writes `chunks` in order, fsyncs and closes
   * it, then renames it to `renameTo` when given. A failure of that rename (its error's `syscall`
   * is `rename`) leaves the file whole under its first name.
   */
  writeFileDurably(file: string, chunks: Buffer[], renameTo?: string): Promise<void>;
  /** fsyncs a directory, so that its entries survive a crash. */
  syncDirectory(dir: string): Promise<void>;
}

export const nodeFsDurableFiles: DurableFiles = {
  async writeFileDurably(file, chunks, renameTo) {
    const fd = await openFile(file, 'wx', 0o600);
    try {
      await writeAll(fd, chunks);
      await syncFile(fd);
    } finally {
      await closeFile(fd);
    }
    if (renameTo !== undefined) await fsp.rename(file, renameTo);
  },
  async syncDirectory(dir) {
    const fd = await openFile(dir, 'r');
    try {
      await syncFile(fd);
    } finally {
      await closeFile(fd);
    }
  },
};
