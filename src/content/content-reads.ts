import type { FileHandle } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { BlobNotFoundError, type BlobStore, type ByteRange } from '../blobs/blob-store.js';
import { blobContent, storedSizeOf } from '../blobs/blobs.repository.js';
import type { Db } from '../db/database.js';
import { CodecStream } from './codec-stream.js';
import { Opener, RangeOpener } from './codecs.js';
import { WHOLE_READ_LIMIT, type CryptoEngine } from './engine.js';
import { CipherFormatError, HEADER_BYTES, parseHeader, sealedSize, segmentRange } from './format.js';
import { FileDecryptStream, type Sink } from './file-decrypt-stream.js';

/**
 * How the content store reads (content-store.ts): a version's plaintext streamed whole or by a
 * range, a small one read whole in one step, or its sealed bytes as they are.
 */

/**
 * The most COFFRE_INLINE_BLOB_BYTES may be: one 64 KiB segment. A download of a file up to this
 * size asks the database for its bytes first (whatever the setting was when it was stored).
 */
export const INLINE_BLOB_LIMIT = 64 * 1024;

/** What reading needs of the content store. */
export interface ReadParts {
  db: Db;
  blobs: BlobStore;
  engine: CryptoEngine;
}

/** A stored version, as far as reading it goes. */
export interface VersionContent {
  blobId: string;
  /** Plaintext bytes. */
  size: number;
  dataKey: Buffer;
}

/** A wrapped key and the id it is bound to (docs/storage-format.md, key hierarchy). */
export interface KeyWrap {
  id: string;
  wrapped: string;
}

/** A stored version, as far as handing out its sealed bytes goes. */
export interface SealedVersion {
  id: string;
  blobId: string;
  size: number;
  dataKeyWrapped: string;
}

export interface SealedContent extends OpenedContent {
  /** From the client's key down to the data key, each wrap opened by the key before it. */
  keyChain: KeyWrap[];
  /** The whole stored length, and the part of it `stream` holds when a range was picked. */
  storedSize: number;
  range?: ByteRange;
}

export interface OpenOptions {
  /**
   * For a stream not piped straight into its destination: counts the bytes it pushed that are not
   * yet written out downstream, so that its buffers can be reused (FileDecryptStream.recycleThrough).
   */
  downstream?: Sink;
}

/** A version's plaintext, whole or a range, and how many bytes it holds. */
export interface OpenedContent {
  stream: Readable;
  length: number;
}

export async function open(
  parts: ReadParts,
  version: VersionContent,
  range?: ByteRange,
  options: OpenOptions = {},
): Promise<OpenedContent> {
  const { db, blobs, engine } = parts;
  const { blobId, size, dataKey } = version;
  const length = range ? range.end - range.start + 1 : size;
  const inline = size <= INLINE_BLOB_LIMIT ? await blobContent(db, blobId) : null;
  if (inline === null && blobs.localFiles && size > 0) {
    const stream = await openLocal(engine, await blobs.openFile(blobId), dataKey, size, range);
    if (options.downstream && stream instanceof FileDecryptStream) stream.recycleThrough(options.downstream);
    return { stream, length };
  }
  const read = (stored?: ByteRange) =>
    inline ? Promise.resolve(Readable.from([stored ? inline.subarray(stored.start, stored.end + 1) : inline])) : blobs.get(blobId, stored);
  if (!range) return { stream: opening(await read(), new CodecStream(new Opener(engine.aead(dataKey)))), length };
  const header = parseHeader(await readAll(await read({ start: 0, end: HEADER_BYTES - 1 })));
  const segments = segmentRange(size, range.start, range.end, header.segmentSize);
  const stored = await read({ start: segments.storedStart, end: segments.storedEnd });
  return { stream: opening(stored, new CodecStream(new RangeOpener(engine.aead(dataKey), header, segments))), length };
}

export async function readWhole({ db, blobs, engine }: ReadParts, version: VersionContent, out: Buffer): Promise<Buffer> {
  const { blobId, size, dataKey } = version;
  if (size > WHOLE_READ_LIMIT) throw new RangeError(`whole reads are of at most ${WHOLE_READ_LIMIT} bytes`);
  const inline = size <= INLINE_BLOB_LIMIT ? await blobContent(db, blobId) : null;
  if (inline) {
    // The driver's copy is read once: freed now, it does not pile up until a collection (one
    // per entry of an archive of many small files).
    try {
      return engine.openWhole(inline, size, dataKey, out);
    } finally {
      engine.release(inline);
    }
  }
  if (!blobs.localFiles) return engine.openWhole(await readAll(await blobs.get(blobId)), size, dataKey, out);
  return engine.readWholeFile(blobs.filePath(blobId), size, dataKey, out).catch((error: NodeJS.ErrnoException) => {
    throw error.code === 'ENOENT' ? new BlobNotFoundError(blobId) : error;
  });
}

/** A blob file opened by the engine; a whole read also checks the file's length (appended bytes). */
async function openLocal(engine: CryptoEngine, file: FileHandle, dataKey: Buffer, size: number, range?: ByteRange): Promise<Readable> {
  try {
    const header = parseHeader(await readAt(file, 0, HEADER_BYTES));
    if (!range && (await file.stat()).size !== sealedSize(size, header.segmentSize))
      throw new CipherFormatError('stored stream is shorter or longer than expected');
    return engine.openFile(file, dataKey, header, segmentRange(size, range?.start ?? 0, range?.end ?? size - 1, header.segmentSize));
  } catch (error) {
    await file.close();
    throw error;
  }
}

export async function sealed(
  { db, blobs }: ReadParts,
  version: SealedVersion,
  above: KeyWrap[],
  pickRange?: (storedSize: number) => ByteRange | undefined,
): Promise<SealedContent> {
  const keyChain = [...above, { id: version.id, wrapped: version.dataKeyWrapped }];
  const inline = version.size <= INLINE_BLOB_LIMIT ? await blobContent(db, version.blobId) : null;
  const storedSize = inline ? inline.length : await storedSizeOf(db, version.blobId);
  const range = pickRange?.(storedSize);
  const length = range ? range.end - range.start + 1 : storedSize;
  if (inline)
    return { stream: Readable.from([range ? inline.subarray(range.start, range.end + 1) : inline]), length, storedSize, range, keyChain };
  return { stream: await blobs.get(version.blobId, range), length, storedSize, range, keyChain };
}

/** Pipes stored bytes through an opener; a read error of the store fails the opener too. */
function opening(stored: Readable, opener: CodecStream): Readable {
  pipeline(stored, opener).catch(() => {
    // pipeline has destroyed the opener with the error already; its reader sees it there.
  });
  return opener;
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
