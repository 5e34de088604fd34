import { loadFolderFor } from '../../access/access.js';
import { effectiveGrant } from '../../access/access.repository.js';
import type { AppContext, Principal } from '../../context.js';
import type { FolderAccess } from './folders.schemas.js';

/**
 * What the caller may do in a folder, for screens that offer only what will work: its owner
 * everything; a grantee what the union of their grants on it and its ancestors allows. A folder
 * the caller may not see is 404, as elsewhere.
 */
export async function access(ctx: AppContext, principal: Principal, folderId: string): Promise<FolderAccess> {
  const folder = await loadFolderFor(ctx.db, principal, folderId, 'view');
  if (folder.owner_id === principal.userId) return { isOwner: true, canView: true, canDownload: true, canEdit: true };
  const grant = await effectiveGrant(ctx.db, principal.userId, { folderId: folder.id });
  return { isOwner: false, canView: true, canDownload: grant.download, canEdit: grant.edit };
}
