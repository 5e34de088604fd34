import { randomUUID } from 'node:crypto';
import type { Writable } from 'node:stream';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyPluginAsyncTypebox, TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyServerOptions } from 'fastify';
import type { Config } from './config.js';
import type { BlobStore } from './blobs/blob-store.js';
import { openBlobStore } from './blobs/open-blob-store.js';
import type { AppContext } from './context.js';
import { chooseEngine, createContentStore } from './content/index.js';
import { Keyring } from './crypto/keyring.js';
import { loadMasterKey } from './crypto/master-key.js';
import type { DatabaseHandle } from './db/database.js';
import { ERROR_CATALOG } from './errors.js';
import { installAuth } from './http/auth.js';
import { installBodyTimeouts } from './http/body-timeout.js';
import { ErrorBody } from './http/envelope.js';
import { clientErrorHandler } from './http/client-error.js';
import { installErrorHandling } from './http/error-handler.js';
import { installClosingAnswer } from './http/graceful-close.js';
import { addPageHeaders, installWeb } from './http/web.js';
import { createMetrics, installRequestMetrics, type Metrics } from './http/metrics.js';
import { adminRoutes } from './modules/admin/admin.routes.js';
import { accountRoutes } from './modules/accounts/accounts.routes.js';
import { User } from './modules/accounts/accounts.schemas.js';
import { FileDetail } from './modules/files/files.schemas.js';
import { FolderDetail, FolderListItem } from './modules/folders/folders.schemas.js';
import { fileRoutes } from './modules/files/files.routes.js';
import { thumbnailRoutes } from './modules/thumbnails/thumbnails.routes.js';
import { folderRoutes } from './modules/folders/folders.routes.js';
import { permissionRoutes } from './modules/permissions/permissions.routes.js';
import { searchRoutes } from './modules/search/search.routes.js';
import { regionRoutes } from './modules/regions/regions.routes.js';
import { datahubRoutes } from './modules/datahubs/datahubs.routes.js';
import { Datahub } from './modules/datahubs/datahubs.schemas.js';
import { bucketRoutes } from './modules/buckets/buckets.routes.js';
import { archiveRoutes } from './modules/archives/archives.routes.js';
import { linkRoutes } from './modules/links/links.routes.js';
import { uploadRoutes } from './modules/uploads/uploads.routes.js';
import { storageRoutes } from './modules/storage/storage.routes.js';
import { Bucket } from './modules/buckets/buckets.schemas.js';
import { Region, RegionLocation } from './modules/regions/regions.schemas.js';
import { trashRoutes } from './modules/trash/trash.routes.js';
import { serviceRoutes } from './modules/service/service.routes.js';
import { addDavMethods, davRoutes, isDavUrl, sendDavError } from './modules/dav/dav.routes.js';
import { createTokenCache } from './modules/accounts/tokens.cache.js';
import { createBasicAuth } from './modules/accounts/basic-auth.use-case.js';
import { VERSION } from './version.js';
import { startBackgroundJobs } from './jobs.js';

declare module 'fastify' {
  interface FastifyInstance {
    registeredRoutes: readonly { method: string; url: string }[];
    /** The crypto engine this app seals and opens content with (chosen once, from the configuration). */
    cryptoEngine: string;
  }
}

export interface AppDeps {
  config: Config;
  database: DatabaseHandle;
  /** Where log lines go; default stdout. Tests pass a collector, or `false` for silence. */
  logStream?: Writable | false;
  /** Default: from the configured or generated master key. */
  keyring?: Keyring;
  /** Default: the store COFFRE_BLOB_STORE names (closed with the app); a given store is the caller's to close. */
  blobs?: BlobStore;
  /** Folder of the built web application; default: dist/web when it exists. */
  webRoot?: string | null;
  /** Builds the response serializers; default: Fastify's. Tests share one across the apps they build. */
  buildSerializer?: NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>['buildSerializer'];
}

/** Secrets that must never reach a log line, wherever they appear. */
const REDACTED_LOG_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'password',
  '*.password',
  'token',
  '*.token',
  'accessToken',
  '*.accessToken',
  'encryptionKey',
  '*.encryptionKey',
];

/** A request as logged: its URL without the value of a preview ticket, which stands for a token. */
function requestForLog(req: { method?: string; url?: string; ip?: string; hostname?: string }) {
  return {
    method: req.method,
    url: req.url?.replace(/([?&]ticket=)[^&]*/g, '$1[redacted]'),
    hostname: req.hostname,
    remoteAddress: req.ip,
  };
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

function errorCatalogDescription(): string {
  const rows = Object.entries(ERROR_CATALOG).map(([code, e]) => `| \`${code}\` | ${e.status} | ${e.message} |`);
  return [
    'Every error has the body `{status, message, code, data: null}`; validation errors add `details`.',
    '',
    '| code | status | message |',
    '|---|---|---|',
    ...rows,
  ].join('\n');
}

/** Builds the whole HTTP application on an open database; the caller owns the database. */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const { config } = deps;
  const { ctx, engineName } = await openContext(deps);
  const app = createServer(deps);
  addDavMethods(app);
  installErrorHandling(app);
  installClosingAnswer(app);
  installBodyTimeouts(app, { idleMs: config.bodyIdleSeconds * 1000, wholeMs: config.jsonBodySeconds * 1000 });
  const metrics = createMetrics();
  installRequestMetrics(app, metrics);
  installJsonParser(app);
  installRequestBasics(app, engineName);
  await installApiReference(app, config);

  startBackgroundJobs(app, ctx);
  if (!deps.blobs) app.addHook('onClose', async () => ctx.blobs.close());
  app.addHook('onClose', async () => ctx.tokens.close());
  await app.register(serviceRoutes(ctx, metrics));
  await app.register(apiRoutes(ctx, metrics), { prefix: '/api' });
  // WebDAV, for desktop file managers and sync clients: its own sign-in (Basic) and XML errors.
  await app.register(davRoutes(ctx, metrics), { prefix: '/dav' });
  // The web application (file manager, public link page), outside /api.
  await app.register(async (web) => installWeb(web, deps.webRoot));
  return app;
}

/** The context the routes and jobs share: keys, blob store, content store, token cache, Basic credentials check. */
async function openContext(deps: AppDeps): Promise<{ ctx: AppContext; engineName: string }> {
  const { config, database } = deps;
  const keyring = deps.keyring ?? new Keyring(loadMasterKey(config.masterKey, config.dataDir));
  // The crypto engine is chosen once, here, from the configuration (COFFRE_CRYPTO_ENGINE).
  const engine = chooseEngine(config.cryptoEngine);
  const blobs = deps.blobs ?? (await openBlobStore(config, engine.durableFiles));
  const content = createContentStore(database.db, blobs, engine);
  const tokens = createTokenCache(database);
  const basicAuth = createBasicAuth({ config, db: database.db, tokens });
  return { ctx: { config, database, db: database.db, keyring, blobs, content, tokens, basicAuth }, engineName: engine.name };
}

/** The Fastify instance with the server's options: logging, limits, request ids, framework errors. */
function createServer(deps: AppDeps) {
  const { config } = deps;
  return Fastify({
    logger:
      deps.logStream === false
        ? false
        : {
            level: config.logLevel,
            redact: { paths: REDACTED_LOG_PATHS, censor: '[redacted]' },
            serializers: { req: requestForLog },
            ...(deps.logStream ? { stream: deps.logStream } : {}),
          },
    bodyLimit: config.jsonBodyLimit,
    trustProxy: config.trustProxy,
    requestIdHeader: false,
    genReqId: (req) => {
      const incoming = req.headers['x-request-id'];
      return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    },
    // Requests arriving while the app closes get our error envelope (see graceful-close.ts).
    return503OnClosing: false,
    // Path parameters may hold lists of ids (`/files/shared/{fileId}/{userIds}`).
    routerOptions: { maxParamLength: 2048 },
    // Errors raised before routing (an undecodable URL) still leave as the envelope.
    frameworkErrors: (_error, request, reply) => {
      const raw = reply as unknown as FastifyReply;
      raw.header('x-request-id', request.id);
      // WebDAV clients read errors as XML.
      if (isDavUrl(request.url)) return sendDavError(raw, 'DAV_BAD_PATH', 'The URL is malformed');
      raw
        .code(400)
        .type('application/json; charset=utf-8')
        .send({ status: 400, message: 'The URL is malformed', code: 'VALIDATION_FAILED', data: null });
    },
    // Errors raised by Node's HTTP parser, before any request exists, leave as the envelope too.
    clientErrorHandler,
    ajv: { customOptions: { removeAdditional: true, coerceTypes: 'array', useDefaults: true, allErrors: false } },
    ...(deps.buildSerializer ? { schemaController: { compilersFactory: { buildSerializer: deps.buildSerializer } } } : {}),
  }).withTypeProvider<TypeBoxTypeProvider>();
}

/** JSON bodies, where an empty body with a JSON content type means none; plain text is refused. */
function installJsonParser(app: FastifyInstance): void {
  // An empty body with a JSON content type (common on DELETE and POST without payload) means "no body".
  const jsonParser = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  // The API speaks JSON (and multipart or raw bytes on upload routes): plain text is 415.
  app.removeContentTypeParser('text/plain');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = body.toString();
    if (text.trim() === '') return done(null, undefined);
    return jsonParser(request, text, done);
  });
}

/** The request id header, the principal slot, the list of routes, and the shared schemas. */
function installRequestBasics(app: FastifyInstance, engineName: string): void {
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  app.decorateRequest('principal', null);
  // Every route as registered, so tests can check the OpenAPI document covers them all.
  const routes: { method: string; url: string }[] = [];
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) routes.push({ method, url: route.url });
  });
  app.decorate('registeredRoutes', routes);
  app.decorate('cryptoEngine', engineName);
  app.addSchema(ErrorBody);
  // Shared schemas live at the root so every module can reference them.
  for (const schema of [User, FolderDetail, FolderListItem, FileDetail, Region, RegionLocation, Bucket, Datahub]) app.addSchema(schema);
}

/** The OpenAPI document and, under /api/docs, its reference pages. */
async function installApiReference(app: FastifyInstance, config: Config): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Coffre API',
        version: VERSION,
        description: `Self-hostable, end-to-end encrypted file storage and sharing.\n\n${errorCatalogDescription()}`,
      },
      // Unset, the reference's requests go to the origin it was opened from.
      servers: [{ url: config.publicUrl ?? '/' }],
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
      security: [{ bearer: [] }],
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
  });
  // The API reference runs on the web app's origin: it gets the app pages' headers (in a context
  // of its own, so they reach its responses only). Swagger UI loads only its own files; its top
  // bar (BaseLayout leaves it out) draws a logo with an inline style that the policy would refuse.
  await app.register(async (docs) => {
    addPageHeaders(docs);
    await docs.register(swaggerUi, { routePrefix: '/api/docs', uiConfig: { layout: 'BaseLayout' } });
  });
}

/** Everything under /api: the modules' routes, behind authentication. */
function apiRoutes(ctx: AppContext, metrics: Metrics): FastifyPluginAsyncTypebox {
  return async (api) => {
    installAuth(api, ctx);
    await api.register(accountRoutes(ctx));
    await api.register(adminRoutes(ctx));
    await api.register(folderRoutes(ctx));
    await api.register(fileRoutes(ctx, metrics));
    await api.register(thumbnailRoutes(ctx, metrics));
    await api.register(permissionRoutes(ctx));
    await api.register(searchRoutes(ctx));
    await api.register(trashRoutes(ctx));
    await api.register(regionRoutes(ctx));
    await api.register(datahubRoutes(ctx));
    await api.register(bucketRoutes(ctx));
    await api.register(storageRoutes(ctx));
    await api.register(linkRoutes(ctx, metrics));
    await api.register(archiveRoutes(ctx, metrics));
    await api.register(uploadRoutes(ctx, metrics));
  };
}
