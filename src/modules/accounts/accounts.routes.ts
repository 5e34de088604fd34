import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { AppContext } from '../../context.js';
import { principalOf } from '../../http/auth.js';
import { Envelope, envelope, errorResponses } from '../../http/envelope.js';
import { accountService, type AccountService, type ClientInfo } from './accounts.service.js';
import { sessionRoutes } from './sessions.routes.js';
import * as S from './accounts.schemas.js';

/** The client of a request that opens a session, as the list of sessions shows it. */
export function clientOf(request: FastifyRequest): ClientInfo {
  return { address: request.ip, userAgent: request.headers['user-agent'] };
}

type App = Parameters<FastifyPluginAsyncTypebox>[0];
const tags = ['Accounts'];

export function accountRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  const accounts = accountService(ctx);
  return async (app) => {
    await app.register(sessionRoutes(ctx));
    registrationRoutes(app, accounts);
    signInRoutes(app, accounts);
    tokenRoutes(app, accounts);
    lookupRoute(app, accounts);
  };
}

/** Sign-up, and whether it is open. */
function registrationRoutes(app: App, accounts: AccountService): void {
  app.post(
    '/auth/register',
    {
      config: { public: true },
      schema: {
        tags,
        summary: 'Create an account',
        description:
          'Allowed by the registration policy (`COFFRE_REGISTRATION`). Creates the default datahub, bucket and root folder and signs in. ' +
          'Attempts are limited per client address (`COFFRE_REGISTRATION_MAX_PER_ADDRESS`; 429 with `Retry-After`).',
        security: [],
        body: S.RegisterBody,
        response: { 201: Envelope(S.Session), ...errorResponses(400, 403, 409, 429) },
      },
    },
    async (request, reply) => {
      reply.code(201);
      return envelope(await accounts.register(request.body, clientOf(request)), 201);
    },
  );

  app.get(
    '/auth/registration',
    {
      config: { public: true },
      schema: {
        tags,
        summary: 'Whether sign-up is open',
        description:
          'The registration policy (`COFFRE_REGISTRATION`) and whether a sign-up would be accepted now; the web sign-in page uses it to offer sign-up or not.',
        security: [],
        response: {
          200: Envelope(
            Type.Object({
              policy: Type.Union([Type.Literal('open'), Type.Literal('closed'), Type.Literal('first-user')]),
              open: Type.Boolean(),
            }),
          ),
        },
      },
    },
    async () => envelope(await accounts.registration()),
  );
}

/** Signing in and out, and who is signed in. */
function signInRoutes(app: App, accounts: AccountService): void {
  app.post(
    '/auth/login',
    {
      config: { public: true },
      schema: {
        tags,
        summary: 'Sign in',
        description: 'Failed attempts are limited per account and per client address (429 with `Retry-After`).',
        security: [],
        body: S.LoginBody,
        response: { 200: Envelope(S.Session), ...errorResponses(400, 401, 429) },
      },
    },
    async (request) => envelope(await accounts.login(request.body, clientOf(request))),
  );

  app.post(
    '/auth/logout',
    {
      schema: { tags, summary: 'Sign out: the token stops working', response: { 200: Envelope(Type.Null()), ...errorResponses(401) } },
    },
    async (request) => {
      await accounts.logout(principalOf(request));
      return envelope(null);
    },
  );

  app.get(
    '/auth/me',
    {
      schema: { tags, summary: 'The signed-in user', response: { 200: Envelope(Type.Ref('User')), ...errorResponses(401) } },
    },
    async (request) => envelope(await accounts.me(principalOf(request))),
  );
}

/** Personal access tokens, for scripts. */
function tokenRoutes(app: App, accounts: AccountService): void {
  app.post(
    '/auth/tokens',
    {
      schema: {
        tags,
        summary: 'Create a personal access token',
        description: 'For scripts. The token is returned once.',
        body: S.CreateTokenBody,
        response: { 201: Envelope(S.NewPersonalToken), ...errorResponses(400, 401) },
      },
    },
    async (request, reply) => {
      reply.code(201);
      return envelope(await accounts.createPersonalToken(principalOf(request), request.body), 201);
    },
  );

  app.get(
    '/auth/tokens',
    {
      schema: {
        tags,
        summary: 'List personal access tokens',
        response: { 200: Envelope(Type.Array(S.PersonalToken)), ...errorResponses(401) },
      },
    },
    async (request) => envelope(await accounts.listPersonalTokens(principalOf(request))),
  );

  app.delete(
    '/auth/tokens/:tokenId',
    {
      schema: {
        tags,
        summary: 'Revoke a personal access token',
        params: S.TokenIdParams,
        response: { 200: Envelope(Type.Null()), ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => {
      await accounts.revokeToken(principalOf(request), request.params.tokenId);
      return envelope(null);
    },
  );
}

/** Finding a user to share with. */
function lookupRoute(app: App, accounts: AccountService): void {
  app.get(
    '/users/lookup',
    {
      schema: {
        tags,
        summary: 'Find a user by exact e-mail',
        description:
          'Used to share with a colleague. Answers only an exact match (case aside). ' +
          'Limited per user and per client address (`COFFRE_LOOKUP_MAX_PER_USER`, `COFFRE_LOOKUP_MAX_PER_ADDRESS`; 429 with `Retry-After`).',
        querystring: S.LookupQuery,
        response: { 200: Envelope(S.UserSummary), ...errorResponses(400, 401, 404, 429) },
      },
    },
    async (request) => envelope(await accounts.lookup(principalOf(request), request.query.email, request.ip)),
  );
}
