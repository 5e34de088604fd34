import { sql, type RawBuilder } from 'kysely';
import type { DbOrTrx } from '../../db/database.js';
import { jsonBoolean, jsonObjectText } from '../../db/json-text.js';
import { preparedQuery } from '../../db/prepared-query.js';
import type { FolderRow } from '../../db/schema.js';
import { ancestorChains, trashState } from './folders.repository.js';

/** The queries of folder listings: pages of subfolders, a bucket's folders and their paths. */

export interface ChildPage<Row = FolderRow> {
  rows: Row[];
  hasMore: boolean;
}

/** What a listing item shows of a folder. */
export type ListedFolder = Pick<
  FolderRow,
  'id' | 'bucket_id' | 'parent_id' | 'hash_url' | 'name' | 'visibility' | 'trash_batch' | 'created_at' | 'updated_at' | 'deleted_at'
>;

/** A page of listing items as the database wrote them, one JSON text each (see json-text.ts). */
export interface JsonItemPage {
  items: string[];
  hasMore: boolean;
}

/**
 * A folder row as its listing item, as JSON text: the fields and order of FolderListItem, as
 * listItem (folders.views.ts) writes them (test/folders-listing-json.test.ts checks both).
 */
function listItemJson(db: DbOrTrx): RawBuilder<string> {
  return jsonObjectText(db, {
    id: sql.ref('id'),
    bucketId: sql.ref('bucket_id'),
    parentId: sql`coalesce(parent_id, '')`,
    hashUrl: sql.ref('hash_url'),
    name: sql.ref('name'),
    visibility: sql.ref('visibility'),
    isDelete: jsonBoolean(db, sql<boolean>`trash_batch <> ''`),
    createdAt: sql.ref('created_at'),
    updatedAt: sql.ref('updated_at'),
    deletedAt: sql.ref('deleted_at'),
  });
}

/**
 * One page of a folder's children in the same trash state as the parent, by (name, id), as
 * listing items written by the database: a page is a hundred rows, and making each of their
 * values a JavaScript string, then serializing them again, costs more than the query itself.
 */
export async function listChildren(
  db: DbOrTrx,
  parentId: string,
  trashBatch: string,
  page: { limit: number; after?: [string, string] },
): Promise<JsonItemPage> {
  const take = page.limit + 1;
  const queries = trashBatch === '' ? liveChildren : trashedChildren;
  const rows = page.after
    ? await queries.after.execute(db, { parentId, trashBatch, take, afterName: page.after[0], afterId: page.after[1] })
    : await queries.first.execute(db, { parentId, trashBatch, take });
  return { items: rows.slice(0, page.limit).map((row) => row.item), hasMore: rows.length > page.limit };
}

/** The first page and the pages after a cursor, for the children of live parents or of trashed ones (see trashState). */
function childrenQueries(live: boolean) {
  const children = (db: DbOrTrx, p: { parentId: string; trashBatch: string; take: number }) =>
    db
      .selectFrom('folders')
      .select(listItemJson(db).as('item'))
      .where('parent_id', '=', p.parentId)
      .where('trash_batch', '=', live ? trashState('') : p.trashBatch)
      .orderBy('name')
      .orderBy('id')
      .limit(p.take);
  return {
    first: preparedQuery(children),
    after: preparedQuery((db, p: { parentId: string; trashBatch: string; take: number; afterName: string; afterId: string }) =>
      children(db, p).where((eb) =>
        eb.or([eb('name', '>', p.afterName), eb.and([eb('name', '=', p.afterName), eb('id', '>', p.afterId)])]),
      ),
    ),
  };
}

const liveChildren = childrenQueries(true);
const trashedChildren = childrenQueries(false);

/** One page of every live non-root folder of a bucket, in creation order. */
export async function listBucketFolders(db: DbOrTrx, bucketId: string, page: { limit: number; afterId?: string }): Promise<ChildPage> {
  let query = db.selectFrom('folders').selectAll().where('bucket_id', '=', bucketId).where('trash_batch', '=', '').where('is_root', '=', 0);
  if (page.afterId) query = query.where('id', '>', page.afterId);
  const rows = await query
    .orderBy('id')
    .limit(page.limit + 1)
    .execute();
  return { rows: rows.slice(0, page.limit), hasMore: rows.length > page.limit };
}

/** Names of the non-root ancestors (and the item itself) of several folders at once: their display paths. */
export async function displayPaths(db: DbOrTrx, ids: string[]): Promise<Map<string, string>> {
  const paths = new Map<string, string>();
  if (ids.length === 0) return paths;
  // A root's own name is not part of any path: the walks keep only the non-root links.
  const result = await sql<{ start_id: string; name: string; depth: number }>`
    ${ancestorChains(sql`id in (${sql.join(ids)})`)}
    select start_id, name, depth from chain where is_root = 0
  `.execute(db);
  const byStart = new Map<string, { name: string; depth: number }[]>();
  for (const row of result.rows) {
    const list = byStart.get(row.start_id) ?? [];
    list.push({ name: row.name, depth: Number(row.depth) });
    byStart.set(row.start_id, list);
  }
  for (const id of ids) {
    const names = (byStart.get(id) ?? []).sort((a, b) => b.depth - a.depth).map((n) => n.name);
    paths.set(id, `/${names.join('/')}`);
  }
  return paths;
}
