import type { AppContext } from '../../context.js';
import { openChildKey, rewrapChildKey } from '../../crypto/keyring.js';
import type { DbOrTrx } from '../../db/database.js';
import type { FolderRow } from '../../db/schema.js';
import { mutation } from '../../db/transaction.js';
import { AppError } from '../../errors.js';
import { nowIso } from '../../lib/time.js';
import { folderKey } from './folders.keys.js';
import { adjustChain, contributionOf, findFolder, lockTrees, setSubtreeBucket, updateFolder, type TreeRefs } from './folders.repository.js';

/** How the use cases place folders in the tree: locks, trash state, aggregates and keys. */

/** A mutation of the trees holding `refs`, serialised with the others on them (see lockTrees). */
export function mutateTrees<T>(ctx: AppContext, refs: TreeRefs, work: (trx: DbOrTrx) => Promise<T>): Promise<T> {
  return mutation(ctx.db, async (trx) => {
    await lockTrees(trx, ctx.database.capabilities.rowLocks, refs);
    return work(trx);
  });
}

export function requireLive(folder: FolderRow): void {
  if (folder.trash_batch !== '') throw new AppError('FOLDER_IN_TRASH');
}

/** Removes a folder's contribution from the folders above it (those in its own trash state). */
export async function detach(trx: DbOrTrx, folder: FolderRow): Promise<void> {
  if (!folder.parent_id) return;
  await adjustChain(trx, folder.parent_id, folder.trash_batch, -1, contributionOf(folder), { folders: 1, files: 0 });
}

/** Adds a live folder's contribution to a live parent and its ancestors. */
export async function attach(trx: DbOrTrx, folder: FolderRow, parentId: string): Promise<void> {
  await adjustChain(trx, parentId, '', 1, contributionOf(folder), { folders: 1, files: 0 });
}

/**
 * Puts a folder under another parent: its key is re-wrapped by the new parent's key (one wrap,
 * whatever the subtree's size), and a move to another bucket carries the subtree along.
 */
export async function reparent(
  ctx: AppContext,
  trx: DbOrTrx,
  folder: FolderRow,
  parentId: string,
  extra: { name?: string } = {},
): Promise<void> {
  if (parentId === folder.parent_id) {
    await updateFolder(trx, folder.id, { ...extra, updated_at: nowIso() });
    return;
  }
  const key = openChildKey(await folderKey(trx, ctx.keyring, folder.parent_id!), folder.key_wrapped, folder.id);
  const parent = (await findFolder(trx, parentId))!;
  const wrapped = rewrapChildKey(key, await folderKey(trx, ctx.keyring, parentId), folder.id);
  await updateFolder(trx, folder.id, { parent_id: parentId, key_wrapped: wrapped, ...extra, updated_at: nowIso() });
  if (parent.bucket_id !== folder.bucket_id) await setSubtreeBucket(trx, folder.id, parent.bucket_id);
}
