import { sql } from 'kysely';
import type { DbOrTrx } from '../../db/database.js';
import type { DavLockRow } from '../../db/schema.js';
import { subtreeFolderIds } from '../folders/folders.repository.js';

/** The queries of WebDAV locks (table dav_locks, migration 014). A lock counts while `expires_at` is after now. */

/**
 * Whether any lock is live at all: most requests of most deployments meet none, and this one
 * indexed read (dav_locks_expires_idx) spares them the walks up and down the tree.
 */
export async function anyLiveLock(db: DbOrTrx, now: string): Promise<boolean> {
  const row = await db.selectFrom('dav_locks').select('token').where('expires_at', '>', now).limit(1).executeTakeFirst();
  return row !== undefined;
}

/** The live locks rooted on any of the items. */
export async function liveLocksOn(db: DbOrTrx, itemIds: readonly string[], now: string): Promise<DavLockRow[]> {
  const out: DavLockRow[] = [];
  const CHUNK = 500;
  for (let i = 0; i < itemIds.length; i += CHUNK) {
    const rows = await db
      .selectFrom('dav_locks')
      .selectAll()
      .where('item_id', 'in', itemIds.slice(i, i + CHUNK))
      .where('expires_at', '>', now)
      .orderBy('created_at')
      .execute();
    out.push(...rows);
  }
  return out;
}

/** The live locks rooted on a folder or anything below it (its folders and their files, whatever their trash state). */
export async function liveLocksWithin(db: DbOrTrx, folderId: string, now: string): Promise<DavLockRow[]> {
  const result = await sql<DavLockRow>`
    select * from dav_locks where expires_at > ${now} and (
      item_id in (${subtreeFolderIds(folderId)})
      or item_id in (select id from files where folder_id in (${subtreeFolderIds(folderId)}))
    )`.execute(db);
  return result.rows.map((row) => ({ ...row, timeout_seconds: Number(row.timeout_seconds) }));
}

/** A live lock by token. */
export function liveLock(db: DbOrTrx, token: string, now: string): Promise<DavLockRow | undefined> {
  return db.selectFrom('dav_locks').selectAll().where('token', '=', token).where('expires_at', '>', now).executeTakeFirst();
}

export async function insertLock(db: DbOrTrx, row: DavLockRow): Promise<void> {
  await db.insertInto('dav_locks').values(row).execute();
}

/** Renews a lock for `seconds` from `now` (LOCK refresh). */
export async function refreshLock(db: DbOrTrx, token: string, seconds: number, expiresAt: string): Promise<void> {
  await db.updateTable('dav_locks').set({ timeout_seconds: seconds, expires_at: expiresAt }).where('token', '=', token).execute();
}

export async function deleteLock(db: DbOrTrx, token: string): Promise<void> {
  await db.deleteFrom('dav_locks').where('token', '=', token).execute();
}

/** Deletes the locks rooted on an item and, for a folder, on anything below it (the item was deleted or moved). */
export async function deleteLocksWithin(db: DbOrTrx, item: { fileId: string } | { folderId: string }): Promise<void> {
  if ('fileId' in item) {
    await db.deleteFrom('dav_locks').where('item_id', '=', item.fileId).execute();
    return;
  }
  const { folderId } = item;
  await sql`
    delete from dav_locks where
      item_id in (${subtreeFolderIds(folderId)})
      or item_id in (select id from files where folder_id in (${subtreeFolderIds(folderId)}))
  `.execute(db);
}

/** Deletes the locks that expired before `now` (background upkeep; expired ones never count anyway). */
export async function deleteExpiredLocks(db: DbOrTrx, now: string): Promise<number> {
  const result = await db.deleteFrom('dav_locks').where('expires_at', '<=', now).executeTakeFirst();
  return Number(result.numDeletedRows);
}
