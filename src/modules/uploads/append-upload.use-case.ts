import { createHash, timingSafeEqual } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { ResumableContent } from '../../content/index.js';
import type { AppContext, Principal } from '../../context.js';
import { unwrapKey } from '../../crypto/key-wrap.js';
import { AppError } from '../../errors.js';
import { isoPlus, nowIso } from '../../lib/time.js';
import { UploadHold, releaseHold } from '../accounts/upload-holds.js';
import { recordUpload } from '../files/upload.use-case.js';
import { loadFolderWithKeyChainFor, unwrapKeyChain } from '../folders/folders.keys.js';
import { withLease } from './upload-lease.js';
import { deleteUpload, findUpload, markDone, saveProgress, type UploadRow } from './uploads.repository.js';
import { extendHold, heldBytes } from './uploads.holds.js';

export interface UploadPatch {
  /** Upload-Offset: where the client believes the upload stands. */
  offset: number;
  /** Upload-Length, given now for an upload whose length was deferred. */
  length?: number;
  body: Readable;
  /** Each chunk of `body` is memory of its own (see RawUploadBody.bodyOwnsChunks). */
  bodyOwnsChunks: boolean;
  /** Upload-Checksum of the body. */
  checksum?: { algorithm: string; digest: Buffer };
}

/** Where an upload stands after a request: its offset, and the file it became once whole. */
export interface UploadProgress {
  offset: number;
  expiresAt: string;
  fileId?: string;
}

/**
 * PATCH: appends a request's bytes at the offset the upload stands at, under the upload's lease
 * (423 while another request, on any instance, writes it). What arrived before the client left
 * is kept; the request that brings the last byte turns the upload into a file.
 */
export async function appendUpload(ctx: AppContext, principal: Principal, id: string, patch: UploadPatch): Promise<UploadProgress> {
  // Before the lease too: the lease takes any id, and another user's upload must be 404 untouched.
  await liveUpload(ctx, principal, id);
  return withLease(
    ctx,
    id,
    () => patch.body.destroy(),
    async (token) => {
      const upload = await liveUpload(ctx, principal, id);
      if (patch.offset !== upload.received) throw new AppError('UPLOAD_OFFSET_MISMATCH', `The upload stands at ${upload.received} bytes`);
      const length = declaredLength(ctx, upload, patch.length);
      const { folder, chain } = await loadFolderWithKeyChainFor(ctx.db, principal, upload.folder_id, 'edit');
      const dataKey = unwrapKey(unwrapKeyChain(ctx.keyring, chain), upload.data_key_wrapped, upload.id);
      const hold = new UploadHold(ctx.db, folder.owner_id, ctx.config, { id, held: await heldBytes(ctx.db, id), leaseMs: expiryMs(ctx) });
      if (length !== undefined) await hold.take(length);
      const appended = await ctx.content.resumable.append(
        contentOf(upload),
        dataKey,
        patch.body,
        {
          length,
          maxBytes: length ?? ctx.config.maxUploadBytes,
          hold: length === undefined ? hold.cover : undefined,
          verify: patch.checksum && checksumVerifier(patch.checksum),
        },
        { sourceOwnsChunks: patch.bodyOwnsChunks },
      );
      const now = nowIso();
      const { content } = appended;
      const progress = {
        received: content.received,
        tail: content.tail.toString('base64'),
        staging: content.staging,
        length: length ?? null,
      };
      const expiresAt = isoPlus(now, expiryMs(ctx));
      if (!(await saveProgress(ctx.db, id, token, { ...progress, updated_at: now, expires_at: expiresAt })))
        throw new AppError('UPLOAD_BUSY', 'The upload was taken over by another request');
      await extendHold(ctx.db, id, expiresAt);
      if (length === undefined || content.received < length || appended.broken) return { offset: content.received, expiresAt };
      const fileId = await finishUpload(ctx, principal, upload, content, dataKey);
      return { offset: content.received, expiresAt, fileId };
    },
  );
}

/** The caller's upload, still open and not expired: 404 for anyone else's, 410 when finished or expired. */
export async function liveUpload(ctx: AppContext, principal: Principal, id: string): Promise<UploadRow> {
  const upload = await findUpload(ctx.db, principal.userId, id);
  if (!upload) throw new AppError('UPLOAD_NOT_FOUND');
  if (upload.state === 'done') throw new AppError('UPLOAD_FINISHED');
  if (upload.expires_at < nowIso()) throw new AppError('UPLOAD_EXPIRED');
  return upload;
}

/** The whole length: known since creation, or declared now (once, at least what arrived, within the limit). */
function declaredLength(ctx: AppContext, upload: UploadRow, declared: number | undefined): number | undefined {
  if (declared === undefined || declared === upload.length) return upload.length ?? undefined;
  if (upload.length !== null) throw new AppError('UPLOAD_BAD_HEADER', 'Upload-Length cannot change once set');
  if (declared < upload.received) throw new AppError('UPLOAD_BAD_HEADER', 'Upload-Length is less than what arrived');
  if (declared > ctx.config.maxUploadBytes)
    throw new AppError('PAYLOAD_TOO_LARGE', `Files are limited to ${ctx.config.maxUploadBytes} bytes`);
  return declared;
}

/** The last byte arrived: the blob is completed and recorded as a file, as a regular upload is. */
async function finishUpload(
  ctx: AppContext,
  principal: Principal,
  upload: UploadRow,
  content: ResumableContent,
  dataKey: Buffer,
): Promise<string> {
  const stored = await ctx.content.resumable.finish(content, dataKey);
  try {
    const file = await recordUpload(ctx, principal, upload.folder_id, {
      name: upload.name,
      contentType: upload.content_type,
      onConflict: upload.on_conflict,
      stored,
      holdId: upload.id,
    });
    await markDone(ctx.db, upload.id, file.id, nowIso());
    return file.id;
  } catch (error) {
    // The content is gone with the failed recording (its folder gone, its name taken): so is the upload.
    await releaseHold(ctx.db, upload.id);
    await deleteUpload(ctx.db, upload.id);
    throw error;
  }
}

export function contentOf(upload: UploadRow): ResumableContent {
  return {
    blobId: upload.blob_id,
    header: Buffer.from(upload.header, 'base64'),
    received: upload.received,
    tail: Buffer.from(upload.tail, 'base64'),
    staging: upload.staging,
  };
}

/** How long an upload lasts after its last request (COFFRE_UPLOAD_EXPIRY_HOURS); its hold lasts as long. */
export function expiryMs(ctx: Pick<AppContext, 'config'>): number {
  return ctx.config.uploadExpiryHours * 3600 * 1000;
}

/** The tus checksum extension: the body's digest, compared in constant time. */
function checksumVerifier(checksum: { algorithm: string; digest: Buffer }) {
  return () => {
    const hash = createHash(checksum.algorithm);
    return {
      update: (chunk: Buffer) => void hash.update(chunk),
      matches: () => {
        const digest = hash.digest();
        return digest.length === checksum.digest.length && timingSafeEqual(digest, checksum.digest);
      },
    };
  };
}
