import type { Downstream } from '../../lib/zip/zip-archive.js';

/** Entries read whole at most this small get a buffer of their own; larger ones share a few. */
const OWN_BUFFER_MAX = 64 * 1024;
/** Shared buffers lent at once, at most: the entries opened ahead, and those still downstream. */
const MAX_LENT = 8;

/** The smallest buffer lent; larger ones are the next power of two of their entry's size. */
const MIN_LENT_BYTES = 1024 * 1024;

/**
 * The buffers larger entries read whole are read into, each reused once the archive has written
 * its entry out (by a later entry it is large enough for): a new one per entry had V8 run a full
 * collection every few dozen entries.
 */
export class EntryBuffers {
  private readonly lent: { buffer: Buffer; index: number; end: number }[] = [];

  take(index: number, size: number, downstream: Downstream): Buffer {
    if (size <= OWN_BUFFER_MAX) return Buffer.allocUnsafe(size);
    const oldest = this.lent[0];
    const free = oldest && downstream.isWrittenOut(oldest.index, oldest.end) ? this.lent.shift()!.buffer : undefined;
    const buffer = free && free.length >= size ? free : Buffer.allocUnsafeSlow(Math.max(MIN_LENT_BYTES, 2 ** Math.ceil(Math.log2(size))));
    this.lent.push({ buffer, index, end: size });
    // Not known to be written out yet: left to the collector.
    if (this.lent.length > MAX_LENT) this.lent.shift();
    return buffer;
  }
}
