import { loadFolderFor } from '../../access/access.js';
import type { AppContext, Principal } from '../../context.js';
import type { DbOrTrx } from '../../db/database.js';
import type { FolderRow } from '../../db/schema.js';
import { AppError } from '../../errors.js';
import { nowIso } from '../../lib/time.js';
import { findBucket } from '../buckets/buckets.repository.js';
import { purgeFiles } from '../files/files.lifecycle.js';
import { filesInSubtree, retainedFileInSubtree } from '../files/files.repository.js';
import { deleteGrantsOn } from '../permissions/permissions.repository.js';
import { detailAfterChange } from './details.use-case.js';
import { freeItemName } from './folders.names.js';
import * as repo from './folders.repository.js';
import type { FolderDetail } from './folders.schemas.js';
import { attach, detach, mutateTrees, reparent } from './folders.tree.js';

/** Deletes a folder with its subtree: to the trash (`soft`, an editor may) or for good (`hard`, the owner's call). */
export async function remove(ctx: AppContext, principal: Principal, folderId: string, mode: 'soft' | 'hard'): Promise<void> {
  await mutateTrees(ctx, { folders: [folderId] }, async (trx) => {
    const folder = await loadFolderFor(trx, principal, folderId, mode === 'hard' ? 'manage' : 'edit');
    if (folder.is_root) throw new AppError('ROOT_FOLDER_READONLY');
    if (mode === 'soft') {
      if (folder.trash_batch !== '') return; // already in the trash: nothing to do
      await detach(trx, folder);
      await repo.setSubtreeTrashState(trx, folder.id, '', folder.id, nowIso());
      return;
    }
    await purgeSubtree(trx, folder);
  });
}

/** Deletes a folder's subtree for good, its files, their content references and the grants on it; none may be retained. */
async function purgeSubtree(trx: DbOrTrx, folder: FolderRow): Promise<void> {
  const now = nowIso();
  if (await retainedFileInSubtree(trx, folder.id, now)) throw new AppError('RETENTION_ACTIVE', 'The folder holds a file under retention');
  await detach(trx, folder);
  await purgeFiles(trx, await filesInSubtree(trx, folder.id), now);
  await deleteGrantsOn(trx, 'folder', repo.subtreeFolderIds(folder.id));
  await repo.deleteSubtree(trx, folder.id);
}

/** Takes a folder out of the trash: back to its old parent if that is live, else to its bucket's root, under a free name. */
export async function restore(ctx: AppContext, principal: Principal, folderId: string): Promise<FolderDetail> {
  await mutateTrees(ctx, { folders: [folderId] }, async (trx) => {
    const folder = await loadFolderFor(trx, principal, folderId, 'edit');
    if (folder.trash_batch === '') throw new AppError('NOT_IN_TRASH');
    // The folder's access was checked above; an editor restores into the owner's bucket.
    const bucket = (await findBucket(trx, folder.bucket_id))!;
    const oldParent = folder.parent_id ? await repo.findFolder(trx, folder.parent_id) : undefined;
    const parentId = oldParent && oldParent.trash_batch === '' ? oldParent.id : bucket.root_folder_id!;
    // Restoring a folder from inside a trashed one takes it out of that batch first.
    await detach(trx, folder);
    // Pick the name while the folder is still in the trash, so it does not collide with itself.
    const name = await freeItemName(trx, parentId, folder.name, 'restored', false);
    await reparent(ctx, trx, folder, parentId, { name });
    await repo.setSubtreeTrashState(trx, folder.id, folder.trash_batch, '', null);
    await attach(trx, folder, parentId);
  });
  return detailAfterChange(ctx, principal, folderId);
}
