import { sql } from 'kysely';
import { PLANNED_EACH_TIME, type DbOrTrx } from '../../db/database.js';
import type { FileRow, FileVersionRow, FolderRow, NewFile } from '../../db/schema.js';
import { nowIso } from '../../lib/time.js';
import { subtreeFolderIds, trashState } from '../folders/folders.repository.js';
import { deleteThumbnails, insertPendingThumbnails, type NameOf } from '../thumbnails/thumbnails.repository.js';

export function findFile(db: DbOrTrx, id: string): Promise<FileRow | undefined> {
  return db.selectFrom('files').selectAll().where('id', '=', id).executeTakeFirst();
}

export function findFileByHashName(db: DbOrTrx, hashName: string): Promise<FileRow | undefined> {
  return db.selectFrom('files').selectAll().where('hash_name', '=', hashName).executeTakeFirst();
}

/**
 * Who holds `name` directly in `folderId` among the live items, in one statement: the live file of
 * that name, if any, and whether a live subfolder has it (files and folders share one namespace).
 * The live state is written as a literal: SQLite re-prepares a statement on every run when a bound
 * parameter is compared with the column of a partial index's condition (`trash_batch = ''`).
 */
export async function liveNameHolder(
  db: DbOrTrx,
  folderId: string,
  name: string,
): Promise<{ file: FileRow | undefined; folderTaken: boolean }> {
  const result = await sql<FileRow & { folder_taken: number }>`
    select files.*, (select count(*) from folders where parent_id = ${folderId} and name = ${name} and trash_batch = '') as folder_taken
    from (select 1 as one) as anchor
    left join files on files.folder_id = ${folderId} and files.name = ${name} and files.trash_batch = ''
  `.execute(db);
  const { folder_taken: folderTaken, ...file } = result.rows[0];
  return { file: file.id === null ? undefined : (file as FileRow), folderTaken: Number(folderTaken) > 0 };
}

/**
 * A folder's row and which of `names` (at least one) its live files and subfolders hold, in one
 * statement: the two reads of a grouped upload under the owner's lock, where every statement is a
 * round trip of the transaction all the owner's uploads queue behind. One row per name taken,
 * each with the folder's columns, or one with `taken_name` null; none for an unknown folder.
 */
export async function findFolderWithNamesTaken(
  db: DbOrTrx,
  folderId: string,
  names: string[],
): Promise<{ folder: FolderRow; taken: Set<string> } | undefined> {
  const result = await folderWithNamesTakenQuery(folderId, names).execute(db);
  if (result.rows.length === 0) return undefined;
  const { taken_name: _, ...folder } = result.rows[0];
  return { folder: folder as FolderRow, taken: new Set(result.rows.flatMap((row) => (row.taken_name === null ? [] : [row.taken_name]))) };
}

/**
 * The statement of findFolderWithNamesTaken. Each name is one lookup of the live-name indexes
 * (folder, name). Written as `name in (…)`, PostgreSQL planned it as a scan of the folder's whole
 * range of the index with the names as a filter whenever its statistics saw the folder as small
 * (a table not analysed since it grew, as with autovacuum off), a cost that grows with the
 * folder. A correlated lookup per name is planned as a search on both columns (SQLite
 * too); `column1` is what both dialects call a VALUES list's first column. Planned each time on
 * PostgreSQL: one plan per list length would be kept from when the folder was small (see also
 * migration 008).
 */
export function folderWithNamesTakenQuery(folderId: string, names: string[]) {
  const probes = sql.join(names.map((name) => sql`(${name})`));
  return sql<FolderRow & { taken_name: string | null }>`${sql.raw(PLANNED_EACH_TIME)}select f.*, t.name as taken_name
    from folders f left join (
      select v.column1 as name from (values ${probes}) as v
      where (select 1 from files where folder_id = ${folderId} and name = v.column1 and trash_batch = '' limit 1) is not null
         or (select 1 from folders where parent_id = ${folderId} and name = v.column1 and trash_batch = '' limit 1) is not null
    ) t on true
    where f.id = ${folderId}`;
}

export async function insertFiles(db: DbOrTrx, rows: NewFile[]): Promise<void> {
  const CHUNK = 400;
  for (let i = 0; i < rows.length; i += CHUNK)
    await db
      .insertInto('files')
      .values(rows.slice(i, i + CHUNK))
      .execute();
}

/** New files as a write to run beside others (see write-batch.ts); for a few rows (no chunks). */
export function insertFilesWrite(db: DbOrTrx, rows: NewFile[]) {
  return db.insertInto('files').values(rows);
}

/** New versions as a write to run beside others (see write-batch.ts); for a few rows (no chunks). */
export function insertVersionsWrite(db: DbOrTrx, rows: FileVersionRow[]) {
  return db.insertInto('file_versions').values(rows);
}

export async function updateFile(db: DbOrTrx, id: string, changes: Partial<Omit<FileRow, 'id'>>): Promise<void> {
  await db.updateTable('files').set(changes).where('id', '=', id).execute();
}

/** New versions, with the pending thumbnails of those that are images (modules/thumbnails; `nameOf` names their files). */
export async function insertVersions(db: DbOrTrx, rows: FileVersionRow[], nameOf: NameOf): Promise<void> {
  const CHUNK = 500;
  for (let i = 0; i < rows.length; i += CHUNK) {
    await db
      .insertInto('file_versions')
      .values(rows.slice(i, i + CHUNK))
      .execute();
    await insertPendingThumbnails(db, rows.slice(i, i + CHUNK), nameOf);
  }
}

export function findVersion(db: DbOrTrx, fileId: string, versionId: string): Promise<FileVersionRow | undefined> {
  return db.selectFrom('file_versions').selectAll().where('id', '=', versionId).where('file_id', '=', fileId).executeTakeFirst();
}

/** Versions of a file, newest first (ids are time-ordered). */
export function listVersions(db: DbOrTrx, fileId: string): Promise<FileVersionRow[]> {
  return db.selectFrom('file_versions').selectAll().where('file_id', '=', fileId).orderBy('id', 'desc').execute();
}

/** Deletes a version and its thumbnail (whose blob loses its reference). */
export async function deleteVersion(db: DbOrTrx, versionId: string): Promise<void> {
  await deleteThumbnails(db, { versionIds: [versionId] }, nowIso());
  await db.deleteFrom('file_versions').where('id', '=', versionId).execute();
}

export type FileSort = 'name' | 'createdAt' | 'size';
const SORT_COLUMNS = { name: 'name', createdAt: 'created_at', size: 'size' } as const;

/** One page of a folder's files in the folder's trash state, keyset-paginated on (sort column, id). */
export async function listFilesPage(
  db: DbOrTrx,
  folderId: string,
  trashBatch: string,
  page: { sort: FileSort; order: 'asc' | 'desc'; limit: number; after?: [string | number, string] },
): Promise<{ rows: FileRow[]; hasMore: boolean }> {
  const column = SORT_COLUMNS[page.sort];
  const cmp = page.order === 'asc' ? '>' : '<';
  let query = db.selectFrom('files').selectAll().where('folder_id', '=', folderId).where('trash_batch', '=', trashState(trashBatch));
  if (page.after) {
    const [value, id] = page.after;
    query = query.where((eb) => eb.or([eb(column, cmp, value as never), eb.and([eb(column, '=', value as never), eb('id', cmp, id)])]));
  }
  const rows = await query
    .orderBy(column, page.order)
    .orderBy('id', page.order)
    .limit(page.limit + 1)
    .execute();
  return { rows: rows.slice(0, page.limit), hasMore: rows.length > page.limit };
}

export function sortValue(row: FileRow, sort: FileSort): string | number {
  return sort === 'name' ? row.name : sort === 'createdAt' ? row.created_at : Number(row.size);
}

export interface PurgeRow {
  id: string;
  owner_id: string;
  versions_bytes: number;
}

/** Every file anywhere in a folder's subtree, trashed or not. */
export async function filesInSubtree(db: DbOrTrx, rootFolderId: string): Promise<PurgeRow[]> {
  const result = await sql<PurgeRow>`
    select id, owner_id, versions_bytes from files where folder_id in (${subtreeFolderIds(rootFolderId)})
  `.execute(db);
  return result.rows.map((r) => ({ ...r, versions_bytes: Number(r.versions_bytes) }));
}

/** Whether any file in a folder's subtree is under retention at `now`. */
export async function retainedFileInSubtree(db: DbOrTrx, rootFolderId: string, now: string): Promise<boolean> {
  const result = await sql<{ id: string }>`
    select id from files where folder_id in (${subtreeFolderIds(rootFolderId)}) and retain_until > ${now} limit 1
  `.execute(db);
  return result.rows.length > 0;
}

/** Blob ids of every version of these files (one entry per version). */
export async function versionBlobIds(db: DbOrTrx, fileIds: string[]): Promise<string[]> {
  if (fileIds.length === 0) return [];
  const rows = await db.selectFrom('file_versions').select('blob_id').where('file_id', 'in', fileIds).execute();
  return rows.map((r) => r.blob_id);
}

export async function deleteFilesAndVersions(db: DbOrTrx, fileIds: string[]): Promise<void> {
  if (fileIds.length === 0) return;
  await deleteThumbnails(db, { fileIds }, nowIso());
  await db.deleteFrom('file_versions').where('file_id', 'in', fileIds).execute();
  await db.deleteFrom('files').where('id', 'in', fileIds).execute();
}

/** Live files of the given folders (the copy of a folder subtree copies these). */
export function liveFilesOfFolders(db: DbOrTrx, folderIds: string[]): Promise<FileRow[]> {
  if (folderIds.length === 0) return Promise.resolve([]);
  return db.selectFrom('files').selectAll().where('folder_id', 'in', folderIds).where('trash_batch', '=', '').execute();
}

export function versionsByIds(db: DbOrTrx, ids: string[]): Promise<FileVersionRow[]> {
  if (ids.length === 0) return Promise.resolve([]);
  return db.selectFrom('file_versions').selectAll().where('id', 'in', ids).execute();
}
