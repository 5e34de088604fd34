import { adjustBlobRefs } from '../../blobs/blobs.repository.js';
import { newChildKey, openChildKey, rewrapChildKey } from '../../crypto/keyring.js';
import type { DbOrTrx } from '../../db/database.js';
import type { FileRow, FileVersionRow, NewFile } from '../../db/schema.js';
import { newId, randomToken } from '../../lib/ids.js';
import { releaseBytes } from '../accounts/accounts.repository.js';
import * as repo from './files.repository.js';
import { deleteGrantsOn } from '../permissions/permissions.repository.js';

/**
 * Removes files for good: their versions drop their blob references (the collector deletes
 * blobs nobody uses any more), their bytes leave their owners' used space and their permissions go. Aggregates of the
 * folders above are the caller's business (it knows which chain to adjust).
 */
export async function purgeFiles(trx: DbOrTrx, files: repo.PurgeRow[], now: string): Promise<void> {
  const CHUNK = 500;
  for (let i = 0; i < files.length; i += CHUNK) {
    const chunk = files.slice(i, i + CHUNK);
    const ids = chunk.map((f) => f.id);
    await adjustBlobRefs(trx, await repo.versionBlobIds(trx, ids), -1, now);
    await repo.deleteFilesAndVersions(trx, ids);
    await deleteGrantsOn(trx, 'file', ids);
  }
  const byOwner = new Map<string, number>();
  for (const f of files) byOwner.set(f.owner_id, (byOwner.get(f.owner_id) ?? 0) + f.versions_bytes);
  for (const [owner, bytes] of byOwner) await releaseBytes(trx, owner, bytes);
}

export interface CloneRequest {
  file: FileRow;
  /** Key of the folder the original lives in. */
  sourceFolderKey: Buffer;
  targetFolderId: string;
  targetFolderKey: Buffer;
  targetBucketId: string;
  ownerId: string;
  name: string;
}

/**
 * Copies files without copying bytes: each copy gets its own id, file key and a single version
 * (the original's current one) that shares the blob, whose data key is re-wrapped under the new
 * file key. Blob reference counts follow. Returns the copies; quota and aggregates are the caller's.
 */
export async function cloneFiles(trx: DbOrTrx, requests: CloneRequest[], now: string): Promise<NewFile[]> {
  const versions = new Map(
    (
      await repo.versionsByIds(
        trx,
        requests.map((r) => r.file.current_version_id!),
      )
    ).map((v) => [v.id, v]),
  );
  const files: NewFile[] = [];
  const newVersions: FileVersionRow[] = [];
  for (const request of requests) {
    const source = versions.get(request.file.current_version_id!)!;
    const sourceFileKey = openChildKey(request.sourceFolderKey, request.file.key_wrapped, request.file.id);
    const dataKey = openChildKey(sourceFileKey, source.data_key_wrapped, source.id);
    const fileId = newId('fil');
    const versionId = newId('ver');
    const fileKey = newChildKey(request.targetFolderKey, fileId);
    files.push({
      id: fileId,
      bucket_id: request.targetBucketId,
      folder_id: request.targetFolderId,
      owner_id: request.ownerId,
      name: request.name,
      content_type: request.file.content_type,
      visibility: request.file.visibility,
      retention_period: null,
      retain_until: null,
      hash_name: randomToken(),
      key_wrapped: fileKey.wrapped,
      current_version_id: versionId,
      size: source.size,
      checksum: source.checksum,
      version_count: 1,
      versions_bytes: source.size,
      deleted_at: null,
      created_at: now,
      updated_at: now,
    });
    newVersions.push({
      id: versionId,
      file_id: fileId,
      blob_id: source.blob_id,
      size: source.size,
      checksum: source.checksum,
      crc32: source.crc32,
      content_type: source.content_type,
      data_key_wrapped: rewrapChildKey(dataKey, fileKey.key, versionId),
      created_at: now,
    });
  }
  await repo.insertFiles(trx, files);
  const names = new Map(files.map((file) => [file.id, file.name]));
  await repo.insertVersions(trx, newVersions, (fileId) => names.get(fileId) ?? '');
  await adjustBlobRefs(
    trx,
    newVersions.map((v) => v.blob_id),
    1,
    now,
  );
  return files;
}
