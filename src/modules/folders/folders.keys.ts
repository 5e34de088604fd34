import type { Keyring } from '../../crypto/keyring.js';
import { openChildKey } from '../../crypto/keyring.js';
import type { DbOrTrx } from '../../db/database.js';
import { keyChain } from './folders.repository.js';

/** Unwraps a folder's key: master → bucket → root folder → … → the folder. */
export async function folderKey(db: DbOrTrx, keyring: Keyring, folderId: string): Promise<Buffer> {
  const chain = await keyChain(db, folderId);
  if (!chain) throw new Error(`folder ${folderId} has no key chain`);
  let key = keyring.bucketKey(chain.bucketId, chain.bucketKeyWrapped);
  for (const folder of chain.folders) key = openChildKey(key, folder.key_wrapped, folder.id);
  return key;
}
