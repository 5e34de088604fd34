import { loadFolderFor, mayActOnFolder } from '../../access/access.js';
import type { AppContext, Principal } from '../../context.js';
import { AppError } from '../../errors.js';
import { assertName } from '../../lib/names.js';
import { nowIso } from '../../lib/time.js';
import { assertNameFree } from './folders.names.js';
import * as repo from './folders.repository.js';
import type { UpdateFolderBody } from './folders.schemas.js';
import { mutateTrees, requireLive } from './folders.tree.js';

/** Renames a folder, changes its visibility or whether it may be shared (both forms of the body). */
export async function update(ctx: AppContext, principal: Principal, folderId: string, input: UpdateFolderBody): Promise<void> {
  const visibility = requestedVisibility(input);
  const name = input.name === undefined ? undefined : assertName(input.name);
  await mutateTrees(ctx, { folders: [folderId] }, async (trx) => {
    const folder = await loadFolderFor(trx, principal, folderId, 'edit');
    // Sharing settings and visibility stay with the owner, as for files; editors rename.
    const ownersOnly = input.isShare !== undefined || (visibility !== undefined && visibility !== folder.visibility);
    if (ownersOnly && !(await mayActOnFolder(trx, principal, folder, 'manage'))) throw new AppError('FOLDER_NOT_FOUND');
    requireLive(folder);
    if (name !== undefined && name !== folder.name) {
      if (folder.is_root)
        throw new AppError('ROOT_FOLDER_READONLY', 'The root folder takes the name of its bucket; rename the bucket instead');
      await assertNameFree(trx, folder.parent_id!, name);
    }
    await repo.updateFolder(trx, folder.id, {
      ...(name !== undefined ? { name } : {}),
      ...(visibility !== undefined ? { visibility } : {}),
      ...(input.isShare !== undefined ? { is_share: input.isShare ? 1 : 0 } : {}),
      updated_at: nowIso(),
    });
  });
}

/** The visibility the body asks for, from `visibility` or `isPrivate` (which must agree); refuses an empty body. */
function requestedVisibility(input: UpdateFolderBody): UpdateFolderBody['visibility'] {
  if (input.name === undefined && input.visibility === undefined && input.isPrivate === undefined && input.isShare === undefined) {
    throw new AppError('EMPTY_UPDATE', undefined, [{ field: 'body', problem: 'give name, visibility, isPrivate or isShare' }]);
  }
  const fromFlag = input.isPrivate === undefined ? undefined : input.isPrivate ? 'private' : 'public';
  if (input.visibility && fromFlag && input.visibility !== fromFlag) throw new AppError('VISIBILITY_CONFLICT');
  return input.visibility ?? fromFlag;
}
