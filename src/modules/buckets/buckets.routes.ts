import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { AppContext } from '../../context.js';
import { principalOf } from '../../http/auth.js';
import { Envelope, envelope, errorResponses } from '../../http/envelope.js';
import { bucketService } from './buckets.service.js';
import * as S from './buckets.schemas.js';

export function bucketRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  const buckets = bucketService(ctx);
  return async (app) => {
    const tags = ['Buckets'];

    app.post(
      '/bucket/create/:datahubId',
      {
        schema: {
          tags,
          summary: 'Create a bucket in a datahub',
          description: 'The bucket gets its own key and a root folder named like it. Names are unique among your buckets (409).',
          params: S.DatahubIdParams,
          body: S.CreateBucketBody,
          response: { 201: Envelope(Type.Ref('Bucket')), ...errorResponses(400, 401, 404, 409) },
        },
      },
      async (request, reply) => {
        const bucket = await buckets.create(principalOf(request), request.params.datahubId, request.body);
        reply.code(201);
        return envelope(bucket, 201, 'Bucket created');
      },
    );

    app.get(
      '/bucket/list',
      {
        schema: {
          tags,
          summary: 'List your buckets',
          description: 'All of them, or those of `datahubId`; oldest first, paginated.',
          querystring: S.BucketListQuery,
          response: { 200: Envelope(S.BucketPage), ...errorResponses(400, 401, 404) },
        },
      },
      async (request) => envelope(await buckets.list(principalOf(request), request.query)),
    );

    app.post(
      '/bucket/update/:bucketId',
      {
        schema: {
          tags,
          summary: 'Rename a bucket',
          description: 'The root folder takes the new name too. A missing or invalid name is 400, a name another of your buckets has 409.',
          params: S.BucketIdParams,
          body: S.UpdateBucketBody,
          response: { 200: Envelope(Type.Ref('Bucket')), ...errorResponses(400, 401, 404, 409) },
        },
      },
      async (request) =>
        envelope(await buckets.update(principalOf(request), request.params.bucketId, request.body ?? {}), 200, 'Bucket updated'),
    );

    app.delete(
      '/bucket/delete/:bucketId',
      {
        schema: {
          tags,
          summary: 'Delete an empty bucket',
          description:
            'Only a bucket that holds nothing but its root folder: no other folder and no file, live or in the trash (409 `BUCKET_NOT_EMPTY`; empty the trash first). The default bucket of the account stays (409 `DEFAULT_BUCKET`).',
          params: S.BucketIdParams,
          response: { 200: Envelope(Type.Null()), ...errorResponses(400, 401, 404, 409) },
        },
      },
      async (request) => {
        await buckets.remove(principalOf(request), request.params.bucketId);
        return envelope(null, 200, 'Bucket deleted');
      },
    );
  };
}
