import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { AppContext } from '../../context.js';
import { AppError } from '../../errors.js';
import { Envelope, envelope, errorResponses } from '../../http/envelope.js';
import { regionService } from './regions.service.js';
import * as S from './regions.schemas.js';

export function regionRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  const regions = regionService(ctx);
  return async (app) => {
    const tags = ['Regions'];

    app.get(
      '/regions/list',
      {
        schema: {
          tags,
          summary: 'List the regions',
          description: 'Every region, active or not, with its names in English and French.',
          response: { 200: Envelope(Type.Array(Type.Ref('Region'))), ...errorResponses(401) },
        },
      },
      async () => envelope(await regions.list()),
    );

    app.get(
      '/regions/:regionId',
      {
        schema: {
          tags,
          summary: 'The locations of a region',
          description: 'A bare JSON array (no envelope), as the API contract shows it. An unknown region is 404, a non-integer id 400.',
          params: S.RegionIdParams,
          response: { 200: Type.Array(Type.Ref('RegionLocation')), ...errorResponses(400, 401, 404) },
        },
        // Schema coercion would read " ", "1e0" or "0x1" as numbers: only decimal digits name a region.
        preValidation: async (request) => {
          const raw = String((request.params as { regionId?: unknown }).regionId ?? '');
          if (!/^-?\d{1,10}$/.test(raw))
            throw new AppError('INVALID_ID', 'regionId must be an integer', [{ field: 'params.regionId', problem: 'must be an integer' }]);
        },
      },
      async (request) => regions.locations(request.params.regionId),
    );
  };
}
