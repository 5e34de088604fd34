import { assertSameOwner, loadFolderFor } from '../../access/access.js';
import type { AppContext, Principal } from '../../context.js';
import { newChildKey, openChildKey } from '../../crypto/keyring.js';
import type { DbOrTrx } from '../../db/database.js';
import type { FolderRow, NewFolder } from '../../db/schema.js';
import { AppError } from '../../errors.js';
import { assertId, newId, randomToken } from '../../lib/ids.js';
import { assertName } from '../../lib/names.js';
import { nowIso } from '../../lib/time.js';
import { reserveQuota } from '../accounts/quota.js';
import { cloneFiles } from '../files/files.lifecycle.js';
import { liveFilesOfFolders } from '../files/files.repository.js';
import { detailAfterChange } from './details.use-case.js';
import { folderKey } from './folders.keys.js';
import { assertNameFree, freeItemName } from './folders.names.js';
import * as repo from './folders.repository.js';
import type { CopyFolderBody, FolderDetail, MoveFolderBody } from './folders.schemas.js';
import { attach, detach, mutateTrees, reparent, requireLive } from './folders.tree.js';

/**
 * Moves a folder, with its subtree, under another folder of the same owner (another bucket carries
 * the subtree along), under a new name when `rename` is given (WebDAV's MOVE does both at once).
 */
export async function move(
  ctx: AppContext,
  principal: Principal,
  folderId: string,
  input: MoveFolderBody,
  rename?: string,
): Promise<FolderDetail> {
  const requested = rename === undefined ? undefined : assertName(rename);
  await mutateTrees(ctx, { folders: [folderId, input.targetParentId] }, async (trx) => {
    const folder = await loadFolderFor(trx, principal, folderId, 'edit');
    if (folder.is_root) throw new AppError('ROOT_FOLDER_READONLY');
    requireLive(folder);
    const target = await loadTarget(trx, principal, folder, input.targetParentId);
    assertSameOwner(folder, target);
    const name = requested ?? folder.name;
    if (target.id === folder.parent_id && name === folder.name) return;
    await assertNameFree(trx, target.id, name);
    await detach(trx, folder);
    await reparent(ctx, trx, folder, target.id, { name });
    await attach(trx, folder, target.id);
  });
  return detailAfterChange(ctx, principal, folderId);
}

/** Copies a folder with its live subtree under another folder: new folders and keys, the files' content shared, within the quota. */
export async function copy(ctx: AppContext, principal: Principal, folderId: string, input: CopyFolderBody): Promise<FolderDetail> {
  const requestedName = input.name === undefined ? undefined : assertName(input.name);
  const copyId = newId('fld');
  await mutateTrees(ctx, { folders: [folderId, input.targetParentId] }, async (trx) => {
    // A copy holds the content, so it takes what a download takes.
    const folder = await loadFolderFor(trx, principal, folderId, 'download');
    if (folder.is_root) throw new AppError('ROOT_FOLDER_READONLY', 'Copy the folders of a bucket, not its root');
    requireLive(folder);
    const target = await loadTarget(trx, principal, folder, input.targetParentId);
    const name = await copyName(trx, target, folder, requestedName);
    const subtree = await repo.liveSubtree(trx, folder.id);
    const now = nowIso();
    const ids = new Map<string, string>([[folder.id, copyId]]);
    // Each copy gets a key of its own, wrapped by its (new) parent's key.
    const keys = new Map<string, Buffer>([[target.id, await folderKey(trx, ctx.keyring, target.id)]]);
    await repo.insertFolders(trx, copiedRows(subtree, target, name, ids, keys, now));
    await copyFilesOf(ctx, trx, subtree, ids, keys, target, now);
    await attach(trx, subtree[0], target.id);
  });
  return detailAfterChange(ctx, principal, copyId);
}

/** Loads a live move/copy target and refuses targets inside `folder` itself. */
async function loadTarget(trx: DbOrTrx, principal: Principal, folder: FolderRow, targetId: string): Promise<FolderRow> {
  const target = await loadFolderFor(trx, principal, assertId('fld', targetId, 'targetParentId'), 'edit');
  requireLive(target);
  const chain = await repo.ancestorsFrom(trx, target.id);
  if (chain.some((a) => a.id === folder.id)) throw new AppError('INVALID_MOVE');
  return target;
}

/** The requested name, which must be free, or the folder's own name made free in the target ("name (copy)"). */
async function copyName(trx: DbOrTrx, target: FolderRow, folder: FolderRow, requested: string | undefined): Promise<string> {
  if (requested === undefined) return freeItemName(trx, target.id, folder.name, 'copy', false);
  await assertNameFree(trx, target.id, requested);
  return requested;
}

/**
 * The rows of the copies of a live subtree (parents first), the top one named `name` under
 * `target`. `ids` maps each source folder to its copy and `keys` each copy (and the target) to
 * its key: both are filled in here, for the files' copies.
 */
function copiedRows(
  subtree: FolderRow[],
  target: FolderRow,
  name: string,
  ids: Map<string, string>,
  keys: Map<string, Buffer>,
  now: string,
): NewFolder[] {
  const top = subtree[0].id;
  return subtree.map((row) => {
    const id = ids.get(row.id) ?? newId('fld');
    ids.set(row.id, id);
    const parentId = row.id === top ? target.id : ids.get(row.parent_id!)!;
    const key = newChildKey(keys.get(parentId)!, id);
    keys.set(id, key.key);
    return {
      key_wrapped: key.wrapped,
      id,
      bucket_id: target.bucket_id,
      owner_id: target.owner_id,
      parent_id: parentId,
      name: row.id === top ? name : row.name,
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
}

/** Copies the live files of copied folders into their copies (shared blobs, new keys), within the quota. */
async function copyFilesOf(
  ctx: AppContext,
  trx: DbOrTrx,
  subtree: FolderRow[],
  newIds: Map<string, string>,
  newKeys: Map<string, Buffer>,
  target: FolderRow,
  now: string,
): Promise<void> {
  const sourceKeys = new Map<string, Buffer>([[subtree[0].id, await folderKey(trx, ctx.keyring, subtree[0].id)]]);
  for (const row of subtree.slice(1)) sourceKeys.set(row.id, openChildKey(sourceKeys.get(row.parent_id!)!, row.key_wrapped, row.id));
  const CHUNK = 500;
  for (let i = 0; i < subtree.length; i += CHUNK) {
    const files = await liveFilesOfFolders(
      trx,
      subtree.slice(i, i + CHUNK).map((f) => f.id),
    );
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
