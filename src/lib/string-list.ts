import type { Hash } from 'node:crypto';

/** Strings per block; each block's bytes grow on their own, so a long list never copies the others. */
const BLOCK_STRINGS = 4096;
const FIRST_BLOCK_BYTES = 128 * 1024;

/**
 * Many short strings kept as their UTF-8 bytes, back to back in a few buffers: 100,000 of them
 * are some 30 buffers rather than 100,000 heap strings, which V8 would keep in its old generation
 * (and copy there) for as long as the list lives, and free only at its next full collection.
 */
export class StringList {
  private readonly blocks: { bytes: Buffer; ends: Uint32Array }[] = [];
  private count = 0;

  get length(): number {
    return this.count;
  }

  /** Adds a string (or its UTF-8 bytes); its index. */
  push(value: string | Buffer): number {
    const at = this.count % BLOCK_STRINGS;
    if (at === 0) this.blocks.push({ bytes: Buffer.allocUnsafeSlow(FIRST_BLOCK_BYTES), ends: new Uint32Array(BLOCK_STRINGS) });
    const block = this.blocks[this.blocks.length - 1];
    const start = at === 0 ? 0 : block.ends[at - 1];
    const length = typeof value === 'string' ? Buffer.byteLength(value, 'utf8') : value.length;
    if (start + length > block.bytes.length) block.bytes = grown(block.bytes, start, start + length);
    if (typeof value === 'string') block.bytes.write(value, start, 'utf8');
    else value.copy(block.bytes, start);
    block.ends[at] = start + length;
    return this.count++;
  }

  /** The bytes of string `index`: a view into the list, valid as long as it lives. */
  bytesAt(index: number): Buffer {
    if (!(index >= 0 && index < this.count)) throw new RangeError(`no string ${index} in a list of ${this.count}`);
    const block = this.blocks[Math.floor(index / BLOCK_STRINGS)];
    const at = index % BLOCK_STRINGS;
    return block.bytes.subarray(at === 0 ? 0 : block.ends[at - 1], block.ends[at]);
  }

  at(index: number): string {
    return this.bytesAt(index).toString('utf8');
  }

  /**
   * Feeds `hash` with the list: its length, then each block's ends and bytes. Each string's bytes
   * come with where they end, so two different lists never feed the same bytes.
   */
  updateHash(hash: Hash): void {
    hash.update(Uint32Array.of(this.count));
    this.blocks.forEach((block, b) => {
      const strings = Math.min(BLOCK_STRINGS, this.count - b * BLOCK_STRINGS);
      hash.update(block.ends.subarray(0, strings));
      hash.update(block.bytes.subarray(0, block.ends[strings - 1]));
    });
  }
}

/** A copy of the first `used` bytes of `bytes` in a buffer of at least `needed` bytes (doubling). */
function grown(bytes: Buffer, used: number, needed: number): Buffer {
  const to = Buffer.allocUnsafeSlow(Math.max(2 * bytes.length, needed));
  bytes.copy(to, 0, 0, used);
  return to;
}
