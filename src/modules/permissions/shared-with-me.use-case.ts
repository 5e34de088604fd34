import { visibleParentId } from '../../access/access.js';
import type { AppContext, Principal } from '../../context.js';
import type { DbOrTrx } from '../../db/database.js';
import type { FolderRow } from '../../db/schema.js';
import { DEFAULT_PAGE_SIZE, decodeCursor, encodeCursor } from '../../lib/cursor.js';
import { fileDetailFor } from '../files/files.detail.js';
import { findFolders } from '../folders/folders.repository.js';
import { listItem } from '../folders/folders.views.js';
import * as repo from './permissions.repository.js';
import type { ItemKind, SharedWithRow } from './permissions.repository.js';
import type { SharedItem } from './permissions.schemas.js';

/** The live items other users shared with the caller, newest grant first. */
export async function sharedWithMe(ctx: AppContext, principal: Principal, query: { limit?: number; cursor?: string }) {
  const { db } = ctx;
  const beforeId = query.cursor ? String(decodeCursor(query.cursor, 1)[0]) : undefined;
  const page = await repo.listGrantsTo(db, principal.userId, { limit: query.limit ?? DEFAULT_PAGE_SIZE, beforeId });
  const items = await sharedItems(db, principal, page.rows);
  const data = page.rows.map((row) => sharedItem(row, items));
  const last = page.rows[page.rows.length - 1];
  return { data, total: await repo.countGrantsTo(db, principal.userId), nextCursor: page.hasMore && last ? encodeCursor([last.id]) : null };
}

type SharedItems = Awaited<ReturnType<typeof sharedItems>>;

/** The folders and files a page of grants names, by id, as the caller sees them. */
async function sharedItems(db: DbOrTrx, principal: Principal, rows: SharedWithRow[]) {
  const idsOf = (kind: ItemKind) => rows.filter((r) => r.item_kind === kind).map((r) => r.item_id);
  const fileIds = idsOf('file');
  const folders = await findFolders(db, idsOf('folder'));
  const files = fileIds.length ? await db.selectFrom('files').selectAll().where('id', 'in', fileIds).execute() : [];
  // The folder holding a shared item is named only when the caller may see it too.
  const folderItem = async (f: FolderRow) => ({
    ...listItem(f),
    parentId: await visibleParentId(db, principal, { owner_id: f.owner_id, parentId: f.parent_id }),
  });
  const folderById = new Map(await Promise.all([...folders.values()].map(async (f) => [f.id, await folderItem(f)] as const)));
  const fileById = new Map(await Promise.all(files.map(async (f) => [f.id, await fileDetailFor(db, principal, f)] as const)));
  return { folderById, fileById };
}

/** One grant of the page, with its item (null when that is gone) and the caller's permission. */
function sharedItem(row: SharedWithRow, { folderById, fileById }: SharedItems): SharedItem {
  const folder = row.item_kind === 'folder' ? (folderById.get(row.item_id) ?? null) : null;
  const file = row.item_kind === 'file' ? (fileById.get(row.item_id) ?? null) : null;
  return {
    itemType: row.item_kind,
    itemId: row.item_id,
    name: folder?.name ?? file?.name ?? '',
    owner: { userId: row.owner_id, name: row.owner_name, email: row.owner_email },
    permission: { canView: row.can_view === 1, canDownload: row.can_download === 1, canEdit: row.can_edit === 1 },
    sharedAt: row.created_at,
    folder,
    file,
  };
}
