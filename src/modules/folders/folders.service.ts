import { assertFolderAccess, assertSameOwner, loadBucketFor, loadFolderFor, mayActOnFolder, visibleChainLength } from '../../access/access.js';
import { onePerContext, type AppContext, type Principal } from '../../context.js';
import type { DbOrTrx } from '../../db/database.js';
import { mutation } from '../../db/transaction.js';
import type { FolderRow, NewFolder } from '../../db/schema.js';
import { AppError } from '../../errors.js';
import { DEFAULT_PAGE_SIZE, decodeCursor, encodeCursor } from '../../lib/cursor.js';
import { assertId, newId, randomToken } from '../../lib/ids.js';
import { assertName } from '../../lib/names.js';
import { nowIso } from '../../lib/time.js';
import { newChildKey, openChildKey, rewrapChildKey } from '../../crypto/keyring.js';
import { findUserById } from '../accounts/accounts.repository.js';
import { reserveQuota } from '../accounts/quota.js';
import { folderKey } from './folders.keys.js';
import { locationLabel } from '../regions/regions.repository.js';
import { cloneFiles, purgeFiles } from '../files/files.lifecycle.js';
import { filesInSubtree, liveFilesOfFolders, retainedFileInSubtree } from '../files/files.repository.js';
import * as repo from './folders.repository.js';
import { ListingCache, type ListedPage } from './listing.cache.js';
import { GroupRunner } from '../../lib/group-runner.js';
import { deleteGrantsOn } from '../permissions/permissions.repository.js';
import { findBucket } from '../buckets/buckets.repository.js';
import { assertNameFree, freeItemName } from './folders.names.js';

export type Visibility = 'private' | 'public';

/** The folder detail of the interface document (plus a few fields of ours after `shareUrl`). */
export interface FolderDetail {
  id: string;
  name: string;
  visibility: Visibility;
  createdAt: string;
  updatedAt: string;
  lastAccessAt: string | null;
  totalFiles: number;
  totalSubfolders: number;
  totalSizeByte: number;
  sharedUsersCount: number;
  ownerFolder: { userId: string; name: string } | null;
  displayPath: string;
  locationLabel: string;
  parentId: string;
  parentName: string;
  isRoot: boolean;
  accessUrl: string;
  shareUrl: string;
  bucketId: string;
  hashUrl: string;
  isDelete: boolean;
  deletedAt: string | null;
}

/** An item of the subfolders and folder list responses. */
export interface FolderListItem {
  id: string;
  bucketId: string;
  parentId: string;
  hashUrl: string;
  name: string;
  visibility: Visibility;
  isDelete: boolean;
  createdAt: string;
  updatedAt: string;
  deletedAt: string | null;
}

export interface UpdateFolderInput {
  name?: string;
  visibility?: Visibility;
  isPrivate?: boolean;
  isShare?: boolean;
}

// lastAccessAt is written at most once a minute per folder, so reads stay reads.
const ACCESS_WRITE_INTERVAL_MS = 60_000;

/** A folder as a listing item (the database writes the same for pages of subfolders: listItemJson). */
export function listItem(row: repo.ListedFolder): FolderListItem {
  return {
    id: row.id,
    bucketId: row.bucket_id,
    parentId: row.parent_id ?? '',
    hashUrl: row.hash_url,
    name: row.name,
    visibility: row.visibility,
    isDelete: row.trash_batch !== '',
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    deletedAt: row.deleted_at,
  };
}

function parseLimit(limit: number | undefined): number {
  return limit ?? DEFAULT_PAGE_SIZE;
}

/** Folders one batched read asks for at most. */
const BATCHED_READS_MAX = 100;

/** The folder service of a context: one per context (see onePerContext). */
export const folderService = onePerContext(buildFolderService);

function buildFolderService(ctx: AppContext) {
  const { db, keyring } = ctx;
  const listings = new ListingCache();
  // The folders (and details) wanted in one turn by many clients browsing are read by one
  // statement, started after every request that joins it arrived, so none reads an older state.
  // Each statement has a fixed cost well above a folder's share of it: a round trip that wakes a
  // PostgreSQL backend, or on SQLite a read transaction (lock calls) and the statement's start,
  // which under load cost about 30 µs of a 75 µs details request here.
  const batchedReads = <T>(read: (ids: string[]) => Promise<Map<string, T>>) =>
    new GroupRunner<string, T | undefined>(async (ids) => {
      const found = await read(ids);
      return ids.map((id) => ({ status: 'fulfilled', value: found.get(id) }));
    }, BATCHED_READS_MAX);
  const detailReads = batchedReads((ids) => repo.findFolderDetails(db, ids));
  const folderReads = batchedReads((ids) => repo.findFolders(db, ids));
  /** A folder row: read with the turn's other reads, unless inside a transaction (which must read its own). */
  const readFolder = (target: DbOrTrx, id: string) => (target === db ? folderReads.submit('folders', id) : repo.findFolder(target, id));

  async function detailRows(folderId: string): Promise<repo.FolderDetailRows> {
    const rows = await detailReads.submit('details', folderId);
    if (!rows) throw new AppError('FOLDER_NOT_FOUND');
    return rows;
  }

  async function detail(principal: Principal, folderId: string): Promise<FolderDetail> {
    return toDetail(principal, await detailRows(folderId));
  }

  /** The ancestors (nearest first) the principal may learn of: a grantee's stop below the highest folder shared with them. */
  async function visibleAncestors(principal: Principal, row: repo.FolderWithLocation, ancestors: repo.AncestorRow[]): Promise<repo.AncestorRow[]> {
    if (row.owner_id === principal.userId) return ancestors;
    const seen = await visibleChainLength(db, principal, row.owner_id, [row.id, ...ancestors.map((a) => a.id)]);
    return ancestors.slice(0, Math.max(0, seen - 1));
  }

  /** Builds the detail object; `recordAccess` marks a read by a user. */
  async function toDetail(principal: Principal, rows: repo.FolderDetailRows, options: { recordAccess?: boolean } = {}): Promise<FolderDetail> {
    const row = rows.folder;
    const ancestors = await visibleAncestors(principal, row, rows.ancestors);
    const names = ancestors.filter((a) => !a.is_root).map((a) => a.name).reverse();
    if (!row.is_root) names.push(row.name);
    let lastAccessAt = row.last_access_at;
    if (options.recordAccess) lastAccessAt = await recordAccess(row);
    const owned = row.owner_id === principal.userId;
    const owner = owned ? undefined : await findUserById(db, row.owner_id);
    return {
      id: row.id,
      name: row.name,
      visibility: row.visibility,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
      lastAccessAt,
      totalFiles: Number(row.subtree_files),
      totalSubfolders: Number(row.subtree_folders),
      totalSizeByte: Number(row.subtree_bytes),
      sharedUsersCount: Number(row.shared_users ?? 0),
      ownerFolder: owned ? null : { userId: row.owner_id, name: owner?.name ?? '' },
      displayPath: `/${names.join('/')}`,
      locationLabel: locationLabel({ name_en: row.location_name, region_code: row.location_code }),
      parentId: ancestors[0]?.id ?? '',
      parentName: ancestors[0] && !row.is_root ? ancestors[0].name : '',
      isRoot: row.is_root === 1,
      accessUrl: `/folders/details/${row.id}`,
      shareUrl: `/folders/share/${row.id}`,
      bucketId: row.bucket_id,
      hashUrl: row.hash_url,
      isDelete: row.trash_batch !== '',
      deletedAt: row.deleted_at,
    };
  }

  async function recordAccess(row: Pick<FolderRow, 'id' | 'last_access_at'>): Promise<string | null> {
    const now = nowIso();
    if (row.last_access_at && Date.parse(now) - Date.parse(row.last_access_at) < ACCESS_WRITE_INTERVAL_MS) return row.last_access_at;
    await repo.updateFolder(db, row.id, { last_access_at: now });
    return now;
  }

  async function details(principal: Principal, folderId: string): Promise<FolderDetail> {
    const rows = await detailRows(folderId);
    await assertFolderAccess(db, principal, rows.folder, 'view', 'FOLDER_ACCESS_DENIED');
    return toDetail(principal, rows, { recordAccess: true });
  }

  /** Resolves the `root` alias: the root of `bucketId`, or of the caller's default bucket. */
  async function resolveFolderId(principal: Principal, folderId: string, bucketId?: string): Promise<string> {
    if (folderId !== 'root') return folderId;
    let id = bucketId;
    if (id === undefined) {
      const user = await findUserById(db, principal.userId);
      id = user?.default_bucket_id ?? undefined;
      if (!id) throw new AppError('BUCKET_NOT_FOUND', 'You have no default bucket; pass bucketId');
    }
    const bucket = await loadBucketFor(db, principal, assertId('bkt', id, 'bucketId'));
    return bucket.root_folder_id!;
  }

  async function subfolders(principal: Principal, folderIdOrRoot: string, query: { limit?: number; cursor?: string; bucketId?: string }) {
    const folderId = await resolveFolderId(principal, folderIdOrRoot, query.bucketId);
    const parent = await loadFolderFor(db, principal, folderId, 'view', 'FOLDER_FORBIDDEN', readFolder);
    const limit = parseLimit(query.limit);
    const key = { parentId: parent.id, version: Number(parent.listing_version), trashBatch: parent.trash_batch, limit, cursor: query.cursor };
    let page = listings.get(key);
    if (!page) {
      page = await readPage(parent, limit, query.cursor);
      listings.set(key, page);
    }
    await recordAccess(parent);
    return {
      data: page.items,
      total: Number(parent.child_folders),
      parentFolder: { id: parent.id, name: parent.name, bucketId: parent.bucket_id },
      nextCursor: page.nextCursor,
    };
  }

  async function readPage(parent: FolderRow, limit: number, cursor: string | undefined): Promise<ListedPage> {
    const after = cursor ? (decodeCursor(cursor, 2) as [string, string]) : undefined;
    const page = await repo.listChildren(db, parent.id, parent.trash_batch, { limit, after });
    const last = page.items.length > 0 ? (JSON.parse(page.items[page.items.length - 1]) as FolderListItem) : undefined;
    return { items: Buffer.from(page.items.join(',')), nextCursor: page.hasMore && last ? encodeCursor([last.name, last.id]) : null };
  }

  async function listBucket(principal: Principal, bucketId: string, query: { limit?: number; cursor?: string }) {
    const bucket = await loadBucketFor(db, principal, bucketId);
    const root = await repo.findFolder(db, bucket.root_folder_id!);
    const afterId = query.cursor ? String(decodeCursor(query.cursor, 1)[0]) : undefined;
    const page = await repo.listBucketFolders(db, bucket.id, { limit: parseLimit(query.limit), afterId });
    const paths = await repo.displayPaths(db, page.rows.map((r) => r.id));
    const last = page.rows[page.rows.length - 1];
    return {
      data: page.rows.map((row) => ({ ...listItem(row), displayPath: paths.get(row.id) ?? '/' })),
      total: Number(root?.subtree_folders ?? 0),
      nextCursor: page.hasMore && last ? encodeCursor([last.id]) : null,
    };
  }

  /** `base`, or the first free variant of it in `parentId` (see nameVariants). */
  async function freeName(trx: DbOrTrx, parentId: string, base: string, suffix: string): Promise<string> {
    return freeItemName(trx, parentId, base, suffix, false);
  }

  /** A mutation of the trees holding `refs`, serialised with the others on them (see lockTrees). */
  const mutate = <T>(refs: repo.TreeRefs, work: (trx: DbOrTrx) => Promise<T>) =>
    mutation(db, async (trx) => {
      await repo.lockTrees(trx, ctx.database.capabilities.rowLocks, refs);
      return work(trx);
    });


  function requireLive(folder: FolderRow): void {
    if (folder.trash_batch !== '') throw new AppError('FOLDER_IN_TRASH');
  }

  /** Removes a folder's contribution from the folders above it (those in its own trash state). */
  async function detach(trx: DbOrTrx, folder: FolderRow): Promise<void> {
    if (!folder.parent_id) return;
    await repo.adjustChain(trx, folder.parent_id, folder.trash_batch, -1, repo.contributionOf(folder), { folders: 1, files: 0 });
  }

  /** Adds a live folder's contribution to a live parent and its ancestors. */
  async function attach(trx: DbOrTrx, folder: FolderRow, parentId: string): Promise<void> {
    await repo.adjustChain(trx, parentId, '', 1, repo.contributionOf(folder), { folders: 1, files: 0 });
  }

  /**
   * Puts a folder under another parent: its key is re-wrapped by the new parent's key (one wrap,
   * whatever the subtree's size), and a move to another bucket carries the subtree along.
   */
  async function reparent(trx: DbOrTrx, folder: FolderRow, parentId: string, extra: { name?: string } = {}): Promise<void> {
    if (parentId !== folder.parent_id) {
      const key = openChildKey(await folderKey(trx, keyring, folder.parent_id!), folder.key_wrapped, folder.id);
      const parent = (await repo.findFolder(trx, parentId))!;
      const wrapped = rewrapChildKey(key, await folderKey(trx, keyring, parentId), folder.id);
      await repo.updateFolder(trx, folder.id, { parent_id: parentId, key_wrapped: wrapped, ...extra, updated_at: nowIso() });
      if (parent.bucket_id !== folder.bucket_id) await repo.setSubtreeBucket(trx, folder.id, parent.bucket_id);
    } else {
      await repo.updateFolder(trx, folder.id, { ...extra, updated_at: nowIso() });
    }
  }

  async function create(principal: Principal, bucketId: string, input: { name: string; parentId?: string; visibility?: Visibility }) {
    const bucket = await findBucket(db, bucketId);
    if (!bucket) throw new AppError('BUCKET_NOT_FOUND');
    // Another user's bucket is reachable only through a folder of it shared with the caller for
    // editing; anything else about it answers as an unknown bucket.
    const own = bucket.owner_id === principal.userId;
    if (!own && !input.parentId) throw new AppError('BUCKET_NOT_FOUND');
    const name = assertName(input.name);
    const parentId = input.parentId ? assertId('fld', input.parentId, 'parentId') : bucket.root_folder_id!;
    const id = newId('fld');
    await mutate({ folders: [parentId] }, async (trx) => {
      const parent = await loadFolderFor(trx, principal, parentId, 'edit', own ? 'FOLDER_NOT_FOUND' : 'BUCKET_NOT_FOUND');
      if (parent.bucket_id !== bucket.id) {
        throw own ? new AppError('FOLDER_NOT_FOUND', 'The parent folder is not in this bucket') : new AppError('BUCKET_NOT_FOUND');
      }
      requireLive(parent);
      await assertNameFree(trx, parent.id, name);
      const now = nowIso();
      const row: NewFolder = {
        id,
        bucket_id: bucket.id,
        owner_id: parent.owner_id,
        parent_id: parent.id,
        name,
        visibility: input.visibility ?? 'private',
        is_share: 1,
        hash_url: randomToken(),
        key_wrapped: newChildKey(await folderKey(trx, keyring, parent.id), id).wrapped,
        is_root: 0,
        deleted_at: null,
        last_access_at: null,
        created_at: now,
        updated_at: now,
      };
      await repo.insertFolders(trx, [row]);
      await repo.adjustChain(trx, parent.id, '', 1, { folders: 1, files: 0, bytes: 0 }, { folders: 1, files: 0 });
    });
    return detail(principal, id);
  }

  async function update(principal: Principal, folderId: string, input: UpdateFolderInput): Promise<void> {
    if (input.name === undefined && input.visibility === undefined && input.isPrivate === undefined && input.isShare === undefined) {
      throw new AppError('EMPTY_UPDATE', undefined, [{ field: 'body', problem: 'give name, visibility, isPrivate or isShare' }]);
    }
    const fromFlag = input.isPrivate === undefined ? undefined : input.isPrivate ? 'private' : 'public';
    if (input.visibility && fromFlag && input.visibility !== fromFlag) throw new AppError('VISIBILITY_CONFLICT');
    const visibility = input.visibility ?? fromFlag;
    const name = input.name === undefined ? undefined : assertName(input.name);
    await mutate({ folders: [folderId] }, async (trx) => {
      const folder = await loadFolderFor(trx, principal, folderId, 'edit');
      // Sharing settings and visibility stay with the owner, as for files; editors rename.
      const ownersOnly = input.isShare !== undefined || (visibility !== undefined && visibility !== folder.visibility);
      if (ownersOnly && !(await mayActOnFolder(trx, principal, folder, 'manage'))) throw new AppError('FOLDER_NOT_FOUND');
      requireLive(folder);
      if (name !== undefined && name !== folder.name) {
        if (folder.is_root) throw new AppError('ROOT_FOLDER_READONLY', 'The root folder takes the name of its bucket; rename the bucket instead');
        await assertNameFree(trx, folder.parent_id!, name);
      }
      await repo.updateFolder(trx, folder.id, {
        ...(name !== undefined ? { name } : {}),
        ...(visibility !== undefined ? { visibility } : {}),
        ...(input.isShare !== undefined ? { is_share: input.isShare ? 1 : 0 } : {}),
        updated_at: nowIso(),
      });
    });
  }

  async function remove(principal: Principal, folderId: string, mode: 'soft' | 'hard'): Promise<void> {
    await mutate({ folders: [folderId] }, async (trx) => {
      const folder = await loadFolderFor(trx, principal, folderId, mode === 'hard' ? 'manage' : 'edit');
      if (folder.is_root) throw new AppError('ROOT_FOLDER_READONLY');
      if (mode === 'soft') {
        if (folder.trash_batch !== '') return; // already in the trash: nothing to do
        await detach(trx, folder);
        await repo.setSubtreeTrashState(trx, folder.id, '', folder.id, nowIso());
        return;
      }
      const now = nowIso();
      if (await retainedFileInSubtree(trx, folder.id, now)) throw new AppError('RETENTION_ACTIVE', 'The folder holds a file under retention');
      await detach(trx, folder);
      await purgeFiles(trx, await filesInSubtree(trx, folder.id), now);
      await deleteGrantsOn(trx, 'folder', repo.subtreeFolderIds(folder.id));
      await repo.deleteSubtree(trx, folder.id);
    });
  }

  async function restore(principal: Principal, folderId: string): Promise<FolderDetail> {
    await mutate({ folders: [folderId] }, async (trx) => {
      const folder = await loadFolderFor(trx, principal, folderId, 'edit');
      if (folder.trash_batch === '') throw new AppError('NOT_IN_TRASH');
      // The folder's access was checked above; an editor restores into the owner's bucket.
      const bucket = (await findBucket(trx, folder.bucket_id))!;
      const oldParent = folder.parent_id ? await repo.findFolder(trx, folder.parent_id) : undefined;
      const parentId = oldParent && oldParent.trash_batch === '' ? oldParent.id : bucket.root_folder_id!;
      // Restoring a folder from inside a trashed one takes it out of that batch first.
      await detach(trx, folder);
      // Pick the name while the folder is still in the trash, so it does not collide with itself.
      const name = await freeName(trx, parentId, folder.name, 'restored');
      await reparent(trx, folder, parentId, { name });
      await repo.setSubtreeTrashState(trx, folder.id, folder.trash_batch, '', null);
      await attach(trx, folder, parentId);
    });
    return detail(principal, folderId);
  }

  /** Loads a live move/copy target and refuses targets inside `folder` itself. */
  async function loadTarget(trx: DbOrTrx, principal: Principal, folder: FolderRow, targetId: string): Promise<FolderRow> {
    const target = await loadFolderFor(trx, principal, assertId('fld', targetId, 'targetParentId'), 'edit');
    requireLive(target);
    const chain = await repo.ancestorsFrom(trx, target.id);
    if (chain.some((a) => a.id === folder.id)) throw new AppError('INVALID_MOVE');
    return target;
  }

  async function move(principal: Principal, folderId: string, input: { targetParentId: string }): Promise<FolderDetail> {
    await mutate({ folders: [folderId, input.targetParentId] }, async (trx) => {
      const folder = await loadFolderFor(trx, principal, folderId, 'edit');
      if (folder.is_root) throw new AppError('ROOT_FOLDER_READONLY');
      requireLive(folder);
      const target = await loadTarget(trx, principal, folder, input.targetParentId);
      assertSameOwner(folder, target);
      if (target.id === folder.parent_id) return;
      await assertNameFree(trx, target.id, folder.name);
      await detach(trx, folder);
      await reparent(trx, folder, target.id);
      await attach(trx, folder, target.id);
    });
    return detail(principal, folderId);
  }

  async function copy(principal: Principal, folderId: string, input: { targetParentId: string; name?: string }): Promise<FolderDetail> {
    const requestedName = input.name === undefined ? undefined : assertName(input.name);
    const copyId = newId('fld');
    await mutate({ folders: [folderId, input.targetParentId] }, async (trx) => {
      // A copy holds the content, so it takes what a download takes.
      const folder = await loadFolderFor(trx, principal, folderId, 'download');
      if (folder.is_root) throw new AppError('ROOT_FOLDER_READONLY', 'Copy the folders of a bucket, not its root');
      requireLive(folder);
      const target = await loadTarget(trx, principal, folder, input.targetParentId);
      let name: string;
      if (requestedName !== undefined) {
        await assertNameFree(trx, target.id, requestedName);
        name = requestedName;
      } else {
        name = await freeName(trx, target.id, folder.name, 'copy');
      }
      const subtree = await repo.liveSubtree(trx, folder.id);
      const now = nowIso();
      const ids = new Map<string, string>([[folder.id, copyId]]);
      // Each copy gets a key of its own, wrapped by its (new) parent's key.
      const keys = new Map<string, Buffer>([[target.id, await folderKey(trx, keyring, target.id)]]);
      const rows: NewFolder[] = subtree.map((row) => {
        const id = ids.get(row.id) ?? newId('fld');
        ids.set(row.id, id);
        const top = row.id === folder.id;
        const parentId = top ? target.id : ids.get(row.parent_id!)!;
        const key = newChildKey(keys.get(parentId)!, id);
        keys.set(id, key.key);
        return {
          key_wrapped: key.wrapped,
          id,
          bucket_id: target.bucket_id,
          owner_id: target.owner_id,
          parent_id: parentId,
          name: top ? name : row.name,
          visibility: row.visibility,
          is_share: row.is_share,
          hash_url: randomToken(),
          is_root: 0,
          deleted_at: null,
          // The copy holds the same live subtree, so the same aggregates.
          subtree_files: row.subtree_files,
          subtree_folders: row.subtree_folders,
          subtree_bytes: row.subtree_bytes,
          child_folders: row.child_folders,
          child_files: row.child_files,
          last_access_at: null,
          created_at: now,
          updated_at: now,
        };
      });
      await repo.insertFolders(trx, rows);
      await copyFilesOf(trx, subtree, ids, keys, target, now);
      await attach(trx, subtree[0], target.id);
    });
    return detail(principal, copyId);
  }

  /** Copies the live files of copied folders into their copies (shared blobs, new keys), within the quota. */
  async function copyFilesOf(
    trx: DbOrTrx,
    subtree: FolderRow[],
    newIds: Map<string, string>,
    newKeys: Map<string, Buffer>,
    target: FolderRow,
    now: string,
  ): Promise<void> {
    const sourceKeys = new Map<string, Buffer>([[subtree[0].id, await folderKey(trx, keyring, subtree[0].id)]]);
    for (const row of subtree.slice(1)) sourceKeys.set(row.id, openChildKey(sourceKeys.get(row.parent_id!)!, row.key_wrapped, row.id));
    const CHUNK = 500;
    for (let i = 0; i < subtree.length; i += CHUNK) {
      const files = await liveFilesOfFolders(trx, subtree.slice(i, i + CHUNK).map((f) => f.id));
      if (files.length === 0) continue;
      const bytes = files.reduce((sum, f) => sum + Number(f.size), 0);
      await reserveQuota(trx, target.owner_id, bytes, ctx.config);
      await cloneFiles(
        trx,
        files.map((file) => {
          const copyFolderId = newIds.get(file.folder_id)!;
          return {
            file,
            sourceFolderKey: sourceKeys.get(file.folder_id)!,
            targetFolderId: copyFolderId,
            targetFolderKey: newKeys.get(copyFolderId)!,
            targetBucketId: target.bucket_id,
            ownerId: target.owner_id,
            name: file.name,
          };
        }),
        now,
      );
    }
  }

  return { details, subfolders, listBucket, create, update, remove, restore, move, copy, listItem };
}

export type FolderService = ReturnType<typeof buildFolderService>;
