import { loadBucketFor, loadFolderFor } from '../../access/access.js';
import { onePerContext, type AppContext, type Principal } from '../../context.js';
import type { FolderRow } from '../../db/schema.js';
import { AppError } from '../../errors.js';
import { DEFAULT_PAGE_SIZE, decodeCursor, encodeCursor } from '../../lib/cursor.js';
import { assertId } from '../../lib/ids.js';
import { findUserById } from '../accounts/accounts.repository.js';
import { recordAccess } from './details.use-case.js';
import { folderReads } from './folders.reads.js';
import * as repo from './folders.repository.js';
import type { BucketFoldersPage, FolderListItem, ListQuery, SubfoldersQuery } from './folders.schemas.js';
import { listItem } from './folders.views.js';
import { ListingCache, type ListedPage } from './listing.cache.js';
import { displayPaths, listBucketFolders, listChildren } from './listing.repository.js';

/** Pages of subfolders kept in memory: one cache per context. */
const listingCache = onePerContext(() => new ListingCache());

/**
 * One page of the subfolders of a folder (or of a bucket's root, `root`), in the folder's trash
 * state, by name: the items as the database wrote them (see listChildren), kept while the
 * folder's listing does not change.
 */
export async function subfolders(ctx: AppContext, principal: Principal, folderIdOrRoot: string, query: SubfoldersQuery) {
  const folderId = await resolveFolderId(ctx, principal, folderIdOrRoot, query.bucketId);
  const parent = await loadFolderFor(ctx.db, principal, folderId, 'view', 'FOLDER_FORBIDDEN', folderReads(ctx).folder);
  const limit = query.limit ?? DEFAULT_PAGE_SIZE;
  const key = { parentId: parent.id, version: Number(parent.listing_version), trashBatch: parent.trash_batch, limit, cursor: query.cursor };
  const listings = listingCache(ctx);
  let page = listings.get(key);
  if (!page) {
    page = await readPage(ctx, parent, limit, query.cursor);
    listings.set(key, page);
  }
  await recordAccess(ctx, parent);
  return {
    data: page.items,
    total: Number(parent.child_folders),
    parentFolder: { id: parent.id, name: parent.name, bucketId: parent.bucket_id },
    nextCursor: page.nextCursor,
  };
}

/** Every live folder of a bucket but its root, in creation order, with its display path. */
export async function listBucket(ctx: AppContext, principal: Principal, bucketId: string, query: ListQuery): Promise<BucketFoldersPage> {
  const { db } = ctx;
  const bucket = await loadBucketFor(db, principal, bucketId);
  const root = await repo.findFolder(db, bucket.root_folder_id!);
  const afterId = query.cursor ? String(decodeCursor(query.cursor, 1)[0]) : undefined;
  const page = await listBucketFolders(db, bucket.id, { limit: query.limit ?? DEFAULT_PAGE_SIZE, afterId });
  const paths = await displayPaths(
    db,
    page.rows.map((r) => r.id),
  );
  const last = page.rows[page.rows.length - 1];
  return {
    data: page.rows.map((row) => ({ ...listItem(row), displayPath: paths.get(row.id) ?? '/' })),
    total: Number(root?.subtree_folders ?? 0),
    nextCursor: page.hasMore && last ? encodeCursor([last.id]) : null,
  };
}

/** Resolves the `root` alias: the root of `bucketId`, or of the caller's default bucket. */
async function resolveFolderId(ctx: AppContext, principal: Principal, folderId: string, bucketId?: string): Promise<string> {
  if (folderId !== 'root') return folderId;
  let id = bucketId;
  if (id === undefined) {
    const user = await findUserById(ctx.db, principal.userId);
    id = user?.default_bucket_id ?? undefined;
    if (!id) throw new AppError('BUCKET_NOT_FOUND', 'You have no default bucket; pass bucketId');
  }
  const bucket = await loadBucketFor(ctx.db, principal, assertId('bkt', id, 'bucketId'));
  return bucket.root_folder_id!;
}

async function readPage(ctx: AppContext, parent: FolderRow, limit: number, cursor: string | undefined): Promise<ListedPage> {
  const after = cursor ? (decodeCursor(cursor, 2) as [string, string]) : undefined;
  const page = await listChildren(ctx.db, parent.id, parent.trash_batch, { limit, after });
  const last = page.items.length > 0 ? (JSON.parse(page.items[page.items.length - 1]) as FolderListItem) : undefined;
  return { items: Buffer.from(page.items.join(',')), nextCursor: page.hasMore && last ? encodeCursor([last.name, last.id]) : null };
}
