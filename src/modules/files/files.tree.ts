import { loadFolderFor } from '../../access/access.js';
import type { AppContext, Principal } from '../../context.js';
import { openChildKey, rewrapChildKey } from '../../crypto/keyring.js';
import type { DbOrTrx } from '../../db/database.js';
import type { FileRow, FolderRow } from '../../db/schema.js';
import { AppError } from '../../errors.js';
import { assertId } from '../../lib/ids.js';
import { folderKey } from '../folders/folders.keys.js';
import { adjustChain, adjustChainWrite } from '../folders/folders.repository.js';

/** How the use cases of files place a file in the folder tree: its trash state, its aggregates, its key. */

const FILE_CONTRIBUTION = (size: number) => ({ folders: 0, files: 1, bytes: size });
const ONE_FILE = { folders: 0, files: 1 };

export function requireLiveFolder(folder: FolderRow): void {
  if (folder.trash_batch !== '') throw new AppError('FOLDER_IN_TRASH');
}

export function requireLiveFile(file: FileRow): void {
  if (file.trash_batch !== '') throw new AppError('FILE_IN_TRASH');
}

/** Removes a file's contribution from the folders above it that share its trash state. */
export async function detachFile(trx: DbOrTrx, file: FileRow): Promise<void> {
  await adjustChain(trx, file.folder_id, file.trash_batch, -1, FILE_CONTRIBUTION(Number(file.size)), ONE_FILE);
}

export async function attachFile(trx: DbOrTrx, file: Pick<FileRow, 'folder_id' | 'size'>, folderId = file.folder_id): Promise<void> {
  await fileAttached(file, folderId).execute(trx);
}

/** The aggregates of the live chain from `folderId` up gaining `file`: a write to run alone or beside others. */
export function fileAttached(file: Pick<FileRow, 'folder_id' | 'size'>, folderId = file.folder_id) {
  return adjustChainWrite(folderId, '', 1, FILE_CONTRIBUTION(Number(file.size)), ONE_FILE);
}

/** The file's own key, unwrapped through its folder's. */
export async function fileKeyOf(ctx: AppContext, trx: DbOrTrx, file: FileRow): Promise<Buffer> {
  return openChildKey(await folderKey(trx, ctx.keyring, file.folder_id), file.key_wrapped, file.id);
}

/** Re-wraps a file's key for another folder (one wrap; the content is untouched). */
export async function rewrapForFolder(ctx: AppContext, trx: DbOrTrx, file: FileRow, targetFolderId: string): Promise<string> {
  return rewrapChildKey(await fileKeyOf(ctx, trx, file), await folderKey(trx, ctx.keyring, targetFolderId), file.id);
}

/** The live folder a file is moved or copied into, which the principal may edit. */
export async function loadTargetFolder(trx: DbOrTrx, principal: Principal, targetFolderId: string): Promise<FolderRow> {
  const target = await loadFolderFor(trx, principal, assertId('fld', targetFolderId, 'targetFolderId'), 'edit');
  requireLiveFolder(target);
  return target;
}
