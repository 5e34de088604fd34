import { createHash, randomBytes } from 'node:crypto';
import { segmentAead, type SegmentAead } from './aes-gcm.js';

/**
 * The stored format of every blob: a 16-byte header, then the plaintext in 64 KiB segments, each
 * sealed with AES-256-GCM under the blob's data key (the STREAM construction of Hoang, Reyhanitabar,
 * Rogaway and Vizár, as in Tink's streaming AEAD).
 *
 *   header  = "CFRS" | version (1 byte) | log2(segment size) (1 byte) | reserved (3 bytes, 0) | nonce prefix (7 bytes)
 *   segment = AES-256-GCM(dataKey, nonce = prefix | uint32be(index) | finalFlag, aad = header, plaintext) | tag (16 bytes)
 *
 * The header is the associated data of every segment, so a changed header fails every segment;
 * the index in the nonce catches reordering; the final flag catches truncation at a segment edge
 * and extension. Any plaintext range maps to whole segments, so ranged reads decrypt only those.
 *
 * This module is synchronous and self-contained: the codecs below run inside the cipher worker
 * threads (`cipher-worker.ts`), and in-process for streams too small to be worth a round trip.
 */

export const MAGIC = Buffer.from('CFRS', 'ascii');
export const FORMAT_VERSION = 1;
export const HEADER_BYTES = 16;
export const TAG_BYTES = 16;
export const NONCE_PREFIX_BYTES = 7;
export const DEFAULT_SEGMENT_LOG2 = 16; // 64 KiB
export const KEY_BYTES = 32;
/** The most pieces one segment is sealed from without copying it whole first (native/aes-gcm.c's limit). */
const MAX_PIECES = 16;

export class CipherFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CipherFormatError';
  }
}

export interface StreamHeader {
  segmentSize: number;
  noncePrefix: Buffer;
  bytes: Buffer;
}

export function newHeader(segmentLog2 = DEFAULT_SEGMENT_LOG2): StreamHeader {
  const bytes = Buffer.alloc(HEADER_BYTES);
  MAGIC.copy(bytes, 0);
  bytes[4] = FORMAT_VERSION;
  bytes[5] = segmentLog2;
  const noncePrefix = randomBytes(NONCE_PREFIX_BYTES);
  noncePrefix.copy(bytes, 9);
  return { segmentSize: 2 ** segmentLog2, noncePrefix, bytes };
}

export function parseHeader(bytes: Buffer): StreamHeader {
  if (bytes.length < HEADER_BYTES) throw new CipherFormatError('truncated header');
  const header = bytes.subarray(0, HEADER_BYTES);
  if (!header.subarray(0, 4).equals(MAGIC)) throw new CipherFormatError('not a Coffre stream');
  if (header[4] !== FORMAT_VERSION) throw new CipherFormatError(`unsupported format version ${header[4]}`);
  const log2 = header[5];
  if (log2 < 10 || log2 > 24 || header[6] !== 0 || header[7] !== 0 || header[8] !== 0) throw new CipherFormatError('invalid header');
  return { segmentSize: 2 ** log2, noncePrefix: Buffer.from(header.subarray(9, 16)), bytes: Buffer.from(header) };
}

/** The nonce of segment `index`, written into `into` (each codec reuses one: both AEADs copy it at once). */
function nonce(prefix: Buffer, index: number, final: boolean, into: Buffer): Buffer {
  prefix.copy(into, 0);
  into.writeUInt32BE(index, 7);
  into[11] = final ? 1 : 0;
  return into;
}

/** Seals one segment (in one piece or several) into `out` at `at`; returns the bytes written (plaintext + tag). */
function sealInto(aead: SegmentAead, header: StreamHeader, index: number, final: boolean, plaintext: Buffer | Buffer[], out: Buffer, at: number, nonceBuffer: Buffer): number {
  return aead.seal(nonce(header.noncePrefix, index, final, nonceBuffer), header.bytes, plaintext, out, at);
}

/** Opens one sealed segment into `out` at `at`; throws, having written nothing usable, when it does not authenticate. */
function openInto(aead: SegmentAead, header: StreamHeader, index: number, final: boolean, sealed: Buffer, out: Buffer, at: number, nonceBuffer: Buffer): number {
  if (sealed.length < TAG_BYTES) throw new CipherFormatError(`segment ${index} is truncated`);
  const opened = aead.open(nonce(header.noncePrefix, index, final, nonceBuffer), header.bytes, sealed, out, at);
  if (opened < 0) throw new CipherFormatError(`segment ${index} does not authenticate`);
  return opened;
}

/** Number of segments holding `plaintextSize` bytes (an empty stream still has one, final, segment). */
export function segmentCount(plaintextSize: number, segmentSize: number): number {
  return Math.max(1, Math.ceil(plaintextSize / segmentSize));
}

/** Stored size of a plaintext of `plaintextSize` bytes. */
export function sealedSize(plaintextSize: number, segmentSize = 2 ** DEFAULT_SEGMENT_LOG2): number {
  return HEADER_BYTES + plaintextSize + TAG_BYTES * segmentCount(plaintextSize, segmentSize);
}

/** Stored byte offset where segment `index` starts. */
export function segmentOffset(index: number, segmentSize: number): number {
  return HEADER_BYTES + index * (segmentSize + TAG_BYTES);
}

/** Which stored bytes hold a plaintext range, and how to trim the decrypted segments to it. */
export interface SegmentRange {
  firstSegment: number;
  lastSegment: number;
  /** Stored byte range (inclusive) of the segments, header excluded. */
  storedStart: number;
  storedEnd: number;
  /** Bytes to drop from the start of the first decrypted segment. */
  skip: number;
  /** Plaintext bytes to emit in all. */
  length: number;
  totalSegments: number;
}

/** Maps the plaintext range [start, end] (inclusive) of a stream of `plaintextSize` bytes to segments. */
export function segmentRange(plaintextSize: number, start: number, end: number, segmentSize: number): SegmentRange {
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || start < 0 || end < start || end >= plaintextSize) {
    throw new RangeError('range outside the plaintext');
  }
  const totalSegments = segmentCount(plaintextSize, segmentSize);
  const firstSegment = Math.floor(start / segmentSize);
  const lastSegment = Math.floor(end / segmentSize);
  const lastPlain = Math.min(segmentSize, plaintextSize - lastSegment * segmentSize);
  return {
    firstSegment,
    lastSegment,
    storedStart: segmentOffset(firstSegment, segmentSize),
    storedEnd: segmentOffset(lastSegment, segmentSize) + lastPlain + TAG_BYTES - 1,
    skip: start - firstSegment * segmentSize,
    length: end - start + 1,
    totalSegments,
  };
}

/** A copy in a buffer of its own (never a slice of Node's shared pool), safe to transfer to another thread. */
function owned(bytes: Buffer): Buffer {
  const copy = Buffer.allocUnsafeSlow(bytes.length);
  bytes.copy(copy);
  return copy;
}

/**
 * A synchronous codec: bytes in, bytes out, in order. `write` may hold bytes back (a segment is
 * sealed or opened only once the following bytes show whether it is the final one); `end`
 * releases the rest. Both throw `CipherFormatError` on damaged input, having returned only
 * authenticated output before. Every returned buffer is a view of memory that nothing else uses,
 * so a worker can transfer it to the main thread without copying. `write` keeps no reference to
 * its input chunks once it returns (bytes held back are copied when they sit in shared memory):
 * a stream's input ring is reused as soon as its threads have answered (see input-ring.ts).
 */
export interface SegmentCodec {
  write(chunks: Buffer[]): Buffer[];
  end(): { out: Buffer[]; checksum?: string };
}

/** What a worker needs to build a codec: plain data only (it crosses a thread boundary). */
export type CodecSpec =
  | { kind: 'seal'; key: Uint8Array; segmentLog2: number; hash: boolean }
  | { kind: 'open'; key: Uint8Array }
  | { kind: 'open-range'; key: Uint8Array; header: Uint8Array; range: SegmentRange }
  | { kind: 'hash' };

/**
 * The specs of the threads a stream runs on, given how many cipher threads there are. A sealing
 * stream that also hashes its plaintext does so on two threads when it can: SHA-256 costs more
 * than twice AES-GCM per byte here (2.0 against 4-5 GB/s on one core), so on one thread the hash
 * sets the pace of an upload, and on a busy 2-core machine that thread also waits for a core
 * about a third of the time. The input goes to the hashing thread, which passes it on to the
 * sealing thread (`CipherChannel`'s `forward`), moving each buffer: every byte still crosses
 * threads once and is never copied, the two threads work on consecutive batches at once, and
 * the sealing thread, which produces the output, comes first in the list.
 */
export function threadSpecs(spec: CodecSpec, options: { threads: number }): CodecSpec[] {
  if (spec.kind === 'seal' && spec.hash && options.threads > 1) return [{ ...spec, hash: false }, { kind: 'hash' }];
  return [spec];
}

/**
 * Where a sealing codec takes the buffer each `write` returns its segments in: by default a new
 * one each time; a caller that is done with earlier outputs may hand them out again.
 */
export type OutputAllocator = (bytes: number) => Buffer;
const newOutput: OutputAllocator = (bytes) => Buffer.allocUnsafeSlow(bytes);

export function createCodec(spec: CodecSpec, allocate: OutputAllocator = newOutput): SegmentCodec {
  if (spec.kind === 'hash') return new Hasher();
  const key = Buffer.from(spec.key.buffer, spec.key.byteOffset, spec.key.byteLength);
  switch (spec.kind) {
    case 'seal':
      return new Sealer(key, newHeader(spec.segmentLog2), spec.hash, allocate);
    case 'open':
      return new Opener(key);
    case 'open-range':
      return new RangeOpener(key, parseHeader(Buffer.from(spec.header)), spec.range);
  }
}

/**
 * Collects input until whole units can be processed. `take(n)` returns the first `n` buffered
 * bytes as one buffer (a view when they sit in one chunk, else one copy) and keeps the rest.
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

  take(n: number): Buffer {
    const views = this.views(n);
    return views.length === 1 ? views[0] : Buffer.concat(views, n);
  }

  /**
   * The first `n` buffered bytes as views of the chunks holding them, in order, without a copy
   * (at most `MAX_PIECES`: a segment spread over more chunks than that is taken as one copy).
   * Valid until the next `add`, `keep` or `take`.
   */
  takePieces(n: number): Buffer[] {
    const views = this.views(n);
    return views.length <= MAX_PIECES ? views : [Buffer.concat(views, n)];
  }

  /** Removes the first `n` buffered bytes; the views of the chunks that held them. */
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

  /**
   * Copies the bytes held back out of shared memory, which their sender overwrites once `write`
   * has returned. Other chunks (transferred, or copied by postMessage) belong to this thread.
   */
  keep(): void {
    if (!this.chunks.some((chunk) => chunk.buffer instanceof SharedArrayBuffer)) return;
    const kept = Buffer.allocUnsafe(this.length);
    let at = 0;
    for (const chunk of this.chunks) at += chunk.copy(kept, at);
    this.chunks = [kept];
  }
}

/** Bytes in, nothing out; their `sha256:<hex>` at the end. */
class Hasher implements SegmentCodec {
  private readonly hash = createHash('sha256');

  write(chunks: Buffer[]): Buffer[] {
    for (const chunk of chunks) this.hash.update(chunk);
    return [];
  }

  end(): { out: Buffer[]; checksum: string } {
    return { out: [], checksum: `sha256:${this.hash.digest('hex')}` };
  }
}

/** Plaintext in, header and sealed segments out. A full segment waits for one more byte. */
class Sealer implements SegmentCodec {
  private readonly input = new InputBuffer();
  private readonly hash: Hasher | null;
  private readonly aead: SegmentAead;
  private readonly nonce = Buffer.alloc(12);
  private index = 0;
  private headerSent = false;

  constructor(key: Buffer, private readonly header: StreamHeader, hash: boolean, private readonly allocate: OutputAllocator) {
    if (key.length !== KEY_BYTES) throw new Error('data key must be 32 bytes');
    this.aead = segmentAead(key);
    this.hash = hash ? new Hasher() : null;
  }

  write(chunks: Buffer[]): Buffer[] {
    this.hash?.write(chunks);
    this.input.add(chunks);
    const size = this.header.segmentSize;
    // Strictly more than one segment left: the first one cannot be the final one.
    const ready = Math.floor((this.input.length - 1) / size);
    const out = ready > 0 ? this.seal(ready, false) : this.start();
    this.input.keep();
    return out;
  }

  end(): { out: Buffer[]; checksum?: string } {
    const out = this.seal(1, true);
    return { out, checksum: this.hash?.end().checksum };
  }

  /** The header, once, ahead of the first segment. */
  private start(): Buffer[] {
    if (this.headerSent) return [];
    this.headerSent = true;
    return [owned(this.header.bytes)];
  }

  /** Seals `count` segments (the last one flagged final when `final`) into one output buffer. */
  private seal(count: number, final: boolean): Buffer[] {
    const size = this.header.segmentSize;
    const plainBytes = final ? this.input.length : count * size;
    const out = this.allocate(plainBytes + count * TAG_BYTES);
    let at = 0;
    for (let i = 0; i < count; i++) {
      // A segment straddling input chunks is sealed from its pieces: socket reads never line up with segments.
      const plain = this.input.takePieces(final ? this.input.length : size);
      at += sealInto(this.aead, this.header, this.index++, final && i === count - 1, plain, out, at, this.nonce);
    }
    return [...this.start(), out];
  }
}

/** Stored bytes in (header first), authenticated plaintext out. A sealed segment waits for one more byte. */
class Opener implements SegmentCodec {
  private readonly input = new InputBuffer();
  private header: StreamHeader | null = null;
  private readonly aead: SegmentAead;
  private readonly nonce = Buffer.alloc(12);
  private index = 0;

  constructor(key: Buffer) {
    this.aead = segmentAead(key);
  }

  write(chunks: Buffer[]): Buffer[] {
    this.input.add(chunks);
    if (!this.header) {
      if (this.input.length < HEADER_BYTES) {
        this.input.keep();
        return [];
      }
      this.header = parseHeader(this.input.take(HEADER_BYTES));
    }
    const sealed = this.header.segmentSize + TAG_BYTES;
    const ready = Math.floor((this.input.length - 1) / sealed);
    const out = ready > 0 ? this.open(ready, sealed, false) : [];
    this.input.keep();
    return out;
  }

  end(): { out: Buffer[] } {
    if (!this.header) throw new CipherFormatError('truncated header');
    // What is left is at most one sealed segment, the final one (a stream always ends with one).
    return { out: this.open(1, this.header.segmentSize + TAG_BYTES, true) };
  }

  private open(count: number, sealed: number, final: boolean): Buffer[] {
    const header = this.header!;
    const storedBytes = final ? this.input.length : count * sealed;
    const out = Buffer.allocUnsafeSlow(Math.max(0, storedBytes - count * TAG_BYTES));
    let at = 0;
    for (let i = 0; i < count; i++) {
      const segment = this.input.take(final ? this.input.length : sealed);
      at += openInto(this.aead, header, this.index++, final && i === count - 1, segment, out, at, this.nonce);
    }
    return [out.subarray(0, at)];
  }
}

/**
 * The stored bytes of a range's segments in (`storedStart..storedEnd`, in order), exactly the
 * requested plaintext out. Knowing the plaintext size, it knows which segment is final, so a
 * shortened or lengthened blob still fails.
 */
class RangeOpener implements SegmentCodec {
  private readonly input = new InputBuffer();
  private readonly aead: SegmentAead;
  private readonly nonce = Buffer.alloc(12);
  private index: number;
  private toSkip: number;
  private remaining: number;

  constructor(key: Buffer, private readonly header: StreamHeader, private readonly range: SegmentRange) {
    this.aead = segmentAead(key);
    this.index = range.firstSegment;
    this.toSkip = range.skip;
    this.remaining = range.length;
  }

  write(chunks: Buffer[]): Buffer[] {
    this.input.add(chunks);
    const outs: Buffer[] = [];
    const sealed = this.header.segmentSize + TAG_BYTES;
    // Whole middle segments in one output buffer, then the last one when it is all here.
    const middle = Math.min(Math.floor(this.input.length / sealed), this.range.lastSegment - this.index);
    if (middle > 0) {
      const out = Buffer.allocUnsafeSlow(middle * this.header.segmentSize);
      let at = 0;
      for (let i = 0; i < middle; i++) at += openInto(this.aead, this.header, this.index++, false, this.input.take(sealed), out, at, this.nonce);
      this.emit(out, outs);
    }
    if (this.index === this.range.lastSegment) {
      const lastLength = this.range.storedEnd - segmentOffset(this.range.lastSegment, this.header.segmentSize) + 1;
      if (this.input.length >= lastLength) {
        const final = this.index === this.range.totalSegments - 1;
        const segment = this.input.take(lastLength);
        const plain = Buffer.allocUnsafeSlow(Math.max(0, segment.length - TAG_BYTES));
        openInto(this.aead, this.header, this.index++, final, segment, plain, 0, this.nonce);
        this.emit(plain, outs);
      }
    }
    this.input.keep();
    return outs;
  }

  end(): { out: Buffer[] } {
    if (this.index <= this.range.lastSegment || this.input.length > 0 || this.remaining > 0) {
      throw new CipherFormatError('stored stream is shorter or longer than expected');
    }
    return { out: [] };
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
