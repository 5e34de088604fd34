import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { AppContext } from '../../context.js';
import { principalOf } from '../../http/auth.js';
import { sendContent } from '../../http/content.js';
import { errorResponses } from '../../http/envelope.js';
import type { Metrics } from '../../http/metrics.js';
import { bindContext } from '../../lib/bind.js';
import { idPattern } from '../../lib/ids.js';
import { thumbnail } from './thumbnail.use-case.js';

const FileIdParams = Type.Object({ fileId: Type.String({ pattern: idPattern('fil') }) });
const ThumbnailQuery = Type.Object({
  v: Type.Optional(Type.String({ maxLength: 64, description: 'A version id: that version, and an answer cached for a year' })),
});
const webp = {
  description: 'The thumbnail (WebP, at most 256 pixels a side)',
  content: { 'image/webp': { schema: Type.String({ format: 'binary' }) } },
};

/** GET /files/thumbnail/:fileId: a file's thumbnail, to anyone who may see the file. */
export function thumbnailRoutes(ctx: AppContext, metrics: Metrics): FastifyPluginAsyncTypebox {
  const service = bindContext(ctx, { thumbnail });
  return async (app) => {
    app.get(
      '/files/thumbnail/:fileId',
      {
        schema: {
          tags: ['Files'],
          summary: "A file's thumbnail (images only)",
          description:
            'Made in the background after an upload: 404 `THUMBNAIL_PENDING` until then (ask again a few seconds later), 404 `THUMBNAIL_NOT_FOUND` for good when the file is not an image or the image could not be read. With `v` (a version id) the answer is cached for a year.',
          params: FileIdParams,
          querystring: ThumbnailQuery,
          response: { 200: webp, 304: { description: 'Not modified' }, ...errorResponses(400, 401, 404) },
        },
      },
      async (request, reply) =>
        sendContent(reply, await service.thumbnail(principalOf(request), request.params.fileId, request.query.v), metrics),
    );
  };
}
