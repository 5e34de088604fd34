import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { BlobStore, PutOptions } from '../../blobs/blob-store.js';
import { newBlobKey } from '../../blobs/blob-keys.js';
import { deleteBlobRow, insertUploadingBlobs } from '../../blobs/blobs.repository.js';
import { newKey } from '../../crypto/key-wrap.js';
import { DEFAULT_SEGMENT_LOG2, EncryptStream, createCodec } from '../../crypto/stream-cipher.js';
import type { Db } from '../../db/database.js';
import { AppError } from '../../errors.js';
import { GroupRunner } from '../../lib/group-runner.js';
import { nowIso } from '../../lib/time.js';

/** Encrypted content written to the blob store, not yet referenced by any version. */
export interface StoredContent {
  blobId: string;
  dataKey: Buffer;
  size: number;
  storedSize: number;
  /** `sha256:<hex>` of the plaintext. */
  checksum: string;
  /**
   * Resolves once the blob's key survives a crash (the store's `durable`); the transaction that
   * records the blob runs meanwhile and awaits it before committing (see `awaitDurable`).
   */
  durable?: Promise<void>;
}

/** Before a commit that makes versions point at these blobs: their keys must be durable first. */
export async function awaitDurable(stored: StoredContent[]): Promise<void> {
  await Promise.all(stored.map((content) => content.durable));
}

export interface UploadLimits {
  /** COFFRE_MAX_UPLOAD_BYTES: 413 beyond it. */
  maxBytes: number;
  /** What the owner's quota still allows: 507 beyond it. */
  quotaRemaining: number;
}

/** Blob rows inserted in one statement at most. */
const BLOB_GROUP_MAX = 64;

/**
 * Records new blobs as `uploading`, the blobs of uploads starting together in one statement: on
 * SQLite each insert was a write transaction of its own (locks and WAL frames: more than the
 * recording of the files, which is grouped), on PostgreSQL a commit. A failed insert fails its group.
 */
export function uploadingBlobRecorder(db: Db): (blobId: string) => Promise<void> {
  const runner = new GroupRunner<string, void>(async (ids) => {
    await insertUploadingBlobs(db, ids, nowIso());
    return ids.map(() => ({ status: 'fulfilled', value: undefined }));
  }, BLOB_GROUP_MAX);
  return (blobId) => runner.submit('blobs', blobId);
}

/**
 * Encrypts plaintext into a new blob: a stream through the encryption (which checks the limits as the bytes arrive), or a body
 * already read whole (a small one), sealed in one step. The blob row (state `uploading`) is
 * written while the bytes are, and the store makes them visible under the key only once it is
 * (`visibleAfter`), so bytes left by a crash are either a temp file of the store or known to the
 * collector. On any failure (limit, client gone, storage error) the bytes and the row are removed
 * before rejecting.
 */
export async function storeEncrypted(
  db: Db,
  blobs: BlobStore,
  recordUploading: (blobId: string) => Promise<void>,
  source: Readable | Buffer,
  limits: UploadLimits,
): Promise<StoredContent> {
  if (Buffer.isBuffer(source)) checkLimits(source.length, limits);
  const blobId = newBlobKey();
  const dataKey = newKey();
  const recorded = recordUploading(blobId);
  try {
    const put = { visibleAfter: recorded, durableLater: true };
    const sealed = Buffer.isBuffer(source) ? await storeWhole(blobs, blobId, dataKey, source, put) : await storeStream(blobs, blobId, dataKey, source, limits, put);
    return { blobId, dataKey, ...sealed };
  } catch (error) {
    // The row may still be on its way: removed after it, not before.
    await recorded.catch(() => {});
    await discardBlob(db, blobs, blobId);
    throw error;
  }
}

function checkLimits(bytes: number, limits: UploadLimits): void {
  if (bytes > limits.maxBytes) throw new AppError('PAYLOAD_TOO_LARGE', `Files are limited to ${limits.maxBytes} bytes`);
  if (bytes > limits.quotaRemaining) throw new AppError('QUOTA_EXCEEDED');
}

type Sealed = Omit<StoredContent, 'blobId' | 'dataKey'>;

async function storeStream(blobs: BlobStore, blobId: string, dataKey: Buffer, source: Readable, limits: UploadLimits, put: PutOptions): Promise<Sealed> {
  // The plaintext checksum is computed with the encryption, off the event loop. The limits are
  // checked by the encryption as the bytes arrive: a stream of its own in front cost an upload a
  // hop per 64 KiB socket read on the event loop.
  const encrypt = new EncryptStream(dataKey, undefined, { checksum: true, checkInput: (bytes) => checkLimits(bytes, limits) });
  const [piped, stored] = await Promise.allSettled([pipeline(source, encrypt), blobs.put(blobId, encrypt, put)]);
  if (piped.status === 'rejected') throw piped.reason;
  if (stored.status === 'rejected') throw stored.reason;
  return { size: encrypt.plaintextBytes, storedSize: stored.value.size, checksum: encrypt.checksum!, durable: stored.value.durable };
}

/** The same stored format as EncryptStream's, sealed in-process (what it does for short streams too). */
async function storeWhole(blobs: BlobStore, blobId: string, dataKey: Buffer, plaintext: Buffer, put: PutOptions): Promise<Sealed> {
  const codec = createCodec({ kind: 'seal', key: new Uint8Array(dataKey), segmentLog2: DEFAULT_SEGMENT_LOG2, hash: true });
  const head = codec.write([plaintext]);
  const { out, checksum } = codec.end();
  const stored = await blobs.put(blobId, Readable.from([...head, ...out]), put);
  return { size: plaintext.length, storedSize: stored.size, checksum: checksum!, durable: stored.durable };
}

/** Removes a blob that no version references (a failed or refused upload). */
export async function discardBlob(db: Db, blobs: BlobStore, blobId: string): Promise<void> {
  await blobs.delete(blobId);
  await deleteBlobRow(db, blobId);
}
