import { hkdfSync, randomBytes } from 'node:crypto';
import { read } from 'node:fs';
import { promisify } from 'node:util';
import { crc32 } from 'node:zlib';
import type { Readable } from 'node:stream';
import type { BlobStore, PutOptions } from '../blobs/blob-store.js';
import { newBlobKey } from '../blobs/blob-keys.js';
import { newKey } from '../crypto/key-wrap.js';
import { AppError } from '../errors.js';
import { nodeAead } from './aead.js';
import type { CryptoEngine } from './engine.js';
import {
  CipherFormatError,
  TAG_BYTES,
  newHeader,
  parseHeader,
  sealedSize,
  segmentNonce,
  segmentOffset,
  type StreamHeader,
} from './format.js';
import { HashLane, type LaneKeeper } from './hash-lane.js';
import { SegmentSealer, appendSegments, type AppendStart, type AppendedSegments } from './segment-appender.js';
import { MIDSTATE_BYTES } from './sha256-midstate.js';

/**
 * A blob written over many requests (a resumable upload), in the stored format from its first
 * byte: whole segments are sealed as they arrive and appended to the blob store's staging, and
 * hashed; the plaintext of the segment not yet whole, the SHA-256 midstate of the sealed ones
 * (sha256-midstate.ts) and the CRC-32 of all received, are kept sealed in `tail`, never in clear.
 * Whoever keeps this (a database row) can continue it anywhere. The CRC is computed as each
 * request's bytes pass, so its tail's is never behind and needs no catching up as the hash may.
 * A request answers once its segments are durable, maybe before they are all hashed: the midstate
 * saved is then an earlier one, and the next request carries on with this instance's lane
 * (hash-lane.ts) or catches up by reading the staged segments back.
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
  /**
   * Present while the bytes are written but not yet durable (a store of local files syncs them
   * after): settles once they are, rejecting if they cannot be. Until then `content` may be
   * carried on from, but not kept where it would outlive a crash of the machine (a database row).
   */
  syncing?: Promise<void>;
}

interface ResumableParts {
  blobs: BlobStore;
  engine: CryptoEngine;
  recordUploading: (blobId: string) => Promise<void>;
  lanes: LaneKeeper;
}

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
    const tail = sealTail(dataKey, content, { midstate: engine.sha256().midstate(), crc32: 0, pending: Buffer.alloc(0) });
    return { content: { ...content, tail }, dataKey };
  } finally {
    await writer.close();
  }
}

/**
 * Appends a request's bytes. A source that fails midway (the client gone) keeps what arrived;
 * a limit, a failed verification or a storage error keeps nothing of the request, and rejects.
 */
export async function appendResumable(
  parts: ResumableParts,
  content: ResumableContent,
  dataKey: Buffer,
  source: Readable,
  limits: AppendLimits,
  options: { sourceOwnsChunks?: boolean } = {},
): Promise<Appended> {
  const header = parseHeader(content.header);
  const tail = openTail(dataKey, content, header.segmentSize);
  const hash = await hashOfSealed(parts, content, dataKey, header, tail);
  const start: AppendStart = { header, received: content.received, pending: tail.pending, hash, length: limits.length };
  const taken = { received: content.received, broken: false, crc32: tail.crc32 };
  const chunks = checkedChunks(source, limits, taken);
  const { appended, staging, syncing } = parts.blobs.localFiles
    ? await appendToFile(parts, content, dataKey, chunks, start, options.sourceOwnsChunks ?? false)
    : await appendToWriter(parts, content, dataKey, chunks, start);
  const next = { ...content, received: taken.received, staging };
  const sealed = sealTail(dataKey, next, { midstate: hash.reached, crc32: taken.crc32, pending: appended.pending });
  parts.lanes.keep(content.blobId, sealed, hash);
  return { content: { ...next, tail: sealed }, broken: taken.broken, syncing };
}

/**
 * The SHA-256 of the plaintext of the segments sealed so far, fed all of it: the lane this instance
 * kept from the upload's last request, if the row still holds the tail saved with it; else one
 * from the tail's midstate, caught up when that request answered before its hash was done.
 */
async function hashOfSealed(
  parts: ResumableParts,
  content: ResumableContent,
  dataKey: Buffer,
  header: StreamHeader,
  tail: TailState,
): Promise<HashLane> {
  const sealedTo = content.received - tail.pending.length;
  const kept = parts.lanes.take(content.blobId, content.tail);
  if (kept?.queuedBytes === sealedTo) return kept;
  const lane = new HashLane(parts.engine.sha256(tail.midstate), tail.midstate);
  if (lane.queuedBytes !== sealedTo) await catchUp(parts, content, dataKey, header, lane, sealedTo);
  return lane;
}

/** Segments read back at once to catch a hash up. */
const CATCH_UP_SEGMENTS = 64;
const readFile = promisify(read);

/**
 * Feeds `lane` the plaintext of the staged segments from where it stands to `to`, read back from
 * the staging file and opened (only local files lag: see appendSegments).
 */
async function catchUp(
  { blobs, engine }: ResumableParts,
  content: ResumableContent,
  dataKey: Buffer,
  header: StreamHeader,
  lane: HashLane,
  to: number,
) {
  const size = header.segmentSize;
  if (lane.queuedBytes % size !== 0 || lane.queuedBytes > to)
    throw new CipherFormatError("the upload tail's midstate is not at a sealed segment");
  const file = await blobs.openStagingFile(content.blobId, content.staging);
  try {
    const aead = engine.aead(dataKey);
    const sealed = Buffer.allocUnsafe(size + TAG_BYTES);
    for (let index = lane.queuedBytes / size; index < to / size;) {
      const batch: Buffer[] = [];
      for (; index < to / size && batch.length < CATCH_UP_SEGMENTS; index++) {
        const { bytesRead } = await readFile(file.fd, sealed, 0, sealed.length, segmentOffset(index, size));
        const plain = Buffer.allocUnsafe(size);
        if (bytesRead !== sealed.length || aead.open(segmentNonce(header.noncePrefix, index, false), header.bytes, sealed, plain, 0) < 0)
          throw new CipherFormatError(`staged segment ${index} is missing or does not authenticate`);
        batch.push(plain);
      }
      await lane.push(batch, batch.length * size);
    }
  } finally {
    await file.close();
  }
}

/**
 * The source's chunks, once each passes the limits. The source's failures (the client gone, the
 * body timed out) end it early, `broken`, keeping what arrived; ours (a limit, the quota, the
 * checksum) throw, keeping nothing: hence the iteration by hand. The CRC-32 of what is kept goes
 * on here, as each chunk passes (unknown stays unknown: see openTail).
 */
async function* checkedChunks(source: Readable, limits: AppendLimits, taken: { received: number; broken: boolean; crc32: number | null }) {
  const verifier = limits.verify?.();
  const chunks = source[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  for (;;) {
    const next = await chunks.next().catch(() => null);
    if (next === null) taken.broken = true;
    if (next === null || next.done) break;
    const chunk = next.value;
    if (taken.received + chunk.length > limits.maxBytes)
      throw new AppError('UPLOAD_LENGTH_EXCEEDED', `This upload takes at most ${limits.maxBytes} bytes`);
    await limits.hold?.(taken.received + chunk.length);
    verifier?.update(chunk);
    taken.received += chunk.length;
    if (taken.crc32 !== null) taken.crc32 = crc32(chunk, taken.crc32);
    yield chunk;
  }
  if (verifier && (taken.broken || !verifier.matches())) throw new AppError('UPLOAD_CHECKSUM_MISMATCH');
}

/** Where an append left the staging (`syncing`: as Appended's). */
interface StagedAppend {
  appended: AppendedSegments;
  staging: string;
  syncing?: Promise<void>;
}

/**
 * A store of local files: the engine seals into the staging's file itself (off the event loop with
 * the native one). Resolves once the bytes are written; their sync, and the file's closing, go on.
 */
async function appendToFile(
  { blobs, engine }: ResumableParts,
  content: ResumableContent,
  dataKey: Buffer,
  chunks: AsyncIterable<Buffer>,
  start: AppendStart,
  sourceOwnsChunks: boolean,
): Promise<StagedAppend> {
  const file = await blobs.openStagingFile(content.blobId, content.staging);
  let appended;
  try {
    appended = await engine.appendIntoFile(chunks, dataKey, file, start, { sourceOwnsChunks });
  } catch (error) {
    await file.close();
    throw error;
  }
  const { state, durable } = file.commit();
  // Closed once the sync is over (StagingFile.close waits for it); its error is `durable`'s.
  void file.close().catch(() => {});
  return { appended, staging: state, syncing: durable };
}

/** Any other store: segments sealed here, written through the staging's writer. */
async function appendToWriter(
  { blobs, engine }: ResumableParts,
  content: ResumableContent,
  dataKey: Buffer,
  chunks: AsyncIterable<Buffer>,
  start: AppendStart,
): Promise<StagedAppend> {
  const writer = await blobs.openStaging(content.blobId, content.staging);
  try {
    const appended = await appendSegments(chunks, engine.aead(dataKey), start, (sealed) => writer.write(sealed));
    return { appended, staging: await writer.commit() };
  } finally {
    await writer.close();
  }
}

/**
 * Seals the final segment and makes the blob whole under its key (its `uploading` row written
 * first, as `store` does): the content of a version, with its size, SHA-256 and CRC-32 (the
 * tail's, which covers every byte received, the pending ones too).
 */
export async function finishResumable(parts: ResumableParts, content: ResumableContent, dataKey: Buffer) {
  const { blobs, engine, recordUploading } = parts;
  const header = parseHeader(content.header);
  const tail = openTail(dataKey, content, header.segmentSize);
  const hash = await hashOfSealed(parts, content, dataKey, header, tail);
  const segments = new SegmentSealer(engine.aead(dataKey), header, tail.pending, content.received);
  const writer = await blobs.openStaging(content.blobId, content.staging);
  let staging: string;
  try {
    await Promise.all([writer.write(segments.sealFinal()), hash.push(segments.takePlain(), tail.pending.length)]);
    staging = await writer.commit();
  } finally {
    await writer.close();
  }
  const put: PutOptions = { visibleAfter: recordUploading(content.blobId), durableLater: true };
  const stored = await blobs.completeStaging(content.blobId, staging, put);
  if (stored.size !== sealedSize(content.received, header.segmentSize)) throw new CipherFormatError('the staged blob has the wrong length');
  const checksum = `sha256:${hash.digest().toString('hex')}`;
  const { size, durable } = stored;
  return { blobId: content.blobId, dataKey, size: content.received, storedSize: size, checksum, crc32: tail.crc32, durable };
}

/** Deletes an unfinished resumable blob's bytes. */
export async function abortResumable(
  { blobs, lanes }: ResumableParts,
  content: Pick<ResumableContent, 'blobId' | 'staging'>,
): Promise<void> {
  lanes.forget(content.blobId);
  await blobs.abortStaging(content.blobId, content.staging);
}

/** The tail's key: derived from the data key, so that no second key needs keeping. */
function tailKey(dataKey: Buffer): Buffer {
  return Buffer.from(hkdfSync('sha256', dataKey, Buffer.alloc(0), 'coffre resumable tail', 32));
}

/** The associated data's suffix of a tail that carries a CRC-32. */
const CRC_TAIL = Buffer.from('crc32');
const CRC_BYTES = 4;

/**
 * Binds a tail to its blob and offset: one from another upload, or an older one, does not open.
 * A tail carrying the CRC-32 is bound to CRC_TAIL too, so that neither format opens as the other.
 */
function tailAad(content: Pick<ResumableContent, 'header' | 'received'>, withCrc: boolean): Buffer {
  const offset = Buffer.alloc(8);
  offset.writeBigUInt64BE(BigInt(content.received));
  return Buffer.concat([content.header, offset, withCrc ? CRC_TAIL : Buffer.alloc(0)]);
}

/** What a tail record holds. `crc32` is that of all bytes received; null when unknown (see openTail). */
interface TailState {
  midstate: Buffer;
  crc32: number | null;
  pending: Buffer;
}

/**
 * The tail record: a random nonce, then AES-256-GCM of (the SHA-256 midstate of the sealed
 * segments' plaintext, 40 bytes; the CRC-32 of all received, 4 bytes big-endian; the plaintext
 * not yet in a sealed segment). A tail whose CRC is unknown keeps the format it came in, without
 * it. node:crypto seals it whatever the engine: it is one small record per request.
 */
function sealTail(dataKey: Buffer, content: Pick<ResumableContent, 'header' | 'received'>, state: TailState): Buffer {
  const crc = Buffer.alloc(state.crc32 === null ? 0 : CRC_BYTES);
  if (state.crc32 !== null) crc.writeUInt32BE(state.crc32);
  const plaintext = Buffer.concat([state.midstate, crc, state.pending]);
  const nonce = randomBytes(12);
  const out = Buffer.allocUnsafe(12 + plaintext.length + TAG_BYTES);
  nonce.copy(out, 0);
  nodeAead(tailKey(dataKey)).seal(nonce, tailAad(content, state.crc32 !== null), plaintext, out, 12);
  return out;
}

/**
 * Opens a tail record. One sealed before tails carried the CRC-32 (an upload in flight across the
 * update) still opens, its CRC unknown: its first requests were taken by a release that did not
 * compute it, and only the staged segments could tell it, which a store other than local files
 * cannot read back. Its version records null, which a zip archive computes when it first needs it.
 */
function openTail(dataKey: Buffer, content: ResumableContent, segmentSize: number): TailState {
  const record = content.tail;
  const plaintext = Buffer.alloc(Math.max(0, record.length - 12 - TAG_BYTES));
  const aead = nodeAead(tailKey(dataKey));
  const opens = (withCrc: boolean) =>
    record.length >= 12 + TAG_BYTES && aead.open(record.subarray(0, 12), tailAad(content, withCrc), record.subarray(12), plaintext, 0) >= 0;
  const withCrc = opens(true);
  if (!withCrc && !opens(false)) throw new CipherFormatError('the upload tail does not authenticate');
  const pendingAt = MIDSTATE_BYTES + (withCrc ? CRC_BYTES : 0);
  const pending = plaintext.subarray(pendingAt);
  if (plaintext.length < pendingAt || pending.length > segmentSize || pending.length > content.received)
    throw new CipherFormatError('the upload tail is malformed');
  const crc = withCrc ? plaintext.readUInt32BE(MIDSTATE_BYTES) : null;
  return { midstate: plaintext.subarray(0, MIDSTATE_BYTES), crc32: crc, pending };
}
