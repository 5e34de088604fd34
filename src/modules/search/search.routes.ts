import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { principalOf } from '../../http/auth.js';
import { Envelope, envelope, errorResponses } from '../../http/envelope.js';
import { searchService } from './search.service.js';
import * as S from './search.schemas.js';

export function searchRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  const service = searchService(ctx);
  return async (app) => {
    app.get(
      '/search',
      {
        schema: {
          tags: ['Search'],
          summary: 'Search files and folders by name',
          description:
            'Your live files and folders in every bucket, and those shared with you (a folder shared covers its subtree), whose name ' +
            `contains \`q\` (at the start or anywhere), case and accents aside. \`q\` shorter than ${S.MIN_QUERY_LENGTH} characters is 400 ` +
            '`SEARCH_QUERY_TOO_SHORT`. Folders first, then files, each newest first; paginated, without a total. Trashed items are left out.',
          querystring: S.SearchQuery,
          response: { 200: Envelope(S.SearchPage), ...errorResponses(400, 401) },
        },
      },
      async (request) => envelope(await service.search(principalOf(request), request.query)),
    );
  };
}
