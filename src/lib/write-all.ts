import fs from 'node:fs';

const writev = (fd: number, buffers: Buffer[], position: number | null) =>
  new Promise<number>((resolve, reject) =>
    fs.writev(fd, buffers, position, (error, written) => (error ? reject(error) : resolve(written))),
  );

/**
 * Writes every byte of `chunks` into a file, at `position` (or, with null, at the descriptor's own
 * position), however many writevs that takes: a writev may write less than it was given.
 */
export async function writeAll(fd: number, chunks: Buffer[], position: number | null = null): Promise<void> {
  const pending = chunks.filter((chunk) => chunk.length > 0);
  while (pending.length > 0) {
    let written = await writev(fd, pending, position);
    if (position !== null) position += written;
    while (pending.length > 0 && written >= pending[0].length) written -= pending.shift()!.length;
    if (written > 0) pending[0] = pending[0].subarray(written);
  }
}

/**
 * Writes into a file batch after batch, each at the offset where the one before it ends, one at a
 * time. Once a write has failed, the writes queued after it never start.
 */
export class FileAppender {
  private queue: Promise<void> = Promise.resolve();

  /** Appends from `position` on (the file's start by default). */
  constructor(
    readonly fd: number,
    private position = 0,
  ) {}

  /** Queues `chunks` after everything queued before; resolves with their byte count once written. */
  append(chunks: Buffer[]): Promise<number> {
    const bytes = chunks.reduce((sum, chunk) => sum + chunk.length, 0);
    const position = this.position;
    this.position += bytes;
    this.queue = this.queue.then(() => writeAll(this.fd, chunks, position));
    return this.queue.then(() => bytes);
  }

  /** Resolves once no queued write can still touch the file, whatever their outcome. */
  settled(): Promise<void> {
    return this.queue.catch(() => {});
  }
}
