import { IncomingMessage } from 'node:http';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { AppContext } from '../../context.js';
import { AppError } from '../../errors.js';
import { principalOf } from '../../http/auth.js';
import { Envelope, envelope, errorResponses } from '../../http/envelope.js';
import type { Metrics } from '../../http/metrics.js';
import { appendUpload, type UploadProgress } from './append-upload.use-case.js';
import { createUpload } from './create-upload.use-case.js';
import { cancelUpload, describeUpload, listUploads } from './manage-uploads.use-case.js';
import {
  CHECKSUM_ALGORITHMS,
  OFFSET_STREAM,
  TUS_EXTENSIONS,
  TUS_VERSION,
  httpDate,
  integerHeader,
  parseChecksum,
  requireTusVersion,
} from './tus.headers.js';
import { UploadIdParams, UploadList } from './uploads.schemas.js';

const tags = ['Uploads'];
type UploadsApp = Parameters<FastifyPluginAsyncTypebox>[0];
const noContent = { 204: Type.Null({ description: 'Done; the state is in the response headers' }) };
/** The name of the header that tells which file a finished upload became. */
export const FILE_ID_HEADER = 'Coffre-File-Id';

/**
 * Resumable uploads, tus 1.0.0 (https://tus.io/protocols/resumable-upload) at /api/uploads/:
 * the core protocol and the creation, creation-with-upload, creation-defer-length, termination,
 * expiration and checksum extensions. Errors are the API's envelope with tus's status codes.
 */
export function uploadRoutes(ctx: AppContext, metrics: Metrics): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.removeAllContentTypeParsers();
    // PATCH and POST bodies are read by the use case itself, as they arrive.
    app.addContentTypeParser('*', (_request, _payload, done) => done(null));
    app.addHook('onSend', async (_request, reply) => {
      reply.header('Tus-Resumable', TUS_VERSION);
    });
    app.options(
      '/uploads/',
      { config: { public: true }, schema: { tags, summary: 'What this tus server supports', security: [], response: noContent } },
      async (_request, reply) => {
        reply.headers({
          'Tus-Version': TUS_VERSION,
          'Tus-Extension': TUS_EXTENSIONS,
          'Tus-Max-Size': String(ctx.config.maxUploadBytes),
          'Tus-Checksum-Algorithm': CHECKSUM_ALGORITHMS.join(','),
        });
        return reply.code(204).send(null);
      },
    );
    app.post(
      '/uploads/',
      {
        config: { streamedBody: true },
        schema: {
          tags,
          summary: 'Create a resumable upload (tus creation, optionally with its first bytes)',
          description:
            'Headers: `Upload-Length` (or `Upload-Defer-Length: 1`), `Upload-Metadata` with `folderId` and `filename` (`filetype` and `onConflict` optional). Answers `Location`.',
          response: {
            201: Type.Null({ description: 'Created; `Location` names the upload' }),
            ...errorResponses(400, 401, 404, 409, 412, 413, 415, 507),
          },
        },
      },
      async (request, reply) => {
        requireTusVersion(request.headers);
        const principal = principalOf(request);
        const length = creationLength(request);
        const { id, expiresAt } = await createUpload(ctx, principal, { length, metadata: metadataHeader(request) });
        reply.header('Location', `/api/uploads/${id}`);
        // An empty file is whole at its creation: clients (tus-js-client among them) send it no PATCH.
        const withBody = (request.headers['content-type'] === OFFSET_STREAM && request.headers['content-length'] !== '0') || length === 0;
        if (!withBody) return sendProgress(reply.code(201), expiresAt);
        const progress = await patch(ctx, metrics, request, id, 0);
        return sendProgress(reply.code(201), progress.expiresAt, progress);
      },
    );
    stateRoutes(app, ctx, metrics);
  };
}

/** HEAD, PATCH, DELETE of one upload, and the listing. */
function stateRoutes(app: UploadsApp, ctx: AppContext, metrics: Metrics): void {
  app.head(
    '/uploads/:uploadId',
    {
      schema: {
        tags,
        summary: 'Where an upload stands (tus)',
        params: UploadIdParams,
        response: { 200: Type.Null(), ...errorResponses(401, 404, 410, 412) },
      },
    },
    async (request, reply) => {
      requireTusVersion(request.headers);
      const upload = await describeUpload(ctx, principalOf(request), request.params.uploadId);
      reply.header('Cache-Control', 'no-store');
      reply.header(upload.length === null ? 'Upload-Defer-Length' : 'Upload-Length', String(upload.length ?? 1));
      if (upload.metadata) reply.header('Upload-Metadata', upload.metadata);
      return sendProgress(reply.code(200), upload.expiresAt, { offset: upload.offset, fileId: upload.fileId });
    },
  );
  app.patch(
    '/uploads/:uploadId',
    {
      config: { streamedBody: true },
      schema: {
        tags,
        summary: 'Append bytes to an upload (tus)',
        description: `Headers: \`Upload-Offset\`, \`Content-Type: ${OFFSET_STREAM}\`, optionally \`Upload-Length\` and \`Upload-Checksum\`. The request bringing the last byte answers \`${FILE_ID_HEADER}\`.`,
        params: UploadIdParams,
        response: { ...noContent, ...errorResponses(400, 401, 404, 409, 410, 412, 413, 415, 423, 460, 507) },
      },
    },
    async (request, reply) => {
      requireTusVersion(request.headers);
      if (request.headers['content-type'] !== OFFSET_STREAM)
        throw new AppError('UNSUPPORTED_MEDIA_TYPE', `PATCH bodies must be ${OFFSET_STREAM}`);
      const offset = integerHeader(request.headers, 'upload-offset');
      if (offset === undefined) throw new AppError('UPLOAD_BAD_HEADER', 'Upload-Offset is required');
      const progress = await patch(ctx, metrics, request, request.params.uploadId, offset);
      return sendProgress(reply.code(204), progress.expiresAt, progress);
    },
  );
  app.delete(
    '/uploads/:uploadId',
    {
      schema: {
        tags,
        summary: 'Cancel an upload (tus termination)',
        params: UploadIdParams,
        response: { ...noContent, ...errorResponses(401, 404, 412, 423) },
      },
    },
    async (request, reply) => {
      requireTusVersion(request.headers);
      await cancelUpload(ctx, principalOf(request), request.params.uploadId);
      return reply.code(204).send(null);
    },
  );
  app.get(
    '/uploads',
    { schema: { tags, summary: 'Your unfinished resumable uploads', response: { 200: Envelope(UploadList), ...errorResponses(401) } } },
    async (request) =>
      envelope({
        uploads: (await listUploads(ctx, principalOf(request))).map(({ metadata: _metadata, fileId: _fileId, ...rest }) => rest),
      }),
  );
}

/** Appends the request body, counted as an upload in the metrics. */
async function patch(ctx: AppContext, metrics: Metrics, request: FastifyRequest, id: string, offset: number): Promise<UploadProgress> {
  metrics.uploadStarted();
  try {
    const progress = await appendUpload(ctx, principalOf(request), id, {
      offset,
      length: integerHeader(request.headers, 'upload-length'),
      body: request.raw,
      bodyOwnsChunks: request.raw instanceof IncomingMessage,
      checksum: parseChecksum(request.headers),
    });
    if (progress.fileId) metrics.recordUploadedBytes(progress.offset);
    return progress;
  } finally {
    metrics.uploadEnded();
  }
}

function sendProgress(reply: FastifyReply, expiresAt: string, progress?: Pick<UploadProgress, 'offset' | 'fileId'>): FastifyReply {
  reply.header('Upload-Expires', httpDate(expiresAt));
  if (progress) reply.header('Upload-Offset', String(progress.offset));
  if (progress?.fileId) reply.header(FILE_ID_HEADER, progress.fileId);
  return reply.send(null);
}

/** Upload-Length, or Upload-Defer-Length: 1 (undefined); exactly one of them. */
function creationLength(request: FastifyRequest): number | undefined {
  const length = integerHeader(request.headers, 'upload-length');
  const deferred = request.headers['upload-defer-length'];
  if (deferred !== undefined && deferred !== '1') throw new AppError('UPLOAD_BAD_HEADER', 'Upload-Defer-Length must be 1');
  if ((length === undefined) === (deferred === undefined))
    throw new AppError('UPLOAD_BAD_HEADER', 'Give Upload-Length or Upload-Defer-Length: 1');
  return length;
}

function metadataHeader(request: FastifyRequest): string {
  const value = request.headers['upload-metadata'];
  if (Array.isArray(value)) throw new AppError('UPLOAD_BAD_METADATA');
  return value ?? '';
}
