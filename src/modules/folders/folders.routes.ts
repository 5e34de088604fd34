import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { principalOf } from '../../http/auth.js';
import { trashMode } from '../../http/trash-mode.js';
import { EmptyObject, Envelope, envelope, errorResponses, pageEnvelopeBytes, sendJsonBytes } from '../../http/envelope.js';
import { folderService, type FolderService } from './folders.service.js';
import * as S from './folders.schemas.js';

type App = Parameters<FastifyPluginAsyncTypebox>[0];
const tags = ['Folders'];

export function folderRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  const folders = folderService(ctx);
  return async (app) => {
    changeRoutes(app, folders);
    readRoutes(app, folders);
    placeRoutes(app, folders);
  };
}

/** Creating, changing and deleting a folder. */
function changeRoutes(app: App, folders: FolderService): void {
  app.post(
    '/folders/create/:bucketId',
    {
      schema: {
        tags,
        summary: 'Create a folder',
        description: 'Without `parentId` the folder is created under the root of the bucket. Sibling names are unique (409).',
        params: S.BucketIdParams,
        body: S.CreateFolderBody,
        response: { 201: Envelope(S.FolderDetail), ...errorResponses(400, 401, 404, 409) },
      },
    },
    async (request, reply) => {
      const detail = await folders.create(principalOf(request), request.params.bucketId, request.body);
      reply.code(201);
      return envelope(detail, 201, 'Folder created');
    },
  );

  app.put(
    '/folders/update/:folderId',
    {
      schema: {
        tags,
        summary: 'Rename a folder or change its visibility',
        params: S.FolderIdParams,
        body: S.UpdateFolderBody,
        response: { 200: EmptyObject, ...errorResponses(400, 401, 404, 409) },
      },
    },
    async (request) => {
      await folders.update(principalOf(request), request.params.folderId, request.body);
      return {};
    },
  );

  app.delete(
    '/folders/delete/:folderId',
    {
      schema: {
        tags,
        summary: 'Delete a folder (to the trash, or for good)',
        description:
          '`trash` = `soft` (default) moves the folder and its subtree to the trash; `hard` removes them for good. Given in the JSON body or the query string.',
        params: S.FolderIdParams,
        querystring: S.DeleteFolderQuery,
        response: { 200: EmptyObject, ...errorResponses(400, 401, 404, 409) },
      },
    },
    async (request) => {
      await folders.remove(principalOf(request), request.params.folderId, trashMode(request.body, request.query));
      return {};
    },
  );
}

/** A folder's details and the lists of folders. */
function readRoutes(app: App, folders: FolderService): void {
  app.get(
    '/folders/details/:folderId',
    {
      schema: {
        tags,
        summary: 'Folder details',
        description: 'Totals are recursive over the live subtree. A folder you may not see answers 401.',
        params: S.FolderIdParams,
        response: { 200: Envelope(S.FolderDetail), ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => envelope(await folders.details(principalOf(request), request.params.folderId)),
  );

  app.get(
    '/folders/:folderId/access',
    {
      schema: {
        tags,
        summary: 'What you may do in a folder',
        description:
          'The owner may do everything; a person it is shared with what the union of their grants on the folder and its ancestors allows. 404 for a folder you may not see.',
        params: S.FolderIdParams,
        response: { 200: Envelope(S.FolderAccess), ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => envelope(await folders.access(principalOf(request), request.params.folderId)),
  );

  app.get(
    '/folders/:folderId/subfolders',
    {
      schema: {
        tags,
        summary: 'List the subfolders of a folder',
        description: '`root` lists the top-level folders of your default bucket (or of `bucketId`). Sorted by name, paginated.',
        params: S.FolderIdOrRootParams,
        querystring: S.SubfoldersQuery,
        response: { 200: Envelope(S.SubfoldersPage), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const page = await folders.subfolders(principalOf(request), request.params.folderId, request.query);
      return sendJsonBytes(reply, pageEnvelopeBytes(page));
    },
  );

  app.get(
    '/folders/list/:bucketId',
    {
      schema: {
        tags,
        summary: 'Every live folder of a bucket, with its path',
        params: S.BucketIdParams,
        querystring: S.ListQuery,
        response: { 200: Envelope(S.BucketFoldersPage), ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => envelope(await folders.listBucket(principalOf(request), request.params.bucketId, request.query)),
  );
}

/** Where a folder is: moves, copies, out of the trash. */
function placeRoutes(app: App, folders: FolderService): void {
  app.post(
    '/folders/move/:folderId',
    {
      schema: {
        tags,
        summary: 'Move a folder under another folder',
        params: S.FolderIdParams,
        body: S.MoveFolderBody,
        response: { 200: Envelope(S.FolderDetail), ...errorResponses(400, 401, 404, 409) },
      },
    },
    async (request) => envelope(await folders.move(principalOf(request), request.params.folderId, request.body)),
  );

  app.post(
    '/folders/copy/:folderId',
    {
      schema: {
        tags,
        summary: 'Copy a folder with its whole subtree',
        description: 'Without `name`, a name taken in the target becomes "name (copy)".',
        params: S.FolderIdParams,
        body: S.CopyFolderBody,
        response: { 201: Envelope(S.FolderDetail), ...errorResponses(400, 401, 404, 409) },
      },
    },
    async (request, reply) => {
      const detail = await folders.copy(principalOf(request), request.params.folderId, request.body);
      reply.code(201);
      return envelope(detail, 201, 'Folder copied');
    },
  );

  app.post(
    '/folders/restore/:folderId',
    {
      schema: {
        tags,
        summary: 'Restore a folder from the trash',
        description: 'Back to its old parent if that is live, else to the bucket root; a taken name becomes "name (restored)".',
        params: S.FolderIdParams,
        response: { 200: Envelope(S.FolderDetail), ...errorResponses(400, 401, 404, 409) },
      },
    },
    async (request) => envelope(await folders.restore(principalOf(request), request.params.folderId)),
  );
}
