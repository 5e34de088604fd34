import { assertSameOwner, loadFileFor } from '../../access/access.js';
import type { AppContext, Principal } from '../../context.js';
import type { DbOrTrx } from '../../db/database.js';
import type { FileRow, FolderRow } from '../../db/schema.js';
import { assertName } from '../../lib/names.js';
import { nowIso } from '../../lib/time.js';
import { reserveQuota } from '../accounts/quota.js';
import { folderKey } from '../folders/folders.keys.js';
import { assertNameFree, freeItemName } from '../folders/folders.names.js';
import { mutateTrees } from '../folders/folders.tree.js';
import { details } from './details.use-case.js';
import { cloneFiles } from './files.lifecycle.js';
import * as repo from './files.repository.js';
import type { FileDetail, MoveFileBody } from './files.schemas.js';
import { attachFile, detachFile, loadTargetFolder, requireLiveFile, rewrapForFolder } from './files.tree.js';

/** Moves a file to another folder of the same owner, renamed if asked; its key is re-wrapped, its content untouched. */
export async function move(ctx: AppContext, principal: Principal, fileId: string, input: MoveFileBody): Promise<FileDetail> {
  const requested = input.name === undefined ? undefined : assertName(input.name);
  await mutateTrees(ctx, { files: [fileId], folders: [input.targetFolderId] }, async (trx) => {
    const file = await loadFileFor(trx, principal, fileId, 'edit');
    requireLiveFile(file);
    const target = await loadTargetFolder(trx, principal, input.targetFolderId);
    assertSameOwner(file, target);
    const name = requested ?? file.name;
    if (target.id === file.folder_id && name === file.name) return;
    await assertNameFree(trx, target.id, name);
    const keyWrapped = target.id === file.folder_id ? file.key_wrapped : await rewrapForFolder(ctx, trx, file, target.id);
    await detachFile(trx, file);
    await repo.updateFile(trx, file.id, {
      folder_id: target.id,
      bucket_id: target.bucket_id,
      name,
      key_wrapped: keyWrapped,
      updated_at: nowIso(),
    });
    await attachFile(trx, file, target.id);
  });
  return details(ctx, principal, fileId);
}

/** Copies a file into a folder, under the name asked or a free one: the copy shares the stored content and counts towards the quota. */
export async function copy(ctx: AppContext, principal: Principal, fileId: string, input: MoveFileBody): Promise<FileDetail> {
  const requested = input.name === undefined ? undefined : assertName(input.name);
  const copyId = await mutateTrees(ctx, { files: [fileId], folders: [input.targetFolderId] }, async (trx) => {
    const file = await loadFileFor(trx, principal, fileId, 'download');
    requireLiveFile(file);
    const target = await loadTargetFolder(trx, principal, input.targetFolderId);
    const name = await copyName(trx, target, file, requested);
    await reserveQuota(trx, target.owner_id, Number(file.size), ctx.config);
    const clone = await cloneInto(ctx, trx, file, target, name);
    await attachFile(trx, { folder_id: target.id, size: file.size });
    return clone.id;
  });
  return details(ctx, principal, copyId);
}

/** The requested name, which must be free, or the file's own name made free in the target ("name (copy)"). */
async function copyName(trx: DbOrTrx, target: FolderRow, file: FileRow, requested: string | undefined): Promise<string> {
  if (requested === undefined) return freeItemName(trx, target.id, file.name, 'copy', true);
  await assertNameFree(trx, target.id, requested);
  return requested;
}

/** A copy of `file` in `target` sharing its content, with a key of its own wrapped by the target's. */
async function cloneInto(ctx: AppContext, trx: DbOrTrx, file: FileRow, target: FolderRow, name: string) {
  const now = nowIso();
  const [clone] = await cloneFiles(
    trx,
    [
      {
        file,
        sourceFolderKey: await folderKey(trx, ctx.keyring, file.folder_id),
        targetFolderId: target.id,
        targetFolderKey: await folderKey(trx, ctx.keyring, target.id),
        targetBucketId: target.bucket_id,
        ownerId: target.owner_id,
        name,
      },
    ],
    now,
  );
  return clone;
}
