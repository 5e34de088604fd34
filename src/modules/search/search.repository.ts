import { PostgresAdapter, sql, type RawBuilder } from 'kysely';
import type { DbOrTrx } from '../../db/database.js';
import { foldName } from '../../db/sqlite-fold.js';
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
  /** Whether anything is shared with the caller (`hasGrants`): without, shared items are not read. */
  withShared: boolean;
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

/**
 * How a query checks names. `indexed`: the trigram index lists the matches, then each is checked
 * for who may see it (fast when matches are few). `row-by-row`: the rows are read in result order
 * and each name is folded and compared (fast when most names match). `window` reads at most that
 * many of the caller's newest items (own items only).
 */
export interface ReadPlan {
  check: 'indexed' | 'row-by-row';
  window?: number;
}

/** `%`, `_` and the escape character itself stand for themselves in a LIKE pattern. */
export function likeEscape(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

const tableOf = (kind: SearchKind) => sql.table(kind === 'file' ? 'files' : 'folders');

/** SQLite's trigram table of a kind (migration 022). */
const namesTable = (kind: SearchKind) => sql.table(kind === 'file' ? 'search_file_names' : 'search_folder_names');

/** A phrase in double quotes is matched literally by FTS5, `%` and `_` included. */
const namesMatch = (kind: SearchKind, text: string) => sql`${namesTable(kind)} match ${`"${text.replace(/"/g, '""')}"`}`;

/** PostgreSQL: "the folded name of `alias` contains the text", which the trigram GIN index answers. */
const foldedLike = (alias: string, text: string) =>
  sql`coffre_fold(${sql.ref(`${alias}.name`)}) like '%' || coffre_fold(${likeEscape(text)}) || '%' escape '\\'`;

/** Both: the same, compared with `strpos` or `instr`, which no index answers (src/db/sqlite-fold.ts on SQLite). */
function foldedContains(db: DbOrTrx, alias: string, text: string): RawBuilder<unknown> {
  const ref = sql.ref(`${alias}.name`);
  return isPostgres(db)
    ? sql`strpos(coffre_fold(${ref}), coffre_fold(${text})) > 0`
    : sql`instr(coffre_fold(${ref}), ${foldName(text)}) > 0`;
}

/**
 * How many items of a kind, anyone's, the trigram index would list for the text, up to `cap`:
 * the cost of an indexed read. SQLite counts them (FTS5 lists them fast); PostgreSQL's planner
 * estimates them from its statistics, since a count would read the whole posting list first.
 */
export async function countIndexed(db: DbOrTrx, kind: SearchKind, text: string, cap: number): Promise<number> {
  if (isPostgres(db)) {
    const plan = await sql<{ 'QUERY PLAN': [{ Plan: { 'Plan Rows': number } }] }>`
      explain (format json) select 1 from ${tableOf(kind)} x where ${foldedLike('x', text)}`.execute(db);
    return Math.min(cap, Number(plan.rows[0]['QUERY PLAN'][0].Plan['Plan Rows']));
  }
  const result = await sql<{ n: number }>`
    select count(*) as n from (select 1 from ${namesTable(kind)} where ${namesMatch(kind, text)} limit ${cap}) listed`.execute(db);
  return Number(result.rows[0].n);
}

/**
 * Where a query reads its candidate rows (as `x`), the common table expressions that takes, and
 * the condition left to check their names.
 * - A window: the caller's newest live items, names checked row by row.
 * - Row by row: the whole table, in the order the query's own conditions make cheapest.
 * - Indexed, PostgreSQL: the matches listed by the trigram index, kept apart (materialized) so
 *   that the planner cannot walk the primary key in result order instead when it expects the
 *   page to fill early (it did: 250 ms for 1,120 matches among 100,000 folders).
 * - Indexed, SQLite: the table, its ids checked against the kind's FTS5 table.
 */
interface Source {
  ctes: RawBuilder<unknown>[];
  from: RawBuilder<unknown>;
  nameCheck: RawBuilder<unknown>;
}

function sourceOf(db: DbOrTrx, kind: SearchKind, c: SearchCriteria, plan: ReadPlan): Source {
  const table = tableOf(kind);
  if (plan.window) {
    const newest = sql`(select * from ${table} where owner_id = ${c.userId} and trash_batch = '' ${beforeCursor(c)}
      order by id desc limit ${plan.window})`;
    return { ctes: [], from: newest, nameCheck: foldedContains(db, 'x', c.text) };
  }
  if (plan.check === 'row-by-row') return { ctes: [], from: table, nameCheck: foldedContains(db, 'x', c.text) };
  if (isPostgres(db)) {
    return {
      ctes: [sql`matching as materialized (select * from ${table} y where ${foldedLike('y', c.text)})`],
      from: sql`matching`,
      nameCheck: sql`true`,
    };
  }
  const listed = sql`x.id in (select d.item_id from ${namesTable(kind)} s join search_docs d on d.doc = s.rowid where ${namesMatch(kind, c.text)})`;
  return { ctes: [], from: table, nameCheck: listed };
}

/** A WITH clause for these common table expressions, or nothing. */
const withClause = (ctes: RawBuilder<unknown>[]) => (ctes.length ? sql`with recursive ${sql.join(ctes, sql`, `)}` : sql``);

/**
 * The id of the last of the caller's `window` newest live items of a kind (before the cursor), or
 * undefined when they have fewer: a windowed read then saw them all.
 */
export async function windowEnd(db: DbOrTrx, kind: SearchKind, c: SearchCriteria, window: number): Promise<string | undefined> {
  const result = await sql<{ id: string }>`
    select id from ${tableOf(kind)}
    where owner_id = ${c.userId} and trash_batch = '' ${beforeCursor(c)}
    order by id desc limit 1 offset ${window - 1}`.execute(db);
  return result.rows[0]?.id;
}

const beforeCursor = (c: SearchCriteria) => (c.beforeId ? sql`and id < ${c.beforeId}` : sql``);

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

/** Whether anything is shared with the user at all: if not, no shared read is needed. */
export async function hasGrants(db: DbOrTrx, userId: string): Promise<boolean> {
  const row = await db.selectFrom('permissions').select('item_id').where('user_id', '=', userId).limit(1).executeTakeFirst();
  return row !== undefined;
}

const byIdDesc = (limit: number) => sql`order by x.id desc limit ${limit}`;

/** The caller's own live files whose name matches, newest first. */
export async function ownFiles(db: DbOrTrx, c: SearchCriteria, plan: ReadPlan): Promise<SearchHit[]> {
  const source = sourceOf(db, 'file', c, plan);
  const result = await sql<SearchHit>`
    ${withClause(source.ctes)}
    select 'file' as kind, x.id, x.name, x.folder_id as parent_id, x.bucket_id, x.owner_id, '' as owner_name,
      x.size, x.content_type, x.updated_at
    from ${source.from} x
    where x.owner_id = ${c.userId} and x.trash_batch = '' and ${source.nameCheck}
      and ${contentTypeFilter(c)} and ${commonFilters('x', c)}
    ${byIdDesc(c.limit)}`.execute(db);
  return result.rows;
}

/** The caller's own live folders (roots aside: they are the buckets) whose name matches, newest first. */
export async function ownFolders(db: DbOrTrx, c: SearchCriteria, plan: ReadPlan): Promise<SearchHit[]> {
  const source = sourceOf(db, 'folder', c, plan);
  const result = await sql<SearchHit>`
    ${withClause(source.ctes)}
    select 'folder' as kind, x.id, x.name, x.parent_id, x.bucket_id, x.owner_id, '' as owner_name,
      null as size, null as content_type, x.updated_at
    from ${source.from} x
    where x.owner_id = ${c.userId} and x.trash_batch = '' and x.is_root = 0 and ${source.nameCheck}
      and ${commonFilters('x', c)}
    ${byIdDesc(c.limit)}`.execute(db);
  return result.rows;
}

/** Live files shared with the caller, on their own or under a shared folder, whose name matches. */
export async function sharedFiles(db: DbOrTrx, c: SearchCriteria, plan: ReadPlan): Promise<SearchHit[]> {
  const source = sourceOf(db, 'file', c, plan);
  const result = await sql<SearchHit>`
    ${withClause([sharedFolders(c.userId), ...source.ctes])}
    select 'file' as kind, x.id, x.name, x.folder_id as parent_id, x.bucket_id, x.owner_id, u.name as owner_name,
      x.size, x.content_type, x.updated_at
    from ${source.from} x join users u on u.id = x.owner_id
    where x.trash_batch = '' and x.owner_id <> ${c.userId}
      and (x.folder_id in (select id from shared) or x.id in (
        select p.item_id from permissions p where p.user_id = ${c.userId} and p.item_kind = 'file'
          and (p.can_view = 1 or p.can_download = 1 or p.can_edit = 1)))
      and ${source.nameCheck} and ${contentTypeFilter(c)} and ${commonFilters('x', c)}
    ${byIdDesc(c.limit)}`.execute(db);
  return result.rows;
}

/** Live folders shared with the caller (a shared folder itself or one under it) whose name matches. */
export async function sharedFoldersMatching(db: DbOrTrx, c: SearchCriteria, plan: ReadPlan): Promise<SearchHit[]> {
  const source = sourceOf(db, 'folder', c, plan);
  const result = await sql<SearchHit>`
    ${withClause([sharedFolders(c.userId), ...source.ctes])}
    select 'folder' as kind, x.id, x.name, x.parent_id, x.bucket_id, x.owner_id, u.name as owner_name,
      null as size, null as content_type, x.updated_at
    from ${source.from} x join users u on u.id = x.owner_id
    where x.id in (select id from shared) and ${source.nameCheck} and ${commonFilters('x', c)}
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
