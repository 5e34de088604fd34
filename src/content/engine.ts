import type { FileHandle } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import type { BlobFile, StagingFile } from '../blobs/blob-store.js';
import type { CryptoEngineChoice } from '../config.js';
import type { DurableFiles } from '../blobs/fs/durable-files.js';
import type { SegmentAead } from './aead.js';
import { MIN_SEGMENT_LOG2, sealedSize, type SegmentRange, type StreamHeader } from './format.js';
import type { AppendStart, AppendedSegments } from './segment-appender.js';
import type { ResumableSha256 } from './sha256-midstate.js';

export type CryptoEngineName = Exclude<CryptoEngineChoice, 'auto'>;

/**
 * The largest plaintext `readWholeFile` reads: a few download jobs' worth (file-decrypt-stream.ts).
 * What is larger streams, the cost of opening its stream spread over more bytes.
 */
export const WHOLE_READ_LIMIT = 4 * 1024 * 1024;

/** The most stored bytes `size` plaintext bytes may take (in the smallest segments): what a whole read reads at most. */
export function wholeReadStaging(size: number): number {
  return sealedSize(size, 2 ** MIN_SEGMENT_LOG2);
}

export interface SealIntoFileOptions {
  /**
   * Each chunk of the source is memory of its own that nothing else reads (an HTTP request's body
   * chunks): an engine may read it in place after the source has moved on, and free it after.
   */
  sourceOwnsChunks: boolean;
  /**
   * Called with the running plaintext byte count before each chunk is taken; what it throws fails
   * the seal, and a promise it returns holds the chunk until it settles (the same way).
   */
  checkInput: (bytes: number) => void | Promise<void>;
  segmentLog2?: number;
  /** Fixed only by the test vectors; random otherwise. */
  noncePrefix?: Buffer;
}

/** What sealing a stream learnt of its plaintext. */
export interface SealedSummary {
  size: number;
  /** `sha256:<hex>` of the plaintext. */
  checksum: string;
  /** CRC-32 of the plaintext (zlib's, as a zip entry records it). */
  crc32: number;
}

/**
 * How the stored format (format.ts) is computed: one interface, two engines producing the same
 * bytes (test/content/storage-format-vectors.test.ts). `native` is the fast path (the addon:
 * AES-GCM and SHA-256 run on libuv's threadpool beside the file I/O); `node` is the portable
 * fallback (node:crypto on the event loop). The content store never asks which one it has.
 */
export interface CryptoEngine {
  readonly name: CryptoEngineName;
  /** AES-256-GCM of one segment, for the codecs (codecs.ts): whole small bodies and stores that are not local files. */
  aead(key: Buffer): SegmentAead;
  /**
   * Seals `source` into the stored format written into `file` from offset 0 (positional writes,
   * `file.wrote` told of each in order). Resolves once the source has ended and every byte is
   * written; rejects with the source's, the limit's or the write's error. Either way it settles
   * only once nothing of it can still touch the descriptor, and a failed seal has destroyed `source`.
   */
  sealIntoFile(source: Readable, dataKey: Buffer, file: BlobFile, options: SealIntoFileOptions): Promise<SealedSummary>;
  /**
   * Appends `source`'s plaintext to a blob written before (a resumable upload's staging file,
   * from `file.position`, `file.wrote` told of each write in order), from where `start` says it
   * stands: the whole segments known not to be the final one are sealed, written and hashed, and
   * the rest is returned with the new midstate. Rejects with the source's or the write's error;
   * either way it settles only once nothing of it can still touch the descriptor.
   */
  appendIntoFile(
    source: AsyncIterable<Buffer>,
    dataKey: Buffer,
    file: StagingFile,
    start: AppendStart,
    options: Pick<SealIntoFileOptions, 'sourceOwnsChunks'>,
  ): Promise<AppendedSegments>;
  /**
   * The plaintext of `range` of a blob file, authenticated: a segment that does not open fails the
   * stream with a CipherFormatError before any of its bytes is emitted. Owns `file`: closes it
   * once the stream ends or is destroyed.
   */
  openFile(file: FileHandle, dataKey: Buffer, header: StreamHeader, range: SegmentRange): Readable;
  /**
   * The whole plaintext of a small blob file (`size` bytes, at most WHOLE_READ_LIMIT) opened into
   * `out` in one step: its header and length checked, every segment authenticated (else a
   * CipherFormatError, nothing of the plaintext left in `out`). The part of `out` it fills. A
   * missing file rejects with code ENOENT.
   */
  readWholeFile(path: string, size: number, dataKey: Buffer, out: Buffer): Promise<Buffer>;
  /**
   * A whole stored stream already in memory (`size` plaintext bytes) opened into `out` as
   * `readWholeFile` opens a file's, on the calling thread; throws as it rejects.
   */
  openWhole(stored: Buffer, size: number, dataKey: Buffer, out: Buffer): Buffer;
  /**
   * Frees the memory of `buffer` now, when it alone views its whole ArrayBuffer and nothing will
   * read it again, instead of at the garbage collection that finds it dead (a small blob's bytes
   * as the database driver copied them). Afterwards it reads as empty. An engine that cannot
   * leaves it to the collector. Never fails.
   */
  release(buffer: Buffer): void;
  /**
   * A SHA-256 whose state can be saved and carried on from, by either engine (a resumable
   * upload's, sha256-midstate.ts), new or from a midstate.
   */
  sha256(midstate?: Buffer): ResumableSha256;
  /** The filesystem store's durable small writes and directory syncs. */
  readonly durableFiles: DurableFiles;
}
