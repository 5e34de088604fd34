import type { SegmentAead } from './aead.js';
import { TAG_BYTES, segmentNonce, type StreamHeader } from './format.js';
import type { HashLane } from './hash-lane.js';

/** Sealed segments gathered before one write. */
const WRITE_BATCH_BYTES = 4 * 1024 * 1024;

/**
 * Where appending to a blob written before (a resumable upload, resumable.ts) starts: the blob as
 * the last request left it.
 */
export interface AppendStart {
  header: StreamHeader;
  /** Plaintext bytes received so far: the sealed segments' and `pending`. */
  received: number;
  /** Plaintext received and not sealed yet: less than a segment, or one whole segment that may be the final one. */
  pending: Buffer;
  /** The SHA-256 of the sealed segments' plaintext: fed all of it, maybe still hashing some. */
  hash: HashLane;
  /** The whole plaintext length, once known: a whole segment ending before it is known not to be the final one. */
  length?: number;
}

/** What an append leaves for the next one besides `start.hash`: the plaintext not sealed. */
export interface AppendedSegments {
  pending: Buffer;
}

/**
 * How many of `pendingBytes`, starting at plaintext offset `at`, can be sealed when no more input
 * is known of: the whole segments, but for the last whole one when it may be the final segment
 * (the final one is sealed differently, and only `finish` knows no byte follows it).
 */
export function sealableBytes(pendingBytes: number, at: number, segmentSize: number, length: number | undefined): number {
  let whole = Math.floor(pendingBytes / segmentSize);
  const endsKnownShort = length !== undefined && at + whole * segmentSize < length;
  if (whole > 0 && pendingBytes % segmentSize === 0 && !endsKnownShort) whole--;
  return whole * segmentSize;
}

/**
 * Appends a source's plaintext to a blob by sealing its segments on the event loop and handing
 * them to `write` in batches (the node engine, and stores that are not local files): whole segments
 * are sealed and hashed as they arrive, and the rest is returned as `pending`. It resolves with the
 * hash done: a store that is not local files cannot read the segments back to catch a hash up.
 */
export async function appendSegments(
  source: AsyncIterable<Buffer>,
  aead: SegmentAead,
  start: AppendStart,
  write: (chunks: Buffer[]) => Promise<void>,
): Promise<AppendedSegments> {
  const segments = new SegmentSealer(aead, start.header, start.pending, start.received);
  // Sealed segments are written and hashed together (the hash on the threadpool with the native engine).
  const flush = () => {
    const plain = segments.takePlain();
    const bytes = plain.reduce((sum, piece) => sum + piece.length, 0);
    return Promise.all([write(segments.takeSealed()), start.hash.push(plain, bytes)]);
  };
  for await (const chunk of source) {
    segments.add(chunk, start.length);
    if (segments.sealedBytes >= WRITE_BATCH_BYTES) await flush();
  }
  await flush();
  return { pending: segments.pendingBytes() };
}

/** Cuts plaintext into segments and seals every whole one known not to be the final one. */
export class SegmentSealer {
  private pending: Buffer[] = [];
  private pendingLength = 0;
  private sealed: Buffer[] = [];
  /** The plaintext of the segments sealed since the last takePlain, for the hash. */
  private plain: Buffer[] = [];
  sealedBytes = 0;
  private readonly nonce = Buffer.alloc(12);
  /** Index of the first segment not sealed yet. */
  private index: number;

  constructor(
    private readonly aead: SegmentAead,
    private readonly header: StreamHeader,
    pending: Buffer,
    received: number,
  ) {
    this.index = (received - pending.length) / header.segmentSize;
    if (pending.length > 0) this.pending.push(pending);
    this.pendingLength = pending.length;
  }

  add(chunk: Buffer, length: number | undefined): void {
    this.pending.push(chunk);
    this.pendingLength += chunk.length;
    const size = this.header.segmentSize;
    while (sealableBytes(this.pendingLength, this.index * size, size, length) > 0) this.seal(size, false);
  }

  /** The last segment, whatever it holds (an empty content has one, empty, final segment); its plaintext waits in takePlain. */
  sealFinal(): Buffer[] {
    this.seal(this.pendingLength, true);
    return this.takeSealed();
  }

  takeSealed(): Buffer[] {
    const sealed = this.sealed;
    this.sealed = [];
    this.sealedBytes = 0;
    return sealed;
  }

  takePlain(): Buffer[] {
    const plain = this.plain;
    this.plain = [];
    return plain;
  }

  pendingBytes(): Buffer {
    return Buffer.concat(this.pending, this.pendingLength);
  }

  private seal(bytes: number, final: boolean): void {
    const plain = this.take(bytes);
    const out = Buffer.allocUnsafe(bytes + TAG_BYTES);
    this.aead.seal(segmentNonce(this.header.noncePrefix, this.index++, final, this.nonce), this.header.bytes, plain, out, 0);
    this.plain.push(plain);
    this.sealed.push(out);
    this.sealedBytes += out.length;
  }

  /** The first `bytes` pending bytes: a view when one chunk holds them, else a copy of just them. */
  private take(bytes: number): Buffer {
    this.pendingLength -= bytes;
    const first = this.pending[0];
    if (first && first.length >= bytes) {
      this.pending[0] = first.subarray(bytes);
      if (this.pending[0].length === 0) this.pending.shift();
      return first.subarray(0, bytes);
    }
    const taken = Buffer.allocUnsafe(bytes);
    let at = 0;
    while (at < bytes) {
      const piece = this.pending[0];
      const n = Math.min(piece.length, bytes - at);
      piece.copy(taken, at, 0, n);
      at += n;
      if (n === piece.length) this.pending.shift();
      else this.pending[0] = piece.subarray(n);
    }
    return taken;
  }
}
