import { onePerContext } from '../../context.js';
import { bindContext } from '../../lib/bind.js';
import { folderZip, selectionZip } from './download-zip.use-case.js';

/**
 * Zip archives of folders and selections (issue 33): laid out before their first byte
 * (archive-plan.ts over src/lib/zip/), so their length is known and any range streams on its own.
 */
export const archiveService = onePerContext((ctx) => bindContext(ctx, { folderZip, selectionZip }));

export { archiveOf, type ArchiveTree } from './archive-plan.js';
export { liveTree } from './archives.repository.js';
