import fs from 'node:fs';

const writev = (fd: number, buffers: Buffer[], position: number | null) =>
  new Promise<number>((resolve, reject) => fs.writev(fd, buffers, position, (error, written) => (error ? reject(error) : resolve(written))));

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
