import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { principalOf } from '../../http/auth.js';
import { Envelope, envelope, errorResponses } from '../../http/envelope.js';
import { storageService } from './storage.service.js';
import * as S from './storage.schemas.js';

export function storageRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  const storage = storageService(ctx);
  return async (app) => {
    app.get(
      '/storage/status',
      {
        schema: {
          tags: ['Storage'],
          summary: 'Capacity and use of your storage',
          description: 'Over all your datahubs; old versions and the trash count. Without a valid token: 401.',
          response: { 200: Envelope(S.StorageStatus), ...errorResponses(401) },
        },
      },
      async (request) => envelope(await storage.status(principalOf(request))),
    );
  };
}
