import type { Hash } from 'node:crypto';
import { StringList } from '../string-list.js';
import type { ZipEntry } from './zip-records.js';

/**
 * The entries of an archive read by index: an array of them, or a ZipEntryList. layoutZip and
 * zipRange ask for each entry when they need it, and keep none.
 */
export interface ZipEntries {
  readonly length: number;
  at(index: number): ZipEntry | undefined;
}

/** Entries whose numbers share one typed array. */
const BLOCK_ENTRIES = 4096;
/** Numbers kept per entry: size, CRC-32, time (milliseconds). */
const NUMBERS = 3;

/**
 * Many entries kept compactly: their names' bytes in a StringList, their sizes, CRC-32s and times
 * in a few typed arrays. An archive of 100,000 files then holds some 50 bytes per entry while it
 * streams, in a few dozen buffers, instead of an object, a Buffer and a Date each. `at` makes an
 * entry when it is asked for.
 */
export class ZipEntryList implements ZipEntries {
  private readonly names = new StringList();
  private readonly numbers: Float64Array[] = [];

  get length(): number {
    return this.names.length;
  }

  /** Adds an entry (its name as a string, or already as bytes); its index. */
  push(entry: { name: string | Buffer; size: number; crc32: number; modifiedAt: Date }): number {
    const index = this.names.push(entry.name);
    if (index % BLOCK_ENTRIES === 0) this.numbers.push(new Float64Array(NUMBERS * BLOCK_ENTRIES));
    const block = this.blockOf(index);
    const at = numbersAt(index);
    block[at] = entry.size;
    block[at + 1] = entry.crc32 >>> 0;
    block[at + 2] = entry.modifiedAt.getTime();
    return index;
  }

  at(index: number): ZipEntry | undefined {
    if (!(index >= 0 && index < this.length)) return undefined;
    const block = this.blockOf(index);
    const at = numbersAt(index);
    return { name: this.names.bytesAt(index), size: block[at], crc32: block[at + 1], modifiedAt: new Date(block[at + 2]) };
  }

  /** Sets the CRC-32 of entry `index` (one learnt after the entry was added). */
  setCrc32(index: number, crc32: number): void {
    this.blockOf(index)[numbersAt(index) + 1] = crc32 >>> 0;
  }

  /** Feeds `hash` with every entry's name and numbers (StringList.updateHash). */
  updateHash(hash: Hash): void {
    this.names.updateHash(hash);
    this.numbers.forEach((block, b) => hash.update(block.subarray(0, NUMBERS * Math.min(BLOCK_ENTRIES, this.length - b * BLOCK_ENTRIES))));
  }

  /** These entries in `order` (indexes into this list), without copying them. */
  inOrder(order: Uint32Array): ZipEntries {
    return { length: order.length, at: (index) => (index >= 0 && index < order.length ? this.at(order[index]) : undefined) };
  }

  // Asked several times per entry while an archive streams: no object per call.
  private blockOf(index: number): Float64Array {
    return this.numbers[Math.floor(index / BLOCK_ENTRIES)];
  }
}

/** Where entry `index`'s numbers start in its block. */
const numbersAt = (index: number) => NUMBERS * (index % BLOCK_ENTRIES);
