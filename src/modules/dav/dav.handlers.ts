import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext, Principal } from '../../context.js';
import { AppError } from '../../errors.js';
import { CONTENT_SECURITY_HEADERS, normalizeContentType, sendContent } from '../../http/content.js';
import type { Metrics } from '../../http/metrics.js';
import { rawUploadBody } from '../../http/raw-body.js';
import { fileService } from '../files/files.service.js';
import { transfer } from './copy-move.use-case.js';
import { ifConditions } from './dav.conditions.js';
import type { LockContext } from './dav.locks.js';
import { destinationPath, type DavPath } from './dav.paths.js';
import { assertMay, resolve } from './dav.resources.js';
import { lock, unlock } from './lock.use-case.js';
import { propfind } from './propfind.use-case.js';
import { proppatch } from './proppatch.use-case.js';
import { mkcol, put, remove } from './write.use-case.js';

/** One WebDAV request as the handlers see it. */
export interface DavCall {
  request: FastifyRequest;
  reply: FastifyReply;
  principal: Principal;
  path: DavPath;
  /** The XML body of PROPFIND, PROPPATCH and LOCK, when there is one. */
  body?: Buffer;
}

const XML = 'application/xml; charset=utf-8';

/** The handler of each method: each turns its use case's result into a status, headers and a body. */
export function davHandlers(ctx: AppContext, metrics: Metrics) {
  const byMethod: Record<string, (call: DavCall) => Promise<unknown>> = {
    OPTIONS: async ({ reply }) => reply.code(200).headers({ allow: ALLOW, 'ms-author-via': 'DAV', 'content-length': 0 }).send(),
    GET: (call) => get(ctx, metrics, call),
    HEAD: (call) => get(ctx, metrics, call),
    PUT: (call) => putFile(ctx, metrics, call),
    PROPFIND: async ({ request, reply, principal, path, body }) =>
      reply
        .code(207)
        .type(XML)
        .send(await propfind(ctx, principal, path, header(request, 'depth'), body)),
    PROPPATCH: async (call) =>
      call.reply
        .code(207)
        .type(XML)
        .send(await proppatch(ctx, call.principal, call.path, call.body, await locksOf(ctx, call))),
    MKCOL: async (call) => {
      if (hasBody(call.request)) throw new AppError('DAV_BODY_NOT_ALLOWED');
      await mkcol(ctx, call.principal, call.path, await locksOf(ctx, call));
      return call.reply.code(201).header('content-length', 0).send();
    },
    DELETE: async (call) => {
      await remove(ctx, call.principal, call.path, await locksOf(ctx, call));
      return call.reply.code(204).send();
    },
    COPY: (call) => copyOrMove(ctx, 'copy', call),
    MOVE: (call) => copyOrMove(ctx, 'move', call),
    LOCK: async (call) => {
      const { request, reply, principal, path, body } = call;
      const result = await lock(ctx, principal, path, {
        body,
        depth: header(request, 'depth'),
        timeout: header(request, 'timeout'),
        ...(await locksOf(ctx, call)),
      });
      reply.header('lock-token', `<${result.token}>`);
      return reply
        .code(result.created ? 201 : 200)
        .type(XML)
        .send(result.xml);
    },
    UNLOCK: async ({ request, reply, principal, path }) => {
      await unlock(ctx, principal, path, header(request, 'lock-token'));
      return reply.code(204).send();
    },
  };
  return (method: string, call: DavCall) => byMethod[method](call);
}

const ALLOW = 'OPTIONS, GET, HEAD, PUT, DELETE, PROPFIND, PROPPATCH, MKCOL, COPY, MOVE, LOCK, UNLOCK';

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** The lock tokens the request submits, once its If header is found to hold (412 otherwise). */
function locksOf(ctx: AppContext, { request, principal, path }: DavCall): Promise<LockContext> {
  return ifConditions(ctx, principal, path, header(request, 'if'));
}

function hasBody(request: FastifyRequest): boolean {
  return Number(request.headers['content-length'] ?? 0) > 0 || request.headers['transfer-encoding'] !== undefined;
}

/** GET and HEAD: a file's content (ranges and conditional requests as the API answers them); a collection says what it is. */
async function get(ctx: AppContext, metrics: Metrics, { reply, principal, path }: DavCall) {
  const target = await resolve(ctx, principal, path);
  if (target.kind === 'missing') throw new AppError('DAV_NOT_FOUND');
  if (target.kind !== 'file') {
    reply.headers(CONTENT_SECURITY_HEADERS).type('text/plain; charset=utf-8');
    return reply.send('This is a WebDAV collection of Coffre: open it with a WebDAV client (see the README).\n');
  }
  await assertMay(ctx, principal, target, 'download');
  reply.header('last-modified', new Date(target.file.updated_at).toUTCString());
  const content = await fileService(ctx).download(principal, target.file.id, {});
  return sendContent(reply, content, metrics);
}

async function putFile(ctx: AppContext, metrics: Metrics, call: DavCall) {
  const { request, reply, principal, path } = call;
  const locks = await locksOf(ctx, call);
  metrics.uploadStarted();
  try {
    const result = await put(ctx, principal, path, {
      raw: await rawUploadBody(request),
      contentType: normalizeContentType(header(request, 'content-type')),
      conditions: { ifMatch: header(request, 'if-match'), ifNoneMatch: header(request, 'if-none-match') },
      locks,
    });
    metrics.recordUploadedBytes(result.size);
    return reply
      .code(result.created ? 201 : 204)
      .header('etag', result.etag)
      .header('content-length', 0)
      .send();
  } finally {
    metrics.uploadEnded();
  }
}

async function copyOrMove(ctx: AppContext, kind: 'copy' | 'move', call: DavCall) {
  const { request, reply, principal, path } = call;
  const depth = (header(request, 'depth') ?? 'infinity').toLowerCase();
  if (depth !== '0' && depth !== 'infinity') throw new AppError('DAV_BAD_HEADER', 'Depth is 0 or infinity for COPY and MOVE');
  const overwrite = (header(request, 'overwrite') ?? 'T').toUpperCase();
  if (overwrite !== 'T' && overwrite !== 'F') throw new AppError('DAV_BAD_HEADER', 'Overwrite is T or F');
  const result = await transfer(ctx, principal, kind, {
    source: path,
    destination: destinationPath(header(request, 'destination'), request.host, request.protocol),
    overwrite: overwrite === 'T',
    depth: depth as '0' | 'infinity',
    locks: await locksOf(ctx, call),
  });
  return reply
    .code(result.created ? 201 : 204)
    .header('content-length', 0)
    .send();
}
