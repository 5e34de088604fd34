import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';

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
 */

export const MAGIC = Buffer.from('CFRS', 'ascii');
export const FORMAT_VERSION = 1;
export const HEADER_BYTES = 16;
export const TAG_BYTES = 16;
export const NONCE_PREFIX_BYTES = 7;
export const DEFAULT_SEGMENT_LOG2 = 16; // 64 KiB
export const KEY_BYTES = 32;

/**
 * Buffer size of the cipher streams: large enough that reading the source, the crypto and
 * writing the sink overlap instead of waiting on each other (a few MiB per transfer at most).
 */
const STREAM_HIGH_WATER_MARK = 2 * 1024 * 1024;

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

function nonce(prefix: Buffer, index: number, final: boolean): Buffer {
  const n = Buffer.alloc(12);
  prefix.copy(n, 0);
  n.writeUInt32BE(index, 7);
  n[11] = final ? 1 : 0;
  return n;
}

export function sealSegment(key: Buffer, header: StreamHeader, index: number, final: boolean, plaintext: Buffer): Buffer {
  const cipher = createCipheriv('aes-256-gcm', key, nonce(header.noncePrefix, index, final));
  cipher.setAAD(header.bytes);
  const body = cipher.update(plaintext);
  cipher.final();
  return Buffer.concat([body, cipher.getAuthTag()]);
}

/** Opens one sealed segment; throws (and returns no plaintext at all) when it does not authenticate. */
export function openSegment(key: Buffer, header: StreamHeader, index: number, final: boolean, sealed: Buffer): Buffer {
  if (sealed.length < TAG_BYTES) throw new CipherFormatError(`segment ${index} is truncated`);
  const decipher = createDecipheriv('aes-256-gcm', key, nonce(header.noncePrefix, index, final));
  decipher.setAAD(header.bytes);
  decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
  const body = decipher.update(sealed.subarray(0, sealed.length - TAG_BYTES));
  try {
    decipher.final();
  } catch {
    throw new CipherFormatError(`segment ${index} does not authenticate`);
  }
  return body;
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

/**
 * Encrypts a plaintext stream into the stored format. A full segment is held back until more
 * bytes arrive, because only the end of the input says which segment is the final one.
 */
export class EncryptStream extends Transform {
  private readonly header: StreamHeader;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private index = 0;
  /** Plaintext bytes seen so far. */
  plaintextBytes = 0;

  constructor(private readonly key: Buffer, segmentLog2 = DEFAULT_SEGMENT_LOG2) {
    super({ highWaterMark: STREAM_HIGH_WATER_MARK });
    if (key.length !== KEY_BYTES) throw new Error('data key must be 32 bytes');
    this.header = newHeader(segmentLog2);
    this.push(this.header.bytes);
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.plaintextBytes += chunk.length;
    this.pending.push(chunk);
    this.pendingBytes += chunk.length;
    const size = this.header.segmentSize;
    if (this.pendingBytes > size) {
      let buffered = Buffer.concat(this.pending, this.pendingBytes);
      let offset = 0;
      // Strictly more than one segment left: the segment at `offset` cannot be the final one.
      while (buffered.length - offset > size) {
        this.push(sealSegment(this.key, this.header, this.index++, false, buffered.subarray(offset, offset + size)));
        offset += size;
      }
      buffered = buffered.subarray(offset);
      this.pending = [buffered];
      this.pendingBytes = buffered.length;
    }
    callback();
  }

  override _flush(callback: TransformCallback): void {
    const last = Buffer.concat(this.pending, this.pendingBytes);
    this.push(sealSegment(this.key, this.header, this.index++, true, last));
    this.pending = [];
    callback();
  }
}

/**
 * Decrypts a stored stream (header first) and emits only authenticated plaintext. A sealed
 * segment is held back until the next bytes show whether it is the final one.
 */
export class DecryptStream extends Transform {
  private header: StreamHeader | null = null;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private index = 0;

  constructor(private readonly key: Buffer) {
    super({ highWaterMark: STREAM_HIGH_WATER_MARK });
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.pending.push(chunk);
    this.pendingBytes += chunk.length;
    // Nothing to do until the header, or more than one sealed segment, is buffered (concatenating on
    // every chunk would copy the pending segment once per chunk).
    if (this.pendingBytes <= (this.header ? this.header.segmentSize + TAG_BYTES : HEADER_BYTES - 1)) return callback();
    try {
      let buffered = Buffer.concat(this.pending, this.pendingBytes);
      if (!this.header) {
        if (buffered.length < HEADER_BYTES) {
          this.pending = [buffered];
          return callback();
        }
        this.header = parseHeader(buffered);
        buffered = buffered.subarray(HEADER_BYTES);
      }
      const sealed = this.header.segmentSize + TAG_BYTES;
      let offset = 0;
      while (buffered.length - offset > sealed) {
        this.push(openSegment(this.key, this.header, this.index++, false, buffered.subarray(offset, offset + sealed)));
        offset += sealed;
      }
      buffered = buffered.subarray(offset);
      this.pending = [buffered];
      this.pendingBytes = buffered.length;
      callback();
    } catch (error) {
      callback(error as Error);
    }
  }

  override _flush(callback: TransformCallback): void {
    try {
      if (!this.header) throw new CipherFormatError('truncated header');
      const last = Buffer.concat(this.pending, this.pendingBytes);
      this.push(openSegment(this.key, this.header, this.index++, true, last));
      callback();
    } catch (error) {
      callback(error as Error);
    }
  }
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

/**
 * Decrypts the segments of a range (the stored bytes `storedStart..storedEnd`, fed in order) and
 * emits exactly the requested plaintext bytes. Knowing the plaintext size, it knows which
 * segment is final, so a shortened or lengthened blob still fails.
 */
export class RangeDecryptStream extends Transform {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private index: number;
  private toSkip: number;
  private remaining: number;

  constructor(private readonly key: Buffer, private readonly header: StreamHeader, private readonly range: SegmentRange) {
    super({ highWaterMark: STREAM_HIGH_WATER_MARK });
    this.index = range.firstSegment;
    this.toSkip = range.skip;
    this.remaining = range.length;
  }

  private pushTrimmed(plain: Buffer): void {
    let out = plain;
    if (this.toSkip > 0) {
      const cut = Math.min(this.toSkip, out.length);
      out = out.subarray(cut);
      this.toSkip -= cut;
    }
    if (out.length > this.remaining) out = out.subarray(0, this.remaining);
    this.remaining -= out.length;
    if (out.length > 0) this.push(out);
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.pending.push(chunk);
    this.pendingBytes += chunk.length;
    // Wait for the whole next segment (and keep bytes past the range for _flush to reject).
    if (this.index > this.range.lastSegment || this.pendingBytes < this.nextLength()) return callback();
    try {
      let buffered = Buffer.concat(this.pending, this.pendingBytes);
      let offset = 0;
      while (this.index <= this.range.lastSegment) {
        const length = this.nextLength();
        if (buffered.length - offset < length) break;
        const final = this.index === this.range.totalSegments - 1;
        this.pushTrimmed(openSegment(this.key, this.header, this.index, final, buffered.subarray(offset, offset + length)));
        this.index++;
        offset += length;
      }
      buffered = buffered.subarray(offset);
      this.pending = [buffered];
      this.pendingBytes = buffered.length;
      callback();
    } catch (error) {
      callback(error as Error);
    }
  }

  private nextLength(): number {
    return this.index < this.range.lastSegment ? this.header.segmentSize + TAG_BYTES : this.lastLength();
  }

  private lastLength(): number {
    return this.range.storedEnd - segmentOffset(this.range.lastSegment, this.header.segmentSize) + 1;
  }

  override _flush(callback: TransformCallback): void {
    if (this.index <= this.range.lastSegment || this.pendingBytes > 0 || this.remaining > 0) {
      return callback(new CipherFormatError('stored stream is shorter or longer than expected'));
    }
    callback();
  }
}
