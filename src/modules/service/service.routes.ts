import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { AppContext } from '../../context.js';
import { AppError } from '../../errors.js';
import { Envelope, envelope, errorResponses } from '../../http/envelope.js';
import { VERSION } from '../../version.js';

/** Welcome, OpenAPI document, liveness and readiness: public, outside the authenticated API. */
export function serviceRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    const tags = ['Service'];
    app.get('/api', {
      schema: {
        tags,
        summary: 'Welcome',
        security: [],
        response: { 200: Envelope(Type.Object({ name: Type.String(), version: Type.String(), docs: Type.String(), openapi: Type.String() })) },
      },
    }, async () => envelope({ name: 'Coffre', version: VERSION, docs: '/api/docs', openapi: '/api/openapi.json' }, 200, 'Welcome to Coffre'));

    app.get('/api/openapi.json', {
      schema: { tags, summary: 'The OpenAPI 3.1 document of every route', security: [] },
    }, async () => app.swagger());

    app.get('/healthz', {
      schema: { tags, summary: 'Liveness: the process answers', security: [], response: { 200: Type.Object({ status: Type.String() }) } },
    }, async () => ({ status: 'ok' }));

    app.get('/readyz', {
      schema: {
        tags,
        summary: 'Readiness: the database and the blob store answer',
        security: [],
        response: { 200: Type.Object({ status: Type.String(), database: Type.String(), blobStore: Type.String() }), ...errorResponses(503) },
      },
    }, async (request) => {
      try {
        await ctx.database.ping();
      } catch (error) {
        request.log.warn({ err: error }, 'readiness check failed');
        throw new AppError('SERVICE_UNAVAILABLE', 'The database does not answer');
      }
      try {
        await ctx.blobs.ping();
      } catch (error) {
        request.log.warn({ err: error }, 'readiness check failed');
        throw new AppError('SERVICE_UNAVAILABLE', 'The blob store does not answer');
      }
      return { status: 'ready', database: ctx.database.dialect, blobStore: ctx.blobs.kind };
    });
  };
}
