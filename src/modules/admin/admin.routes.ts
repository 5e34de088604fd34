import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { AppContext } from '../../context.js';
import { principalOf } from '../../http/auth.js';
import { Envelope, envelope, errorResponses } from '../../http/envelope.js';
import { publicBaseUrl } from '../../http/public-url.js';
import { clientOf } from '../accounts/accounts.routes.js';
import * as AccountSchemas from '../accounts/accounts.schemas.js';
import { adminService, type AdminService } from './admin.service.js';
import * as S from './admin.schemas.js';

type App = Parameters<FastifyPluginAsyncTypebox>[0];
const tags = ['Administration'];
const ADMIN_NOTE = 'Administrators only (the first account is one); others get 403 `ADMIN_ONLY`.';

/** Accounts managed by administrators, and the one-time links with which people join or reset a password. */
export function adminRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  const admin = adminService(ctx);
  return async (app) => {
    userRoutes(app, admin);
    invitationRoutes(app, admin, ctx);
    acceptRoutes(app, admin);
  };
}

function userRoutes(app: App, admin: AdminService): void {
  app.get(
    '/admin/users',
    {
      schema: {
        tags,
        summary: 'List the accounts of the server',
        description: `Oldest first, with each one's quota, use and last activity. ${ADMIN_NOTE}`,
        response: { 200: Envelope(Type.Array(S.AdminUser)), ...errorResponses(401, 403) },
      },
    },
    async (request) => envelope(await admin.listUsers(principalOf(request))),
  );

  app.patch(
    '/admin/users/:userId',
    {
      schema: {
        tags,
        summary: 'Set the quota of an account, or disable or enable it',
        description:
          'A disabled account cannot sign in (403 `ACCOUNT_DISABLED` once its password is given) and every one of its sessions, personal tokens and app passwords is deleted at once: ' +
          `they stop working on every instance. An administrator cannot disable their own account (409 \`OWN_ACCOUNT\`). ${ADMIN_NOTE}`,
        params: S.UserIdParams,
        body: S.UpdateUserBody,
        response: { 200: Envelope(S.AdminUser), ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (request) => envelope(await admin.updateUser(principalOf(request), request.params.userId, request.body)),
  );
}

function invitationRoutes(app: App, admin: AdminService, ctx: AppContext): void {
  app.post(
    '/admin/invitations',
    {
      schema: {
        tags,
        summary: 'Invite a person by e-mail address',
        description:
          '201 with `invitationLink` (`<public URL>/invite/<token>`), shown in this response only: the person opens it, chooses a password and joins, once, ' +
          `within COFFRE_INVITATION_TTL_DAYS (7 days). A new invitation to the same address replaces the unused one. 409 \`EMAIL_TAKEN\` when the address has an account. ${ADMIN_NOTE}`,
        body: S.InviteBody,
        response: { 201: Envelope(S.IssuedInvitation), ...errorResponses(400, 401, 403, 409) },
      },
    },
    async (request, reply) => {
      reply.code(201);
      return envelope(
        await admin.invite(principalOf(request), request.body, publicBaseUrl(request, ctx.config)),
        201,
        'Invitation created',
      );
    },
  );

  app.get(
    '/admin/invitations',
    {
      schema: {
        tags,
        summary: 'List the invitations not used yet',
        description: `Newest first, without their links (invite again for a new one). ${ADMIN_NOTE}`,
        response: { 200: Envelope(Type.Array(S.Invitation)), ...errorResponses(401, 403) },
      },
    },
    async (request) => envelope(await admin.listInvitations(principalOf(request))),
  );

  app.delete(
    '/admin/invitations/:invitationId',
    {
      schema: {
        tags,
        summary: 'Withdraw an invitation',
        description: `Its link stops working. ${ADMIN_NOTE}`,
        params: S.InvitationIdParams,
        response: { 200: Envelope(Type.Null()), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      await admin.cancelInvitation(principalOf(request), request.params.invitationId);
      return envelope(null);
    },
  );

  app.post(
    '/admin/users/:userId/password-reset',
    {
      schema: {
        tags,
        summary: "Make a link that resets an account's password",
        description:
          '201 with `invitationLink`, shown in this response only: whoever opens it chooses a new password for the account, once; its other sign-in sessions are then signed out. ' +
          `A new link replaces the unused one. ${ADMIN_NOTE}`,
        params: S.UserIdParams,
        response: { 201: Envelope(S.IssuedInvitation), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      reply.code(201);
      const link = await admin.passwordResetLink(principalOf(request), request.params.userId, publicBaseUrl(request, ctx.config));
      return envelope(link, 201, 'Password reset link created');
    },
  );
}

function acceptRoutes(app: App, admin: AdminService): void {
  app.get(
    '/invitations/:token',
    {
      config: { public: true },
      schema: {
        tags,
        summary: 'What an invitation link is for',
        description:
          '`join` (a new account for `email`) or `reset` (a new password); 404 `INVITATION_NOT_FOUND`, 410 `INVITATION_USED` or `INVITATION_EXPIRED` otherwise.',
        security: [],
        params: S.TokenParams,
        response: { 200: Envelope(S.InvitationInfo), ...errorResponses(404, 410) },
      },
    },
    async (request) => envelope(await admin.describeInvitation(request.params.token)),
  );

  app.post(
    '/invitations/:token/accept',
    {
      config: { public: true },
      schema: {
        tags,
        summary: 'Use an invitation link: join, or set a new password',
        description:
          'Joining needs `name` and `password` and creates the account; a reset needs `password`. Either signs in (201 with a session). The link then stops working. ' +
          'Attempts count against the client address like sign-ups (429 with `Retry-After`).',
        security: [],
        params: S.TokenParams,
        body: S.AcceptBody,
        response: { 201: Envelope(AccountSchemas.Session), ...errorResponses(400, 403, 404, 409, 410, 429) },
      },
    },
    async (request, reply) => {
      reply.code(201);
      return envelope(await admin.acceptInvitation(request.params.token, request.body, clientOf(request)), 201);
    },
  );
}
