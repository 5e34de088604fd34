import { sql } from 'kysely';
import type { DbOrTrx } from '../db/database.js';
import { preparedQuery } from '../db/prepared-query.js';
import type { BucketRow, DatahubRow, FileRow, FolderRow } from '../db/schema.js';

/**
 * The reads the access policy (access.ts) decides on: the rows it loads for the services, and the
 * grants. The policy sits below the feature modules, so it reads through these queries of its own
 * rather than importing the modules' repositories; the permissions module writes the grants.
 */

/** Walks up the tree stop here: a guard against a cycle, far beyond any real depth. */
const MAX_DEPTH = 10_000;

/** The flags a user holds on an item, summed over every grant that reaches it. */
export interface GrantFlags {
  view: boolean;
  download: boolean;
  edit: boolean;
}

// Every folder request loads its folder through here: built once (see preparedQuery).
const folderById = preparedQuery((db, p: { id: string }) => db.selectFrom('folders').selectAll().where('id', '=', p.id));

export function findFolder(db: DbOrTrx, id: string): Promise<FolderRow | undefined> {
  return folderById.takeFirst(db, { id });
}

export function findFile(db: DbOrTrx, id: string): Promise<FileRow | undefined> {
  return db.selectFrom('files').selectAll().where('id', '=', id).executeTakeFirst();
}

export function findBucket(db: DbOrTrx, bucketId: string): Promise<BucketRow | undefined> {
  return db.selectFrom('buckets').selectAll().where('id', '=', bucketId).executeTakeFirst();
}

export function findDatahub(db: DbOrTrx, datahubId: string): Promise<DatahubRow | undefined> {
  return db.selectFrom('datahubs').selectAll().where('id', '=', datahubId).executeTakeFirst();
}

/** A subquery: the ids of the folder `startId` and of its ancestors. */
function ancestorIds(startId: string) {
  return sql`
    with recursive chain (id, parent_id, depth) as (
      select id, parent_id, 0 from folders where id = ${startId}
      union all
      select f.id, f.parent_id, chain.depth + 1 from folders f join chain on f.id = chain.parent_id where chain.depth < ${MAX_DEPTH}
    )
    select id from chain`;
}

/**
 * The union of the user's grants on the folder `folderId` and its ancestors, and on the file
 * `fileId` when given (a file inherits from the folder it lives in). One statement whatever the
 * depth: the ancestor walk is a subquery.
 */
export async function effectiveGrant(db: DbOrTrx, userId: string, target: { folderId: string; fileId?: string }): Promise<GrantFlags> {
  const result = await sql<{ v: number | null; d: number | null; e: number | null }>`
    select max(can_view) as v, max(can_download) as d, max(can_edit) as e
    from permissions
    where user_id = ${userId} and (
      (item_kind = 'folder' and item_id in (${ancestorIds(target.folderId)}))
      or (item_kind = 'file' and item_id = ${target.fileId ?? ''})
    )
  `.execute(db);
  const row = result.rows[0];
  return { view: Number(row?.v ?? 0) === 1, download: Number(row?.d ?? 0) === 1, edit: Number(row?.e ?? 0) === 1 };
}

/** The user's own grants on those of `folderIds` that carry one (grants inherited from above are not read). */
export async function grantsOnFolders(db: DbOrTrx, userId: string, folderIds: string[]): Promise<Map<string, GrantFlags>> {
  if (folderIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('permissions')
    .select(['item_id', 'can_view', 'can_download', 'can_edit'])
    .where('user_id', '=', userId)
    .where('item_kind', '=', 'folder')
    .where('item_id', 'in', folderIds)
    .execute();
  return new Map(
    rows.map((r) => [
      r.item_id,
      { view: Number(r.can_view) === 1, download: Number(r.can_download) === 1, edit: Number(r.can_edit) === 1 },
    ]),
  );
}

/** Which of `fileIds` the user holds a grant to download on, on the file itself. */
export async function filesGrantedForDownload(db: DbOrTrx, userId: string, fileIds: string[]): Promise<Set<string>> {
  if (fileIds.length === 0) return new Set();
  const rows = await db
    .selectFrom('permissions')
    .select('item_id')
    .where('user_id', '=', userId)
    .where('item_kind', '=', 'file')
    .where('can_download', '=', 1)
    .where('item_id', 'in', fileIds)
    .execute();
  return new Set(rows.map((r) => r.item_id));
}
