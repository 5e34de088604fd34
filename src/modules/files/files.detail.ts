import { mayActOnFile, visibleParentId } from '../../access/access.js';
import type { Principal } from '../../context.js';
import type { DbOrTrx } from '../../db/database.js';
import type { FileRow } from '../../db/schema.js';
import type { FileDetail, RetentionPeriod } from './files.schemas.js';

/** A file row as the file detail of the API (FileDetail in files.schemas.ts). */
export function fileDetail(row: FileRow): FileDetail {
  return {
    id: row.id,
    name: row.name,
    size: Number(row.size),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    folderId: row.folder_id,
    bucketId: row.bucket_id,
    contentType: row.content_type,
    visibility: row.visibility,
    retentionPeriod: row.retention_period as RetentionPeriod | null,
    retainUntil: row.retain_until,
    hashName: row.hash_name,
    checksum: row.checksum,
    versionCount: Number(row.version_count),
    ...(row.current_version_id ? { currentVersionId: row.current_version_id } : {}),
    isDelete: row.trash_batch !== '',
    deletedAt: row.deleted_at,
  };
}

/**
 * The checksum a caller may read: none ("") without the right to download, as the SHA-256 of a
 * plaintext tells whether it is content one already knows.
 */
export function checksumFor(checksum: string, mayDownload: boolean): string {
  return mayDownload ? checksum : '';
}

/**
 * The detail of a file as the principal may see it: a grantee is not told the folder of a file
 * shared on its own, nor the checksum of what they may not download.
 */
export async function fileDetailFor(db: DbOrTrx, principal: Principal, row: FileRow): Promise<FileDetail> {
  const detail = fileDetail(row);
  if (row.owner_id === principal.userId) return detail;
  const folderId = await visibleParentId(db, principal, { owner_id: row.owner_id, parentId: row.folder_id });
  return { ...detail, folderId, checksum: checksumFor(row.checksum, await mayActOnFile(db, principal, row, 'download')) };
}
