import { loadBucketFor } from '../../access/access.js';
import type { AppContext, Principal } from '../../context.js';
import { AppError } from '../../errors.js';
import { fileDetail } from '../files/files.detail.js';
import type { FileDetail } from '../files/files.schemas.js';
import { fileService } from '../files/files.service.js';
import { IN_TRASH, listTrashRoots } from '../folders/folders.repository.js';
import type { FolderListItem } from '../folders/folders.schemas.js';
import { folderService } from '../folders/folders.service.js';

/** The trash of an account: what was trashed on its own (items trashed with a folder are inside it). */
export function trashService(ctx: AppContext) {
  const { db } = ctx;
  const folders = folderService(ctx);
  const files = fileService(ctx);

  async function roots(principal: Principal, bucketId?: string) {
    if (bucketId) await loadBucketFor(db, principal, bucketId);
    const folderRows = await listTrashRoots(db, principal.userId, bucketId);
    let fileQuery = db
      .selectFrom('files')
      .selectAll()
      .where('owner_id', '=', principal.userId)
      .whereRef('trash_batch', '=', 'id')
      .where(IN_TRASH);
    if (bucketId) fileQuery = fileQuery.where('bucket_id', '=', bucketId);
    const fileRows = await fileQuery.orderBy('deleted_at', 'desc').execute();
    return { folderRows, fileRows };
  }

  async function list(principal: Principal, bucketId?: string): Promise<{ folders: FolderListItem[]; files: FileDetail[] }> {
    const { folderRows, fileRows } = await roots(principal, bucketId);
    return { folders: folderRows.map((row) => folders.listItem(row)), files: fileRows.map(fileDetail) };
  }

  /** Hard-deletes everything in the trash, except what retention still protects. */
  async function empty(principal: Principal, bucketId?: string) {
    const { folderRows, fileRows } = await roots(principal, bucketId);
    let deleted = 0;
    let kept = 0;
    const attempts = [
      ...folderRows.map((f) => () => folders.remove(principal, f.id, 'hard')),
      ...fileRows.map((f) => () => files.remove(principal, f.id, 'hard')),
    ];
    for (const attempt of attempts) {
      try {
        await attempt();
        deleted++;
      } catch (error) {
        if (error instanceof AppError && error.code === 'RETENTION_ACTIVE') {
          kept++;
          continue;
        }
        // A file trashed on its own inside a folder trashed later went with that folder.
        if (error instanceof AppError && (error.code === 'FILE_NOT_FOUND' || error.code === 'FOLDER_NOT_FOUND')) continue;
        throw error;
      }
    }
    return { deleted, keptUnderRetention: kept };
  }

  return { list, empty };
}
