import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { AppContext } from '../../context.js';
import { principalOf } from '../../http/auth.js';
import { Envelope, envelope, errorResponses } from '../../http/envelope.js';
import { DatahubIdParams } from '../buckets/buckets.schemas.js';
import { datahubService } from './datahubs.service.js';
import * as S from './datahubs.schemas.js';

export function datahubRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  const datahubs = datahubService(ctx);
  return async (app) => {
    const tags = ['Datahubs'];

    app.put(
      '/datahub/create',
      {
        schema: {
          tags,
          summary: 'Create a datahub',
          description:
            'In an active location (unknown: 404 `LOCATION_NOT_FOUND`; inactive: 400 `LOCATION_INACTIVE`), with a first bucket and its root folder.',
          body: S.CreateDatahubBody,
          response: { 201: Envelope(Type.Ref('Datahub')), ...errorResponses(400, 401, 404, 409) },
        },
      },
      async (request, reply) => {
        const datahub = await datahubs.create(principalOf(request), request.body);
        reply.code(201);
        return envelope(datahub, 201, 'Datahub created');
      },
    );

    app.get(
      '/datahub/list',
      {
        schema: {
          tags,
          summary: 'List your datahubs with their buckets',
          description: 'Oldest first, paginated.',
          querystring: S.DatahubListQuery,
          response: { 200: Envelope(S.DatahubPage), ...errorResponses(400, 401) },
        },
      },
      async (request) => envelope(await datahubs.list(principalOf(request), request.query)),
    );

    app.get(
      '/datahub/size/:datahubId',
      {
        schema: {
          tags,
          summary: 'Sizes of a datahub',
          description:
            "`currentObjectsSize`: the current version of every file not deleted for good (files in the trash included); `versionsObjectsSize`: every other version; `totalSize`: both. A malformed id is 400, an unknown one (or another user's) 404.",
          params: DatahubIdParams,
          response: { 200: Envelope(S.DatahubSize), ...errorResponses(400, 401, 404) },
        },
      },
      async (request) => envelope(await datahubs.size(principalOf(request), request.params.datahubId)),
    );
  };
}
