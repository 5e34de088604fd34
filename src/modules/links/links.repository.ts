import { sql } from 'kysely';
import type { Insertable } from 'kysely';
import type { DbOrTrx } from '../../db/database.js';
import type { ShareLinkRow, ShareLinksTable } from '../../db/schema.js';

export function insertLink(db: DbOrTrx, row: Insertable<ShareLinksTable>): Promise<unknown> {
  return db.insertInto('share_links').values(row).execute();
}

export function findLinkByHash(db: DbOrTrx, sharedHash: string): Promise<ShareLinkRow | undefined> {
  return db.selectFrom('share_links').selectAll().where('shared_hash', '=', sharedHash).executeTakeFirst();
}

/** The live (not revoked) links of one file or folder, newest first. */
export function liveLinksOf(db: DbOrTrx, kind: 'file' | 'folder', itemId: string): Promise<ShareLinkRow[]> {
  return db
    .selectFrom('share_links')
    .selectAll()
    .where(kind === 'file' ? 'file_id' : 'folder_id', '=', itemId)
    .where('revoked_at', 'is', null)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
}

export function updateLink(
  db: DbOrTrx,
  id: string,
  changes: Partial<Pick<ShareLinkRow, 'password_hash' | 'expires_at' | 'max_access' | 'can_download' | 'revoked_at' | 'updated_at'>>,
): Promise<unknown> {
  return db.updateTable('share_links').set(changes).where('id', '=', id).execute();
}

/**
 * Counts one access if the link still allows it, in one conditional statement (docs/architecture.md): the
 * limit, the expiry and the revocation hold exactly under concurrency and across instances.
 */
export async function takeAccess(db: DbOrTrx, id: string, now: string): Promise<boolean> {
  const result = await db
    .updateTable('share_links')
    .set((eb) => ({ access_count: eb('access_count', '+', 1) }))
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
    .where((eb) => eb.or([eb('max_access', '=', 0), eb('access_count', '<', eb.ref('max_access'))]))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/**
 * Deletes links that expired or were revoked before `before`: one statement, safe on every
 * instance at once. Until then a closed link still answers 410; after it, 404.
 */
export async function deleteClosedLinks(db: DbOrTrx, before: string): Promise<number> {
  const result = await db
    .deleteFrom('share_links')
    .where((eb) => eb.or([eb('expires_at', '<', before), eb('revoked_at', '<', before)]))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

export interface FileUnderFolder {
  id: string;
  hash_name: string;
  name: string;
  size: number;
  content_type: string;
  created_at: string;
  /** The file's folder below the shared one, `''` for the shared folder itself. */
  path: string;
}

/** Where a page of `filesUnder` starts: after this (path, name, id). */
export type FileUnderKey = [path: string, name: string, id: string];

/**
 * The live files of a folder's live subtree (64 levels at most), by path, name and id, `limit` at
 * most, those after `after` when given.
 */
export async function filesUnder(db: DbOrTrx, folderId: string, limit: number, after?: FileUnderKey): Promise<FileUnderFolder[]> {
  const from = after ? sql`and (sub.path, f.name, f.id) > (${after[0]}, ${after[1]}, ${after[2]})` : sql``;
  const result = await sql<FileUnderFolder>`
    with recursive sub (id, path, depth) as (
      select id, cast('' as text), 0 from folders where id = ${folderId}
      union all
      select c.id, sub.path || '/' || c.name, sub.depth + 1 from folders c join sub on c.parent_id = sub.id
      where c.trash_batch = '' and sub.depth < 64
    )
    select f.id, f.hash_name, f.name, f.size, f.content_type, f.created_at, sub.path
    from files f join sub on f.folder_id = sub.id
    where f.trash_batch = '' and f.current_version_id is not null ${from}
    order by sub.path, f.name, f.id
    limit ${limit}
  `.execute(db);
  return result.rows;
}
