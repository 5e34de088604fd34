import { sql, type RawBuilder } from 'kysely';
import type { DbOrTrx } from '../../db/database.js';
import { inChunks } from '../../db/in-chunks.js';
import type { FileRow, FolderRow } from '../../db/schema.js';

/** The queries of zip archives: live subtrees with each file's current version, read in a few statements. */

/** A live folder of an archive, with what its key and its entry need. */
export interface ArchiveFolderRow {
  id: string;
  parent_id: string | null;
  name: string;
  key_wrapped: string;
  updated_at: string;
}

/**
 * A live file of an archive with its current version: what its entry needs. What opens its
 * content is read as the archive streams (`liveVersionContents`): an archive of many files holds
 * only this much of each meanwhile.
 */
export interface ArchiveFileRow {
  id: string;
  folder_id: string;
  name: string;
  updated_at: string;
  version_id: string;
  size: number;
  crc32: number | null;
}

/** Where a version's content is, its size, and the wraps of the keys that open it. */
export interface VersionContentRow {
  version_id: string;
  size: number;
  file_id: string;
  folder_id: string;
  key_wrapped: string;
  blob_id: string;
  data_key_wrapped: string;
}

/** The live subtrees under `rootIds` (live roots included), parents before their children. */
export async function liveSubtrees(db: DbOrTrx, rootIds: string[]): Promise<ArchiveFolderRow[]> {
  if (rootIds.length === 0) return [];
  const result = await sql<ArchiveFolderRow & { depth: number }>`
    with recursive sub (id, depth) as (
      select id, 0 from folders where id in (${sql.join(rootIds)}) and trash_batch = ''
      union all
      select c.id, sub.depth + 1 from folders c join sub on c.parent_id = sub.id where c.trash_batch = ''
    )
    select f.id, f.parent_id, f.name, f.key_wrapped, f.updated_at, sub.depth
    from folders f join sub on f.id = sub.id order by sub.depth
  `.execute(db);
  return result.rows.map(({ depth: _depth, ...row }) => row);
}

/** A folder's live subtree: its folders (itself first, parents first), and their live files a page at a time. */
export async function liveTree(db: DbOrTrx, rootId: string) {
  const folders = await liveSubtrees(db, [rootId]);
  return { folders, filePages: liveFilePages(db, { folderIds: folders.map((f) => f.id) }) };
}

/** Rows of files read per statement: few enough that a page dies young, once planned. */
const FILE_PAGE = 1000;
/** Ids bound in one `in (...)` list. */
const ID_CHUNK = 500;

/**
 * The live files among `fileIds` and those directly in `folderIds`, with their current versions,
 * a page at a time. Read them in one snapshot (inReadSnapshot): between two statements, a file
 * renamed across a page's end would otherwise be read twice or not at all.
 */
export async function* liveFilePages(db: DbOrTrx, items: { fileIds?: string[]; folderIds?: string[] }, pageSize = FILE_PAGE) {
  const { fileIds = [], folderIds = [] } = items;
  for (let i = 0; i < fileIds.length; i += ID_CHUNK)
    yield await liveFilesWhere(db, sql`f.id in (${sql.join(fileIds.slice(i, i + ID_CHUNK))}) order by f.name`);
  yield* filesInFolders(db, folderIds, pageSize);
}

/**
 * The live files of many folders: those of several folders in one statement, in (folder, name)
 * order. When a page is full, the folders before its last one are read whole; the last one's
 * other files follow by name (its unique live names resume the order), and the folders not in the
 * page are read again.
 */
async function* filesInFolders(db: DbOrTrx, folderIds: string[], pageSize: number): AsyncGenerator<ArchiveFileRow[]> {
  let pending = folderIds;
  while (pending.length > 0) {
    const chunk = pending.slice(0, ID_CHUNK);
    const page = await liveFilesWhere(db, sql`f.folder_id in (${sql.join(chunk)}) order by f.folder_id, f.name limit ${pageSize}`);
    if (page.length > 0) yield page;
    if (page.length < pageSize) {
      pending = pending.slice(ID_CHUNK);
      continue;
    }
    const last = page.at(-1)!;
    const read = new Set(page.map((file) => file.folder_id));
    pending = pending.filter((id) => !read.has(id));
    yield* restOfFolder(db, last.folder_id, last.name, pageSize);
  }
}

/** The live files of one folder named after `after`, a page at a time. */
async function* restOfFolder(db: DbOrTrx, folderId: string, after: string, pageSize: number): AsyncGenerator<ArchiveFileRow[]> {
  for (;;) {
    const page = await liveFilesWhere(db, sql`f.folder_id = ${folderId} and f.name > ${after} order by f.name limit ${pageSize}`);
    if (page.length > 0) yield page;
    if (page.length < pageSize) return;
    after = page.at(-1)!.name;
  }
}

async function liveFilesWhere(db: DbOrTrx, where: RawBuilder<unknown>): Promise<ArchiveFileRow[]> {
  const result = await sql<ArchiveFileRow>`
    select f.id, f.folder_id, f.name, f.updated_at, v.id as version_id, v.size, v.crc32
    from files f join file_versions v on v.id = f.current_version_id
    where f.trash_batch = '' and ${where}
  `.execute(db);
  return result.rows;
}

/** The versions among `versionIds` whose files are live (in the trash: left out), with what opens them. */
export function liveVersionContents(db: DbOrTrx, versionIds: string[]): Promise<VersionContentRow[]> {
  return inChunks(versionIds, async (chunk) => {
    const result = await sql<VersionContentRow>`
      select v.id as version_id, v.size, f.id as file_id, f.folder_id, f.key_wrapped, v.blob_id, v.data_key_wrapped
      from file_versions v join files f on f.id = v.file_id
      where v.id in (${sql.join(chunk)}) and f.trash_batch = ''
    `.execute(db);
    return result.rows;
  });
}

export function filesByIds(db: DbOrTrx, ids: string[]): Promise<FileRow[]> {
  return inChunks(ids, (chunk) => db.selectFrom('files').selectAll().where('id', 'in', chunk).execute());
}

export function foldersByIds(db: DbOrTrx, ids: string[]): Promise<FolderRow[]> {
  return inChunks(ids, (chunk) => db.selectFrom('folders').selectAll().where('id', 'in', chunk).execute());
}

/** Records a version's CRC-32, computed for an archive when it was uploaded before migration 016. */
export async function recordCrc32(db: DbOrTrx, versionId: string, crc32: number): Promise<void> {
  await db.updateTable('file_versions').set({ crc32 }).where('id', '=', versionId).where('crc32', 'is', null).execute();
}
