import type { Readable } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  PutObjectCommand,
  UploadPartCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { BlobNotFoundError, type StagingWriter } from '../blob-store.js';

/** One uploaded part of a staging's multipart upload. */
interface StagedPart {
  n: number;
  etag: string;
  size: number;
}

/** What the caller keeps between requests: the multipart upload, its parts, and the bytes not yet a part. */
interface S3StagingState {
  uploadId: string;
  parts: StagedPart[];
  pending: number;
}

/** Where a staging's objects are: the blob's own key (its multipart upload) and the key of its pending bytes. */
export interface StagingTarget {
  client: S3Client;
  bucket: string;
  objectKey: string;
  pendingKey: string;
  partSize: number;
}

/**
 * Staged writes on S3 (resumable uploads): a multipart upload under the blob's key, made of
 * parts of `partSize` bytes. S3 takes parts of at least 5 MiB (but the last), so the bytes of a
 * request that do not fill a part are kept, sealed as they are, in an object of their own until
 * the next request prepends them to its first part.
 */
export async function beginS3Staging(target: StagingTarget): Promise<string> {
  const created = await target.client.send(new CreateMultipartUploadCommand({ Bucket: target.bucket, Key: target.objectKey }));
  if (!created.UploadId) throw new Error('the object store started no multipart upload');
  // The pending object exists from the start to the end of a staging: openStaging looks for it to
  // tell a staging aborted (or never begun) from one it may write to.
  await putPending(target, []);
  return JSON.stringify({ uploadId: created.UploadId, parts: [], pending: 0 } satisfies S3StagingState);
}

export async function openS3Staging(target: StagingTarget, text: string): Promise<StagingWriter> {
  const state = parseState(text);
  const parts = [...state.parts];
  let buffered: Buffer[] = state.pending > 0 ? [await readPending(target)] : await pendingExists(target);
  let bufferedBytes = state.pending;
  return {
    write: async (chunks) => {
      buffered.push(...chunks);
      bufferedBytes += chunks.reduce((sum, chunk) => sum + chunk.length, 0);
      while (bufferedBytes >= target.partSize) {
        const all = Buffer.concat(buffered);
        parts.push(await uploadPart(target, state.uploadId, parts.length + 1, all.subarray(0, target.partSize)));
        buffered = [all.subarray(target.partSize)];
        bufferedBytes = buffered[0].length;
      }
    },
    commit: async () => {
      await putPending(target, buffered);
      return JSON.stringify({ uploadId: state.uploadId, parts, pending: bufferedBytes } satisfies S3StagingState);
    },
    close: async () => {
      buffered = [];
    },
  };
}

export async function completeS3Staging(target: StagingTarget, text: string, visibleAfter?: Promise<unknown>): Promise<number> {
  const state = parseState(text);
  const parts = [...state.parts];
  // S3 completes no upload of zero parts: an empty staging's one part is empty (a last part may be).
  if (state.pending > 0 || parts.length === 0)
    parts.push(await uploadPart(target, state.uploadId, parts.length + 1, state.pending > 0 ? await readPending(target) : Buffer.alloc(0)));
  await visibleAfter;
  await target.client.send(
    new CompleteMultipartUploadCommand({
      Bucket: target.bucket,
      Key: target.objectKey,
      UploadId: state.uploadId,
      MultipartUpload: { Parts: parts.map((part) => ({ PartNumber: part.n, ETag: part.etag })) },
    }),
  );
  await deletePending(target);
  return parts.reduce((sum, part) => sum + part.size, 0);
}

export async function abortS3Staging(target: StagingTarget, text: string): Promise<void> {
  const { uploadId } = parseState(text);
  // The pending object first: without it the staging no longer opens, whatever follows.
  await deletePending(target);
  try {
    await target.client.send(new AbortMultipartUploadCommand({ Bucket: target.bucket, Key: target.objectKey, UploadId: uploadId }));
  } catch (error) {
    const name = (error as { name?: string }).name;
    // Already aborted; or a server that cannot abort uploads (s3rver answers MethodNotAllowed),
    // whose parts are left to the bucket's lifecycle rule, as removeStaleUploads leaves them.
    if (name !== 'NoSuchUpload' && name !== 'MethodNotAllowed' && name !== 'NotImplemented') throw error;
  }
}

async function uploadPart(target: StagingTarget, uploadId: string, n: number, body: Buffer): Promise<StagedPart> {
  const answer = await target.client.send(
    new UploadPartCommand({
      Bucket: target.bucket,
      Key: target.objectKey,
      UploadId: uploadId,
      PartNumber: n,
      Body: body,
      ContentLength: body.length,
    }),
  );
  if (!answer.ETag) throw new Error('the object store gave no ETag for a part');
  return { n, etag: answer.ETag, size: body.length };
}

async function readPending(target: StagingTarget): Promise<Buffer> {
  const answer = await target.client
    .send(new GetObjectCommand({ Bucket: target.bucket, Key: target.pendingKey }))
    .catch((error: unknown) => notFoundAsGone(error, target));
  const chunks: Buffer[] = [];
  for await (const chunk of answer.Body as Readable) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Nothing is pending, but the staging must still exist: resolves with no bytes, or rejects with BlobNotFoundError. */
async function pendingExists(target: StagingTarget): Promise<Buffer[]> {
  await target.client
    .send(new HeadObjectCommand({ Bucket: target.bucket, Key: target.pendingKey }))
    .catch((error: unknown) => notFoundAsGone(error, target));
  return [];
}

async function putPending(target: StagingTarget, chunks: Buffer[]): Promise<void> {
  const body = Buffer.concat(chunks);
  await target.client.send(new PutObjectCommand({ Bucket: target.bucket, Key: target.pendingKey, Body: body, ContentLength: body.length }));
}

/** A missing pending object is a staging aborted or never begun (a missing bucket is not). */
function notFoundAsGone(error: unknown, target: StagingTarget): never {
  const { name, $metadata } = error as { name?: string; $metadata?: { httpStatusCode?: number } };
  if (name !== 'NoSuchBucket' && (name === 'NoSuchKey' || name === 'NotFound' || $metadata?.httpStatusCode === 404))
    throw new BlobNotFoundError(target.objectKey);
  throw error;
}

async function deletePending(target: StagingTarget): Promise<void> {
  await target.client.send(new DeleteObjectCommand({ Bucket: target.bucket, Key: target.pendingKey }));
}

function parseState(text: string): S3StagingState {
  const state = JSON.parse(text) as Partial<S3StagingState>;
  if (typeof state.uploadId !== 'string' || !Array.isArray(state.parts) || typeof state.pending !== 'number')
    throw new Error('invalid staging state');
  return state as S3StagingState;
}
