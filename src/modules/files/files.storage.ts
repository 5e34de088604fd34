import { Transform, type Readable, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { BlobStore } from '../../blobs/blob-store.js';
import { newBlobKey } from '../../blobs/blob-keys.js';
import { deleteBlobRow, insertUploadingBlob } from '../../blobs/blobs.repository.js';
import { newKey } from '../../crypto/key-wrap.js';
import { EncryptStream } from '../../crypto/stream-cipher.js';
import type { Db } from '../../db/database.js';
import { AppError } from '../../errors.js';
import { nowIso } from '../../lib/time.js';

/** Encrypted content written to the blob store, not yet referenced by any version. */
export interface StoredContent {
  blobId: string;
  dataKey: Buffer;
  size: number;
  storedSize: number;
  /** `sha256:<hex>` of the plaintext. */
  checksum: string;
}

export interface UploadLimits {
  /** COFFRE_MAX_UPLOAD_BYTES: 413 beyond it. */
  maxBytes: number;
  /** What the owner's quota still allows: 507 beyond it. */
  quotaRemaining: number;
}

/** Counts the plaintext as it passes, and stops the upload the moment a limit is passed. */
class Meter extends Transform {
  bytes = 0;
  constructor(private readonly limits: UploadLimits) {
    super({ highWaterMark: 1024 * 1024 });
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, callback: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.bytes > this.limits.maxBytes) return callback(new AppError('PAYLOAD_TOO_LARGE', `Files are limited to ${this.limits.maxBytes} bytes`));
    if (this.bytes > this.limits.quotaRemaining) return callback(new AppError('QUOTA_EXCEEDED'));
    callback(null, chunk);
  }
}

/**
 * Streams plaintext through the meter and the encryption into a new blob. The blob row is
 * written first (state `uploading`), so bytes left by a crash stay known to the collector. On any
 * failure (limit, client gone, storage error) the bytes and the row are removed before rejecting.
 */
export async function storeEncrypted(db: Db, blobs: BlobStore, source: Readable, limits: UploadLimits): Promise<StoredContent> {
  const blobId = newBlobKey();
  const dataKey = newKey();
  await insertUploadingBlob(db, blobId, nowIso());
  const meter = new Meter(limits);
  // The plaintext checksum is computed with the encryption, off the event loop.
  const encrypt = new EncryptStream(dataKey, undefined, { checksum: true });
  const [piped, stored] = await Promise.allSettled([pipeline(source, meter, encrypt), blobs.put(blobId, encrypt)]);
  if (piped.status === 'rejected' || stored.status === 'rejected') {
    await discardBlob(db, blobs, blobId);
    throw piped.status === 'rejected' ? piped.reason : (stored as PromiseRejectedResult).reason;
  }
  return { blobId, dataKey, size: meter.bytes, storedSize: stored.value.size, checksum: encrypt.checksum! };
}

/** Removes a blob that no version references (a failed or refused upload). */
export async function discardBlob(db: Db, blobs: BlobStore, blobId: string): Promise<void> {
  await blobs.delete(blobId);
  await deleteBlobRow(db, blobId);
}
