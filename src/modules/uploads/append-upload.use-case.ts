import { createHash, timingSafeEqual } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { Appended, ResumableContent } from '../../content/index.js';
import type { AppContext, Principal } from '../../context.js';
import { unwrapKey } from '../../crypto/key-wrap.js';
import { AppError } from '../../errors.js';
import { isoPlus, nowIso } from '../../lib/time.js';
import { UploadHold, releaseHold } from '../accounts/upload-holds.js';
import { recordUpload } from '../files/upload.use-case.js';
import { loadFolderWithKeyChainFor, unwrapKeyChain } from '../folders/folders.keys.js';
import { asItStands, forgetProgress, keepProgress, latestProgress, withProgress, type LatestProgress } from './latest-progress.js';
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
      const { upload, previous } = startingPoint(ctx, await liveUpload(ctx, principal, id), patch.offset);
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
      const { content } = appended;
      const expiresAt = isoPlus(nowIso(), expiryMs(ctx));
      const whole = length !== undefined && content.received >= length && !appended.broken;
      // A length declared now is recorded at once: a client declares it once, and would not again after a crash.
      const declares = upload.length === null && length !== undefined;
      await recordProgress(ctx, { id, token, expiresAt }, previous, appended, {
        length: length ?? null,
        answerFirst: !whole && !appended.broken && !declares,
      });
      if (!whole) return { offset: content.received, expiresAt };
      const fileId = await finishUpload(ctx, principal, upload, content, dataKey);
      return { offset: content.received, expiresAt, fileId };
    },
  );
}

/**
 * Where a request carries on from: where the upload stands on this instance, or its row when the
 * client asks for that offset (a HEAD on another instance told it so).
 */
function startingPoint(ctx: AppContext, row: UploadRow, offset: number): { upload: UploadRow; previous?: LatestProgress } {
  const previous = latestProgress(ctx, row);
  if (previous && offset === previous.content.received) return { upload: withProgress(row, previous), previous };
  if (offset !== row.received) throw new AppError('UPLOAD_OFFSET_MISMATCH', `The upload stands at ${asItStands(ctx, row).received} bytes`);
  if (previous) forgetProgress(ctx, row.id);
  return { upload: row };
}

/**
 * Records a request's progress. The row only ever holds bytes that are durable. A request that
 * leaves the upload open, after another one here (`previous`), answers before its own bytes are
 * durable: the row gets the previous request's progress, and this one's waits here for the next
 * request, its sync going on meanwhile. Any other (the first here, one that breaks or makes the
 * upload whole, or on a store that is durable at once) waits for its sync and records itself.
 */
async function recordProgress(
  ctx: AppContext,
  lease: { id: string; token: string; expiresAt: string },
  previous: LatestProgress | undefined,
  { content, syncing }: Appended,
  { length, answerFirst }: { length: number | null; answerFirst: boolean },
): Promise<void> {
  const { id } = lease;
  try {
    await previous?.durable;
    if (previous && syncing && answerFirst) {
      await saveRow(ctx, lease, previous.content, previous.length);
      keepProgress(ctx, id, { rowTail: previous.content.tail, content, length, durable: syncing });
    } else {
      await syncing;
      await saveRow(ctx, lease, content, length);
      if (syncing && answerFirst) keepProgress(ctx, id, { rowTail: content.tail, content, length, durable: Promise.resolve() });
      else forgetProgress(ctx, id);
    }
  } catch (error) {
    forgetProgress(ctx, id);
    throw error;
  }
  await extendHold(ctx.db, id, lease.expiresAt);
}

async function saveRow(
  ctx: AppContext,
  { id, token, expiresAt }: { id: string; token: string; expiresAt: string },
  content: ResumableContent,
  length: number | null,
) {
  const progress = { received: content.received, tail: content.tail.toString('base64'), staging: content.staging, length };
  if (!(await saveProgress(ctx.db, id, token, { ...progress, updated_at: nowIso(), expires_at: expiresAt })))
    throw new AppError('UPLOAD_BUSY', 'The upload was taken over by another request');
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
