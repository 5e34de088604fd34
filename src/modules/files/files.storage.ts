import type { FileHandle } from 'node:fs/promises';
import { Readable, type Transform, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { BlobStore, ByteRange, PutOptions } from '../../blobs/blob-store.js';
import { newBlobKey } from '../../blobs/blob-keys.js';
import { blobContent, deleteBlobRow, insertUploadingBlobs, recordNewBlobsWrites } from '../../blobs/blobs.repository.js';
import { newKey } from '../../crypto/key-wrap.js';
import { FileDecryptStream, fileDecryptAvailable } from '../../crypto/file-decrypt-stream.js';
import { FileEncryptStream, fileEncryptAvailable } from '../../crypto/file-encrypt-stream.js';
import {
  CipherFormatError,
  DEFAULT_SEGMENT_LOG2,
  DecryptStream,
  EncryptStream,
  HEADER_BYTES,
  RangeDecryptStream,
  createCodec,
  parseHeader,
  sealedSize,
  segmentRange,
} from '../../crypto/stream-cipher.js';
import type { Db, DbOrTrx } from '../../db/database.js';
import type { Write } from '../../db/write-batch.js';
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
  /**
   * A small blob's stored bytes, recorded in its row with the file instead of in the blob store
   * (see migration 010); nothing of it exists anywhere before that transaction commits.
   */
  content?: Buffer;
}

/** The writes recording new blobs, in the transaction that records their first versions (see recordNewBlobsWrites). */
export function newBlobsWrites(trx: DbOrTrx, stored: StoredContent[], now: string): Write[] {
  return recordNewBlobsWrites(trx, stored.map((content) => ({ id: content.blobId, storedSize: content.storedSize, content: content.content })), now);
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
  /** COFFRE_INLINE_BLOB_BYTES: a body read whole up to this long is kept in the database. */
  inlineMaxBytes: number;
}

/**
 * The most COFFRE_INLINE_BLOB_BYTES may be: one 64 KiB segment. A download of a file up to this
 * size asks the database for its bytes first (whatever the setting was when it was stored).
 */
export const INLINE_BLOB_LIMIT = 64 * 1024;

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
 * Encrypts plaintext into a new blob: a stream through the encryption (which checks the limits as
 * the bytes arrive), or a body already read whole (a small one), sealed in one step. A whole body
 * up to `inlineMaxBytes` stays in memory (`content`): the transaction recording its file stores it
 * in the blob's row. For the blob store, the blob row (state `uploading`) is written while the
 * bytes are, and the store makes them visible under the key only once it is (`visibleAfter`), so
 * bytes left by a crash are either a temp file of the store or known to the collector. On any failure (limit, client gone, storage error) the bytes and the row are removed
 * before rejecting.
 */
export async function storeEncrypted(
  db: Db,
  blobs: BlobStore,
  recordUploading: (blobId: string) => Promise<void>,
  source: Readable | Buffer,
  limits: UploadLimits,
  /** Each chunk of the `source` stream is memory of its own that nothing else reads (see CipherStreamOptions.ownsInput). */
  sourceOwnsChunks = false,
): Promise<StoredContent> {
  if (Buffer.isBuffer(source)) checkLimits(source.length, limits);
  const blobId = newBlobKey();
  const dataKey = newKey();
  if (Buffer.isBuffer(source) && limits.inlineMaxBytes > 0 && source.length <= Math.min(limits.inlineMaxBytes, INLINE_BLOB_LIMIT)) {
    const { chunks, ...sealed } = sealWhole(dataKey, source);
    return { blobId, dataKey, ...sealed, content: Buffer.concat(chunks) };
  }
  const recorded = recordUploading(blobId);
  try {
    const put = { visibleAfter: recorded, durableLater: true };
    const sealed = Buffer.isBuffer(source) ? await storeWhole(blobs, blobId, dataKey, source, put) : await storeStream(blobs, blobId, dataKey, source, limits, put, sourceOwnsChunks);
    return { blobId, dataKey, ...sealed };
  } catch (error) {
    // The row may still be on its way: removed after it, not before.
    await recorded.catch(() => {});
    await discardBlob(db, blobs, { blobId });
    throw error;
  }
}

function checkLimits(bytes: number, limits: UploadLimits): void {
  if (bytes > limits.maxBytes) throw new AppError('PAYLOAD_TOO_LARGE', `Files are limited to ${limits.maxBytes} bytes`);
  if (bytes > limits.quotaRemaining) throw new AppError('QUOTA_EXCEEDED');
}

type Sealed = Omit<StoredContent, 'blobId' | 'dataKey'>;

async function storeStream(blobs: BlobStore, blobId: string, dataKey: Buffer, source: Readable, limits: UploadLimits, put: PutOptions, ownsChunks: boolean): Promise<Sealed> {
  // The plaintext checksum is computed with the encryption, off the event loop. The limits are
  // checked by the encryption as the bytes arrive: a stream of its own in front cost an upload a
  // hop per 64 KiB socket read on the event loop.
  const options = { checksum: true, ownsInput: ownsChunks, checkInput: (bytes: number) => checkLimits(bytes, limits) };
  if (blobs.putFromWriter) {
    // A store of local files: the encryption writes the blob's file itself, from libuv's
    // threadpool with the native addon (FileEncryptStream: the event loop queues jobs over the
    // body chunks, as a bare server queues its writes), else from its cipher thread.
    let encrypt: FileEncryptStream | EncryptStream | undefined;
    const stored = await blobs
      .putFromWriter(
        blobId,
        async (file) => {
          encrypt = fileEncryptAvailable ? new FileEncryptStream(dataKey, file, options) : new EncryptStream(dataKey, undefined, { ...options, into: file });
          // Settled once the stream has closed: no write of it can reach the file after that.
          await pipeline(source, encrypt).finally(() => closed(encrypt!));
        },
        put,
      )
      .catch((error: unknown) => {
        // Failed before reading the body (no temp file): it is dropped, as a failed pipeline drops it.
        if (!encrypt) source.destroy();
        throw error;
      });
    return { size: encrypt!.plaintextBytes, storedSize: stored.size, checksum: encrypt!.checksum!, durable: stored.durable };
  }
  const encrypt = new EncryptStream(dataKey, undefined, options);
  const [piped, stored] = await Promise.allSettled([pipeline(source, encrypt), blobs.put(blobId, encrypt, put)]);
  if (piped.status === 'rejected') throw piped.reason;
  if (stored.status === 'rejected') throw stored.reason;
  return { size: encrypt.plaintextBytes, storedSize: stored.value.size, checksum: encrypt.checksum!, durable: stored.value.durable };
}

/** Resolves once a stream has closed, whether it failed or not. */
function closed(stream: Readable | Writable): Promise<void> {
  return stream.closed ? Promise.resolve() : new Promise((resolve) => stream.once('close', () => resolve()));
}

/** The same stored format as EncryptStream's, sealed in-process (what it does for short streams too). */
function sealWhole(dataKey: Buffer, plaintext: Buffer): { chunks: Buffer[]; size: number; storedSize: number; checksum: string } {
  const codec = createCodec({ kind: 'seal', key: new Uint8Array(dataKey), segmentLog2: DEFAULT_SEGMENT_LOG2, hash: true });
  const head = codec.write([plaintext]);
  const { out, checksum } = codec.end();
  const chunks = [...head, ...out];
  return { chunks, size: plaintext.length, storedSize: chunks.reduce((sum, chunk) => sum + chunk.length, 0), checksum: checksum! };
}

async function storeWhole(blobs: BlobStore, blobId: string, dataKey: Buffer, plaintext: Buffer, put: PutOptions): Promise<Sealed> {
  const { chunks, ...sealed } = sealWhole(dataKey, plaintext);
  const stored = await blobs.put(blobId, Readable.from(chunks), put);
  return { ...sealed, storedSize: stored.size, durable: stored.durable };
}

/** Removes the blob of a failed or refused upload, which no version references (a small one was never stored). */
export async function discardBlob(db: Db, blobs: BlobStore, stored: Pick<StoredContent, 'blobId' | 'content'>): Promise<void> {
  if (stored.content !== undefined) return;
  await blobs.delete(stored.blobId);
  await deleteBlobRow(db, stored.blobId);
}

/** A stored blob to read: `ownsChunks` when each chunk is memory of its own that a reader may move to another thread. */
export interface StoredBytes {
  body: Readable;
  ownsChunks: boolean;
}

/** A version's stored bytes, to read whole or a range at a time (a ranged download reads its header, then its segments). */
export interface StoredBlob {
  read(range?: ByteRange): Promise<StoredBytes>;
  /** The blob's file, open for reading, when it is one of a store of local files (the caller closes it). */
  openFile?(): Promise<FileHandle>;
}

/**
 * Where a version's stored bytes are: its blob's row when it is a small one (up to
 * INLINE_BLOB_LIMIT of plaintext, looked up once here), else the blob store.
 */
export async function openStored(db: DbOrTrx, blobs: BlobStore, version: { blob_id: string; size: number }): Promise<StoredBlob> {
  const content = Number(version.size) <= INLINE_BLOB_LIMIT ? await blobContent(db, version.blob_id) : null;
  if (content === null) {
    return {
      read: async (range) => ({ body: await blobs.get(version.blob_id, range), ownsChunks: blobs.exclusiveReadChunks }),
      openFile: blobs.openForRead && (() => blobs.openForRead!(version.blob_id)),
    };
  }
  // A view of the driver's buffer, which may share memory with others: never moved, only copied.
  return { read: async (range) => ({ body: Readable.from([range ? content.subarray(range.start, range.end + 1) : content]), ownsChunks: false }) };
}

/**
 * A version's plaintext of `size` bytes, or its range `range`, as a stream that emits only
 * authenticated bytes: a segment that fails authentication ends it with a CipherFormatError (as
 * does a blob whose header is damaged, here, before the stream exists). A blob file is read and
 * opened on libuv's threadpool when the native addon can do it (FileDecryptStream: the event loop
 * only sends what it opened, as a bare file server sends its reads); anything else goes through a
 * cipher stream, header first.
 */
export async function openDecrypted(blob: StoredBlob, dataKey: Buffer, size: number, range?: ByteRange): Promise<Readable> {
  const file = fileDecryptAvailable && size > 0 && blob.openFile ? await blob.openFile() : undefined;
  if (file) {
    try {
      const header = parseHeader(await readAt(file, 0, HEADER_BYTES));
      // A whole download also checks the blob's length: the codec of the stream path sees bytes
      // appended after the final segment, reading only the segments would not.
      if (!range && (await file.stat()).size !== sealedSize(size, header.segmentSize)) throw new CipherFormatError('stored stream is shorter or longer than expected');
      return new FileDecryptStream(file, dataKey, header, segmentRange(size, range?.start ?? 0, range?.end ?? size - 1, header.segmentSize));
    } catch (error) {
      await file.close();
      throw error;
    }
  }
  if (range) {
    const header = parseHeader(await readAll((await blob.read({ start: 0, end: HEADER_BYTES - 1 })).body));
    const segments = segmentRange(size, range.start, range.end, header.segmentSize);
    const stored = await blob.read({ start: segments.storedStart, end: segments.storedEnd });
    return decrypting(stored.body, new RangeDecryptStream(dataKey, header, segments, { ownsInput: stored.ownsChunks }));
  }
  const stored = await blob.read();
  return decrypting(stored.body, new DecryptStream(dataKey, { ownsInput: stored.ownsChunks }));
}

/** Pipes stored bytes through a decryptor; a read error of the store fails the decryptor too. */
function decrypting(stored: Readable, decryptor: Transform): Readable {
  pipeline(stored, decryptor).catch(() => {
    // pipeline has already destroyed the decryptor with the error; the response handles it.
  });
  return decryptor;
}

/** `length` bytes of `file` at `position`, fewer only where the file ends. */
async function readAt(file: FileHandle, position: number, length: number): Promise<Buffer> {
  const buffer = Buffer.alloc(length);
  let done = 0;
  while (done < length) {
    const { bytesRead } = await file.read(buffer, done, length - done, position + done);
    if (bytesRead === 0) break;
    done += bytesRead;
  }
  return buffer.subarray(0, done);
}

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
