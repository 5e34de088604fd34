import { Readable } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  S3Client,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import {
  BlobNotFoundError,
  NotLocalFilesError,
  assertBlobKey,
  type BlobStore,
  type ByteRange,
  type PutOptions,
  type PutResult,
  type StagingFile,
  type StagingWriter,
} from '../blob-store.js';
import { abortS3Staging, beginS3Staging, completeS3Staging, openS3Staging, type StagingTarget } from './s3-staging.js';
import type { FileHandle } from 'node:fs/promises';
import type { S3Location } from '../../config.js';

/** Where the S3 store keeps its objects: `s3://bucket/prefix?endpoint=…&region=…&forcePathStyle=true`. */

export interface S3BlobStoreOptions {
  /** Bytes of one multipart part (S3's minimum is 5 MiB). */
  partSize?: number;
  /** Parts uploaded at once; memory per upload stays near `(queueSize + 1) × partSize`. */
  queueSize?: number;
  /** Extra client settings (tests pass credentials). Credentials otherwise come from the standard AWS variables. */
  client?: Partial<S3ClientConfig>;
}

const MIN_PART_SIZE = 5 * 1024 * 1024;

/**
 * Blobs as objects of one S3-compatible bucket. A put streams the body through a multipart upload
 * (or one PutObject when it is smaller than a part) with bounded memory; S3 makes an object
 * visible only once its upload completes, so a blob is whole or absent without a temp key. A
 * failed upload is aborted, which discards its parts.
 */
export class S3BlobStore implements BlobStore {
  readonly kind = 's3';
  readonly localFiles = false;
  readonly client: S3Client;
  private readonly partSize: number;
  private readonly queueSize: number;

  constructor(
    readonly location: S3Location,
    options: S3BlobStoreOptions = {},
  ) {
    this.partSize = Math.max(MIN_PART_SIZE, options.partSize ?? MIN_PART_SIZE);
    this.queueSize = Math.max(1, options.queueSize ?? 2);
    this.client = new S3Client({
      region: location.region,
      forcePathStyle: location.forcePathStyle,
      ...(location.endpoint ? { endpoint: location.endpoint } : {}),
      // The SDK retries idempotent calls itself; a streamed body cannot be replayed anyway.
      maxAttempts: 3,
      // Blobs are AES-GCM sealed segment by segment, so corruption is caught on every read; the
      // SDK's own CRC32 of every body (computed in JavaScript) would only cost CPU on both paths.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      ...options.client,
    });
  }

  private objectKey(key: string): string {
    return `${this.location.prefix}${assertBlobKey(key)}`;
  }

  async put(key: string, body: Readable, options: PutOptions = {}): Promise<{ size: number }> {
    const objectKey = this.objectKey(key);
    // An object is visible as soon as its upload completes, so the upload waits.
    try {
      await options.visibleAfter;
    } catch (error) {
      body.destroy();
      throw error;
    }
    let size = 0;
    let sourceError: unknown;
    async function* counted() {
      try {
        for await (const chunk of body) {
          size += (chunk as Buffer).length;
          yield chunk as Buffer;
        }
      } catch (error) {
        sourceError = error;
        throw error;
      }
    }
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.location.bucket, Key: objectKey, Body: Readable.from(counted(), { objectMode: false }) },
      partSize: this.partSize,
      queueSize: this.queueSize,
      leavePartsOnError: false,
    });
    try {
      await upload.done();
    } catch (error) {
      // lib-storage aborts a failed multipart upload itself; make sure, and never leave a
      // half-visible object (a single PutObject never completes with a failed body).
      await upload.abort().catch(() => {});
      if (!body.destroyed) body.destroy();
      // The source's failure explains the upload's (a failed abort must not hide it).
      throw sourceError ?? error;
    }
    return { size };
  }

  async putFile(): Promise<PutResult> {
    throw new NotLocalFilesError(this.kind);
  }

  async openFile(): Promise<FileHandle> {
    throw new NotLocalFilesError(this.kind);
  }

  filePath(): string {
    throw new NotLocalFilesError(this.kind);
  }

  async get(key: string, range?: ByteRange): Promise<Readable> {
    try {
      const result = await this.client.send(
        new GetObjectCommand({
          Bucket: this.location.bucket,
          Key: this.objectKey(key),
          ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}),
        }),
      );
      const stream = (result.Body as Readable | undefined) ?? Readable.from([]);
      if (!range || result.ContentRange?.startsWith(`bytes ${range.start}-${range.end}/`)) return stream;
      return sliceAnswer(stream, result.ContentRange, range);
    } catch (error) {
      if (isNotFound(error)) throw new BlobNotFoundError(key);
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    try {
      await this.client.send(new DeleteObjectCommand({ Bucket: this.location.bucket, Key: this.objectKey(key) }));
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }

  async exists(key: string): Promise<boolean> {
    try {
      await this.client.send(new HeadObjectCommand({ Bucket: this.location.bucket, Key: this.objectKey(key) }));
      return true;
    } catch (error) {
      if (isNotFound(error)) return false;
      throw error;
    }
  }

  async ping(): Promise<void> {
    await this.client.send(new HeadBucketCommand({ Bucket: this.location.bucket }));
  }

  /**
   * Aborts multipart uploads under the prefix started more than `olderThanMs` ago (a crash between
   * initiation and completion leaves their parts billed but invisible). Servers that cannot list
   * uploads (s3rver) answer NotImplemented: nothing to do there; a bucket lifecycle rule
   * (AbortIncompleteMultipartUpload) is the other safety net, see the README.
   */
  async removeStaleUploads(olderThanMs: number, keep: ReadonlySet<string> = new Set()): Promise<number> {
    const cutoff = Date.now() - olderThanMs;
    let removed = 0;
    let keyMarker: string | undefined;
    let uploadIdMarker: string | undefined;
    for (;;) {
      let page;
      try {
        page = await this.client.send(
          new ListMultipartUploadsCommand({
            Bucket: this.location.bucket,
            Prefix: this.location.prefix || undefined,
            KeyMarker: keyMarker,
            UploadIdMarker: uploadIdMarker,
          }),
        );
      } catch (error) {
        if (errorName(error) === 'NotImplemented') return removed;
        throw error;
      }
      for (const upload of page.Uploads ?? []) {
        if (!upload.Key || !upload.UploadId || !upload.Initiated || upload.Initiated.getTime() >= cutoff) continue;
        if (keep.has(upload.Key.slice(this.location.prefix.length))) continue;
        try {
          await this.client.send(
            new AbortMultipartUploadCommand({ Bucket: this.location.bucket, Key: upload.Key, UploadId: upload.UploadId }),
          );
          removed++;
        } catch (error) {
          // Another instance aborted it first.
          if (errorName(error) !== 'NoSuchUpload') throw error;
        }
      }
      if (!page.IsTruncated) return removed;
      keyMarker = page.NextKeyMarker;
      uploadIdMarker = page.NextUploadIdMarker;
    }
  }

  beginStaging(key: string): Promise<string> {
    return beginS3Staging(this.stagingTarget(key));
  }

  openStaging(key: string, state: string): Promise<StagingWriter> {
    return openS3Staging(this.stagingTarget(key), state);
  }

  async openStagingFile(): Promise<StagingFile> {
    throw new NotLocalFilesError(this.kind);
  }

  async completeStaging(key: string, state: string, options: PutOptions = {}): Promise<PutResult> {
    return { size: await completeS3Staging(this.stagingTarget(key), state, options.visibleAfter) };
  }

  abortStaging(key: string, state: string): Promise<void> {
    return abortS3Staging(this.stagingTarget(key), state);
  }

  /** A staging's multipart upload is under the blob's own key; its pending bytes under `staging/` (blob keys hold no `/`). */
  private stagingTarget(key: string): StagingTarget {
    const objectKey = this.objectKey(key);
    const pendingKey = `${this.location.prefix}staging/${key}`;
    return { client: this.client, bucket: this.location.bucket, objectKey, pendingKey, partSize: this.partSize };
  }

  async close(): Promise<void> {
    this.client.destroy();
  }
}

/**
 * A ranged answer that is not exactly the range asked for: some servers send the whole object
 * (200, no Content-Range) or a wider range (s3rver answers `bytes=0-0` with everything). Cuts the
 * requested bytes out of it; an answer that starts after the range is an error.
 */
function sliceAnswer(stream: Readable, contentRange: string | undefined, range: ByteRange): Readable {
  const match = contentRange ? /^bytes (\d+)-(\d+)\//.exec(contentRange) : null;
  const offset = match ? Number(match[1]) : 0;
  if (offset > range.start) {
    stream.destroy();
    throw new Error(`the object store answered range ${contentRange} for bytes=${range.start}-${range.end}`);
  }
  let skip = range.start - offset;
  let remaining = range.end - range.start + 1;
  async function* cut() {
    try {
      for await (const chunk of stream) {
        let bytes = chunk as Buffer;
        if (skip > 0) {
          const n = Math.min(skip, bytes.length);
          skip -= n;
          bytes = bytes.subarray(n);
        }
        if (bytes.length === 0) continue;
        if (bytes.length >= remaining) {
          yield bytes.subarray(0, remaining);
          remaining = 0;
          return;
        }
        remaining -= bytes.length;
        yield bytes;
      }
    } finally {
      stream.destroy();
    }
  }
  return Readable.from(cut(), { objectMode: false });
}

function errorName(error: unknown): string | undefined {
  return (error as { name?: string; Code?: string } | null)?.name;
}

function isNotFound(error: unknown): boolean {
  const name = errorName(error);
  const status = (error as { $metadata?: { httpStatusCode?: number } } | null)?.$metadata?.httpStatusCode;
  // A missing bucket is a configuration error, not a missing blob.
  return name !== 'NoSuchBucket' && (name === 'NoSuchKey' || name === 'NotFound' || status === 404);
}
