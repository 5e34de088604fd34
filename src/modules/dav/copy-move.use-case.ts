import type { AppContext, Principal } from '../../context.js';
import type { FolderRow } from '../../db/schema.js';
import { AppError } from '../../errors.js';
import { fileService } from '../files/files.service.js';
import { folderService } from '../folders/folders.service.js';
import { assertUnlocked, forgetLocks, type LockContext } from './dav.locks.js';
import { isWithin, type DavPath } from './dav.paths.js';
import * as repo from './dav.repository.js';
import { assertMay, resolve, type DavResource } from './dav.resources.js';
import { removeResource } from './write.use-case.js';

export interface TransferRequest {
  source: DavPath;
  destination: DavPath;
  /** Overwrite: T (default) replaces what is at the destination, F answers 412 instead. */
  overwrite: boolean;
  /** COPY of a collection: `0` copies the collection alone, `infinity` (default) its members too. */
  depth: '0' | 'infinity';
  locks: LockContext;
}

/**
 * COPY and MOVE (RFC 4918 §9.8–9.9) to a Destination anywhere in the caller's tree: an item that
 * was there goes to the trash first (Overwrite: T). Answers whether the destination is new.
 */
export async function transfer(ctx: AppContext, principal: Principal, kind: 'copy' | 'move', request: TransferRequest) {
  const { source, destination } = request;
  if (isWithin(destination, source) || isWithin(source, destination)) {
    if (destination.length === source.length) throw new AppError('DAV_FORBIDDEN', 'The source and the destination are the same');
    throw new AppError('DAV_INTO_ITSELF');
  }
  const from = await resolve(ctx, principal, source);
  if (from.kind === 'missing') throw new AppError('DAV_NOT_FOUND');
  if (from.kind !== 'file' && (from.kind !== 'folder' || from.folder.is_root))
    throw new AppError('DAV_FORBIDDEN', 'Buckets and the shared collection cannot be copied or moved over WebDAV');
  const to = await resolve(ctx, principal, destination);
  const targetFolder = await destinationFolder(ctx, to);
  await assertMay(ctx, principal, from, kind === 'move' ? 'edit' : 'download');
  const lockTargets = kind === 'move' ? [from, to] : [to];
  await assertUnlocked(ctx, principal, lockTargets, request.locks, { subtree: kind === 'move' });
  const existed = to.kind !== 'missing';
  if (existed) {
    if (!request.overwrite) throw new AppError('DAV_PRECONDITION_FAILED', 'The destination exists and Overwrite is F');
    await removeResource(ctx, principal, to, request.locks);
  }
  await (kind === 'move' ? moveTo : copyTo)(ctx, principal, from, targetFolder, destination[destination.length - 1], request.depth);
  if (kind === 'move') await forgetLocks(ctx, from);
  return { created: !existed };
}

/** The folder the item lands in: the destination's parent, which must exist (409). */
async function destinationFolder(ctx: AppContext, to: DavResource): Promise<FolderRow> {
  if (to.kind === 'missing') {
    if (!to.parent) throw new AppError('DAV_PARENT_MISSING');
    return to.parent;
  }
  if (to.kind === 'file') return (await repo.findFolderById(ctx.db, to.file.folder_id))!;
  if (to.kind === 'folder' && to.folder.parent_id && !to.folder.is_root) return (await repo.findFolderById(ctx.db, to.folder.parent_id))!;
  throw new AppError('DAV_FORBIDDEN', 'Buckets and the shared collection cannot be overwritten');
}

async function moveTo(ctx: AppContext, principal: Principal, from: DavResource, target: FolderRow, name: string): Promise<void> {
  if (from.kind === 'file') await fileService(ctx).move(principal, from.file.id, { targetFolderId: target.id, name });
  else if (from.kind === 'folder') await folderService(ctx).move(principal, from.folder.id, { targetParentId: target.id }, name);
}

async function copyTo(
  ctx: AppContext,
  principal: Principal,
  from: DavResource,
  target: FolderRow,
  name: string,
  depth: '0' | 'infinity',
): Promise<void> {
  if (from.kind === 'file') {
    const copy = await fileService(ctx).copy(principal, from.file.id, { targetFolderId: target.id, name });
    await copyProperties(ctx, from.file.id, copy.id);
  } else if (from.kind === 'folder') {
    const copy =
      depth === '0'
        ? await folderService(ctx).create(principal, target.bucket_id, { name, parentId: target.id })
        : await folderService(ctx).copy(principal, from.folder.id, { targetParentId: target.id, name });
    await copyProperties(ctx, from.folder.id, copy.id);
  }
}

/** A copy carries the dead properties of the item copied (RFC 4918 §9.8.2). */
async function copyProperties(ctx: AppContext, fromId: string, toId: string): Promise<void> {
  const rows = await ctx.db.selectFrom('dav_properties').select(['name', 'value']).where('item_id', '=', fromId).execute();
  if (rows.length > 0)
    await ctx.db
      .insertInto('dav_properties')
      .values(rows.map((row) => ({ ...row, item_id: toId })))
      .execute();
}
