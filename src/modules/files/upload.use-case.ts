import type { Readable } from 'node:stream';
import type { StoredContent } from '../../content/index.js';
import { loadFileFor } from '../../access/access.js';
import { adjustBlobRefs } from '../../blobs/blobs.repository.js';
import { onePerContext, type AppContext, type Principal } from '../../context.js';
import { AppError } from '../../errors.js';
import { assertName } from '../../lib/names.js';
import { nowIso } from '../../lib/time.js';
import { releaseBytes } from '../accounts/accounts.repository.js';
import { UploadHold } from '../accounts/upload-holds.js';
import { loadFolderWithKeyChainFor, unwrapKeyChain } from '../folders/folders.keys.js';
import { assertNameFree } from '../folders/folders.names.js';
import { adjustChain } from '../folders/folders.repository.js';
import { mutateTrees } from '../folders/folders.tree.js';
import { fileDetail } from './files.detail.js';
import * as repo from './files.repository.js';
import type { FileDetail, OnConflict } from './files.schemas.js';
import { requireLiveFolder } from './files.tree.js';
import { removeAs } from './trash.use-case.js';
import { uploadRecorder, type StoredUpload } from './upload-recorder.js';
import { UploadTargets, type UploadTarget } from './upload-targets.cache.js';

export interface UploadInput {
  name: string;
  contentType: string;
  body: Readable | Buffer;
  /** The body stream's chunks are memory of their own that nothing else reads (see StoreOptions). */
  bodyOwnsChunks?: boolean;
  /** A streamed body's length as the request announced it (a raw upload's Content-Length). */
  announcedBytes?: number;
  /** The most a streamed body can hold (a multipart part: what its request's Content-Length leaves). */
  atMostBytes?: number;
  onConflict: OnConflict;
}

/** The folders recently uploaded into, with their keys: one cache per context. */
const uploadTargets = onePerContext(() => new UploadTargets());

/**
 * Stores one uploaded stream (or small body) into a folder: the bytes are encrypted into a new blob first, then
 * one transaction records the file or its new version, reserves the quota and updates the
 * folder aggregates. If anything fails, the blob is removed again. While the bytes arrive
 * they are held against the owner's quota (upload-holds.ts): an announced length at once.
 */
export async function uploadOne(ctx: AppContext, principal: Principal, folderId: string, input: UploadInput): Promise<FileDetail> {
  const { db, config } = ctx;
  const name = assertName(input.name);
  const { folder, key: parentKey } = await uploadTarget(ctx, principal, folderId);
  requireLiveFolder(folder);
  if (input.onConflict === 'fail') await assertNameFree(db, folder.id, name);
  const hold = new UploadHold(db, folder.owner_id, config);
  try {
    await holdAhead(ctx, hold, input);
    const limits = { maxBytes: config.maxUploadBytes, inlineMaxBytes: config.inlineBlobBytes, hold: hold.cover };
    const stored = await ctx.content.store(input.body, limits, { sourceOwnsChunks: input.bodyOwnsChunks });
    const upload = {
      principal,
      folder,
      parentKey,
      name,
      contentType: input.contentType,
      onConflict: input.onConflict,
      stored,
      holdId: hold.recordId,
    };
    const recorded = await recordStored(ctx, upload);
    hold.recorded();
    return recorded;
  } catch (error) {
    await hold.release();
    throw error;
  }
}

/** Content another transport stored (a resumable upload's), to record as uploadOne records its own. */
export interface StoredInput {
  name: string;
  contentType: string;
  onConflict: OnConflict;
  stored: StoredContent;
  /** The hold on the owner's quota that the recording turns into used bytes. */
  holdId?: string;
}

/**
 * Records stored content as a file (or a new version) of a folder, with the checks of uploadOne
 * made again now: the folder may have gone, or the name been taken, since the bytes began.
 */
export async function recordUpload(ctx: AppContext, principal: Principal, folderId: string, input: StoredInput): Promise<FileDetail> {
  let target: UploadTarget;
  try {
    target = await uploadTarget(ctx, principal, folderId);
    requireLiveFolder(target.folder);
    if (input.onConflict === 'fail') await assertNameFree(ctx.db, target.folder.id, assertName(input.name));
  } catch (error) {
    await ctx.content.discard(input.stored);
    throw error;
  }
  // recordStored discards the content itself when the recording fails.
  return recordStored(ctx, { principal, folder: target.folder, parentKey: target.key, ...input, name: assertName(input.name) });
}

/** What a streamed body announces is held before it is read: one step instead of growing ones. */
async function holdAhead(
  ctx: AppContext,
  hold: UploadHold,
  input: Pick<UploadInput, 'body' | 'announcedBytes' | 'atMostBytes'>,
): Promise<void> {
  const max = ctx.config.maxUploadBytes;
  if (Buffer.isBuffer(input.body)) return;
  const announced = input.announcedBytes;
  if (announced !== undefined && announced > max) throw new AppError('PAYLOAD_TOO_LARGE', `Files are limited to ${max} bytes`);
  if (announced !== undefined) return hold.take(announced);
  if (input.atMostBytes !== undefined) await hold.expect(Math.min(input.atMostBytes, max));
}

/** Records stored content (see upload-recorder.ts); on failure its blob goes again. */
async function recordStored(ctx: AppContext, upload: StoredUpload): Promise<FileDetail> {
  try {
    // The whole detail, checksum included: the uploader sent this content, whatever their rights.
    return fileDetail(await uploadRecorder(ctx).submit(upload.folder.owner_id, upload));
  } catch (error) {
    uploadTargets(ctx).forget(upload.folder.id);
    await ctx.content.discard(upload.stored);
    throw error;
  }
}

/**
 * The folder an upload goes to and its key, unwrapped here, before the transaction, which then
 * holds its locks only for the writes. The owner's folders are kept a while (see
 * upload-targets.cache.ts); anyone else's grant is checked every time.
 */
async function uploadTarget(ctx: AppContext, principal: Principal, folderId: string): Promise<UploadTarget> {
  const targets = uploadTargets(ctx);
  const kept = targets.get(folderId, principal.userId);
  if (kept) return kept;
  const { folder, chain } = await loadFolderWithKeyChainFor(ctx.db, principal, folderId, 'edit');
  const target = { folder, key: unwrapKeyChain(ctx.keyring, chain) };
  if (folder.owner_id === principal.userId && folder.trash_batch === '') targets.keep(target);
  return target;
}

/**
 * Takes back one stored part of a multipart request that failed on a later part, so a refused
 * request leaves nothing behind: a new file goes for good, a new version is removed and the
 * previous one is current again.
 */
export async function undoUpload(ctx: AppContext, principal: Principal, uploaded: FileDetail): Promise<void> {
  // The uploader created this file in the same request, which takes only `edit` (an editor of a shared folder).
  if (uploaded.versionCount === 1) return removeAs(ctx, principal, uploaded.id, 'hard', 'edit');
  await mutateTrees(ctx, { files: [uploaded.id] }, async (trx) => {
    const file = await loadFileFor(trx, principal, uploaded.id, 'edit');
    const [current, previous] = await repo.listVersions(trx, file.id);
    if (!previous || current.id !== file.current_version_id) return;
    const now = nowIso();
    await repo.deleteVersion(trx, current.id);
    await adjustBlobRefs(trx, [current.blob_id], -1, now);
    await repo.updateFile(trx, file.id, {
      current_version_id: previous.id,
      size: previous.size,
      checksum: previous.checksum,
      content_type: previous.content_type,
      version_count: Number(file.version_count) - 1,
      versions_bytes: Number(file.versions_bytes) - Number(current.size),
      updated_at: now,
    });
    const delta = Number(previous.size) - Number(current.size);
    if (delta !== 0 && file.trash_batch === '')
      await adjustChain(trx, file.folder_id, '', 1, { folders: 0, files: 0, bytes: delta }, { folders: 0, files: 0 });
    await releaseBytes(trx, file.owner_id, Number(current.size));
  });
}
