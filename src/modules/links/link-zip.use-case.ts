import type { AppContext } from '../../context.js';
import { AppError } from '../../errors.js';
import type { Sendable } from '../../lib/sendable.js';
import { archiveOf, liveTree } from '../archives/archives.service.js';
import { admit, holdAccess, liveFolderOf, unwrapWithLinkKey } from './link-admission.js';
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
  const key = await unwrapWithLinkKey(db, link, visitor, rules);
  const archive = await archiveOf(ctx, folder.name, async (trx) => ({
    base: { id: folder.id, key: async () => key },
    basePath: [folder.name],
    ...(await liveTree(trx, folder.id)),
    includeFolder: () => true,
  }));
  await holdAccess(db, link, archive.tag, visitor, transfer);
  return archive;
}
