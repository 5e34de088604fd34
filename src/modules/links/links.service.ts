import type { AppContext } from '../../context.js';
import { bindContext } from '../../lib/bind.js';
import { download, sealed, transfer } from './link-downloads.use-case.js';
import { fileInfo, openFolder } from './link-views.use-case.js';
import { folderZip } from './link-zip.use-case.js';
import { address, create, list, revoke, update } from './manage-links.use-case.js';

export type { LinkKind, LinkSettings, SealedDownload, Visitor } from './links.types.js';

/**
 * Share links: the owner's management (manage-links.use-case.ts) and the public side: what a link
 * shows (link-views.use-case.ts) and its downloads (link-downloads.use-case.ts), each checked by
 * link-admission.ts. The use cases are bound to the context here.
 */
export function linkService(ctx: AppContext) {
  return bindContext(ctx, { create, address, list, update, revoke, fileInfo, openFolder, download, sealed, folderZip, transfer });
}
