import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { AppContext } from '../../context.js';
import { principalOf } from '../../http/auth.js';
import { Envelope, envelope, errorResponses } from '../../http/envelope.js';
import { idPattern } from '../../lib/ids.js';
import { trashService } from './trash.service.js';

const BucketQuery = Type.Object({ bucketId: Type.Optional(Type.String({ pattern: idPattern('bkt'), description: 'Only this bucket' })) });

export function trashRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  const trash = trashService(ctx);
  return async (app) => {
    const tags = ['Trash'];
    app.get(
      '/trash/list',
      {
        schema: {
          tags,
          summary: 'What is in the trash',
          description: 'Folders and files trashed on their own; what was trashed with a folder is inside it.',
          querystring: BucketQuery,
          response: {
            200: Envelope(Type.Object({ folders: Type.Array(Type.Ref('FolderListItem')), files: Type.Array(Type.Ref('FileDetail')) })),
            ...errorResponses(400, 401, 404),
          },
        },
      },
      async (request) => envelope(await trash.list(principalOf(request), request.query.bucketId)),
    );

    app.delete(
      '/trash/empty',
      {
        schema: {
          tags,
          summary: 'Empty the trash',
          description: 'Deletes for good everything in the trash; files under retention (and folders holding them) stay.',
          querystring: BucketQuery,
          response: {
            200: Envelope(Type.Object({ deleted: Type.Integer(), keptUnderRetention: Type.Integer() })),
            ...errorResponses(400, 401, 404),
          },
        },
      },
      async (request) => envelope(await trash.empty(principalOf(request), request.query.bucketId)),
    );
  };
}
