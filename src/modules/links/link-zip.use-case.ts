import { assertNotThrottled } from '../../access/throttle.js';
import type { AppContext } from '../../context.js';
import { KeyUnwrapError } from '../../crypto/keyring.js';
import { unwrapKey } from '../../crypto/key-wrap.js';
import { AppError } from '../../errors.js';
import type { Sendable } from '../../lib/sendable.js';
import { archiveOf, liveFilesIn, liveSubtrees } from '../archives/archives.service.js';
import { admit, holdAccess, liveFolderOf, refuse } from './link-admission.js';
import { linkKeyBytes } from './links.key-proof.js';
import type { LinkTransfer } from './links.passes.js';
import type { Visitor } from './links.types.js';

/**
 * A folder link's live subtree as one zip, decrypted with the link key the visitor sent (the
 * server holds no other way in). Checked like a download; one archive counts one access of the
 * link, held on a pass that resumes the same archive (same tag) without spending another.
 */
export async function folderZip(ctx: AppContext, sharedHash: string, visitor: Visitor, transfer: LinkTransfer): Promise<Sendable> {
  const { db } = ctx;
  const { link, rules } = await admit(db, sharedHash, visitor, 'folder');
  if (link.can_download === 0) throw new AppError('DOWNLOAD_NOT_ALLOWED');
  const folder = await liveFolderOf(db, link);
  let key: Buffer;
  try {
    await assertNotThrottled(db, rules);
    key = unwrapKey(linkKeyBytes(visitor.encryptionKey), link.key_wrapped, link.id);
  } catch (error) {
    if (error instanceof KeyUnwrapError) return refuse(db, rules, 'INVALID_ENCRYPTION_KEY');
    throw error;
  }
  const folders = await liveSubtrees(db, [folder.id]);
  const files = await liveFilesIn(
    db,
    folders.map((f) => f.id),
  );
  const tree = { base: { id: folder.id, key: async () => key }, basePath: [folder.name], folders, files, includeFolder: () => true };
  const archive = await archiveOf(ctx, tree, folder.name);
  await holdAccess(db, link, archive.tag, visitor, transfer);
  return archive;
}
