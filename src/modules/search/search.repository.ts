import { PostgresAdapter, sql, type RawBuilder } from 'kysely';
import type { DbOrTrx } from '../../db/database.js';
import { ancestorChains } from '../folders/folders.repository.js';

export type SearchKind = 'file' | 'folder';

/** A file or folder whose name matches, as the search reads it. */
export interface SearchHit {
  kind: SearchKind;
  id: string;
  name: string;
  /** The folder holding the item; null for a bucket's root folder (never a result). */
  parent_id: string | null;
  bucket_id: string;
  owner_id: string;
  owner_name: string;
  size: number | null;
  content_type: string | null;
  updated_at: string;
}

export interface SearchCriteria {
  userId: string;
  /** What the name must contain, as typed (at least three characters). */
  text: string;
  /** Files whose content type starts with one of these (`image/`) or is one of them; none: any. */
  contentTypes?: readonly string[];
  modifiedAfter?: string;
  modifiedBefore?: string;
  /** Only items of this kind whose id sorts before this one (the cursor). */
  beforeId?: string;
  limit: number;
}

const isPostgres = (db: DbOrTrx) => db.getExecutor().adapter instanceof PostgresAdapter;

/** `%`, `_` and the escape character itself stand for themselves in a LIKE pattern. */
export function likeEscape(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/**
 * The condition "the name of `alias` contains the text, case and accents aside". SQLite asks the
 * FTS5 trigram table (a phrase in double quotes is matched literally, `%` and `_` included);
 * PostgreSQL a LIKE on `coffre_fold(name)`, which its trigram GIN index answers.
 */
function nameMatches(db: DbOrTrx, kind: SearchKind, alias: string, text: string): RawBuilder<unknown> {
  const ref = sql.ref(`${alias}.name`);
  if (isPostgres(db)) return sql`coffre_fold(${ref}) like '%' || coffre_fold(${likeEscape(text)}) || '%' escape '\\'`;
  const phrase = `"${text.replace(/"/g, '""')}"`;
  return sql`${sql.ref(`${alias}.id`)} in (
    select d.item_id from search_names s join search_docs d on d.doc = s.rowid
    where search_names match ${phrase} and d.kind = ${kind})`;
}

/** The filters both kinds share: date range and cursor. */
function commonFilters(alias: string, c: SearchCriteria): RawBuilder<unknown> {
  const parts = [sql`true`];
  if (c.modifiedAfter) parts.push(sql`${sql.ref(`${alias}.updated_at`)} >= ${c.modifiedAfter}`);
  if (c.modifiedBefore) parts.push(sql`${sql.ref(`${alias}.updated_at`)} < ${c.modifiedBefore}`);
  if (c.beforeId) parts.push(sql`${sql.ref(`${alias}.id`)} < ${c.beforeId}`);
  return sql.join(parts, sql` and `);
}

function contentTypeFilter(c: SearchCriteria): RawBuilder<unknown> {
  if (!c.contentTypes?.length) return sql`true`;
  const each = c.contentTypes.map((t) =>
    t.endsWith('/') ? sql`x.content_type like ${`${likeEscape(t)}%`} escape '\\'` : sql`x.content_type = ${t}`,
  );
  return sql`(${sql.join(each, sql` or `)})`;
}

/**
 * The live folders shared with the user and everything under them: a grant on a folder covers
 * its subtree, and any flag lets one see. Trashed folders (and what went with them) are left out.
 */
function sharedFolders(userId: string): RawBuilder<unknown> {
  return sql`shared (id) as (
    select f.id from permissions p join folders f on f.id = p.item_id
    where p.user_id = ${userId} and p.item_kind = 'folder' and f.trash_batch = '' and f.owner_id <> ${userId}
      and (p.can_view = 1 or p.can_download = 1 or p.can_edit = 1)
    union
    select c.id from folders c join shared on c.parent_id = shared.id where c.trash_batch = ''
  )`;
}

const byIdDesc = (limit: number) => sql`order by x.id desc limit ${limit}`;

/** The caller's own live files whose name matches, newest first. */
export async function ownFiles(db: DbOrTrx, c: SearchCriteria): Promise<SearchHit[]> {
  const result = await sql<SearchHit>`
    select 'file' as kind, x.id, x.name, x.folder_id as parent_id, x.bucket_id, x.owner_id, '' as owner_name,
      x.size, x.content_type, x.updated_at
    from files x
    where x.owner_id = ${c.userId} and x.trash_batch = '' and ${nameMatches(db, 'file', 'x', c.text)}
      and ${contentTypeFilter(c)} and ${commonFilters('x', c)}
    ${byIdDesc(c.limit)}`.execute(db);
  return result.rows;
}

/** The caller's own live folders (roots aside: they are the buckets) whose name matches, newest first. */
export async function ownFolders(db: DbOrTrx, c: SearchCriteria): Promise<SearchHit[]> {
  const result = await sql<SearchHit>`
    select 'folder' as kind, x.id, x.name, x.parent_id, x.bucket_id, x.owner_id, '' as owner_name,
      null as size, null as content_type, x.updated_at
    from folders x
    where x.owner_id = ${c.userId} and x.trash_batch = '' and x.is_root = 0 and ${nameMatches(db, 'folder', 'x', c.text)}
      and ${commonFilters('x', c)}
    ${byIdDesc(c.limit)}`.execute(db);
  return result.rows;
}

/** Live files shared with the caller, on their own or under a shared folder, whose name matches. */
export async function sharedFiles(db: DbOrTrx, c: SearchCriteria): Promise<SearchHit[]> {
  const result = await sql<SearchHit>`
    with recursive ${sharedFolders(c.userId)}
    select 'file' as kind, x.id, x.name, x.folder_id as parent_id, x.bucket_id, x.owner_id, u.name as owner_name,
      x.size, x.content_type, x.updated_at
    from files x join users u on u.id = x.owner_id
    where x.trash_batch = '' and x.owner_id <> ${c.userId}
      and (x.folder_id in (select id from shared) or x.id in (
        select p.item_id from permissions p where p.user_id = ${c.userId} and p.item_kind = 'file'
          and (p.can_view = 1 or p.can_download = 1 or p.can_edit = 1)))
      and ${nameMatches(db, 'file', 'x', c.text)} and ${contentTypeFilter(c)} and ${commonFilters('x', c)}
    ${byIdDesc(c.limit)}`.execute(db);
  return result.rows;
}

/** Live folders shared with the caller (a shared folder itself or one under it) whose name matches. */
export async function sharedFoldersMatching(db: DbOrTrx, c: SearchCriteria): Promise<SearchHit[]> {
  const result = await sql<SearchHit>`
    with recursive ${sharedFolders(c.userId)}
    select 'folder' as kind, x.id, x.name, x.parent_id, x.bucket_id, x.owner_id, u.name as owner_name,
      null as size, null as content_type, x.updated_at
    from folders x join users u on u.id = x.owner_id
    where x.id in (select id from shared) and ${nameMatches(db, 'folder', 'x', c.text)} and ${commonFilters('x', c)}
    ${byIdDesc(c.limit)}`.execute(db);
  return result.rows;
}

/** One folder of an ancestor chain: `depth` 0 is the folder the chain starts from. */
export interface ChainLink {
  start_id: string;
  id: string;
  name: string;
  is_root: number;
  depth: number;
}

/** The chains of several folders up to their roots, in one query. */
export async function folderChains(db: DbOrTrx, ids: string[]): Promise<ChainLink[]> {
  if (ids.length === 0) return [];
  const result = await sql<ChainLink>`
    ${ancestorChains(sql`id in (${sql.join(ids)})`)}
    select start_id, id, name, is_root, depth from chain`.execute(db);
  return result.rows.map((r) => ({ ...r, is_root: Number(r.is_root), depth: Number(r.depth) }));
}

/** The folders among `ids` that carry a grant to the user letting them see (grants from above not read). */
export async function grantedFolders(db: DbOrTrx, userId: string, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db
    .selectFrom('permissions')
    .select('item_id')
    .where('user_id', '=', userId)
    .where('item_kind', '=', 'folder')
    .where('item_id', 'in', ids)
    .where((eb) => eb.or([eb('can_view', '=', 1), eb('can_download', '=', 1), eb('can_edit', '=', 1)]))
    .execute();
  return new Set(rows.map((r) => r.item_id));
}
