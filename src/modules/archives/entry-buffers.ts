import type { Downstream } from '../../lib/zip/zip-archive.js';

/** Buffers lent at once, at most: those of the entries opened ahead, and of those still downstream. */
const MAX_LENT = 8;

/** The smallest buffer lent; one for a larger entry is the next power of two of its size. */
const MIN_LENT_BYTES = 256 * 1024;

/**
 * The memory entries read whole are read into: slices of a few buffers, each entry after the
 * previous one in the current buffer, and a buffer used again once the archive has written out
 * the last entry in it. A buffer per entry made every entry an ArrayBuffer that V8 frees only
 * after a collection: with 100,000 small entries, they held more memory than anything else, and
 * larger ones had V8 run a full collection every few dozen entries.
 */
export class EntryBuffers {
  /** Oldest first; the last is the one being filled. `index` and `end`: the last entry in it, and where its content ends. */
  private readonly lent: { buffer: Buffer; used: number; index: number; end: number }[] = [];

  take(index: number, size: number, downstream: Downstream): Buffer {
    let current = this.lent.at(-1);
    if (!current || current.used + size > current.buffer.length) {
      current = { buffer: this.freeBuffer(size, downstream), used: 0, index, end: size };
      this.lent.push(current);
      // Not known to be written out yet: left to the collector.
      if (this.lent.length > MAX_LENT) this.lent.shift();
    }
    const slice = current.buffer.subarray(current.used, current.used + size);
    current.used += size;
    current.index = index;
    current.end = size;
    return slice;
  }

  /** The oldest buffer if its entries are written out and it is large enough, else a new one. */
  private freeBuffer(size: number, downstream: Downstream): Buffer {
    const oldest = this.lent[0];
    if (oldest && downstream.isWrittenOut(oldest.index, oldest.end)) {
      this.lent.shift();
      if (oldest.buffer.length >= size) return oldest.buffer;
    }
    return Buffer.allocUnsafeSlow(Math.max(MIN_LENT_BYTES, 2 ** Math.ceil(Math.log2(size))));
  }
}
