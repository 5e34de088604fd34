import { randomBytes } from 'node:crypto';
import { InternalError } from '../errors.js';

/**
 * The stored format of every blob (docs/storage-format.md): a 16-byte header, then the plaintext
 * in segments (64 KiB by default), each sealed with AES-256-GCM under the blob's data key (the
 * STREAM construction of Hoang, Reyhanitabar, Rogaway and Vizár, as in Tink's streaming AEAD).
 *
 *   header  = "CFRS" | version (1 byte) | log2(segment size) (1 byte) | reserved (3 bytes, 0) | nonce prefix (7 bytes)
 *   segment = AES-256-GCM(dataKey, nonce = prefix | uint32be(index) | finalFlag, aad = header, plaintext) | tag (16 bytes)
 *
 * Pure functions over that layout; the engines (node-engine.ts, native-engine.ts) seal and open.
 */

export const MAGIC = Buffer.from('CFRS', 'ascii');
export const FORMAT_VERSION = 1;
export const HEADER_BYTES = 16;
export const TAG_BYTES = 16;
const NONCE_BYTES = 12;
const NONCE_PREFIX_BYTES = 7;
export const DEFAULT_SEGMENT_LOG2 = 16; // 64 KiB
export const MIN_SEGMENT_LOG2 = 10;
const MAX_SEGMENT_LOG2 = 24;

/**
 * Stored bytes that do not decode: a damaged header, a segment that does not authenticate, a
 * wrong length. Found before any content left, it answers 500 CONTENT_INTEGRITY.
 */
export class CipherFormatError extends InternalError {
  constructor(message: string) {
    super('CONTENT_INTEGRITY', message);
    this.name = 'CipherFormatError';
  }
}

export interface StreamHeader {
  segmentSize: number;
  noncePrefix: Buffer;
  bytes: Buffer;
}

/** A new header; the nonce prefix is random unless given (test vectors fix it). */
export function newHeader(segmentLog2 = DEFAULT_SEGMENT_LOG2, noncePrefix: Buffer = randomBytes(NONCE_PREFIX_BYTES)): StreamHeader {
  if (!Number.isInteger(segmentLog2) || segmentLog2 < MIN_SEGMENT_LOG2 || segmentLog2 > MAX_SEGMENT_LOG2) {
    throw new RangeError(`segmentLog2 must be from ${MIN_SEGMENT_LOG2} to ${MAX_SEGMENT_LOG2}`);
  }
  if (noncePrefix.length !== NONCE_PREFIX_BYTES) throw new RangeError(`the nonce prefix must be ${NONCE_PREFIX_BYTES} bytes`);
  const bytes = Buffer.alloc(HEADER_BYTES);
  MAGIC.copy(bytes, 0);
  bytes[4] = FORMAT_VERSION;
  bytes[5] = segmentLog2;
  noncePrefix.copy(bytes, 9);
  return { segmentSize: 2 ** segmentLog2, noncePrefix: Buffer.from(noncePrefix), bytes };
}

export function parseHeader(bytes: Buffer): StreamHeader {
  if (bytes.length < HEADER_BYTES) throw new CipherFormatError('truncated header');
  const header = bytes.subarray(0, HEADER_BYTES);
  if (!header.subarray(0, 4).equals(MAGIC)) throw new CipherFormatError('not a Coffre stream');
  if (header[4] !== FORMAT_VERSION) throw new CipherFormatError(`unsupported format version ${header[4]}`);
  const log2 = header[5];
  if (log2 < MIN_SEGMENT_LOG2 || log2 > MAX_SEGMENT_LOG2 || header[6] !== 0 || header[7] !== 0 || header[8] !== 0)
    throw new CipherFormatError('invalid header');
  return { segmentSize: 2 ** log2, noncePrefix: Buffer.from(header.subarray(9, 16)), bytes: Buffer.from(header) };
}

/** The nonce of segment `index`, written into `into` (a codec reuses one: the AEADs copy it at once). */
export function segmentNonce(prefix: Buffer, index: number, final: boolean, into: Buffer = Buffer.alloc(NONCE_BYTES)): Buffer {
  prefix.copy(into, 0);
  into.writeUInt32BE(index, NONCE_PREFIX_BYTES);
  into[11] = final ? 1 : 0;
  return into;
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

/** Which stored bytes hold a plaintext range, and how to trim the opened segments to it. */
export interface SegmentRange {
  firstSegment: number;
  lastSegment: number;
  /** Stored byte range (inclusive) of the segments, header excluded. */
  storedStart: number;
  storedEnd: number;
  /** Bytes to drop from the start of the first opened segment. */
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
