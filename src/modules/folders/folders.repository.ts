import { sql, type RawBuilder } from 'kysely';
import type { DbOrTrx } from '../../db/database.js';
import { jsonTextElements } from '../../db/json-text.js';
import { preparedQuery } from '../../db/prepared-query.js';
import type { FolderRow, NewFolder } from '../../db/schema.js';

/** Walks up the tree stop here: a guard against a cycle, far beyond any real depth. */
const MAX_DEPTH = 10_000;

/**
 * Folder queries. Subtrees and ancestor chains are walked with recursive CTEs (both engines have
 * them), so a move is a one-row update and never rewrites the paths of a subtree.
 */

// The queries every folder read runs are built once (see preparedQuery).
const folderById = preparedQuery((db, p: { id: string }) => db.selectFrom('folders').selectAll().where('id', '=', p.id));

export function findFolder(db: DbOrTrx, id: string): Promise<FolderRow | undefined> {
  return folderById.takeFirst(db, { id });
}

const foldersByIds = preparedQuery((db, p: { ids: string }) =>
  db
    .selectFrom('folders')
    .selectAll()
    .where(sql<boolean>`id in (${jsonTextElements(db, sql`${p.ids}`)})`),
);

/** The rows of each of `ids` that exists, by id. */
export async function findFolders(db: DbOrTrx, ids: readonly string[]): Promise<Map<string, FolderRow>> {
  if (ids.length === 0) return new Map();
  return new Map((await foldersByIds.execute(db, { ids: JSON.stringify(ids) })).map((row) => [row.id, row]));
}

/** The columns of a folder that its details show (a details request reads no others). */
const DETAIL_COLUMNS = [
  'id',
  'bucket_id',
  'owner_id',
  'parent_id',
  'name',
  'visibility',
  'hash_url',
  'is_root',
  'trash_batch',
  'deleted_at',
  'subtree_files',
  'subtree_folders',
  'subtree_bytes',
  'last_access_at',
  'created_at',
  'updated_at',
] as const satisfies readonly (keyof FolderRow)[];

/** A folder's detail columns, with its datahub's location and how many users it is shared with. */
export type FolderWithLocation = Pick<FolderRow, (typeof DETAIL_COLUMNS)[number]> & {
  location_name: string;
  location_code: string;
  shared_users: number;
};

/** The folder of a details response and its ancestors, nearest first. */
export interface FolderDetailRows {
  folder: FolderWithLocation;
  ancestors: AncestorRow[];
}

type DetailChainRow = { [K in keyof FolderWithLocation]: FolderWithLocation[K] | null } & {
  chain_start: string;
  chain_id: string;
  chain_name: string;
  chain_is_root: number;
  chain_trash_batch: string;
  chain_depth: number;
};

/**
 * Folder details in one statement (one round trip on PostgreSQL), for several folders at once:
 * each folder's ancestor chain, each link a row, with the folder itself, its location and share
 * count joined to the first. `ids` is a JSON array text (see jsonTextElements).
 */
const folderDetails = preparedQuery(
  (db, p: { ids: string }) => sql<DetailChainRow>`
    ${ancestorChains(sql`id in (${jsonTextElements(db, sql`${p.ids}`)})`)}
    select chain.start_id as chain_start, chain.id as chain_id, chain.name as chain_name, chain.is_root as chain_is_root, chain.trash_batch as chain_trash_batch, chain.depth as chain_depth,
      ${sql.join(DETAIL_COLUMNS.map((column) => sql.ref(`folders.${column}`)))}, locations.name_en as location_name, locations.region_code as location_code,
      (select count(*) from permissions where permissions.item_kind = 'folder' and permissions.item_id = folders.id) as shared_users
    from chain
    left join folders on chain.depth = 0 and folders.id = chain.id
    left join buckets on buckets.id = folders.bucket_id
    left join datahubs on datahubs.id = buckets.datahub_id
    left join locations on locations.id = datahubs.location_id
    order by chain.start_id, chain.depth
  `,
);

/** The details rows of each of `ids` that exists. */
export async function findFolderDetails(db: DbOrTrx, ids: readonly string[]): Promise<Map<string, FolderDetailRows>> {
  const found = new Map<string, FolderDetailRows>();
  if (ids.length === 0) return found;
  // Ordered by start, then depth: each folder's own row comes first, then its ancestors, nearest first.
  for (const row of await folderDetails.execute(db, { ids: JSON.stringify(ids) })) {
    const {
      chain_start: start,
      chain_id: id,
      chain_name: name,
      chain_is_root: isRoot,
      chain_trash_batch: trashBatch,
      chain_depth: depth,
      ...folder
    } = row;
    if (Number(depth) === 0) found.set(start, { folder: folder as FolderWithLocation, ancestors: [] });
    else found.get(start)?.ancestors.push({ id, name, is_root: Number(isRoot), trash_batch: trashBatch, depth: Number(depth) });
  }
  return found;
}

export interface AncestorRow {
  id: string;
  name: string;
  is_root: number;
  trash_batch: string;
  depth: number;
}

/**
 * The recursive CTE `chain (start_id, id, name, parent_id, is_root, trash_batch, depth)`: each
 * folder matching `start` (depth 0) and its ancestors, bounded by MAX_DEPTH, `start_id` telling
 * which walk a row belongs to. Queries that need the chain put their own `select … from chain`
 * after it, so a walk up the tree is one statement.
 */
export function ancestorChains(start: RawBuilder<unknown>) {
  return sql`
    with recursive chain (start_id, id, name, parent_id, is_root, trash_batch, depth) as (
      select id, id, name, parent_id, is_root, trash_batch, 0 from folders where ${start}
      union all
      select chain.start_id, f.id, f.name, f.parent_id, f.is_root, f.trash_batch, chain.depth + 1
      from folders f join chain on f.id = chain.parent_id where chain.depth < ${MAX_DEPTH}
    )`;
}

/** The chain of one folder: `startId` and its ancestors. */
function ancestorChain(startId: string) {
  return ancestorChains(sql`id = ${startId}`);
}

/** The folder `startId` and its ancestors, nearest first (`depth` 0 is `startId` itself). */
const ancestors = preparedQuery(
  (_db, p: { startId: string }) => sql<AncestorRow>`
    ${ancestorChain(p.startId)}
    select id, name, is_root, trash_batch, depth from chain order by depth
  `,
);

export async function ancestorsFrom(db: DbOrTrx, startId: string): Promise<AncestorRow[]> {
  const rows = await ancestors.execute(db, { startId });
  return rows.map((r) => ({ ...r, depth: Number(r.depth), is_root: Number(r.is_root) }));
}

/** Whether a live folder or file named `name` sits directly in `parentId` (they share one namespace). */
export async function liveNameTaken(db: DbOrTrx, parentId: string, name: string): Promise<boolean> {
  const result = await sql<{ id: string }>`
    select id from folders where parent_id = ${parentId} and name = ${name} and trash_batch = ''
    union all
    select id from files where folder_id = ${parentId} and name = ${name} and trash_batch = ''
    limit 1
  `.execute(db);
  return result.rows.length > 0;
}

export async function insertFolders(db: DbOrTrx, rows: NewFolder[]): Promise<void> {
  // Chunks keep each statement under the engines' bound-parameter limits.
  const CHUNK = 500;
  for (let i = 0; i < rows.length; i += CHUNK) {
    await db
      .insertInto('folders')
      .values(rows.slice(i, i + CHUNK))
      .execute();
  }
}

export async function updateFolder(
  db: DbOrTrx,
  id: string,
  changes: Partial<Pick<FolderRow, 'name' | 'visibility' | 'is_share' | 'parent_id' | 'key_wrapped' | 'updated_at' | 'last_access_at'>>,
): Promise<void> {
  await db.updateTable('folders').set(changes).where('id', '=', id).execute();
}

/**
 * Records a read of a folder (or of a file directly in it), at most once a minute per folder:
 * the condition makes the write a no-op inside that minute, on any number of instances.
 */
export async function touchFolderAccess(db: DbOrTrx, folderId: string, now: string, minIntervalMs: number): Promise<void> {
  const before = new Date(Date.parse(now) - minIntervalMs).toISOString();
  await db
    .updateTable('folders')
    .set({ last_access_at: now })
    .where('id', '=', folderId)
    .where((eb) => eb.or([eb('last_access_at', 'is', null), eb('last_access_at', '<', before)]))
    .execute();
}

/** The folder trees a mutation works on: those holding these folders and files. */
export interface TreeRefs {
  folders?: string[];
  files?: string[];
}

/**
 * Serialises the mutations of these trees until the transaction ends: a row lock on each owner of
 * the folders and files named (in id order, so two lockers never wait on each other), taken before
 * anything else is read. A mutation checks the tree (target live, not inside the moved folder),
 * reads contributions and ancestor chains, then adjusts them; interleaved with another mutation of
 * the same tree, it would act on a state that no longer holds: aggregates adjusted along a former
 * chain, crossed moves that both pass the cycle check (and then recursive walks that never end),
 * a folder created in one being trashed, deadlocks. SQLite runs one writer at a time already.
 */
export async function lockTrees(db: DbOrTrx, rowLocks: boolean, refs: TreeRefs): Promise<void> {
  if (!rowLocks) return;
  const orNone = (ids: string[] | undefined) => sql.join(ids && ids.length > 0 ? ids : ['']);
  await sql`
    select id from users where id in (
      select owner_id from folders where id in (${orNone(refs.folders)})
      union
      select owner_id from files where id in (${orNone(refs.files)})
    )
    order by id
    for no key update
  `.execute(db);
}

/** What an item adds to the aggregates of the folders above it. */
export interface Contribution {
  folders: number;
  files: number;
  bytes: number;
}

/**
 * A trash state as a statement fragment: the live state as the literal `''`, a batch as a bound
 * parameter. SQLite re-prepares a statement on every run when a bound parameter is compared with
 * the column of a partial index's condition (the live-name indexes' `trash_batch = ''`), which
 * costs several times the query itself; the live tree is what the frequent mutations touch.
 */
export function trashState(batch: string): RawBuilder<string> {
  return batch === '' ? sql.lit<string>('') : sql<string>`${batch}`;
}

/** In the trash, as a literal, so the trash indexes (partial on it, see migration 008) can serve the query. */
export const IN_TRASH = sql<boolean>`trash_batch <> ''`;

export function contributionOf(folder: Pick<FolderRow, 'subtree_folders' | 'subtree_files' | 'subtree_bytes'>): Contribution {
  return { folders: Number(folder.subtree_folders) + 1, files: Number(folder.subtree_files), bytes: Number(folder.subtree_bytes) };
}

/**
 * Adds `sign × contribution` to the aggregates of `parentId` and of its ancestors in the same
 * trash state (`trashBatch`), and `sign × direct` to the parent's child counts. One statement
 * whatever the depth. The walk stops where the trash state changes, which is what keeps the
 * aggregates of the live tree and of each trashed batch separate.
 */
export async function adjustChain(
  db: DbOrTrx,
  parentId: string,
  trashBatch: string,
  sign: 1 | -1,
  contribution: Contribution,
  direct: { folders: number; files: number },
): Promise<void> {
  await adjustChainWrite(parentId, trashBatch, sign, contribution, direct).execute(db);
}

/** adjustChain as a write to run beside others (see write-batch.ts). */
export function adjustChainWrite(
  parentId: string,
  trashBatch: string,
  sign: 1 | -1,
  contribution: Contribution,
  direct: { folders: number; files: number },
) {
  const f = sign * contribution.folders;
  const n = sign * contribution.files;
  const b = sign * contribution.bytes;
  const df = sign * direct.folders;
  const dn = sign * direct.files;
  return sql`
    update folders set
      subtree_folders = subtree_folders + ${f},
      subtree_files = subtree_files + ${n},
      subtree_bytes = subtree_bytes + ${b},
      child_folders = child_folders + case when id = ${parentId} then ${df} else 0 end,
      child_files = child_files + case when id = ${parentId} then ${dn} else 0 end
    where id in (
      with recursive chain (id, parent_id, depth) as (
        select id, parent_id, 0 from folders where id = ${parentId} and trash_batch = ${trashState(trashBatch)}
        union all
        select p.id, p.parent_id, chain.depth + 1 from folders p join chain on p.id = chain.parent_id
        where p.trash_batch = ${trashState(trashBatch)} and chain.depth < ${MAX_DEPTH}
      )
      select id from chain
    )
  `;
}

/**
 * Sets `trash_batch` and `deleted_at` on a folder and on its descendants (folders and files) that
 * are in state `fromBatch`. Items trashed on their own earlier keep their own batch.
 */
export async function setSubtreeTrashState(
  db: DbOrTrx,
  rootId: string,
  fromBatch: string,
  toBatch: string,
  deletedAt: string | null,
): Promise<void> {
  const subtree = sql`
    with recursive sub (id) as (
      select id from folders where id = ${rootId}
      union all
      select c.id from folders c join sub on c.parent_id = sub.id where c.trash_batch = ${fromBatch}
    )
    select id from sub`;
  // Files first: the folder walk above reads the folders' state before it changes.
  await sql`
    update files set trash_batch = ${toBatch}, deleted_at = ${deletedAt}
    where trash_batch = ${fromBatch} and folder_id in (${subtree})
  `.execute(db);
  await sql`update folders set trash_batch = ${toBatch}, deleted_at = ${deletedAt} where id in (${subtree})`.execute(db);
}

/** A subquery: the ids of a folder and all its descendants, whatever their trash state. */
export function subtreeFolderIds(rootId: string) {
  return sql`
    with recursive sub (id) as (
      select id from folders where id = ${rootId}
      union all
      select c.id from folders c join sub on c.parent_id = sub.id
    )
    select id from sub`;
}

/** Deletes a folder and its whole subtree in one statement (the parent reference is checked at its end). */
export async function deleteSubtree(db: DbOrTrx, rootId: string): Promise<void> {
  await sql`delete from folders where id in (${subtreeFolderIds(rootId)})`.execute(db);
}

/** Moves every folder and file of a subtree to another bucket (a cross-bucket move). */
export async function setSubtreeBucket(db: DbOrTrx, rootId: string, bucketId: string): Promise<void> {
  await sql`update files set bucket_id = ${bucketId} where folder_id in (${subtreeFolderIds(rootId)})`.execute(db);
  await sql`update folders set bucket_id = ${bucketId} where id in (${subtreeFolderIds(rootId)})`.execute(db);
}

/** The live subtree of a folder (itself first), parents always before their children. */
export async function liveSubtree(db: DbOrTrx, rootId: string): Promise<FolderRow[]> {
  const result = await sql<FolderRow & { depth: number }>`
    with recursive sub (id, depth) as (
      select id, 0 from folders where id = ${rootId}
      union all
      select c.id, sub.depth + 1 from folders c join sub on c.parent_id = sub.id where c.trash_batch = ''
    )
    select f.*, sub.depth from folders f join sub on f.id = sub.id order by sub.depth
  `.execute(db);
  return result.rows.map(({ depth: _depth, ...row }) => row as FolderRow);
}

/** Trashed folders that were trashed on their own (the roots of trash batches) of one owner. */
export function listTrashRoots(db: DbOrTrx, ownerId: string, bucketId?: string) {
  let query = db.selectFrom('folders').selectAll().where('owner_id', '=', ownerId).whereRef('trash_batch', '=', 'id').where(IN_TRASH);
  if (bucketId) query = query.where('bucket_id', '=', bucketId);
  return query.orderBy('deleted_at', 'desc').execute();
}
