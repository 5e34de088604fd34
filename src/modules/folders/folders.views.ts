import type { ListedFolder } from './listing.repository.js';
import type { FolderListItem } from './folders.schemas.js';

/** A folder as a listing item (the database writes the same for pages of subfolders: listItemJson). */
export function listItem(row: ListedFolder): FolderListItem {
  return {
    id: row.id,
    bucketId: row.bucket_id,
    parentId: row.parent_id ?? '',
    hashUrl: row.hash_url,
    name: row.name,
    visibility: row.visibility,
    isDelete: row.trash_batch !== '',
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    deletedAt: row.deleted_at,
  };
}
