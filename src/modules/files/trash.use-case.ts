import { loadFileFor, type Action } from '../../access/access.js';
import type { AppContext, Principal } from '../../context.js';
import { AppError } from '../../errors.js';
import { nowIso } from '../../lib/time.js';
import { findBucket } from '../buckets/buckets.repository.js';
import { freeItemName } from '../folders/folders.names.js';
import { findFolder } from '../folders/folders.repository.js';
import { mutateTrees } from '../folders/folders.tree.js';
import { details } from './details.use-case.js';
import { purgeFiles } from './files.lifecycle.js';
import * as repo from './files.repository.js';
import type { FileDetail } from './files.schemas.js';
import { attachFile, detachFile, rewrapForFolder } from './files.tree.js';

/** Deletes a file: to the trash (`soft`, an editor may) or for good (`hard`, the owner's call). */
export async function remove(ctx: AppContext, principal: Principal, fileId: string, mode: 'soft' | 'hard'): Promise<void> {
  return removeAs(ctx, principal, fileId, mode, mode === 'hard' ? 'manage' : 'edit');
}

/** Deletes a file, the caller holding `action` on it. A file under retention is never deleted for good. */
export async function removeAs(
  ctx: AppContext,
  principal: Principal,
  fileId: string,
  mode: 'soft' | 'hard',
  action: Action,
): Promise<void> {
  await mutateTrees(ctx, { files: [fileId] }, async (trx) => {
    const file = await loadFileFor(trx, principal, fileId, action);
    const now = nowIso();
    if (mode === 'soft') {
      if (file.trash_batch !== '') return;
      await detachFile(trx, file);
      await repo.updateFile(trx, file.id, { trash_batch: file.id, deleted_at: now });
      return;
    }
    if (file.retain_until && file.retain_until > now)
      throw new AppError('RETENTION_ACTIVE', `The file is retained until ${file.retain_until}`);
    await detachFile(trx, file);
    await purgeFiles(trx, [{ id: file.id, owner_id: file.owner_id, versions_bytes: Number(file.versions_bytes) }], now);
  });
}

/** Takes a file out of the trash: back to its folder if that is live, else to its bucket's root, under a free name. */
export async function restore(ctx: AppContext, principal: Principal, fileId: string): Promise<FileDetail> {
  await mutateTrees(ctx, { files: [fileId] }, async (trx) => {
    const file = await loadFileFor(trx, principal, fileId, 'edit');
    if (file.trash_batch === '') throw new AppError('NOT_IN_TRASH');
    const folder = (await findFolder(trx, file.folder_id))!;
    const targetId = folder.trash_batch === '' ? folder.id : (await findBucket(trx, file.bucket_id))!.root_folder_id!;
    await detachFile(trx, file);
    const name = await freeItemName(trx, targetId, file.name, 'restored', true);
    const keyWrapped = targetId === file.folder_id ? file.key_wrapped : await rewrapForFolder(ctx, trx, file, targetId);
    await repo.updateFile(trx, file.id, {
      folder_id: targetId,
      name,
      key_wrapped: keyWrapped,
      trash_batch: '',
      deleted_at: null,
      updated_at: nowIso(),
    });
    await attachFile(trx, file, targetId);
  });
  return details(ctx, principal, fileId);
}
