import type { Principal } from '../context.js';
import type { DbOrTrx } from '../db/database.js';
import type { BucketRow, DatahubRow, FileRow, FolderRow } from '../db/schema.js';
import { AppError, type ErrorCode } from '../errors.js';
import { findBucket } from '../modules/buckets/buckets.repository.js';
import { findDatahub } from '../modules/datahubs/datahubs.repository.js';
import { findFile } from '../modules/files/files.repository.js';
import { findFolder, findFolderWithKeyChain, type KeyChain } from '../modules/folders/folders.repository.js';
import { effectiveGrant, type GrantFlags } from '../modules/permissions/permissions.repository.js';

/**
 * The one place that answers "may this principal do X to this item". Routes and services ask it
 * and never compare owner ids themselves. Owners may do anything; other users what their
 * per-user permissions allow, a permission on a folder covering its whole subtree.
 *
 * - `view`: see details and listings;
 * - `download`: read content;
 * - `edit`: rename, upload, create subfolders, move within the shared tree, soft delete;
 * - `manage`: hard delete, share, change permissions: the owner only.
 *
 * Trashed items are their owner's alone: to anyone else they answer as unknown ids.
 */
export type Action = 'view' | 'download' | 'edit' | 'manage';

/**
 * Whether the grants reaching an item allow `action`. Seeing comes with any flag (one cannot
 * download or edit what one may not see); `manage` never comes from a grant.
 */
function grantAllows(flags: GrantFlags, action: Action): boolean {
  switch (action) {
    case 'view':
      return flags.view || flags.download || flags.edit;
    case 'download':
      return flags.download;
    case 'edit':
      return flags.edit;
    case 'manage':
      return false;
  }
}

/**
 * Whether a trashed item is out of the principal's sight: it is, for all but its owner, as links,
 * public addresses and "Shared with me" already treat it (what a folder holds is trashed with it).
 */
export function hiddenFrom(principal: Principal, item: Pick<FolderRow, 'owner_id' | 'trash_batch'>): boolean {
  return item.trash_batch !== '' && item.owner_id !== principal.userId;
}

/**
 * Whether the principal may perform `action` on the folder: its owner may do anything; another
 * user what the union of their grants on the folder and its ancestors allows (API.md §5), while
 * the folder is not in the trash.
 */
export async function mayActOnFolder(
  db: DbOrTrx,
  principal: Principal,
  folder: Pick<FolderRow, 'id' | 'owner_id' | 'trash_batch'>,
  action: Action,
): Promise<boolean> {
  if (folder.owner_id === principal.userId) return true;
  if (action === 'manage' || hiddenFrom(principal, folder)) return false;
  return grantAllows(await effectiveGrant(db, principal.userId, { folderId: folder.id }), action);
}

/**
 * Loads a folder the principal may act on. Unknown ids and folders hidden in the trash are 404;
 * a folder the caller may not touch answers `denied` (404 by default, so ids of others' folders
 * are not confirmed).
 */
export async function loadFolderFor(
  db: DbOrTrx,
  principal: Principal,
  folderId: string,
  action: Action,
  denied: ErrorCode = 'FOLDER_NOT_FOUND',
  /** How the row is read: the folder repository's lookup, or a caller's batched one (same result). */
  find: (db: DbOrTrx, folderId: string) => Promise<FolderRow | undefined> = findFolder,
): Promise<FolderRow> {
  const folder = await find(db, folderId);
  if (!folder || hiddenFrom(principal, folder)) throw new AppError('FOLDER_NOT_FOUND');
  if (!(await mayActOnFolder(db, principal, folder, action))) throw new AppError(denied);
  return folder;
}

/** As loadFolderFor, with the folder's key chain read in the same statement (see findFolderWithKeyChain). */
export async function loadFolderWithKeyChainFor(db: DbOrTrx, principal: Principal, folderId: string, action: Action): Promise<{ folder: FolderRow; chain: KeyChain }> {
  const found = await findFolderWithKeyChain(db, folderId);
  if (!found || !(await mayActOnFolder(db, principal, found.folder, action))) throw new AppError('FOLDER_NOT_FOUND');
  return found;
}

/** Whether the principal may perform `action` on the file: as for folders, with the file's own grants added. */
export async function mayActOnFile(
  db: DbOrTrx,
  principal: Principal,
  file: Pick<FileRow, 'id' | 'owner_id' | 'folder_id' | 'trash_batch'>,
  action: Action,
): Promise<boolean> {
  if (file.owner_id === principal.userId) return true;
  if (action === 'manage' || hiddenFrom(principal, file)) return false;
  return grantAllows(await effectiveGrant(db, principal.userId, { folderId: file.folder_id, fileId: file.id }), action);
}

/** Loads a file the principal may act on; unknown, trashed (for others than its owner) and forbidden files are all 404. */
export async function loadFileFor(db: DbOrTrx, principal: Principal, fileId: string, action: Action): Promise<FileRow> {
  const file = await findFile(db, fileId);
  if (!file || !(await mayActOnFile(db, principal, file, action))) throw new AppError('FILE_NOT_FOUND');
  return file;
}

/**
 * A file or folder moves only inside its owner's trees: an editor of two owners' folders cannot
 * carry one's items into the other's, whose quota and keys they do not belong to.
 */
export function assertSameOwner(item: { owner_id: string }, target: Pick<FolderRow, 'owner_id'>): void {
  if (item.owner_id !== target.owner_id) throw new AppError('INVALID_MOVE', 'Items move only within the folders of their owner');
}

/** A bucket of the principal's; others' buckets are indistinguishable from unknown ones. */
export async function loadBucketFor(db: DbOrTrx, principal: Principal, bucketId: string): Promise<BucketRow> {
  const bucket = await findBucket(db, bucketId);
  if (!bucket || bucket.owner_id !== principal.userId) throw new AppError('BUCKET_NOT_FOUND');
  return bucket;
}

/** A datahub of the principal's; others' datahubs are indistinguishable from unknown ones. */
export async function loadDatahubFor(db: DbOrTrx, principal: Principal, datahubId: string): Promise<DatahubRow> {
  const datahub = await findDatahub(db, datahubId);
  if (!datahub || datahub.owner_id !== principal.userId) throw new AppError('DATAHUB_NOT_FOUND');
  return datahub;
}
