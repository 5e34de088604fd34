import type { AppContext } from '../../context.js';
import type { StoredContent } from '../../content/index.js';
import { newChildKey, rewrapChildKey } from '../../crypto/keyring.js';
import type { DbOrTrx } from '../../db/database.js';
import type { FileRow, FileVersionRow, FolderRow } from '../../db/schema.js';
import { newId, randomToken } from '../../lib/ids.js';
import { adjustChain } from '../folders/folders.repository.js';
import * as repo from './files.repository.js';
import { fileKeyOf } from './files.tree.js';

/** The rows of a new file in `folder` and of its first version, with a new file key wrapped by the folder's. */
export function newFileRows(
  folder: FolderRow,
  parentKey: Buffer,
  name: string,
  contentType: string,
  stored: StoredContent,
  now: string,
): { file: FileRow; version: FileVersionRow } {
  const fileId = newId('fil');
  const versionId = newId('ver');
  const fileKey = newChildKey(parentKey, fileId);
  const file: FileRow = {
    id: fileId,
    bucket_id: folder.bucket_id,
    folder_id: folder.id,
    owner_id: folder.owner_id,
    name,
    content_type: contentType,
    visibility: 'private',
    retention_period: null,
    retain_until: null,
    hash_name: randomToken(),
    key_wrapped: fileKey.wrapped,
    current_version_id: versionId,
    size: stored.size,
    checksum: stored.checksum,
    version_count: 1,
    versions_bytes: stored.size,
    trash_batch: '',
    deleted_at: null,
    created_at: now,
    updated_at: now,
  };
  return { file, version: versionRow(versionId, fileId, fileKey.key, stored, contentType, now) };
}

function versionRow(id: string, fileId: string, fileKey: Buffer, stored: StoredContent, contentType: string, now: string): FileVersionRow {
  return {
    id,
    file_id: fileId,
    blob_id: stored.blobId,
    size: stored.size,
    checksum: stored.checksum,
    crc32: stored.crc32,
    content_type: contentType,
    data_key_wrapped: rewrapChildKey(stored.dataKey, fileKey, id),
    created_at: now,
  };
}

/** A new current version of a live file (its bytes already stored and the quota reserved); the file as it now is. */
export async function addVersion(
  ctx: AppContext,
  trx: DbOrTrx,
  file: FileRow,
  stored: StoredContent,
  contentType: string,
  now: string,
): Promise<FileRow> {
  const versionId = newId('ver');
  await repo.insertVersions(
    trx,
    [versionRow(versionId, file.id, await fileKeyOf(ctx, trx, file), stored, contentType, now)],
    () => file.name,
  );
  return setCurrentVersion(trx, file, { id: versionId, size: stored.size, checksum: stored.checksum, contentType }, now);
}

/** Makes `version` (already inserted) the file's current one, and moves the size difference up the folder tree. */
export async function setCurrentVersion(
  trx: DbOrTrx,
  file: FileRow,
  version: { id: string; size: number; checksum: string; contentType: string },
  now: string,
): Promise<FileRow> {
  const changes = {
    current_version_id: version.id,
    size: version.size,
    checksum: version.checksum,
    content_type: version.contentType,
    version_count: Number(file.version_count) + 1,
    versions_bytes: Number(file.versions_bytes) + version.size,
    updated_at: now,
  };
  await repo.updateFile(trx, file.id, changes);
  const delta = version.size - Number(file.size);
  if (delta !== 0) await adjustChain(trx, file.folder_id, '', 1, { folders: 0, files: 0, bytes: delta }, { folders: 0, files: 0 });
  return { ...file, ...changes };
}
