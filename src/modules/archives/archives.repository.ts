import { sql } from 'kysely';
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

/** A folder's live subtree: its folders (itself first, parents first) and their live files. */
export async function liveTree(db: DbOrTrx, rootId: string): Promise<{ folders: ArchiveFolderRow[]; files: ArchiveFileRow[] }> {
  const folders = await liveSubtrees(db, [rootId]);
  const files = await liveFilesIn(
    db,
    folders.map((f) => f.id),
  );
  return { folders, files };
}

/** The live files directly in `folderIds`, with their current versions. */
export function liveFilesIn(db: DbOrTrx, folderIds: string[]): Promise<ArchiveFileRow[]> {
  return liveFilesWhere(db, sql.ref('f.folder_id'), folderIds);
}

/** The live files among `fileIds`, with their current versions. */
export function liveFilesById(db: DbOrTrx, fileIds: string[]): Promise<ArchiveFileRow[]> {
  return liveFilesWhere(db, sql.ref('f.id'), fileIds);
}

function liveFilesWhere(db: DbOrTrx, column: ReturnType<typeof sql.ref>, ids: string[]): Promise<ArchiveFileRow[]> {
  return inChunks(ids, async (chunk) => {
    const result = await sql<ArchiveFileRow>`
      select f.id, f.folder_id, f.name, f.updated_at, v.id as version_id, v.size, v.crc32
      from files f join file_versions v on v.id = f.current_version_id
      where ${column} in (${sql.join(chunk)}) and f.trash_batch = ''
    `.execute(db);
    return result.rows;
  });
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
