import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { AppContext } from '../../context.js';
import { principalOf } from '../../http/auth.js';
import { errorResponses } from '../../http/envelope.js';
import type { Metrics } from '../../http/metrics.js';
import { FolderIdParams } from '../files/files.schemas.js';
import { sendDownload } from '../files/files.routes.js';
import { ZIP_SELECTION_LIMIT } from './download-zip.use-case.js';
import { archiveService } from './archives.service.js';

export const ZIP_RESPONSE = {
  description: 'The zip archive (entries stored, zip64 where needed)',
  content: { 'application/zip': { schema: Type.String({ format: 'binary' }) } },
};

export const ZIP_NOTE =
  ' The archive is laid out before its first byte: `Content-Length` is exact, and `Range` (with `If-Range` on its `ETag`) resumes a broken download with the same bytes. Entries are stored, not compressed; names are UTF-8 and relative. An item deleted while the archive streams cuts the connection, so a broken archive never looks whole.';

const tags = ['Files'];

const SelectionBody = Type.Object(
  {
    fileIds: Type.Optional(Type.Array(Type.String(), { description: 'Files of the folder' })),
    folderIds: Type.Optional(Type.Array(Type.String(), { description: 'Subfolders of the folder, each with its live subtree' })),
  },
  { additionalProperties: false, examples: [{ fileIds: ['fil_…'], folderIds: ['fld_…'] }] },
);

/** GET /folders/download/:folderId and POST /files/download-zip (docs/api.md, "Zip archives"). */
export function archiveRoutes(ctx: AppContext, metrics: Metrics): FastifyPluginAsyncTypebox {
  const archives = archiveService(ctx);
  return async (app) => {
    app.get(
      '/folders/download/:folderId',
      {
        schema: {
          tags: ['Folders'],
          summary: 'Download a folder as a zip',
          description: `The folder's live subtree under its own name, empty folders included; no trash, no older versions. Someone the folder is shared with gets what they may download of it (403 when nothing).${ZIP_NOTE}`,
          params: FolderIdParams,
          response: {
            200: ZIP_RESPONSE,
            206: ZIP_RESPONSE,
            304: { description: 'Not modified' },
            ...errorResponses(400, 401, 403, 404, 416),
          },
        },
      },
      async (request, reply) => sendDownload(reply, await archives.folderZip(principalOf(request), request.params.folderId), metrics),
    );

    app.post(
      '/files/download-zip',
      {
        schema: {
          tags,
          summary: 'Download files and folders of one folder as a zip',
          description: `At most ${ZIP_SELECTION_LIMIT} ids, all of live items of one folder that you can see (400 otherwise: \`EMPTY_SELECTION\`, \`SELECTION_TOO_LARGE\`, \`INVALID_SELECTION\`, \`SELECTION_SPANS_FOLDERS\`); the archive is named after that folder and holds the items at its top, folders with their live subtrees.${ZIP_NOTE}`,
          body: SelectionBody,
          response: { 200: ZIP_RESPONSE, 206: ZIP_RESPONSE, 304: { description: 'Not modified' }, ...errorResponses(400, 401, 403, 416) },
        },
      },
      async (request, reply) => sendDownload(reply, await archives.selectionZip(principalOf(request), request.body), metrics),
    );
  };
}
