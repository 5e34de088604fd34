import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { AppContext } from '../../context.js';
import { AppError } from '../../errors.js';
import { Envelope, envelope, errorResponses } from '../../http/envelope.js';
import { publicBaseUrl } from '../../http/public-url.js';
import type { Metrics } from '../../http/metrics.js';
import { VERSION } from '../../version.js';

const METRICS_EXAMPLE = [
  '# HELP coffre_http_requests_total HTTP requests answered, by method, route pattern and status',
  '# TYPE coffre_http_requests_total counter',
  'coffre_http_requests_total{method="GET",route="/api/folders/details/:folderId",status="200"} 42',
].join('\n');

/** Welcome, OpenAPI document, liveness, readiness and metrics: public, outside the authenticated API. */
export function serviceRoutes(ctx: AppContext, metrics: Metrics): FastifyPluginAsyncTypebox {
  return async (app) => {
    infoRoutes(app, ctx);
    readinessRoute(app, ctx);
    metricsRoute(app, metrics);
  };
}

type App = Parameters<FastifyPluginAsyncTypebox>[0];
const tags = ['Service'];

const Welcome = Type.Object({
  name: Type.String(),
  version: Type.String(),
  docs: Type.String(),
  openapi: Type.String(),
  publicUrl: Type.String({
    description: 'The address links and public files start with (COFFRE_PUBLIC_URL, or the one the request came to)',
  }),
  webdav: Type.String({ description: 'The WebDAV address for file managers and sync clients' }),
});

/** The welcome (with the addresses clients hand out), the OpenAPI document and liveness. */
function infoRoutes(app: App, ctx: AppContext): void {
  app.get(
    '/api',
    {
      schema: {
        tags,
        summary: 'Welcome',
        security: [],
        response: { 200: Envelope(Welcome) },
      },
    },
    async (request) => {
      const publicUrl = publicBaseUrl(request, ctx.config);
      const welcome = {
        name: 'Coffre',
        version: VERSION,
        docs: '/api/docs',
        openapi: '/api/openapi.json',
        publicUrl,
        webdav: `${publicUrl}/dav/`,
      };
      return envelope(welcome, 200, 'Welcome to Coffre');
    },
  );

  app.get(
    '/api/openapi.json',
    {
      schema: { tags, summary: 'The OpenAPI 3.1 document of every route', security: [] },
    },
    async () => app.swagger(),
  );

  app.get(
    '/healthz',
    {
      schema: { tags, summary: 'Liveness: the process answers', security: [], response: { 200: Type.Object({ status: Type.String() }) } },
    },
    async () => ({ status: 'ok' }),
  );
}

/** Readiness: the database and the blob store answer. */
function readinessRoute(app: App, ctx: AppContext): void {
  app.get(
    '/readyz',
    {
      schema: {
        tags,
        summary: 'Readiness: the database and the blob store answer',
        security: [],
        response: {
          200: Type.Object({ status: Type.String(), database: Type.String(), blobStore: Type.String() }),
          ...errorResponses(503),
        },
      },
    },
    async (request) => {
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
    },
  );
}

/** Prometheus metrics. */
function metricsRoute(app: App, metrics: Metrics): void {
  app.get(
    '/metrics',
    {
      schema: {
        tags,
        summary: 'Prometheus metrics',
        description:
          'Prometheus text format: `coffre_http_requests_total` (by method, route pattern and status), the `coffre_http_request_duration_seconds` histogram, `coffre_uploaded_bytes_total`, `coffre_downloaded_bytes_total`, `coffre_active_uploads`, and the process metrics (`coffre_process_*`, `coffre_nodejs_*`). No token: restrict it at the reverse proxy if it must not be public.',
        security: [],
        response: {
          200: {
            description: 'The metrics, in the Prometheus text exposition format 0.0.4',
            content: { 'text/plain': { schema: Type.String({ examples: [METRICS_EXAMPLE] }) } },
          },
        },
      },
    },
    async (_request, reply) => {
      const { contentType, body } = await metrics.exposition();
      return reply.type(contentType).header('cache-control', 'no-store').send(body);
    },
  );
}
