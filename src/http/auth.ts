import type { FastifyInstance, FastifyRequest } from 'fastify';
import { principalOfToken, type AppContext, type Principal } from '../context.js';
import { AppError } from '../errors.js';
import { nowIso } from '../lib/time.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The signed-in caller, or null on a public route called without a token. */
    principal: Principal | null;
  }
  interface FastifyContextConfig {
    /** Route needs no bearer token (public link routes, sign-up, sign-in). */
    public?: boolean;
  }
}

/** Tokens are 36 characters (`cof_` and 32 bytes in base64url); anything much longer is no token. */
export const MAX_TOKEN_LENGTH = 512;

/** The caller of a request with `Authorization: Bearer <token>` and a live token, else null. */
export async function resolvePrincipal(ctx: AppContext, request: FastifyRequest): Promise<Principal | null> {
  const header = request.headers.authorization;
  if (!header) return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match || match[1].length > MAX_TOKEN_LENGTH) return null;
  return (await principalOfToken(ctx.tokens, match[1], nowIso())) ?? null;
}

/**
 * Installs bearer-token authentication on the routes of `app` (an encapsulated context): every
 * route needs a valid token unless its config says `public: true`.
 */
export function installAuth(app: FastifyInstance, ctx: AppContext): void {
  app.addHook('onRequest', async (request) => {
    request.principal = await resolvePrincipal(ctx, request);
    if (!request.principal && !request.routeOptions.config.public) throw new AppError('UNAUTHENTICATED');
  });
}

/** The principal of a protected route (the auth hook guarantees one). */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new AppError('UNAUTHENTICATED');
  return request.principal;
}
