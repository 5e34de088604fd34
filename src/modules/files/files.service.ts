import { onePerContext } from '../../context.js';
import { bindContext } from '../../lib/bind.js';
import { details, list } from './details.use-case.js';
import { download, linkDownload, publicDownload } from './download.use-case.js';
import { copy, move } from './move-copy.use-case.js';
import { preview, previewAddress, principalOfTicket } from './preview.use-case.js';
import { remove, restore } from './trash.use-case.js';
import { update } from './update.use-case.js';
import { undoUpload, uploadOne } from './upload.use-case.js';
import { deleteVersion, restoreVersion, versions } from './versions.use-case.js';

/**
 * The file service of a context: the use cases of files (one file each, `*.use-case.ts`) bound to
 * it, one per context (see onePerContext).
 */
export const fileService = onePerContext((ctx) =>
  bindContext(ctx, {
    uploadOne,
    undoUpload,
    details,
    update,
    list,
    download,
    publicDownload,
    linkDownload,
    preview,
    previewAddress,
    principalOfTicket,
    move,
    copy,
    remove,
    restore,
    versions,
    restoreVersion,
    deleteVersion,
  }),
);

export type FileService = ReturnType<typeof fileService>;

/**
 * What a share link's download passes on (see linkDownload): the conditional headers, which the
 * HTTP layer now reads itself (src/http/conditional.ts).
 */
export interface DownloadOptions {
  versionId?: string;
  range?: string;
  ifRange?: string;
  ifNoneMatch?: string;
}
