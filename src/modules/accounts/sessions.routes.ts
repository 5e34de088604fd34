import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { AppContext } from '../../context.js';
import { principalOf } from '../../http/auth.js';
import { Envelope, envelope, errorResponses } from '../../http/envelope.js';
import { sessionService } from './sessions.service.js';
import * as S from './accounts.schemas.js';

/** The signed-in person's password and sign-in sessions, beside their personal tokens (`/auth/tokens`). */
export function sessionRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  const sessions = sessionService(ctx);
  return async (app) => {
    const tags = ['Accounts'];
    app.post(
      '/auth/password',
      {
        schema: {
          tags,
          summary: 'Change the password',
          description:
            "Needs the current password (wrong guesses count with the account's failed sign-ins: 429 with `Retry-After`). " +
            'Every other session of the account is signed out at once; the session making the request stays valid, and personal access tokens are kept.',
          body: S.ChangePasswordBody,
          response: { 200: Envelope(S.PasswordChanged), ...errorResponses(400, 401, 403, 429) },
        },
      },
      async (request) => envelope(await sessions.changePassword(principalOf(request), request.body, request.ip)),
    );

    app.get(
      '/auth/sessions',
      {
        schema: {
          tags,
          summary: 'List the sign-in sessions of the account',
          description:
            'Live sessions opened by sign-up or sign-in, newest first, without their tokens; `lastUsedAt` is recorded to within ten minutes. Personal access tokens are under `/auth/tokens`.',
          response: { 200: Envelope(Type.Array(S.SessionInfo)), ...errorResponses(401) },
        },
      },
      async (request) => envelope(await sessions.list(principalOf(request))),
    );

    app.delete(
      '/auth/sessions/:sessionId',
      {
        schema: {
          tags,
          summary: 'Revoke a sign-in session',
          description: 'Its token stops working at once, on every instance. Revoking the current session signs out.',
          params: S.SessionIdParams,
          response: { 200: Envelope(Type.Null()), ...errorResponses(400, 401, 404) },
        },
      },
      async (request) => {
        await sessions.revoke(principalOf(request), request.params.sessionId);
        return envelope(null);
      },
    );
  };
}
