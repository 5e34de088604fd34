import type { DbOrTrx } from '../../db/database.js';
import type { BucketRow, FileRow, FolderRow } from '../../db/schema.js';

/** The queries of the WebDAV tree: names to items, and the live children of a folder. */

/** The caller's buckets, by name. */
export function bucketsOf(db: DbOrTrx, userId: string): Promise<BucketRow[]> {
  return db.selectFrom('buckets').selectAll().where('owner_id', '=', userId).orderBy('name').execute();
}

export function bucketNamed(db: DbOrTrx, userId: string, name: string): Promise<BucketRow | undefined> {
  return db.selectFrom('buckets').selectAll().where('owner_id', '=', userId).where('name', '=', name).executeTakeFirst();
}

export function liveFolderNamed(db: DbOrTrx, parentId: string, name: string): Promise<FolderRow | undefined> {
  return db
    .selectFrom('folders')
    .selectAll()
    .where('parent_id', '=', parentId)
    .where('trash_batch', '=', '')
    .where('name', '=', name)
    .executeTakeFirst();
}

export function liveFileNamed(db: DbOrTrx, folderId: string, name: string): Promise<FileRow | undefined> {
  return db
    .selectFrom('files')
    .selectAll()
    .where('folder_id', '=', folderId)
    .where('trash_batch', '=', '')
    .where('name', '=', name)
    .executeTakeFirst();
}

export function liveFolderById(db: DbOrTrx, id: string): Promise<FolderRow | undefined> {
  return db.selectFrom('folders').selectAll().where('id', '=', id).where('trash_batch', '=', '').executeTakeFirst();
}

/** What a listing shows of a child folder. */
export type ListedFolder = Pick<FolderRow, 'id' | 'name' | 'created_at' | 'updated_at'>;
/** What a listing shows of a child file. */
export type ListedFile = Pick<FileRow, 'id' | 'name' | 'size' | 'content_type' | 'current_version_id' | 'created_at' | 'updated_at'>;

export function liveChildFolders(db: DbOrTrx, parentId: string): Promise<ListedFolder[]> {
  return db
    .selectFrom('folders')
    .select(['id', 'name', 'created_at', 'updated_at'])
    .where('parent_id', '=', parentId)
    .where('trash_batch', '=', '')
    .orderBy('name')
    .execute();
}

export function liveChildFiles(db: DbOrTrx, folderId: string): Promise<ListedFile[]> {
  return db
    .selectFrom('files')
    .select(['id', 'name', 'size', 'content_type', 'current_version_id', 'created_at', 'updated_at'])
    .where('folder_id', '=', folderId)
    .where('trash_batch', '=', '')
    .orderBy('name')
    .execute();
}

/** A live item others shared with the user, with its owner's name. */
export interface SharedRoot {
  kind: 'file' | 'folder';
  itemId: string;
  name: string;
  ownerName: string;
}

/** Every live item others shared with `userId`, oldest grant first. */
export async function sharedRoots(db: DbOrTrx, userId: string): Promise<SharedRoot[]> {
  const rows = await db
    .selectFrom('permissions')
    .innerJoin('users', 'users.id', 'permissions.owner_id')
    .leftJoin('folders', (join) =>
      join.onRef('folders.id', '=', 'permissions.item_id').on('permissions.item_kind', '=', 'folder').on('folders.trash_batch', '=', ''),
    )
    .leftJoin('files', (join) =>
      join.onRef('files.id', '=', 'permissions.item_id').on('permissions.item_kind', '=', 'file').on('files.trash_batch', '=', ''),
    )
    .select(['permissions.item_kind as kind', 'permissions.item_id as itemId', 'folders.name as folderName', 'files.name as fileName'])
    .select('users.name as ownerName')
    .where('permissions.user_id', '=', userId)
    .where((eb) => eb.or([eb('folders.id', 'is not', null), eb('files.id', 'is not', null)]))
    .orderBy('permissions.id')
    .execute();
  return rows.map((row) => ({ kind: row.kind, itemId: row.itemId, name: (row.folderName ?? row.fileName)!, ownerName: row.ownerName }));
}

export function findFileById(db: DbOrTrx, id: string): Promise<FileRow | undefined> {
  return db.selectFrom('files').selectAll().where('id', '=', id).where('trash_batch', '=', '').executeTakeFirst();
}

export function findFolderById(db: DbOrTrx, id: string): Promise<FolderRow | undefined> {
  return db.selectFrom('folders').selectAll().where('id', '=', id).executeTakeFirst();
}
