import { loadFileFor, mayActOnFile } from '../../access/access.js';
import { adjustBlobRefs } from '../../blobs/blobs.repository.js';
import type { AppContext, Principal } from '../../context.js';
import { openChildKey, rewrapChildKey } from '../../crypto/keyring.js';
import { AppError } from '../../errors.js';
import { newId } from '../../lib/ids.js';
import { nowIso } from '../../lib/time.js';
import { releaseBytes } from '../accounts/accounts.repository.js';
import { reserveQuota } from '../accounts/quota.js';
import { mutateTrees } from '../folders/folders.tree.js';
import { details } from './details.use-case.js';
import { checksumFor } from './files.detail.js';
import * as repo from './files.repository.js';
import type { FileDetail, Version } from './files.schemas.js';
import { fileKeyOf, requireLiveFile } from './files.tree.js';
import { setCurrentVersion } from './files.versioning.js';

/** The versions of a file, newest first. */
export async function versions(ctx: AppContext, principal: Principal, fileId: string): Promise<Version[]> {
  const { db } = ctx;
  const file = await loadFileFor(db, principal, fileId, 'view');
  const mayDownload = await mayActOnFile(db, principal, file, 'download');
  return (await repo.listVersions(db, file.id)).map((v) => ({
    id: v.id,
    size: Number(v.size),
    checksum: checksumFor(v.checksum, mayDownload),
    contentType: v.content_type,
    createdAt: v.created_at,
    isCurrent: v.id === file.current_version_id,
  }));
}

/** Makes an old version current again, as a new version sharing its blob. */
export async function restoreVersion(ctx: AppContext, principal: Principal, fileId: string, versionId: string): Promise<FileDetail> {
  await mutateTrees(ctx, { files: [fileId] }, async (trx) => {
    const file = await loadFileFor(trx, principal, fileId, 'edit');
    requireLiveFile(file);
    const old = await repo.findVersion(trx, file.id, versionId);
    if (!old) throw new AppError('VERSION_NOT_FOUND');
    await reserveQuota(trx, file.owner_id, Number(old.size), ctx.config);
    const fileKey = await fileKeyOf(ctx, trx, file);
    const now = nowIso();
    const id = newId('ver');
    const dataKey = openChildKey(fileKey, old.data_key_wrapped, old.id);
    await repo.insertVersions(
      trx,
      [{ ...old, id, data_key_wrapped: rewrapChildKey(dataKey, fileKey, id), created_at: now }],
      () => file.name,
    );
    await adjustBlobRefs(trx, [old.blob_id], 1, now);
    await setCurrentVersion(trx, file, { id, size: Number(old.size), checksum: old.checksum, contentType: old.content_type }, now);
  });
  return details(ctx, principal, fileId);
}

/** Deletes an old version for good (never the current one, nor one of a retained file), giving back its bytes. */
export async function deleteVersion(ctx: AppContext, principal: Principal, fileId: string, versionId: string): Promise<void> {
  await mutateTrees(ctx, { files: [fileId] }, async (trx) => {
    const file = await loadFileFor(trx, principal, fileId, 'manage');
    const version = await repo.findVersion(trx, file.id, versionId);
    if (!version) throw new AppError('VERSION_NOT_FOUND');
    if (version.id === file.current_version_id) throw new AppError('VERSION_IS_CURRENT');
    const now = nowIso();
    if (file.retain_until && file.retain_until > now)
      throw new AppError('RETENTION_ACTIVE', `The file is retained until ${file.retain_until}`);
    await repo.deleteVersion(trx, version.id);
    await adjustBlobRefs(trx, [version.blob_id], -1, now);
    await repo.updateFile(trx, file.id, {
      version_count: Number(file.version_count) - 1,
      versions_bytes: Number(file.versions_bytes) - Number(version.size),
      updated_at: now,
    });
    await releaseBytes(trx, file.owner_id, Number(version.size));
  });
}
