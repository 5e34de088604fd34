import type { AppContext, Principal } from '../../context.js';
import { AppError } from '../../errors.js';
import { nowIso } from '../../lib/time.js';
import { releaseHold } from '../accounts/upload-holds.js';
import { contentOf } from './append-upload.use-case.js';
import { asItStands, forgetProgress } from './latest-progress.js';
import { withLease } from './upload-lease.js';
import { deleteUpload, expiredUploads, findUpload, listOpenUploads, type UploadRow } from './uploads.repository.js';

/** An upload as HEAD and the listing describe it. */
export interface UploadSummary {
  id: string;
  folderId: string;
  name: string;
  /** Null while the length is deferred. */
  length: number | null;
  offset: number;
  metadata: string;
  createdAt: string;
  expiresAt: string;
  /** The file it became, once whole. */
  fileId?: string;
}

/** HEAD: where the caller's upload stands (a finished one names its file until it expires). */
export async function describeUpload(ctx: AppContext, principal: Principal, id: string): Promise<UploadSummary> {
  const upload = await findUpload(ctx.db, principal.userId, id);
  if (!upload) throw new AppError('UPLOAD_NOT_FOUND');
  if (upload.expires_at < nowIso()) throw new AppError('UPLOAD_EXPIRED');
  return summary(asItStands(ctx, upload));
}

/** The caller's unfinished uploads not past their expiry, newest first. */
export async function listUploads(ctx: AppContext, principal: Principal): Promise<UploadSummary[]> {
  return (await listOpenUploads(ctx.db, principal.userId, nowIso())).map((upload) => summary(asItStands(ctx, upload)));
}

/**
 * DELETE (tus termination): an unfinished upload's bytes and quota hold go; a finished one's
 * record only (its file stays). 423 while a request writes it.
 */
export async function cancelUpload(ctx: AppContext, principal: Principal, id: string): Promise<void> {
  const upload = await findUpload(ctx.db, principal.userId, id);
  if (!upload) throw new AppError('UPLOAD_NOT_FOUND');
  await withLease(
    ctx,
    id,
    () => {},
    () => removeUpload(ctx, upload),
  );
}

/** The upkeep's step: removes uploads past their expiry (their bytes, holds and rows). */
export async function removeExpiredUploads(ctx: AppContext, now: string): Promise<number> {
  let removed = 0;
  for (;;) {
    const expired = await expiredUploads(ctx.db, now, 100);
    for (const upload of expired) {
      await removeUpload(ctx, upload);
      removed++;
    }
    if (expired.length < 100) return removed;
  }
}

/** Bytes first, then the hold, then the row: a failure midway leaves the row for the next try. */
async function removeUpload(ctx: AppContext, upload: UploadRow): Promise<void> {
  forgetProgress(ctx, upload.id);
  if (upload.state === 'open') {
    await ctx.content.resumable.abort(contentOf(upload));
    await releaseHold(ctx.db, upload.id);
  }
  await deleteUpload(ctx.db, upload.id);
}

function summary(upload: UploadRow): UploadSummary {
  return {
    id: upload.id,
    folderId: upload.folder_id,
    name: upload.name,
    length: upload.length,
    offset: upload.state === 'done' ? (upload.length ?? upload.received) : upload.received,
    metadata: upload.metadata,
    createdAt: upload.created_at,
    expiresAt: upload.expires_at,
    ...(upload.file_id ? { fileId: upload.file_id } : {}),
  };
}
