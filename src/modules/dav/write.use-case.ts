import mime from 'mime';
import type { AppContext, Principal } from '../../context.js';
import { AppError } from '../../errors.js';
import type { RawUploadBody } from '../../http/raw-body.js';
import { fileService } from '../files/files.service.js';
import { folderService } from '../folders/folders.service.js';
import { assertUnlocked, forgetLocks, type LockContext } from './dav.locks.js';
import type { DavPath } from './dav.paths.js';
import * as repo from './dav.repository.js';
import { assertMay, resolve, type DavResource } from './dav.resources.js';

/** The preconditions of a PUT (RFC 9110 §13.1.1–2). */
export interface PutConditions {
  ifMatch?: string;
  ifNoneMatch?: string;
}

/**
 * PUT: the body becomes the file at the path, streamed through the storage core; an existing file
 * gets it as a new version. Answers whether the file is new, and its entity tag.
 */
export async function put(
  ctx: AppContext,
  principal: Principal,
  path: DavPath,
  input: { raw: RawUploadBody; contentType: string; conditions: PutConditions; locks: LockContext },
): Promise<{ created: boolean; etag: string; size: number }> {
  const target = await resolve(ctx, principal, path);
  if (target.kind === 'root' || target.kind === 'shared' || target.kind === 'folder') throw new AppError('DAV_NOT_ALLOWED');
  checkPreconditions(target, input.conditions);
  if (target.kind === 'missing' && !target.parent) throw new AppError('DAV_PARENT_MISSING');
  await assertMay(ctx, principal, target, 'edit');
  await assertUnlocked(ctx, principal, [target], input.locks);
  const folderId = target.kind === 'file' ? target.file.folder_id : target.parent!.id;
  const name = target.kind === 'file' ? target.file.name : target.name;
  const detail = await fileService(ctx).uploadOne(principal, folderId, {
    name,
    contentType: contentTypeFor(name, input.contentType),
    ...input.raw,
    onConflict: 'version',
  });
  const stored = await repo.findFileById(ctx.db, detail.id);
  return { created: target.kind === 'missing', etag: `"${stored?.current_version_id ?? ''}"`, size: detail.size };
}

/** If-Match and If-None-Match against the file at the path (`*`: any current file). */
function checkPreconditions(target: DavResource, conditions: PutConditions): void {
  const etag = target.kind === 'file' ? `"${target.file.current_version_id}"` : undefined;
  const listed = (header: string) => header.split(',').map((tag) => tag.trim());
  if (conditions.ifMatch !== undefined) {
    const tags = listed(conditions.ifMatch);
    if (!etag || !(tags.includes('*') || tags.includes(etag))) throw new AppError('DAV_PRECONDITION_FAILED');
  }
  if (conditions.ifNoneMatch !== undefined && etag) {
    const tags = listed(conditions.ifNoneMatch);
    if (tags.includes('*') || tags.includes(etag)) throw new AppError('DAV_PRECONDITION_FAILED');
  }
}

/** The type a client gave, or, when it gave none worth keeping, the one the name's extension suggests. */
function contentTypeFor(name: string, given: string): string {
  if (given !== 'application/octet-stream') return given;
  return mime.getType(name) ?? given;
}

/** MKCOL: a new folder at the path, whose parent must exist (409) and whose name must be free (405). */
export async function mkcol(ctx: AppContext, principal: Principal, path: DavPath, locks: LockContext): Promise<void> {
  const target = await resolve(ctx, principal, path);
  if (target.kind !== 'missing') throw new AppError('DAV_NOT_ALLOWED', 'Something already exists at this path');
  // New buckets (top-level collections) are made in the web app, where their datahub is chosen.
  if (path.length === 1) throw new AppError('DAV_FORBIDDEN', 'Create buckets in the web app; below a bucket, MKCOL makes folders');
  if (!target.parent) throw new AppError('DAV_PARENT_MISSING');
  await assertMay(ctx, principal, target, 'edit');
  await assertUnlocked(ctx, principal, [target], locks);
  await folderService(ctx).create(principal, target.parent.bucket_id, { name: target.name, parentId: target.parent.id });
}

/** DELETE: the file or folder goes to its owner's trash, where the web app can restore it. */
export async function remove(ctx: AppContext, principal: Principal, path: DavPath, locks: LockContext): Promise<void> {
  const target = await resolve(ctx, principal, path);
  await removeResource(ctx, principal, target, locks);
}

/** Sends a resolved file or folder to the trash (DELETE, and the overwritten destination of COPY and MOVE). */
export async function removeResource(ctx: AppContext, principal: Principal, target: DavResource, locks: LockContext): Promise<void> {
  if (target.kind === 'missing') throw new AppError('DAV_NOT_FOUND');
  if (target.kind === 'root' || target.kind === 'shared' || (target.kind === 'folder' && target.folder.is_root))
    throw new AppError('DAV_FORBIDDEN', 'Buckets and the shared collection cannot be deleted over WebDAV');
  await assertMay(ctx, principal, target, 'edit');
  await assertUnlocked(ctx, principal, [target], locks, { subtree: true });
  if (target.kind === 'folder') await folderService(ctx).remove(principal, target.folder.id, 'soft');
  else await fileService(ctx).remove(principal, target.file.id, 'soft');
  await forgetLocks(ctx, target);
}
