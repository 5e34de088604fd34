import { loadFileFor, loadFolderFor, mayDownloadIn } from '../../access/access.js';
import type { AppContext, Principal } from '../../context.js';
import { AppError } from '../../errors.js';
import { DEFAULT_PAGE_SIZE, decodeCursor, encodeCursor } from '../../lib/cursor.js';
import { checksumFor, fileDetail, fileDetailFor } from './files.detail.js';
import * as repo from './files.repository.js';
import type { FileDetail, FilePage, ListQuery } from './files.schemas.js';

/** A file's detail, as the principal may see it. */
export async function details(ctx: AppContext, principal: Principal, fileId: string): Promise<FileDetail> {
  return fileDetailFor(ctx.db, principal, await loadFileFor(ctx.db, principal, fileId, 'view'));
}

/** One page of the files of a folder in the folder's trash state, sorted as asked. */
export async function list(ctx: AppContext, principal: Principal, folderId: string, query: ListQuery): Promise<FilePage> {
  const { db } = ctx;
  const folder = await loadFolderFor(db, principal, folderId, 'view', 'FOLDER_FORBIDDEN');
  const sort = query.sort ?? 'name';
  const order = query.order ?? 'asc';
  const after = query.cursor ? (decodeCursor(query.cursor, 2) as [string | number, string]) : undefined;
  // A cursor made for another sort holds a value of the wrong type for this one.
  if (after && (typeof after[0] !== (sort === 'size' ? 'number' : 'string') || typeof after[1] !== 'string')) {
    throw new AppError('INVALID_CURSOR', 'This cursor belongs to another sort order');
  }
  const page = await repo.listFilesPage(db, folder.id, folder.trash_batch, { sort, order, limit: query.limit ?? DEFAULT_PAGE_SIZE, after });
  const mayDownload = await mayDownloadIn(
    db,
    principal,
    folder,
    page.rows.map((row) => row.id),
  );
  const last = page.rows[page.rows.length - 1];
  return {
    data: page.rows.map((row) => ({ ...fileDetail(row), checksum: checksumFor(row.checksum, mayDownload(row.id)) })),
    total: Number(folder.child_files),
    nextCursor: page.hasMore && last ? encodeCursor([repo.sortValue(last, sort), last.id]) : null,
  };
}
