import multipart from '@fastify/multipart';
import type { FastifyPluginAsyncTypebox, TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { Type } from 'typebox';
import type { AppContext } from '../../context.js';
import { AppError } from '../../errors.js';
import { principalOf } from '../../http/auth.js';
import { conditionalHeaders } from '../../http/conditional.js';
import { normalizeContentType, sendContent } from '../../http/content.js';
import { EmptyObject, Envelope, envelope, errorResponses } from '../../http/envelope.js';
import type { Metrics } from '../../http/metrics.js';
import { trashMode } from '../../http/trash-mode.js';
import { nameFromFormData } from '../../lib/names.js';
import { readWholeUpTo } from '../../lib/read-whole.js';
import { WHOLE_BODY_BYTES, announcedLength, rawUploadBody } from '../../http/raw-body.js';
import type { Sendable } from '../../lib/sendable.js';
import type { FileDetail } from './files.schemas.js';
import { fileService, type FileService } from './files.service.js';
import * as S from './files.schemas.js';

/** Sends a download (see sendContent); the share link routes send theirs through it too. */
export function sendDownload(reply: FastifyReply, download: Sendable, metrics: Metrics) {
  return sendContent(reply, download, metrics);
}

/** The conditional headers of a request, as the share link routes pass them on. */
export const downloadHeaders = conditionalHeaders;

const binary = { description: 'The file content', content: { 'application/octet-stream': { schema: Type.String({ format: 'binary' }) } } };

type App = Parameters<FastifyPluginAsyncTypebox>[0];
const tags = ['Files'];

export function fileRoutes(ctx: AppContext, metrics: Metrics): FastifyPluginAsyncTypebox {
  const files = fileService(ctx);
  return async (app) => {
    // Multipart and raw uploads live in their own contexts: each needs its own body parsing.
    await app.register(multipartUpload(files, metrics));
    await app.register(rawUpload(files, metrics));
    itemRoutes(app, files);
    contentRoutes(app, files, metrics);
    previewRoutes(app, files, metrics);
    placeRoutes(app, files);
    versionRoutes(app, files);
  };
}

/** POST /files/upload/:folderId: one or more files of a multipart body, all stored or none. */
function multipartUpload(files: FileService, metrics: Metrics): FastifyPluginAsync {
  return async (plain) => {
    const scope = plain.withTypeProvider<TypeBoxTypeProvider>();
    await scope.register(multipart, {
      // Sizes are enforced while streaming (413 / 507), so busboy must not truncate silently.
      limits: { fileSize: Number.MAX_SAFE_INTEGER, files: 100, fields: 20, parts: 200, fieldSize: 64 * 1024 },
    });
    scope.post(
      '/files/upload/:folderId',
      {
        config: { streamedBody: true },
        schema: {
          tags,
          summary: 'Upload files (multipart)',
          description:
            'One or more `file` parts in `multipart/form-data`. Content is encrypted while it streams. `onConflict` decides what an existing name does: a new version (default), a free name, or 409.',
          consumes: ['multipart/form-data'],
          params: S.FolderIdParams,
          querystring: S.UploadQuery,
          response: { 201: Envelope(Type.Array(Type.Ref('FileDetail'))), ...errorResponses(400, 401, 404, 409, 413, 415, 507) },
        },
      },
      async (request, reply) => {
        const principal = principalOf(request);
        const uploaded: FileDetail[] = [];
        const announced = announcedLength(request);
        metrics.uploadStarted();
        try {
          for await (const part of request.parts()) {
            if (part.type !== 'file') continue;
            if (!part.filename) throw new AppError('MISSING_FILE_NAME');
            uploaded.push(
              await files.uploadOne(principal, request.params.folderId, {
                name: nameFromFormData(part.filename),
                contentType: normalizeContentType(part.mimetype),
                // Whole when small (then kept in the database, see the content core, src/content/), else streamed.
                body: await readWholeUpTo(part.file, WHOLE_BODY_BYTES),
                // A part holds at most what the request announced less the parts before it (one per request from the web app).
                atMostBytes: announced === undefined ? undefined : announced - uploaded.reduce((sum, file) => sum + file.size, 0),
                onConflict: request.query.onConflict ?? 'version',
              }),
            );
          }
          if (uploaded.length === 0) throw new AppError('NO_FILE_IN_UPLOAD');
        } catch (error) {
          // One request, one outcome: a later part failing takes back the parts already stored.
          for (const done of uploaded.reverse()) {
            await files
              .undoUpload(principal, done)
              .catch((undoError) => request.log.error({ err: undoError }, 'could not take back an upload'));
          }
          throw error;
        } finally {
          metrics.uploadEnded();
        }
        metrics.recordUploadedBytes(uploaded.reduce((sum, file) => sum + file.size, 0));
        reply.code(201);
        return envelope(uploaded, 201, `${uploaded.length} file(s) uploaded`);
      },
    );
  };
}

/** PUT /files/upload/:folderId: one file, the raw request body. */
function rawUpload(files: FileService, metrics: Metrics): FastifyPluginAsync {
  return async (plain) => {
    const scope = plain.withTypeProvider<TypeBoxTypeProvider>();
    scope.removeAllContentTypeParsers();
    // The body is streamed by the handler itself, whatever its type.
    scope.addContentTypeParser('*', (_request, _payload, done) => done(null));
    scope.put(
      '/files/upload/:folderId',
      {
        config: { streamedBody: true },
        schema: {
          tags,
          summary: 'Upload one file from the raw request body',
          description:
            'For scripts: `curl -T report.pdf "…/files/upload/{folderId}?name=report.pdf"`. The Content-Type header becomes the file\'s type.',
          params: S.FolderIdParams,
          querystring: S.RawUploadQuery,
          response: { 201: Envelope(Type.Ref('FileDetail')), ...errorResponses(400, 401, 404, 409, 413, 507) },
        },
      },
      async (request, reply) => {
        // Active from the first byte: a body of unknown length is read (up to 64 KiB) before it is stored.
        metrics.uploadStarted();
        const detail = await rawUploadBody(request)
          .then((raw) =>
            files.uploadOne(principalOf(request), request.params.folderId, {
              name: request.query.name,
              contentType: normalizeContentType(request.headers['content-type']),
              ...raw,
              onConflict: request.query.onConflict ?? 'version',
            }),
          )
          .finally(() => metrics.uploadEnded());
        metrics.recordUploadedBytes(detail.size);
        reply.code(201);
        return envelope(detail, 201, 'File uploaded');
      },
    );
  };
}

/** A file's details and settings. */
function itemRoutes(app: App, files: FileService): void {
  app.get(
    '/files/details/:fileId',
    {
      schema: {
        tags,
        summary: 'File details',
        params: S.FileIdParams,
        response: { 200: Type.Ref('FileDetail'), ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => files.details(principalOf(request), request.params.fileId),
  );

  app.put(
    '/files/update/:fileId',
    {
      schema: {
        tags,
        summary: 'Rename a file, set its visibility and retention',
        description: 'A retention period sets `retainUntil` = now + period; it can be extended, never shortened (409).',
        params: S.FileIdParams,
        body: S.UpdateFileBody,
        response: { 200: EmptyObject, ...errorResponses(400, 401, 404, 409) },
      },
    },
    async (request) => {
      await files.update(principalOf(request), request.params.fileId, request.body);
      return {};
    },
  );
}

/** A file's content (its own, one of its versions, or a public file's) and the files of a folder. */
function contentRoutes(app: App, files: FileService, metrics: Metrics): void {
  app.get(
    '/files/download/:fileId',
    {
      schema: {
        tags,
        summary: 'Download a file (or one version), with Range support',
        params: S.FileIdParams,
        querystring: S.DownloadQuery,
        response: { 200: binary, 206: binary, 304: { description: 'Not modified' }, ...errorResponses(400, 401, 404, 416) },
      },
    },
    async (request, reply) =>
      sendDownload(
        reply,
        await files.download(principalOf(request), request.params.fileId, { versionId: request.query.versionId }),
        metrics,
      ),
  );

  app.get(
    '/files/public/:hashName',
    {
      config: { public: true },
      schema: {
        tags,
        summary: 'Download a public file',
        description: 'No token needed for a file whose visibility is `public`.',
        security: [],
        params: S.HashNameParams,
        response: { 200: binary, 206: binary, 304: { description: 'Not modified' }, ...errorResponses(400, 404, 416) },
      },
    },
    async (request, reply) => sendDownload(reply, await files.publicDownload(request.params.hashName), metrics),
  );

  app.get(
    '/files/list/:folderId',
    {
      schema: {
        tags,
        summary: 'List the files of a folder',
        params: S.FolderIdParams,
        querystring: S.ListQuery,
        response: { 200: Envelope(S.FilePage), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => envelope(await files.list(principalOf(request), request.params.folderId, request.query)),
  );
}

/** Where a file is: moves, copies, the trash. */
function placeRoutes(app: App, files: FileService): void {
  app.post(
    '/files/move/:fileId',
    {
      schema: {
        tags,
        summary: 'Move (and optionally rename) a file',
        params: S.FileIdParams,
        body: S.MoveFileBody,
        response: { 200: Envelope(Type.Ref('FileDetail')), ...errorResponses(400, 401, 404, 409) },
      },
    },
    async (request) => envelope(await files.move(principalOf(request), request.params.fileId, request.body)),
  );

  app.post(
    '/files/copy/:fileId',
    {
      schema: {
        tags,
        summary: 'Copy a file',
        description: 'The copy shares the stored content (no bytes are copied) and counts towards the quota.',
        params: S.FileIdParams,
        body: S.MoveFileBody,
        response: { 201: Envelope(Type.Ref('FileDetail')), ...errorResponses(400, 401, 404, 409, 507) },
      },
    },
    async (request, reply) => {
      const detail = await files.copy(principalOf(request), request.params.fileId, request.body);
      reply.code(201);
      return envelope(detail, 201, 'File copied');
    },
  );

  app.delete(
    '/files/delete/:fileId',
    {
      schema: {
        tags,
        summary: 'Delete a file (to the trash, or for good)',
        description:
          '`trash` = `soft` (default) or `hard`, in the JSON body or the query string. A retained file cannot be hard-deleted (409).',
        params: S.FileIdParams,
        querystring: S.TrashQuery,
        response: { 200: EmptyObject, ...errorResponses(400, 401, 404, 409) },
      },
    },
    async (request) => {
      await files.remove(principalOf(request), request.params.fileId, trashMode(request.body, request.query));
      return {};
    },
  );

  app.post(
    '/files/restore/:fileId',
    {
      schema: {
        tags,
        summary: 'Restore a file from the trash',
        params: S.FileIdParams,
        response: { 200: Envelope(Type.Ref('FileDetail')), ...errorResponses(400, 401, 404, 409) },
      },
    },
    async (request) => envelope(await files.restore(principalOf(request), request.params.fileId)),
  );
}

/** The versions of a file. */
function versionRoutes(app: App, files: FileService): void {
  app.get(
    '/files/versions/:fileId',
    {
      schema: {
        tags,
        summary: 'Versions of a file, newest first',
        params: S.FileIdParams,
        response: { 200: Envelope(Type.Array(S.Version)), ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => envelope(await files.versions(principalOf(request), request.params.fileId)),
  );

  app.post(
    '/files/versions/:fileId/:versionId/restore',
    {
      schema: {
        tags,
        summary: 'Make an old version current again',
        description: 'Adds a new version with that content (sharing its stored bytes).',
        params: S.VersionParams,
        response: { 200: Envelope(Type.Ref('FileDetail')), ...errorResponses(400, 401, 404, 409, 507) },
      },
    },
    async (request) => envelope(await files.restoreVersion(principalOf(request), request.params.fileId, request.params.versionId)),
  );

  app.delete(
    '/files/versions/:fileId/:versionId',
    {
      schema: {
        tags,
        summary: 'Delete an old version for good',
        params: S.VersionParams,
        response: { 200: EmptyObject, ...errorResponses(400, 401, 404, 409) },
      },
    },
    async (request) => {
      await files.deleteVersion(principalOf(request), request.params.fileId, request.params.versionId);
      return {};
    },
  );
}

/** Previews: the content to show inline, and addresses of it for audio and video players. */
function previewRoutes(app: App, files: FileService, metrics: Metrics): void {
  app.get(
    '/files/preview/:fileId',
    {
      // A ticket stands for the token (media elements cannot send it): checked in the handler.
      config: { public: true },
      schema: {
        tags,
        summary: 'Preview a file (or one version): its content to show inline, with Range support',
        description:
          'Needs only the right to **see** the file (a "can view" share), unlike the download. Served `inline` as a type chosen by the file name from an allow-list (images, PDF, audio, video; text, code, HTML and XML as `text/plain`; SVG as `image/svg+xml`), with `nosniff` and the sandboxing CSP of downloads; other names answer 415 `PREVIEW_NOT_SUPPORTED`. A text longer than 1 MiB is cut to its first MiB, with `X-Coffre-Truncated: true`. Without a bearer token, a `ticket` from `GET /files/preview-address/{fileId}` is needed.',
        params: S.FileIdParams,
        querystring: S.PreviewQuery,
        response: { 200: binary, 206: binary, 304: { description: 'Not modified' }, ...errorResponses(400, 401, 404, 415, 416) },
      },
    },
    async (request, reply) => {
      const { fileId } = request.params;
      const { versionId, ticket } = request.query;
      const principal = request.principal ?? (ticket ? await files.principalOfTicket(ticket, fileId, versionId) : principalOf(request));
      const { content, truncated } = await files.preview(principal, fileId, { versionId });
      if (truncated) reply.header('x-coffre-truncated', 'true');
      return sendContent(reply, content, metrics, { inline: true });
    },
  );

  app.get(
    '/files/preview-address/:fileId',
    {
      schema: {
        tags,
        summary: 'An address of a preview that needs no bearer token, for audio and video players',
        description:
          'The preview route with a `ticket` for this file (and version), valid six hours and only while this session lasts; rights are checked again at every request. Lets `<audio>` and `<video>` stream and seek with Range requests instead of loading the whole file first.',
        params: S.FileIdParams,
        querystring: S.DownloadQuery,
        response: { 200: Envelope(S.PreviewAddress), ...errorResponses(400, 401, 404, 415) },
      },
    },
    async (request) =>
      envelope(await files.previewAddress(principalOf(request), request.params.fileId, { versionId: request.query.versionId })),
  );
}
