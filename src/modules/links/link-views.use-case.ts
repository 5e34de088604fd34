import type { AppContext } from '../../context.js';
import { AppError } from '../../errors.js';
import { formatSize } from '../../lib/size-format.js';
import { admit, checkKey, countAccess, exhausted, liveFileOf, liveFolderOf } from './link-admission.js';
import { decodeCursor, encodeCursor, MAX_PAGE_SIZE } from '../../lib/cursor.js';
import { nowIso } from '../../lib/time.js';
import { openingPass, renewPass } from './links.passes.js';
import { filesUnder, type FileUnderKey } from './links.repository.js';
import type { Visitor } from './links.types.js';
import { keyCheck } from './links.views.js';

/** What a file link shows before a download: the file, the link's limits, and its key check. */
export async function fileInfo(ctx: AppContext, sharedHash: string, visitor: Visitor) {
  const { link, pass } = await admit(ctx.db, sharedHash, visitor, 'file');
  if (link.can_view === 0) throw new AppError('VIEW_NOT_ALLOWED');
  const file = await liveFileOf(ctx.db, link);
  // A pass covers the version it was handed out for, not a newer one.
  if (pass && pass.version_id !== file.current_version_id && exhausted(link)) throw new AppError('LINK_EXHAUSTED');
  const max = Number(link.max_access);
  return {
    name: file.name,
    size: Number(file.size),
    contentType: file.content_type,
    createdAt: file.created_at,
    updatedAt: file.updated_at,
    expiresAt: link.expires_at,
    maxAccess: max,
    remainingAccess: max === 0 ? null : Math.max(0, max - Number(link.access_count)),
    canDownload: link.can_download === 1,
    keyCheck: keyCheck(link),
  };
}

/** A page of a folder link's listing: at most `limit` files, after the `cursor` of the page before. */
export interface FolderPage {
  limit?: number;
  cursor?: string;
}

/**
 * Opens a folder link: the folder and a page of the files of its live subtree. The first open
 * counts one access and hands out a pass; sent back, the pass lists the further pages (and
 * opens the link again) without counting another, past an exhausted limit, while it lasts.
 */
export async function openFolder(ctx: AppContext, sharedHash: string, visitor: Visitor, page: FolderPage = {}) {
  const { db } = ctx;
  const { link, rules, pass } = await admit(db, sharedHash, visitor, 'folder');
  if (link.can_view === 0) throw new AppError('VIEW_NOT_ALLOWED');
  const folder = await liveFolderOf(db, link);
  await checkKey(db, link, visitor, rules);
  const after = page.cursor ? listingKey(page.cursor) : undefined;
  const now = nowIso();
  const held =
    pass && pass.version_id === folder.id
      ? await renewPass(db, visitor.pass!, now)
      : await openingPass(db, link.id, folder.id, now, (trx) => countAccess(trx, link));
  const limit = page.limit ?? MAX_PAGE_SIZE;
  const rows = await filesUnder(db, folder.id, limit + 1, after);
  const last = rows.length > limit ? rows[limit - 1] : undefined;
  const content = {
    folder: { id: folder.id, name: folder.name, createdAt: folder.created_at, updatedAt: folder.updated_at },
    files: rows.slice(0, limit).map((r) => ({
      hashName: r.hash_name,
      name: r.name,
      size: Number(r.size),
      contentType: r.content_type,
      createdAt: r.created_at,
      path: r.path || '/',
    })),
    nextCursor: last ? encodeCursor([last.path, last.name, last.id]) : null,
    totalFiles: Number(folder.subtree_files),
    totalSizeByte: Number(folder.subtree_bytes),
    totalSizeReadable: formatSize(Number(folder.subtree_bytes)),
    expiresAt: link.expires_at,
    canDownload: link.can_download === 1,
    keyCheck: keyCheck(link),
  };
  return { content, pass: held };
}

/** The (path, name, id) a listing page's cursor holds. */
function listingKey(cursor: string): FileUnderKey {
  const key = decodeCursor(cursor, 3);
  if (!key.every((value) => typeof value === 'string')) throw new AppError('INVALID_CURSOR');
  return key as FileUnderKey;
}
