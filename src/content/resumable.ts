import { hkdfSync, randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { BlobStore, PutOptions } from '../blobs/blob-store.js';
import { newBlobKey } from '../blobs/blob-keys.js';
import { newKey } from '../crypto/key-wrap.js';
import { AppError } from '../errors.js';
import { nodeAead, type SegmentAead } from './aead.js';
import type { CryptoEngine } from './engine.js';
import { CipherFormatError, TAG_BYTES, newHeader, parseHeader, sealedSize, segmentNonce, type StreamHeader } from './format.js';
import { MIDSTATE_BYTES, type ResumableSha256 } from './sha256-midstate.js';

/**
 * A blob written over many requests (a resumable upload), in the stored format from its first
 * byte: whole segments are sealed as they arrive and appended to the blob store's staging, and
 * hashed; the plaintext of the segment not yet whole, and the SHA-256 midstate of the sealed ones
 * (sha256-midstate.ts), are kept sealed in `tail`, never in clear. Whoever keeps this (a database row) can continue it anywhere.
 */
export interface ResumableContent {
  blobId: string;
  /** The blob's stream header (16 bytes). */
  header: Buffer;
  /** Plaintext bytes received so far. */
  received: number;
  /** The sealed tail record (see sealTail). */
  tail: Buffer;
  /** The blob store's staging state. */
  staging: string;
}

export interface AppendLimits {
  /** The whole length, once known: the segment ending there is the final one, which `finish` seals. */
  length?: number;
  /** The most plaintext bytes the content may hold (413 UPLOAD_LENGTH_EXCEEDED beyond it; nothing of the request is kept). */
  maxBytes: number;
  /** Holds the owner's quota for the running total before bytes past it are written (as UploadLimits.hold). */
  hold?: (bytes: number) => void | Promise<void>;
  /**
   * Checks what the request delivered before it is kept (the tus checksum extension): given the
   * request's bytes in order, it returns a verdict function; a false verdict keeps nothing.
   */
  verify?: () => { update(chunk: Buffer): void; matches(): boolean };
}

export interface Appended {
  content: ResumableContent;
  /** The source failed before its end (the client went away): what arrived until then is kept. */
  broken: boolean;
}

interface ResumableParts {
  blobs: BlobStore;
  engine: CryptoEngine;
  recordUploading: (blobId: string) => Promise<void>;
}

/** Sealed segments gathered before one staging write. */
const WRITE_BATCH_BYTES = 4 * 1024 * 1024;

/** A new, empty resumable blob: its data key (the caller keeps it wrapped) and its state. */
export async function beginResumable({ blobs, engine }: ResumableParts): Promise<{ content: ResumableContent; dataKey: Buffer }> {
  const dataKey = newKey();
  const header = newHeader();
  const blobId = newBlobKey();
  const staging = await blobs.beginStaging(blobId);
  const writer = await blobs.openStaging(blobId, staging);
  try {
    await writer.write([Buffer.from(header.bytes)]);
    const committed = await writer.commit();
    const content = { blobId, header: header.bytes, received: 0, staging: committed, tail: Buffer.alloc(0) };
    return { content: { ...content, tail: sealTail(dataKey, content, engine.sha256().midstate(), Buffer.alloc(0)) }, dataKey };
  } finally {
    await writer.close();
  }
}

/**
 * Appends a request's bytes. A source that fails midway (the client gone) keeps what arrived;
 * a limit, a failed verification or a storage error keeps nothing of the request, and rejects.
 */
export async function appendResumable(
  { blobs, engine }: ResumableParts,
  content: ResumableContent,
  dataKey: Buffer,
  source: Readable,
  limits: AppendLimits,
): Promise<Appended> {
  const header = parseHeader(content.header);
  const state = openTail(engine, dataKey, content, header.segmentSize);
  const segments = new SegmentSealer(engine.aead(dataKey), header, state.pending, content.received);
  const verifier = limits.verify?.();
  // Sealed segments are written and hashed together (both on the threadpool with the native engine).
  const flush = () => Promise.all([writer.write(segments.takeSealed()), state.hash.update(segments.takePlain())]);
  const writer = await blobs.openStaging(content.blobId, content.staging);
  let broken = false;
  try {
    let received = content.received;
    // The source's failures (the client gone, the body timed out) keep what arrived; ours (a
    // limit, the quota, the store) keep nothing: hence the iteration by hand.
    const chunks = source[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
    for (;;) {
      const next = await chunks.next().catch(() => null);
      if (next === null) broken = true;
      if (next === null || next.done) break;
      const chunk = next.value;
      received += chunk.length;
      if (received > limits.maxBytes) throw new AppError('UPLOAD_LENGTH_EXCEEDED', `This upload takes at most ${limits.maxBytes} bytes`);
      await limits.hold?.(received);
      verifier?.update(chunk);
      segments.add(chunk, limits.length);
      if (segments.sealedBytes >= WRITE_BATCH_BYTES) await flush();
    }
    if (verifier && (broken || !verifier.matches())) throw new AppError('UPLOAD_CHECKSUM_MISMATCH');
    await flush();
    const staging = await writer.commit();
    const next = { ...content, received, staging };
    return { content: { ...next, tail: sealTail(dataKey, next, state.hash.midstate(), segments.pendingBytes()) }, broken };
  } finally {
    await writer.close();
  }
}

/**
 * Seals the final segment and makes the blob whole under its key (its `uploading` row written
 * first, as `store` does): the content of a version, with its size and SHA-256.
 */
export async function finishResumable(parts: ResumableParts, content: ResumableContent, dataKey: Buffer) {
  const { blobs, engine, recordUploading } = parts;
  const header = parseHeader(content.header);
  const state = openTail(engine, dataKey, content, header.segmentSize);
  const segments = new SegmentSealer(engine.aead(dataKey), header, state.pending, content.received);
  const writer = await blobs.openStaging(content.blobId, content.staging);
  let staging: string;
  try {
    await Promise.all([writer.write(segments.sealFinal()), state.hash.update(segments.takePlain())]);
    staging = await writer.commit();
  } finally {
    await writer.close();
  }
  const put: PutOptions = { visibleAfter: recordUploading(content.blobId), durableLater: true };
  const stored = await blobs.completeStaging(content.blobId, staging, put);
  if (stored.size !== sealedSize(content.received, header.segmentSize)) throw new CipherFormatError('the staged blob has the wrong length');
  const checksum = `sha256:${state.hash.digest().toString('hex')}`;
  return { blobId: content.blobId, dataKey, size: content.received, storedSize: stored.size, checksum, durable: stored.durable };
}

/** Deletes an unfinished resumable blob's bytes. */
export async function abortResumable({ blobs }: ResumableParts, content: Pick<ResumableContent, 'blobId' | 'staging'>): Promise<void> {
  await blobs.abortStaging(content.blobId, content.staging);
}

/** Cuts plaintext into segments and seals every whole one known not to be the final one. */
class SegmentSealer {
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
    // A whole segment is sealed once bytes follow it, or once the known length ends past it.
    while (this.pendingLength > size || (this.pendingLength === size && length !== undefined && (this.index + 1) * size < length))
      this.seal(size, false);
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

/** The tail's key: derived from the data key, so that no second key needs keeping. */
function tailKey(dataKey: Buffer): Buffer {
  return Buffer.from(hkdfSync('sha256', dataKey, Buffer.alloc(0), 'coffre resumable tail', 32));
}

/** Binds a tail to its blob and offset: one from another upload, or an older one, does not open. */
function tailAad(content: Pick<ResumableContent, 'header' | 'received'>): Buffer {
  const offset = Buffer.alloc(8);
  offset.writeBigUInt64BE(BigInt(content.received));
  return Buffer.concat([content.header, offset]);
}

/**
 * The tail record: a random nonce, then AES-256-GCM of (the SHA-256 midstate of the sealed
 * segments' plaintext, 40 bytes; the plaintext not yet in a sealed segment). node:crypto seals it
 * whatever the engine: it is one small record per request.
 */
function sealTail(dataKey: Buffer, content: Pick<ResumableContent, 'header' | 'received'>, midstate: Buffer, pending: Buffer): Buffer {
  const plaintext = Buffer.concat([midstate, pending]);
  const nonce = randomBytes(12);
  const out = Buffer.allocUnsafe(12 + plaintext.length + TAG_BYTES);
  nonce.copy(out, 0);
  nodeAead(tailKey(dataKey)).seal(nonce, tailAad(content), plaintext, out, 12);
  return out;
}

function openTail(
  engine: CryptoEngine,
  dataKey: Buffer,
  content: ResumableContent,
  segmentSize: number,
): { hash: ResumableSha256; pending: Buffer } {
  const record = content.tail;
  const plaintext = Buffer.alloc(Math.max(0, record.length - 12 - TAG_BYTES));
  if (
    record.length < 12 + TAG_BYTES ||
    nodeAead(tailKey(dataKey)).open(record.subarray(0, 12), tailAad(content), record.subarray(12), plaintext, 0) < 0
  )
    throw new CipherFormatError('the upload tail does not authenticate');
  const pending = plaintext.subarray(MIDSTATE_BYTES);
  if (plaintext.length < MIDSTATE_BYTES || pending.length > segmentSize || pending.length > content.received)
    throw new CipherFormatError('the upload tail is malformed');
  return { hash: engine.sha256(plaintext.subarray(0, MIDSTATE_BYTES)), pending };
}
