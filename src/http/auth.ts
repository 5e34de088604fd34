import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AppContext, Principal } from '../context.js';
import { AppError } from '../errors.js';
import { hashToken } from '../lib/secrets.js';
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

// last_used_at is informative; writing it on every request would turn reads into writes.
const TOUCH_INTERVAL_MS = 10 * 60 * 1000;

async function resolvePrincipal(ctx: AppContext, request: FastifyRequest): Promise<Principal | null> {
  const header = request.headers.authorization;
  if (!header) return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match || match[1].length > 512) return null;
  const now = nowIso();
  const row = await ctx.tokens.find(hashToken(match[1]), now);
  if (!row) return null;
  if (!row.lastUsedAt || Date.parse(now) - Date.parse(row.lastUsedAt) > TOUCH_INTERVAL_MS) {
    await ctx.tokens.touch(row.tokenId, now);
    // The token may be kept in memory: later requests see the touch without reading it again.
    row.lastUsedAt = now;
  }
  return { userId: row.userId, tokenId: row.tokenId, email: row.email, name: row.name };
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
