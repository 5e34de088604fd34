import type { Principal } from '../context.js';
import type { DbOrTrx } from '../db/database.js';
import type { BucketRow, DatahubRow, FileRow, FolderRow } from '../db/schema.js';
import { inChunks } from '../db/in-chunks.js';
import { AppError, type ErrorCode } from '../errors.js';
import {
  effectiveGrant,
  filesGrantedForDownload,
  findBucket,
  findDatahub,
  findFile,
  findFolder,
  grantsOnFolders,
  type GrantFlags,
} from './access.repository.js';

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
 * Trashed items are their owner's alone (see Access).
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
 * What the principal may do to an item: `denied` by their grants, or `hidden`: allowed by their
 * grants, but the item is in the trash, where only its owner sees (links, public addresses and
 * "Shared with me" treat it so too; what a folder holds is trashed with it). A hidden item answers
 * as an unknown id; one denied keeps the answer it has when live, so nobody learns it is trashed.
 */
type Access = 'allowed' | 'denied' | 'hidden';

async function accessTo(
  db: DbOrTrx,
  principal: Principal,
  item: { owner_id: string; trash_batch: string },
  grantsOn: { folderId: string; fileId?: string },
  action: Action,
): Promise<Access> {
  if (item.owner_id === principal.userId) return 'allowed';
  if (action === 'manage' || !grantAllows(await effectiveGrant(db, principal.userId, grantsOn), action)) return 'denied';
  return item.trash_batch === '' ? 'allowed' : 'hidden';
}

/**
 * What the principal may do to the folder: its owner anything; another user what the union of
 * their grants on the folder and its ancestors allows (docs/api.md), while it is not in the trash.
 */
function folderAccess(
  db: DbOrTrx,
  principal: Principal,
  folder: Pick<FolderRow, 'id' | 'owner_id' | 'trash_batch'>,
  action: Action,
): Promise<Access> {
  return accessTo(db, principal, folder, { folderId: folder.id }, action);
}

export async function mayActOnFolder(
  db: DbOrTrx,
  principal: Principal,
  folder: Pick<FolderRow, 'id' | 'owner_id' | 'trash_batch'>,
  action: Action,
): Promise<boolean> {
  return (await folderAccess(db, principal, folder, action)) === 'allowed';
}

/** Throws unless the principal may act on the folder: `denied` when their grants refuse, 404 when it is hidden in the trash. */
export async function assertFolderAccess(
  db: DbOrTrx,
  principal: Principal,
  folder: Pick<FolderRow, 'id' | 'owner_id' | 'trash_batch'>,
  action: Action,
  denied: ErrorCode,
): Promise<void> {
  const access = await folderAccess(db, principal, folder, action);
  if (access === 'hidden') throw new AppError('FOLDER_NOT_FOUND');
  if (access === 'denied') throw new AppError(denied);
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
  /** How the row is read: the access repository's lookup, or a caller's batched one (same result). */
  find: (db: DbOrTrx, folderId: string) => Promise<FolderRow | undefined> = findFolder,
): Promise<FolderRow> {
  const folder = await find(db, folderId);
  if (!folder) throw new AppError('FOLDER_NOT_FOUND');
  await assertFolderAccess(db, principal, folder, action, denied);
  return folder;
}

/** Whether the principal may perform `action` on the file: as for folders, with the file's own grants added. */
export async function mayActOnFile(
  db: DbOrTrx,
  principal: Principal,
  file: Pick<FileRow, 'id' | 'owner_id' | 'folder_id' | 'trash_batch'>,
  action: Action,
): Promise<boolean> {
  return (await accessTo(db, principal, file, { folderId: file.folder_id, fileId: file.id }, action)) === 'allowed';
}

/** Loads a file the principal may act on; unknown, forbidden and hidden (see Access) files are all 404. */
export async function loadFileFor(db: DbOrTrx, principal: Principal, fileId: string, action: Action): Promise<FileRow> {
  const file = await findFile(db, fileId);
  if (!file || !(await mayActOnFile(db, principal, file, action))) throw new AppError('FILE_NOT_FOUND');
  return file;
}

/**
 * Which files of a listing of `folder` (one the principal may see) they may download: all for
 * the owner or a downloader of the folder, else those granted to them for download on their own.
 */
export async function mayDownloadIn(
  db: DbOrTrx,
  principal: Principal,
  folder: Pick<FolderRow, 'id' | 'owner_id' | 'trash_batch'>,
  fileIds: string[],
): Promise<(fileId: string) => boolean> {
  if (await mayActOnFolder(db, principal, folder, 'download')) return () => true;
  const granted = await filesGrantedForDownload(db, principal.userId, fileIds);
  return (fileId) => granted.has(fileId);
}

/** What of a subtree a principal may download (see downloadableIn). */
export interface Downloadable {
  folder(id: string): boolean;
  /** Those of `files` (files of the subtrees, a page of them, say) the principal may download. */
  files<T extends { id: string; folder_id: string }>(files: T[]): Promise<T[]>;
}

/**
 * What of the subtrees under `root` (`folders` parents first) the principal may download:
 * everything for the owner or a downloader of `root`; for another grantee, the folders under a
 * grant allowing downloads and what they hold, and the files granted to them on their own.
 */
export async function downloadableIn(
  db: DbOrTrx,
  principal: Principal,
  root: Pick<FolderRow, 'id' | 'owner_id' | 'trash_batch'>,
  folders: { id: string; parent_id: string | null }[],
): Promise<Downloadable> {
  if (await mayActOnFolder(db, principal, root, 'download')) return { folder: () => true, files: async (files) => files };
  const grants = new Map(
    await inChunks(
      folders.map((f) => f.id),
      async (ids) => [...(await grantsOnFolders(db, principal.userId, ids))],
    ),
  );
  const covered = new Set<string>();
  for (const folder of folders)
    if (grants.get(folder.id)?.download || (folder.parent_id !== null && covered.has(folder.parent_id))) covered.add(folder.id);
  return {
    folder: (id) => covered.has(id),
    files: async (files) => {
      const granted = new Set(
        await inChunks(
          files.filter((f) => !covered.has(f.folder_id)).map((f) => f.id),
          async (ids) => [...(await filesGrantedForDownload(db, principal.userId, ids))],
        ),
      );
      return files.filter((f) => covered.has(f.folder_id) || granted.has(f.id));
    },
  };
}

/**
 * How many folders of `chain` (a folder, then its ancestors nearest first) the principal may learn
 * the names and ids of: the whole chain for the owner; for a grantee, up to the highest folder
 * shared with them, above which the owner's tree is none of their business.
 */
export async function visibleChainLength(db: DbOrTrx, principal: Principal, ownerId: string, chain: string[]): Promise<number> {
  if (ownerId === principal.userId) return chain.length;
  const grants = await grantsOnFolders(db, principal.userId, chain);
  let length = 0;
  chain.forEach((id, i) => {
    const flags = grants.get(id);
    if (flags && grantAllows(flags, 'view')) length = i + 1;
  });
  return length;
}

/**
 * The id of the folder holding an item the principal sees, or '' (the value of an item without a
 * parent) when that folder is out of their sight: a file shared on its own, the highest folder
 * shared with them. A live item's folder is live, so only the grants decide.
 */
export async function visibleParentId(
  db: DbOrTrx,
  principal: Principal,
  item: { owner_id: string; parentId: string | null },
): Promise<string> {
  if (!item.parentId) return '';
  if (item.owner_id === principal.userId) return item.parentId;
  const flags = await effectiveGrant(db, principal.userId, { folderId: item.parentId });
  return grantAllows(flags, 'view') ? item.parentId : '';
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
