import type { Principal } from '../context.js';
import type { DbOrTrx } from '../db/database.js';
import type { BucketRow, DatahubRow, FileRow, FolderRow } from '../db/schema.js';
import { AppError, type ErrorCode } from '../errors.js';
import { findBucket } from '../modules/buckets/buckets.repository.js';
import { findDatahub } from '../modules/datahubs/datahubs.repository.js';
import { findFile } from '../modules/files/files.repository.js';
import { findFolder } from '../modules/folders/folders.repository.js';

/**
 * The one place that answers "may this principal do X to this item". Routes and services ask it
 * and never compare owner ids themselves.
 *
 * - `view`: see details and listings;
 * - `download`: read content;
 * - `edit`: rename, upload, create subfolders, move within the shared tree, soft delete;
 * - `manage`: hard delete, share, change permissions: the owner only.
 */
export type Action = 'view' | 'download' | 'edit' | 'manage';

/** Whether the principal may perform `action` on the folder. Only owners for now; per-user grants extend this. */
export function mayActOnFolder(principal: Principal, folder: Pick<FolderRow, 'owner_id'>, _action: Action): boolean {
  return folder.owner_id === principal.userId;
}

/**
 * Loads a folder the principal may act on. Unknown ids are 404; a folder the caller may not
 * touch answers `denied` (404 by default, so ids of others' folders are not confirmed).
 */
export async function loadFolderFor(
  db: DbOrTrx,
  principal: Principal,
  folderId: string,
  action: Action,
  denied: ErrorCode = 'FOLDER_NOT_FOUND',
): Promise<FolderRow> {
  const folder = await findFolder(db, folderId);
  if (!folder) throw new AppError('FOLDER_NOT_FOUND');
  if (!mayActOnFolder(principal, folder, action)) throw new AppError(denied);
  return folder;
}

/** Whether the principal may perform `action` on the file. Only owners for now; per-user grants extend this. */
export function mayActOnFile(principal: Principal, file: Pick<FileRow, 'owner_id'>, _action: Action): boolean {
  return file.owner_id === principal.userId;
}

/** Loads a file the principal may act on; unknown and forbidden files are both 404. */
export async function loadFileFor(db: DbOrTrx, principal: Principal, fileId: string, action: Action): Promise<FileRow> {
  const file = await findFile(db, fileId);
  if (!file || !mayActOnFile(principal, file, action)) throw new AppError('FILE_NOT_FOUND');
  return file;
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
