import { assertFolderAccess, visibleChainLength } from '../../access/access.js';
import type { AppContext, Principal } from '../../context.js';
import type { FolderRow } from '../../db/schema.js';
import { AppError } from '../../errors.js';
import { nowIso } from '../../lib/time.js';
import { findUserById } from '../accounts/accounts.repository.js';
import { locationLabel } from '../regions/regions.repository.js';
import { folderReads } from './folders.reads.js';
import * as repo from './folders.repository.js';
import type { FolderDetail } from './folders.schemas.js';

// lastAccessAt is written at most once a minute per folder, so reads stay reads.
const ACCESS_WRITE_INTERVAL_MS = 60_000;

/** A folder's details, for a principal who may view it; the read counts as an access. */
export async function details(ctx: AppContext, principal: Principal, folderId: string): Promise<FolderDetail> {
  const rows = await detailRows(ctx, folderId);
  await assertFolderAccess(ctx.db, principal, rows.folder, 'view', 'FOLDER_ACCESS_DENIED');
  return toDetail(ctx, principal, rows, { recordAccess: true });
}

/** A folder's details after a change the principal made to it (their access is checked already). */
export async function detailAfterChange(ctx: AppContext, principal: Principal, folderId: string): Promise<FolderDetail> {
  return toDetail(ctx, principal, await detailRows(ctx, folderId));
}

/** Records a read of a folder, at most once a minute: the folder's lastAccessAt as it now is. */
export async function recordAccess(ctx: AppContext, row: Pick<FolderRow, 'id' | 'last_access_at'>): Promise<string | null> {
  const now = nowIso();
  if (row.last_access_at && Date.parse(now) - Date.parse(row.last_access_at) < ACCESS_WRITE_INTERVAL_MS) return row.last_access_at;
  await repo.updateFolder(ctx.db, row.id, { last_access_at: now });
  return now;
}

async function detailRows(ctx: AppContext, folderId: string): Promise<repo.FolderDetailRows> {
  const rows = await folderReads(ctx).details(folderId);
  if (!rows) throw new AppError('FOLDER_NOT_FOUND');
  return rows;
}

/** Builds the detail object; `recordAccess` marks a read by a user. */
async function toDetail(
  ctx: AppContext,
  principal: Principal,
  rows: repo.FolderDetailRows,
  options: { recordAccess?: boolean } = {},
): Promise<FolderDetail> {
  const row = rows.folder;
  const ancestors = await visibleAncestors(ctx, principal, row, rows.ancestors);
  const names = ancestors
    .filter((a) => !a.is_root)
    .map((a) => a.name)
    .reverse();
  if (!row.is_root) names.push(row.name);
  let lastAccessAt = row.last_access_at;
  if (options.recordAccess) lastAccessAt = await recordAccess(ctx, row);
  const owned = row.owner_id === principal.userId;
  const owner = owned ? undefined : await findUserById(ctx.db, row.owner_id);
  return {
    id: row.id,
    name: row.name,
    visibility: row.visibility,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    lastAccessAt,
    totalFiles: Number(row.subtree_files),
    totalSubfolders: Number(row.subtree_folders),
    totalSizeByte: Number(row.subtree_bytes),
    sharedUsersCount: Number(row.shared_users ?? 0),
    ownerFolder: owned ? null : { userId: row.owner_id, name: owner?.name ?? '' },
    displayPath: `/${names.join('/')}`,
    locationLabel: locationLabel({ name_en: row.location_name, region_code: row.location_code }),
    parentId: ancestors[0]?.id ?? '',
    parentName: ancestors[0] && !row.is_root ? ancestors[0].name : '',
    isRoot: row.is_root === 1,
    accessUrl: `/folders/details/${row.id}`,
    shareUrl: `/folders/share/${row.id}`,
    bucketId: row.bucket_id,
    hashUrl: row.hash_url,
    isDelete: row.trash_batch !== '',
    deletedAt: row.deleted_at,
  };
}

/** The ancestors (nearest first) the principal may learn of: a grantee's stop below the highest folder shared with them. */
async function visibleAncestors(
  ctx: AppContext,
  principal: Principal,
  row: repo.FolderWithLocation,
  ancestors: repo.AncestorRow[],
): Promise<repo.AncestorRow[]> {
  if (row.owner_id === principal.userId) return ancestors;
  const seen = await visibleChainLength(ctx.db, principal, row.owner_id, [row.id, ...ancestors.map((a) => a.id)]);
  return ancestors.slice(0, Math.max(0, seen - 1));
}
