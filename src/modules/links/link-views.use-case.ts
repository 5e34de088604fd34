import type { AppContext } from '../../context.js';
import { AppError } from '../../errors.js';
import { formatSize } from '../../lib/size-format.js';
import { admit, checkKey, countAccess, exhausted, liveFileOf, liveFolderOf } from './link-admission.js';
import { filesUnder } from './links.repository.js';
import type { Visitor } from './links.types.js';
import { keyCheck } from './links.views.js';

const FOLDER_LISTING_LIMIT = 1000;

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

/** Opens a folder link: one access, and the files of its live subtree. */
export async function openFolder(ctx: AppContext, sharedHash: string, visitor: Visitor) {
  const { db } = ctx;
  const { link, rules } = await admit(db, sharedHash, visitor, 'folder');
  if (link.can_view === 0) throw new AppError('VIEW_NOT_ALLOWED');
  const folder = await liveFolderOf(db, link);
  await checkKey(db, link, visitor, rules);
  await countAccess(db, link);
  const rows = await filesUnder(db, folder.id, FOLDER_LISTING_LIMIT);
  return {
    folder: { id: folder.id, name: folder.name, createdAt: folder.created_at, updatedAt: folder.updated_at },
    files: rows.map((r) => ({
      hashName: r.hash_name,
      name: r.name,
      size: Number(r.size),
      contentType: r.content_type,
      createdAt: r.created_at,
      path: r.path || '/',
    })),
    totalFiles: Number(folder.subtree_files),
    totalSizeByte: Number(folder.subtree_bytes),
    totalSizeReadable: formatSize(Number(folder.subtree_bytes)),
    expiresAt: link.expires_at,
    canDownload: link.can_download === 1,
    keyCheck: keyCheck(link),
  };
}
