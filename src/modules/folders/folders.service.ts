import { onePerContext } from '../../context.js';
import { bindContext } from '../../lib/bind.js';
import { access } from './access.use-case.js';
import { create } from './create.use-case.js';
import { details } from './details.use-case.js';
import { listBucket, subfolders } from './listing.use-case.js';
import { copy, move } from './move-copy.use-case.js';
import { remove, restore } from './trash.use-case.js';
import { update } from './update.use-case.js';
import { listItem } from './folders.views.js';

/**
 * The folder service of a context: the use cases of folders (one file each, `*.use-case.ts`)
 * bound to it, one per context (see onePerContext).
 */
export const folderService = onePerContext((ctx) => ({
  ...bindContext(ctx, { access, details, subfolders, listBucket, create, update, remove, restore, move, copy }),
  listItem,
}));

export type FolderService = ReturnType<typeof folderService>;
