import { hkdfSync, randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import { createSHA256, type IHasher } from 'hash-wasm';
import type { BlobStore, PutOptions } from '../blobs/blob-store.js';
import { newBlobKey } from '../blobs/blob-keys.js';
import { newKey } from '../crypto/key-wrap.js';
import { AppError } from '../errors.js';
import { nodeAead, type SegmentAead } from './aead.js';
import type { CryptoEngine } from './engine.js';
import { CipherFormatError, TAG_BYTES, newHeader, parseHeader, sealedSize, segmentNonce, type StreamHeader } from './format.js';

/**
 * A blob written over many requests (a resumable upload), in the stored format from its first
 * byte: whole segments are sealed as they arrive and appended to the blob store's staging; the
 * plaintext of the segment not yet whole, and the SHA-256 state of everything received, are kept
 * sealed in `tail`, never in clear. Whoever keeps this (a database row) can continue it anywhere.
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
export async function beginResumable({ blobs }: ResumableParts): Promise<{ content: ResumableContent; dataKey: Buffer }> {
  const dataKey = newKey();
  const header = newHeader();
  const blobId = newBlobKey();
  const staging = await blobs.beginStaging(blobId);
  const writer = await blobs.openStaging(blobId, staging);
  try {
    await writer.write([Buffer.from(header.bytes)]);
    const committed = await writer.commit();
    const hasher = await createSHA256();
    const content = { blobId, header: header.bytes, received: 0, staging: committed, tail: Buffer.alloc(0) };
    return { content: { ...content, tail: sealTail(dataKey, content, hasher.init().save(), Buffer.alloc(0)) }, dataKey };
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
  const state = await openTail(dataKey, content, header.segmentSize);
  const segments = new SegmentSealer(engine.aead(dataKey), header, state.pending, content.received);
  const verifier = limits.verify?.();
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
      state.hasher.update(chunk);
      segments.add(chunk, limits.length);
      if (segments.sealedBytes >= WRITE_BATCH_BYTES) await writer.write(segments.takeSealed());
    }
    if (verifier && (broken || !verifier.matches())) throw new AppError('UPLOAD_CHECKSUM_MISMATCH');
    await writer.write(segments.takeSealed());
    const staging = await writer.commit();
    const next = { ...content, received, staging };
    return { content: { ...next, tail: sealTail(dataKey, next, state.hasher.save(), segments.pendingBytes()) }, broken };
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
  const state = await openTail(dataKey, content, header.segmentSize);
  const segments = new SegmentSealer(engine.aead(dataKey), header, state.pending, content.received);
  const writer = await blobs.openStaging(content.blobId, content.staging);
  let staging: string;
  try {
    await writer.write(segments.sealFinal());
    staging = await writer.commit();
  } finally {
    await writer.close();
  }
  const put: PutOptions = { visibleAfter: recordUploading(content.blobId), durableLater: true };
  const stored = await blobs.completeStaging(content.blobId, staging, put);
  if (stored.size !== sealedSize(content.received, header.segmentSize)) throw new CipherFormatError('the staged blob has the wrong length');
  const checksum = `sha256:${state.hasher.digest('hex')}`;
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

  /** The last segment, whatever it holds (an empty content has one, empty, final segment). */
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

  pendingBytes(): Buffer {
    return Buffer.concat(this.pending, this.pendingLength);
  }

  private seal(bytes: number, final: boolean): void {
    const all = this.pendingBytes();
    const out = Buffer.allocUnsafe(bytes + TAG_BYTES);
    this.aead.seal(
      segmentNonce(this.header.noncePrefix, this.index++, final, this.nonce),
      this.header.bytes,
      all.subarray(0, bytes),
      out,
      0,
    );
    this.pending = bytes < all.length ? [all.subarray(bytes)] : [];
    this.pendingLength = all.length - bytes;
    this.sealed.push(out);
    this.sealedBytes += out.length;
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
 * The tail record: a random nonce, then AES-256-GCM of (uint16 length of the hash state, the
 * SHA-256 state, the plaintext not yet in a sealed segment).
 */
function sealTail(dataKey: Buffer, content: Pick<ResumableContent, 'header' | 'received'>, hashState: Uint8Array, pending: Buffer): Buffer {
  const plaintext = Buffer.alloc(2 + hashState.length + pending.length);
  plaintext.writeUInt16BE(hashState.length, 0);
  plaintext.set(hashState, 2);
  pending.copy(plaintext, 2 + hashState.length);
  const nonce = randomBytes(12);
  const out = Buffer.allocUnsafe(12 + plaintext.length + TAG_BYTES);
  nonce.copy(out, 0);
  nodeAeadFor(tailKey(dataKey)).seal(nonce, tailAad(content), plaintext, out, 12);
  return out;
}

async function openTail(dataKey: Buffer, content: ResumableContent, segmentSize: number): Promise<{ hasher: IHasher; pending: Buffer }> {
  const record = content.tail;
  const plaintext = Buffer.alloc(Math.max(0, record.length - 12 - TAG_BYTES));
  if (
    record.length < 12 + TAG_BYTES ||
    nodeAeadFor(tailKey(dataKey)).open(record.subarray(0, 12), tailAad(content), record.subarray(12), plaintext, 0) < 0
  )
    throw new CipherFormatError('the upload tail does not authenticate');
  const stateLength = plaintext.readUInt16BE(0);
  const pending = plaintext.subarray(2 + stateLength);
  if (pending.length > segmentSize || pending.length > content.received) throw new CipherFormatError('the upload tail is too long');
  const hasher = await createSHA256();
  hasher.load(plaintext.subarray(2, 2 + stateLength));
  return { hasher, pending };
}

/** The tail is sealed by node:crypto whatever the engine: it is one small record per request. */
function nodeAeadFor(key: Buffer): SegmentAead {
  return nodeAead(key);
}
