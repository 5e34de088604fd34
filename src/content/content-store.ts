import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { BlobStore, ByteRange, PutOptions, PutResult } from '../blobs/blob-store.js';
import { newBlobKey } from '../blobs/blob-keys.js';
import { deleteBlobRow, insertUploadingBlobs, recordNewBlobsWrites } from '../blobs/blobs.repository.js';
import { newKey } from '../crypto/key-wrap.js';
import type { Db, DbOrTrx } from '../db/database.js';
import type { Write } from '../db/write-batch.js';
import { AppError } from '../errors.js';
import { bindContext } from '../lib/bind.js';
import { GroupRunner } from '../lib/group-runner.js';
import { nowIso } from '../lib/time.js';
import { CodecStream } from './codec-stream.js';
import {
  INLINE_BLOB_LIMIT,
  open,
  readWhole,
  sealed,
  type KeyWrap,
  type OpenedContent,
  type OpenOptions,
  type SealedContent,
  type SealedVersion,
  type VersionContent,
} from './content-reads.js';
import {
  abortResumable,
  appendResumable,
  beginResumable,
  finishResumable,
  type AppendLimits,
  type Appended,
  type ResumableContent,
} from './resumable.js';
import { Sealer } from './codecs.js';
import type { CryptoEngine, SealedSummary } from './engine.js';
import { newHeader } from './format.js';
import { LaneKeeper } from './hash-lane.js';

/** Encrypted content written to the blob store (or held for the database), not yet referenced by any version. */
export interface StoredContent {
  blobId: string;
  dataKey: Buffer;
  size: number;
  storedSize: number;
  /** `sha256:<hex>` of the plaintext. */
  checksum: string;
  /**
   * CRC-32 of the plaintext (zip archives), computed as it streamed; null only for a resumable
   * upload begun before the CRC was carried in its tail (resumable.ts), which no longer knows it.
   */
  crc32: number | null;
  /**
   * Resolves once the blob's key survives a crash; the transaction recording the blob runs
   * meanwhile and awaits it before committing (`awaitDurable`).
   */
  durable?: Promise<void>;
  /**
   * A small blob's stored bytes, recorded in its row with the file instead of in the blob store
   * (migration 010); nothing of it exists anywhere before that transaction commits.
   */
  content?: Buffer;
}

export interface UploadLimits {
  /** COFFRE_MAX_UPLOAD_BYTES: 413 beyond it. */
  maxBytes: number;
  /**
   * Holds the owner's quota for the first `bytes` of a stream's plaintext before they are written:
   * nothing when they are held already, else a promise the input waits for, which rejects (507
   * QUOTA_EXCEEDED) when the quota cannot take them. A body read whole (at most 64 KiB, in memory)
   * needs none: it is kept in the database, or on disk only until the same request records it.
   */
  hold?: (bytes: number) => void | Promise<void>;
  /** COFFRE_INLINE_BLOB_BYTES: a body read whole up to this long is kept in the database. */
  inlineMaxBytes: number;
}

export interface StoreOptions {
  /** Each chunk of a source stream is memory of its own that nothing else reads (an HTTP request's body). */
  sourceOwnsChunks?: boolean;
}

export type { KeyWrap, OpenedContent, OpenOptions, SealedContent, SealedVersion, VersionContent };
export { INLINE_BLOB_LIMIT };

/**
 * The one way in and out of stored content (docs/architecture.md): files, links and every
 * transport use only this. Plaintext goes in as a stream (or a small body read whole) and comes
 * out authenticated; in between it exists only in the stored format (docs/storage-format.md).
 */
export interface ContentStore {
  /** The engine in use (`native` or `node`), for readiness output. */
  readonly engineName: string;
  /**
   * Encrypts and stores a plaintext stream, checking `limits` as the bytes arrive (413
   * PAYLOAD_TOO_LARGE; the quota held, or 507 QUOTA_EXCEEDED), and returns the new blob with its
   * size and SHA-256.
   * On any failure (a limit, the client gone, a storage error) its bytes and row are removed
   * before it rejects, and the source is destroyed.
   */
  store(source: Readable | Buffer, limits: UploadLimits, options?: StoreOptions): Promise<StoredContent>;
  /** The writes recording new blobs, in the transaction that records their first versions. */
  recordWrites(trx: DbOrTrx, stored: StoredContent[], now: string): Write[];
  /** Before a commit that makes versions point at these blobs: their keys must be durable first. */
  awaitDurable(stored: StoredContent[]): Promise<void>;
  /** Removes stored content that no version references (a failed or refused upload). */
  discard(stored: Pick<StoredContent, 'blobId' | 'content'>): Promise<void>;
  /**
   * A version's plaintext, whole or the byte range `range` (inside the plaintext), as a stream
   * that emits only authenticated bytes: damaged storage fails it with a CipherFormatError
   * (before it exists when the header is damaged). Rejects with BlobNotFoundError for a lost blob.
   */
  open(version: VersionContent, range?: ByteRange, options?: OpenOptions): Promise<OpenedContent>;
  /**
   * A small version's whole plaintext (at most WHOLE_READ_LIMIT bytes) opened into `out` (at least
   * its size) in one step, authenticated: the part of `out` it fills. For the many small entries
   * of an archive, where a stream each cost more than their bytes. Rejects as `open` does.
   */
  readWhole(version: VersionContent, out: Buffer): Promise<Buffer>;
  /**
   * A version's stored bytes as they are, for a client that decrypts them itself (the link page),
   * with the key chain that opens them: `above` (the wraps from the client's key down to the
   * version's file key), then the version's own data-key wrap. `pickRange`, given the stored
   * length, chooses a byte range of the stored bytes to send (or throws, e.g. 416).
   */
  sealed(version: SealedVersion, above: KeyWrap[], pickRange?: (storedSize: number) => ByteRange | undefined): Promise<SealedContent>;
  /** Content written over many requests (resumable uploads): see resumable.ts. */
  readonly resumable: {
    /** A new, empty one, with its data key (for the caller to keep wrapped). */
    begin(): Promise<{ content: ResumableContent; dataKey: Buffer }>;
    /** Appends a request's bytes: what arrived before the client left is kept; a limit or a storage error keeps nothing. */
    append(content: ResumableContent, dataKey: Buffer, source: Readable, limits: AppendLimits, options?: StoreOptions): Promise<Appended>;
    /** The whole content, as a stored blob a version may take (`recordWrites` is not needed: its row exists). */
    finish(content: ResumableContent, dataKey: Buffer): Promise<StoredContent>;
    /** Deletes an unfinished one's bytes. */
    abort(content: Pick<ResumableContent, 'blobId' | 'staging'>): Promise<void>;
  };
}

/** Blob rows inserted in one statement at most. */
const BLOB_GROUP_MAX = 64;

/** The content store over a database, a blob store and a crypto engine: the functions below, bound to them. */
export function createContentStore(db: Db, blobs: BlobStore, engine: CryptoEngine): ContentStore {
  const parts: ContentParts = { db, blobs, engine, recordUploading: uploadingBlobRecorder(db), lanes: new LaneKeeper() };
  return {
    engineName: engine.name,
    ...bindContext(parts, { store, discard, open, readWhole, sealed }),
    recordWrites: (trx, stored, now) =>
      recordNewBlobsWrites(
        trx,
        stored.map((c) => ({ id: c.blobId, storedSize: c.storedSize, content: c.content })),
        now,
      ),
    awaitDurable: async (stored) => void (await Promise.all(stored.map((c) => c.durable))),
    resumable: {
      begin: () => beginResumable(parts),
      append: (content, dataKey, source, limits, options) => appendResumable(parts, content, dataKey, source, limits, options),
      finish: (content, dataKey) => finishResumable(parts, content, dataKey),
      abort: (content) => abortResumable(parts, content),
    },
  };
}

/** What the store's functions work with; `recordUploading` groups the rows of uploads starting together. */
interface ContentParts {
  db: Db;
  blobs: BlobStore;
  engine: CryptoEngine;
  recordUploading: (blobId: string) => Promise<void>;
  /** The hashes of resumable uploads appended to here last (resumable.ts). */
  lanes: LaneKeeper;
}

type Sealed = SealedSummary & { storedSize: number; durable?: Promise<void> };

async function store(
  parts: ContentParts,
  source: Readable | Buffer,
  limits: UploadLimits,
  options: StoreOptions = {},
): Promise<StoredContent> {
  const { engine, recordUploading } = parts;
  if (Buffer.isBuffer(source)) checkLimits(source.length, limits);
  const blobId = newBlobKey();
  const dataKey = newKey();
  if (Buffer.isBuffer(source) && limits.inlineMaxBytes > 0 && source.length <= Math.min(limits.inlineMaxBytes, INLINE_BLOB_LIMIT)) {
    const { chunks, ...sealed } = sealWhole(engine, dataKey, source);
    return { blobId, dataKey, ...sealed, content: Buffer.concat(chunks) };
  }
  // The row (state `uploading`) is written while the bytes are, and the store shows them under
  // the key only once it is (`visibleAfter`): bytes a crash leaves are a temp file of the store
  // or known to the collector.
  const recorded = recordUploading(blobId);
  const put: PutOptions = { visibleAfter: recorded, durableLater: true };
  try {
    const sealed = Buffer.isBuffer(source)
      ? await putWhole(parts, blobId, dataKey, source, put)
      : await putStream(parts, blobId, dataKey, source, limits, put, options);
    return { blobId, dataKey, ...sealed };
  } catch (error) {
    // The row may still be on its way: removed after it, not before.
    await recorded.catch(() => {});
    await discard(parts, { blobId });
    throw error;
  }
}

/** A small body sealed in one step, then put in the blob store. */
async function putWhole(
  { blobs, engine }: ContentParts,
  blobId: string,
  dataKey: Buffer,
  plaintext: Buffer,
  put: PutOptions,
): Promise<Sealed> {
  const { chunks, ...sealed } = sealWhole(engine, dataKey, plaintext);
  const stored = await blobs.put(blobId, Readable.from(chunks), put);
  return { ...sealed, storedSize: stored.size, durable: stored.durable };
}

/** A stream sealed as it arrives: by the engine into a local file, else through a CodecStream into the blob store. */
async function putStream(
  { blobs, engine }: ContentParts,
  blobId: string,
  dataKey: Buffer,
  source: Readable,
  limits: UploadLimits,
  put: PutOptions,
  options: StoreOptions,
): Promise<Sealed> {
  const checkInput = (bytes: number) => {
    checkLimits(bytes, limits);
    return limits.hold?.(bytes);
  };
  if (blobs.localFiles) {
    let summary: SealedSummary | undefined;
    const seal = { sourceOwnsChunks: options.sourceOwnsChunks ?? false, checkInput };
    const stored = await blobs
      .putFile(blobId, async (file) => void (summary = await engine.sealIntoFile(source, dataKey, file, seal)), put)
      .catch((error: unknown) => {
        // Failed before reading the body (no temp file): dropped, as a failed seal drops it.
        source.destroy();
        throw error;
      });
    return { ...summary!, storedSize: stored.size, durable: stored.durable };
  }
  const sealer = new Sealer(engine.aead(dataKey), newHeader(), { hash: true });
  const seal = new CodecStream(sealer, { checkInput });
  const [piped, stored] = await Promise.allSettled([pipeline(source, seal), blobs.put(blobId, seal, put)]);
  if (piped.status === 'rejected') throw piped.reason;
  if (stored.status === 'rejected') throw stored.reason;
  return { size: seal.inputBytes, checksum: sealer.checksum!, crc32: sealer.crc32!, ...storedOf(stored.value) };
}

async function discard({ db, blobs }: ContentParts, stored: Pick<StoredContent, 'blobId' | 'content'>): Promise<void> {
  if (stored.content !== undefined) return;
  await blobs.delete(stored.blobId);
  await deleteBlobRow(db, stored.blobId);
}

function checkLimits(bytes: number, limits: UploadLimits): void {
  if (bytes > limits.maxBytes) throw new AppError('PAYLOAD_TOO_LARGE', `Files are limited to ${limits.maxBytes} bytes`);
}

function storedOf(result: PutResult): { storedSize: number; durable?: Promise<void> } {
  return { storedSize: result.size, durable: result.durable };
}

/** A body read whole, sealed in one step with the engine's AEAD. */
function sealWhole(engine: CryptoEngine, dataKey: Buffer, plaintext: Buffer): SealedSummary & { chunks: Buffer[]; storedSize: number } {
  const sealer = new Sealer(engine.aead(dataKey), newHeader(), { hash: true });
  const chunks = [...sealer.write([plaintext]), ...sealer.end()];
  const storedSize = chunks.reduce((sum, chunk) => sum + chunk.length, 0);
  return { chunks, size: plaintext.length, storedSize, checksum: sealer.checksum!, crc32: sealer.crc32! };
}

/**
 * Records new blobs as `uploading`, the blobs of uploads starting together in one statement: on
 * SQLite each insert was a write transaction of its own, on PostgreSQL a commit. A failed insert
 * fails its group.
 */
function uploadingBlobRecorder(db: Db): (blobId: string) => Promise<void> {
  const runner = new GroupRunner<string, void>(async (ids) => {
    await insertUploadingBlobs(db, ids, nowIso());
    return ids.map(() => ({ status: 'fulfilled', value: undefined }));
  }, BLOB_GROUP_MAX);
  return (blobId) => runner.submit('blobs', blobId);
}
