import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { AppContext } from '../../context.js';
import { principalOf } from '../../http/auth.js';
import { Envelope, envelope, errorResponses } from '../../http/envelope.js';
import { permissionService, type ItemKind, type PermissionService } from './permissions.service.js';
import type { Permission } from './permissions.schemas.js';
import * as S from './permissions.schemas.js';

const GRANT_RULES =
  'A permission on a folder covers its whole subtree; what a user may do is the union of their permissions on the item and its ancestors. ' +
  'Only the owner manages permissions (others get 404). 201 when any permission was created, 200 when all were updated; ' +
  'an unknown user is 404 `USER_NOT_FOUND` and changes nothing.';

type App = Parameters<FastifyPluginAsyncTypebox>[0];
const tags = ['Permissions'];

export function permissionRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  const permissions = permissionService(ctx);
  return async (app) => {
    shareFileRoute(app, permissions);
    for (const kind of ['file', 'folder'] as const satisfies readonly ItemKind[]) shareUserRoutes(app, permissions, kind);
    sharedWithMeRoute(app, permissions);
  };
}

/** The answer to a grant: 201 when any permission is new, else 200. */
function granted(result: { created: boolean; permissions: Permission[] }) {
  const status = result.created ? (201 as const) : (200 as const);
  return { status, body: envelope(result.permissions, status, result.created ? 'Permissions created' : 'Permissions updated') };
}

/** The answers of a grant: the permissions as they now are, whether any was created or not. */
function grantResponses() {
  return { 200: Envelope(Type.Array(S.Permission)), 201: Envelope(Type.Array(S.Permission)), ...errorResponses(400, 401, 404, 409) };
}

/** PUT /files/shared/:fileId/:userIds: one set of flags for several users, named in the path. */
function shareFileRoute(app: App, permissions: PermissionService): void {
  app.put(
    '/files/shared/:fileId/:userIds',
    {
      schema: {
        tags,
        summary: 'Share a file with one or more users',
        description: `\`userIds\`: one user id or several, comma-separated. ${GRANT_RULES} \`createOrUpdate: false\` only updates: a user without a permission yet is 404 \`PERMISSION_NOT_FOUND\`.`,
        params: S.FileUsersParams,
        body: S.GrantBody,
        response: grantResponses(),
      },
      // Every field has a default, so no body at all (curl -X PUT) grants the defaults.
      preValidation: async (request) => {
        request.body ??= {};
      },
    },
    async (request, reply) => {
      const { createOrUpdate, ...flags } = request.body;
      const users = request.params.userIds.split(',').map((userId) => ({ userId, ...flags }));
      const { status, body } = granted(
        await permissions.grant(principalOf(request), 'file', request.params.fileId, users, createOrUpdate ?? true),
      );
      reply.code(status);
      return body;
    },
  );
}

/** The share-users routes of files or folders: grant, list, revoke. */
function shareUserRoutes(app: App, permissions: PermissionService, kind: ItemKind): void {
  const base = kind === 'file' ? '/files/share-users/:fileId' : '/folders/share-users/:folderId';
  const idOf = (params: { fileId?: string; folderId?: string }) => (kind === 'file' ? params.fileId! : params.folderId!);
  const noun = kind === 'file' ? 'a file' : 'a folder';

  app.post(
    base,
    {
      schema: {
        tags,
        summary: `Share ${noun} with users`,
        description: `Creates or updates the permission of each user listed. ${GRANT_RULES}`,
        params: kind === 'file' ? S.FileIdParams : S.FolderIdParams,
        body: S.ShareUsersBody,
        response: grantResponses(),
      },
    },
    async (request, reply) => {
      const { status, body } = granted(await permissions.grant(principalOf(request), kind, idOf(request.params), request.body.users));
      reply.code(status);
      return body;
    },
  );

  app.get(
    base,
    {
      schema: {
        tags,
        summary: `Users with a permission on ${noun}`,
        description: 'Permissions on the item itself (not those inherited from its folders). Owner only.',
        params: kind === 'file' ? S.FileIdParams : S.FolderIdParams,
        response: { 200: Envelope(Type.Array(S.ShareUser)), ...errorResponses(400, 401, 404, 409) },
      },
    },
    async (request) => envelope(await permissions.list(principalOf(request), kind, idOf(request.params))),
  );

  app.delete(
    `${base}/:userId`,
    {
      schema: {
        tags,
        summary: `Take a user's permission on ${noun} away`,
        description: 'Effective at once. 404 `PERMISSION_NOT_FOUND` when the user holds none on the item.',
        params: kind === 'file' ? S.FileUserParams : S.FolderUserParams,
        response: { 200: Envelope(Type.Null()), ...errorResponses(400, 401, 404, 409) },
      },
    },
    async (request) => {
      await permissions.revoke(principalOf(request), kind, idOf(request.params), request.params.userId);
      return envelope(null, 200, 'Permission removed');
    },
  );
}

/** GET /shared-with-me. */
function sharedWithMeRoute(app: App, permissions: PermissionService): void {
  app.get(
    '/shared-with-me',
    {
      schema: {
        tags,
        summary: 'Files and folders other users shared with you',
        description: "Newest first, each with your permission and its owner; items in their owner's trash are left out. Paginated.",
        querystring: S.SharedWithMeQuery,
        response: { 200: Envelope(S.SharedWithMePage), ...errorResponses(400, 401) },
      },
    },
    async (request) => envelope(await permissions.sharedWithMe(principalOf(request), request.query)),
  );
}
