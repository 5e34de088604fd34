import type { FastifyError, FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext, Principal } from '../../context.js';
import { AppError, ERROR_CATALOG, InternalError, type ErrorCode } from '../../errors.js';
import { BASIC_CHALLENGE, authenticateRequest } from '../../http/basic-auth.js';
import type { Metrics } from '../../http/metrics.js';
import { readWholeUpTo } from '../../lib/read-whole.js';
import { DAV_PREFIX, davPathOf } from './dav.paths.js';
import { davHandlers } from './dav.handlers.js';
import { errorBody } from './dav.xml.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The WebDAV caller, signed in by the /dav/ scope's own hook (Basic or Bearer). */
    davPrincipal?: Principal;
  }
}

/** The methods WebDAV adds to HTTP, with whether they carry a body (Fastify parses only those that do). */
const DAV_METHODS = { PROPFIND: true, PROPPATCH: true, MKCOL: true, LOCK: true, COPY: false, MOVE: false, UNLOCK: false } as const;

export const ALLOWED_METHODS = ['OPTIONS', 'GET', 'HEAD', 'PUT', 'DELETE', ...Object.keys(DAV_METHODS)];

/** Teaches the server the WebDAV methods; called once on the root instance, before any route. */
export function addDavMethods(app: FastifyInstance): void {
  for (const [method, hasBody] of Object.entries(DAV_METHODS)) app.addHttpMethod(method, { hasBody });
}

/** Statuses WebDAV clients expect where the API's own codes say otherwise. */
const DAV_STATUS: Partial<Record<ErrorCode, number>> = {
  INVALID_MOVE: 403,
  ROOT_FOLDER_READONLY: 403,
  FOLDER_ACCESS_DENIED: 403,
  NAME_CONFLICT: 409,
};

/** The precondition element an error names in its DAV:error body (RFC 4918 §16). */
const CONDITIONS: Partial<Record<ErrorCode, string>> = {
  DAV_FINITE_DEPTH: 'propfind-finite-depth',
  DAV_LOCKED: 'lock-token-submitted',
  DAV_LOCK_CONFLICT: 'no-conflicting-lock',
  DAV_NO_LOCK: 'lock-token-matches-request-uri',
};

/** The WebDAV tree at /dav/ (RFC 4918 class 1 and 2), over the same use cases as the API. */
export function davRoutes(ctx: AppContext, metrics: Metrics): FastifyPluginAsync {
  const handlers = davHandlers(ctx, metrics);
  return async (scope) => {
    scope.removeAllContentTypeParsers();
    // Bodies are read by the handlers: PUT streams them into the storage core, the others read XML.
    scope.addContentTypeParser('*', (_request, _payload, done) => done(null));
    scope.setErrorHandler(davErrorHandler);
    scope.setNotFoundHandler((_request, reply) => sendDavError(reply, 'DAV_NOT_FOUND'));
    scope.addHook('onRequest', async (request, reply) => {
      reply.header('dav', '1, 2');
      // OPTIONS is how clients discover a server before they sign in (Windows' mini-redirector does).
      if (request.method === 'OPTIONS') return;
      request.davPrincipal = await authenticateRequest(ctx, request);
    });
    const handler = async (request: FastifyRequest, reply: FastifyReply) => {
      const path = davPathOf(request.raw.url ?? '/');
      const principal = request.davPrincipal!;
      const body = DAV_METHODS[request.method as keyof typeof DAV_METHODS] ? await xmlBody(ctx, request) : undefined;
      return handlers(request.method, { request, reply, principal, path, body });
    };
    for (const url of ['/', '/*'])
      scope.route({ method: ALLOWED_METHODS, url, config: { streamedBody: true }, schema: { hide: true }, handler });
  };
}

/** A request's XML body, at most COFFRE_DAV_XML_MAX_BYTES (413 beyond), or undefined when it has none. */
async function xmlBody(ctx: AppContext, request: FastifyRequest): Promise<Buffer | undefined> {
  const max = ctx.config.davXmlMaxBytes;
  const announced = Number(request.headers['content-length'] ?? 0);
  if (announced > max) throw new AppError('DAV_XML_TOO_LARGE');
  if (announced === 0 && request.headers['transfer-encoding'] === undefined) return undefined;
  const read = await readWholeUpTo(request.raw, max);
  if (!Buffer.isBuffer(read)) throw new AppError('DAV_XML_TOO_LARGE');
  return read;
}

/** Whether a request URL is below /dav. */
export function isDavUrl(url: string): boolean {
  return url === DAV_PREFIX || url.startsWith(`${DAV_PREFIX}/`) || url.startsWith(`${DAV_PREFIX}?`);
}

/** Answers an error as WebDAV clients read it: a DAV:error XML body with the status they expect. */
export function sendDavError(reply: FastifyReply, code: ErrorCode, message?: string, headers?: Record<string, string>) {
  const status = DAV_STATUS[code] ?? ERROR_CATALOG[code].status;
  if (headers) reply.headers(headers);
  if (status === 401) reply.header('www-authenticate', BASIC_CHALLENGE);
  // A body left unread (a refused upload, an XML body over the limit) cannot be answered on a connection kept open.
  if (!reply.request.raw.complete) reply.header('connection', 'close');
  return reply
    .code(status)
    .type('application/xml; charset=utf-8')
    .send(errorBody(message ?? ERROR_CATALOG[code].message, CONDITIONS[code]));
}

/** Every failure under /dav/ leaves as a DAV:error XML body with the status WebDAV clients expect. */
function davErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  if (error instanceof InternalError) {
    request.log.error({ err: error }, ERROR_CATALOG[error.code].message);
    return sendDavError(reply, error.code);
  }
  if (error instanceof AppError) {
    // The API's message speaks of bearer tokens; WebDAV clients sign in with a user name and password.
    const message = error.code === 'UNAUTHENTICATED' ? 'Sign in with your e-mail and an app password (or your password)' : error.message;
    return sendDavError(reply, error.code, message, error.headers);
  }
  const status = error.statusCode ?? 500;
  if (status >= 400 && status < 500) {
    request.log.info({ err: error }, 'client error');
    return sendDavError(reply, status === 413 ? 'PAYLOAD_TOO_LARGE' : status === 408 ? 'REQUEST_TIMEOUT' : 'MALFORMED_REQUEST');
  }
  request.log.error({ err: error }, 'request failed');
  return sendDavError(reply, 'INTERNAL_ERROR');
}
