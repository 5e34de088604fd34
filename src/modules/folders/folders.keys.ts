import { mayActOnFolder, type Action } from '../../access/access.js';
import type { Principal } from '../../context.js';
import type { Keyring } from '../../crypto/keyring.js';
import { openChildKey } from '../../crypto/keyring.js';
import type { DbOrTrx } from '../../db/database.js';
import type { FolderRow } from '../../db/schema.js';
import { AppError } from '../../errors.js';
import { findFolderWithKeyChain, keyChain, type KeyChain } from './key-chain.repository.js';

/** Unwraps a folder's key: master → bucket → root folder → … → the folder. */
export async function folderKey(db: DbOrTrx, keyring: Keyring, folderId: string): Promise<Buffer> {
  const chain = await keyChain(db, folderId);
  // No chain: the folder (or its bucket) was deleted since the caller loaded it, e.g. an upload
  // unwrapping its folder's key while the bucket is being deleted.
  if (!chain) throw new AppError('FOLDER_NOT_FOUND');
  return unwrapKeyChain(keyring, chain);
}

/** The key at the end of a chain read from the database. */
export function unwrapKeyChain(keyring: Keyring, chain: KeyChain): Buffer {
  let key = keyring.bucketKey(chain.bucketId, chain.bucketKeyWrapped);
  for (const folder of chain.folders) key = openChildKey(key, folder.key_wrapped, folder.id);
  return key;
}

/**
 * As loadFolderFor (access.ts), with the folder's key chain read in the same statement (see
 * findFolderWithKeyChain): unknown, forbidden and hidden folders are all 404.
 */
export async function loadFolderWithKeyChainFor(
  db: DbOrTrx,
  principal: Principal,
  folderId: string,
  action: Action,
): Promise<{ folder: FolderRow; chain: KeyChain }> {
  const found = await findFolderWithKeyChain(db, folderId);
  if (!found || !(await mayActOnFolder(db, principal, found.folder, action))) throw new AppError('FOLDER_NOT_FOUND');
  return found;
}
