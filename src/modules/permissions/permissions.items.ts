import { loadFileFor, loadFolderFor } from '../../access/access.js';
import type { Principal } from '../../context.js';
import type { DbOrTrx } from '../../db/database.js';
import type { PermissionRow } from '../../db/schema.js';
import { AppError } from '../../errors.js';
import { assertId } from '../../lib/ids.js';
import type { ItemKind } from './permissions.repository.js';
import type { Permission } from './permissions.schemas.js';

/** The item whose permissions the caller manages: only its owner may (others: 404). */
export async function loadManagedItem(
  trx: DbOrTrx,
  principal: Principal,
  kind: ItemKind,
  itemId: string,
): Promise<{ id: string; owner_id: string }> {
  if (kind === 'file') {
    const file = await loadFileFor(trx, principal, assertId('fil', itemId, 'fileId'), 'manage');
    if (file.trash_batch !== '') throw new AppError('FILE_IN_TRASH');
    return file;
  }
  const folder = await loadFolderFor(trx, principal, assertId('fld', itemId, 'folderId'), 'manage');
  // Sharing a root would hand out the whole bucket; share its folders instead.
  if (folder.is_root) throw new AppError('ROOT_FOLDER_READONLY');
  if (folder.trash_batch !== '') throw new AppError('FOLDER_IN_TRASH');
  return folder;
}

/** A user's permission on an item, as `PUT /files/shared/...` and the share-users routes return it. */
export function permissionView(row: PermissionRow): Permission {
  return {
    userId: row.user_id,
    canView: row.can_view === 1,
    canDownload: row.can_download === 1,
    canEdit: row.can_edit === 1,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
