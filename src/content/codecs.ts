import { createHash, type Hash } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { MAX_PIECES, type SegmentAead } from './aead.js';
import {
  CipherFormatError,
  HEADER_BYTES,
  TAG_BYTES,
  parseHeader,
  sealedSize,
  segmentCount,
  segmentNonce,
  segmentOffset,
  type SegmentRange,
  type StreamHeader,
} from './format.js';

/**
 * Synchronous codecs of the stored format: bytes in, bytes out, in order. `write` may hold bytes
 * back (a segment is sealed or opened only once the following bytes show whether it is the final
 * one); `end` releases the rest. Both throw CipherFormatError on damaged input, having returned
 * only authenticated output before. Input chunks are read in place and may be kept until `end`:
 * they must not change once written (a Readable's chunks do not).
 */
export interface SegmentCodec {
  write(chunks: Buffer[]): Buffer[];
  end(): Buffer[];
}

/**
 * Collects input until whole segments can be processed, and hands them out as views of the
 * chunks holding them (copied only when a segment spans more than MAX_PIECES chunks).
 */
class InputBuffer {
  private chunks: Buffer[] = [];
  length = 0;

  add(chunks: Buffer[]): void {
    for (const chunk of chunks) {
      if (chunk.length === 0) continue;
      this.chunks.push(chunk);
      this.length += chunk.length;
    }
  }

  /** The first `n` bytes as one buffer (a view when they sit in one chunk, else a copy). */
  take(n: number): Buffer {
    const views = this.views(n);
    return views.length === 1 ? views[0] : Buffer.concat(views, n);
  }

  /** The first `n` bytes as views of their chunks, in order (at most MAX_PIECES of them). */
  takePieces(n: number): Buffer[] {
    const views = this.views(n);
    return views.length <= MAX_PIECES ? views : [Buffer.concat(views, n)];
  }

  private views(n: number): Buffer[] {
    const views: Buffer[] = [];
    this.length -= n;
    while (n > 0) {
      const chunk = this.chunks[0];
      if (chunk.length <= n) {
        views.push(this.chunks.shift()!);
        n -= chunk.length;
      } else {
        views.push(chunk.subarray(0, n));
        this.chunks[0] = chunk.subarray(n);
        n = 0;
      }
    }
    return views;
  }
}

function openSegment(
  aead: SegmentAead,
  header: StreamHeader,
  index: number,
  final: boolean,
  sealed: Buffer,
  out: Buffer,
  at: number,
  nonce: Buffer,
): number {
  if (sealed.length < TAG_BYTES) throw new CipherFormatError(`segment ${index} is truncated`);
  const opened = aead.open(segmentNonce(header.noncePrefix, index, final, nonce), header.bytes, sealed, out, at);
  if (opened < 0) throw new CipherFormatError(`segment ${index} does not authenticate`);
  return opened;
}

/**
 * Plaintext in, header and sealed segments out (and the plaintext's SHA-256 and CRC-32, when
 * asked). A full segment waits for one more byte.
 */
export class Sealer implements SegmentCodec {
  private readonly input = new InputBuffer();
  private readonly hash: Hash | null;
  private crc = 0;
  private readonly nonce = Buffer.alloc(12);
  private index = 0;
  private headerSent = false;
  /** `sha256:<hex>` of the plaintext once ended, when hashing. */
  checksum: string | undefined;
  /** CRC-32 of the plaintext once ended, when hashing (a zip entry's: version rows keep it). */
  crc32: number | undefined;

  constructor(
    private readonly aead: SegmentAead,
    readonly header: StreamHeader,
    options: { hash?: boolean } = {},
  ) {
    this.hash = options.hash ? createHash('sha256') : null;
  }

  write(chunks: Buffer[]): Buffer[] {
    if (this.hash)
      for (const chunk of chunks) {
        this.hash.update(chunk);
        this.crc = crc32(chunk, this.crc);
      }
    this.input.add(chunks);
    // Strictly more than one segment left: the first one cannot be the final one.
    const ready = Math.floor((this.input.length - 1) / this.header.segmentSize);
    return ready > 0 ? this.seal(ready, false) : this.start();
  }

  end(): Buffer[] {
    const out = this.seal(1, true);
    if (this.hash) {
      this.checksum = `sha256:${this.hash.digest('hex')}`;
      this.crc32 = this.crc;
    }
    return out;
  }

  /** The header, once, ahead of the first segment. */
  private start(): Buffer[] {
    if (this.headerSent) return [];
    this.headerSent = true;
    return [Buffer.from(this.header.bytes)];
  }

  /** Seals `count` segments (the last one flagged final when `final`) into one output buffer. */
  private seal(count: number, final: boolean): Buffer[] {
    const size = this.header.segmentSize;
    const plainBytes = final ? this.input.length : count * size;
    const out = Buffer.allocUnsafe(plainBytes + count * TAG_BYTES);
    let at = 0;
    for (let i = 0; i < count; i++) {
      const last = final && i === count - 1;
      const plain = this.input.takePieces(last ? this.input.length : size);
      at += this.aead.seal(segmentNonce(this.header.noncePrefix, this.index++, last, this.nonce), this.header.bytes, plain, out, at);
    }
    return [...this.start(), out];
  }
}

/** Stored bytes in (header first), authenticated plaintext out. A sealed segment waits for one more byte. */
export class Opener implements SegmentCodec {
  private readonly input = new InputBuffer();
  private header: StreamHeader | null = null;
  private readonly nonce = Buffer.alloc(12);
  private index = 0;

  constructor(private readonly aead: SegmentAead) {}

  write(chunks: Buffer[]): Buffer[] {
    this.input.add(chunks);
    if (!this.header) {
      if (this.input.length < HEADER_BYTES) return [];
      this.header = parseHeader(this.input.take(HEADER_BYTES));
    }
    const sealed = this.header.segmentSize + TAG_BYTES;
    const ready = Math.floor((this.input.length - 1) / sealed);
    return ready > 0 ? this.open(ready, sealed, false) : [];
  }

  end(): Buffer[] {
    if (!this.header) throw new CipherFormatError('truncated header');
    // What is left is at most one sealed segment, the final one (a stream always ends with one).
    return this.open(1, this.header.segmentSize + TAG_BYTES, true);
  }

  private open(count: number, sealed: number, final: boolean): Buffer[] {
    const storedBytes = final ? this.input.length : count * sealed;
    const out = Buffer.allocUnsafe(Math.max(0, storedBytes - count * TAG_BYTES));
    let at = 0;
    for (let i = 0; i < count; i++) {
      const last = final && i === count - 1;
      at += openSegment(
        this.aead,
        this.header!,
        this.index++,
        last,
        this.input.take(last ? this.input.length : sealed),
        out,
        at,
        this.nonce,
      );
    }
    return at > 0 ? [out.subarray(0, at)] : [];
  }
}

/**
 * The stored bytes of a range's segments in (`storedStart..storedEnd`, in order), exactly the
 * requested plaintext out. Knowing the plaintext size, it knows which segment is final, so a
 * shortened or lengthened blob still fails.
 */
export class RangeOpener implements SegmentCodec {
  private readonly input = new InputBuffer();
  private readonly nonce = Buffer.alloc(12);
  private index: number;
  private toSkip: number;
  private remaining: number;

  constructor(
    private readonly aead: SegmentAead,
    private readonly header: StreamHeader,
    private readonly range: SegmentRange,
  ) {
    this.index = range.firstSegment;
    this.toSkip = range.skip;
    this.remaining = range.length;
  }

  write(chunks: Buffer[]): Buffer[] {
    this.input.add(chunks);
    const outs: Buffer[] = [];
    const { segmentSize } = this.header;
    const sealed = segmentSize + TAG_BYTES;
    // Whole middle segments in one output buffer, then the last one when it is all here.
    const middle = Math.min(Math.floor(this.input.length / sealed), this.range.lastSegment - this.index);
    if (middle > 0) {
      const out = Buffer.allocUnsafe(middle * segmentSize);
      let at = 0;
      for (let i = 0; i < middle; i++)
        at += openSegment(this.aead, this.header, this.index++, false, this.input.take(sealed), out, at, this.nonce);
      this.emit(out, outs);
    }
    if (this.index === this.range.lastSegment) {
      const lastLength = this.range.storedEnd - segmentOffset(this.range.lastSegment, segmentSize) + 1;
      if (this.input.length >= lastLength) {
        const final = this.index === this.range.totalSegments - 1;
        const plain = Buffer.allocUnsafe(Math.max(0, lastLength - TAG_BYTES));
        openSegment(this.aead, this.header, this.index++, final, this.input.take(lastLength), plain, 0, this.nonce);
        this.emit(plain, outs);
      }
    }
    return outs;
  }

  end(): Buffer[] {
    if (this.index <= this.range.lastSegment || this.input.length > 0 || this.remaining > 0) {
      throw new CipherFormatError('stored stream is shorter or longer than expected');
    }
    return [];
  }

  private emit(plain: Buffer, outs: Buffer[]): void {
    let out = plain;
    if (this.toSkip > 0) {
      const cut = Math.min(this.toSkip, out.length);
      out = out.subarray(cut);
      this.toSkip -= cut;
    }
    if (out.length > this.remaining) out = out.subarray(0, this.remaining);
    this.remaining -= out.length;
    if (out.length > 0) outs.push(out);
  }
}

/**
 * A whole stored stream of `size` plaintext bytes, opened at once into `out` (at least `size`
 * bytes): its header checked, its length that of `size` bytes sealed, every segment
 * authenticated, or a CipherFormatError (and nothing of it left in `out`). The part of `out` it fills.
 */
export function openWhole(aead: SegmentAead, stored: Buffer, size: number, out: Buffer): Buffer {
  if (out.length < size) throw new RangeError('openWhole: the output has no room for the plaintext');
  const header = parseHeader(stored);
  const { segmentSize } = header;
  if (stored.length !== sealedSize(size, segmentSize)) throw new CipherFormatError('stored stream is shorter or longer than expected');
  const count = segmentCount(size, segmentSize);
  const nonce = Buffer.alloc(12);
  let at = 0;
  try {
    for (let index = 0; index < count; index++) {
      const from = segmentOffset(index, segmentSize);
      const sealed = stored.subarray(from, Math.min(from + segmentSize + TAG_BYTES, stored.length));
      at += openSegment(aead, header, index, index === count - 1, sealed, out, at, nonce);
    }
  } catch (error) {
    // A read that fails leaves nothing of the stream in `out`, as the native engine's does.
    out.fill(0, 0, at);
    throw error;
  }
  return out.subarray(0, at);
}
