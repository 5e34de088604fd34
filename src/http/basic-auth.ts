import type { FastifyRequest } from 'fastify';
import type { AppContext, BasicCredentials, Principal } from '../context.js';
import { AppError } from '../errors.js';
import { resolvePrincipal } from './auth.js';

/** The challenge a 401 of a Basic-authenticated route carries (`WWW-Authenticate`). */
export const BASIC_CHALLENGE = 'Basic realm="Coffre"';

// The sign-in body's limits (accounts.schemas.ts LoginBody): longer is no account's, and is not hashed.
const MAX_EMAIL_LENGTH = 254;
const MAX_SECRET_LENGTH = 1024;
// base64 of the longest e-mail, a colon and the longest secret (in UTF-8, up to 4 bytes a character), with room.
const MAX_HEADER_LENGTH = 8192;

/**
 * The e-mail and secret of `Authorization: Basic base64(email:secret)` (RFC 7617; UTF-8), or
 * undefined when the header is not that. The e-mail ends at the first colon: secrets may hold colons.
 */
export function parseBasicAuthorization(header: string | undefined): BasicCredentials | undefined {
  if (!header || header.length > MAX_HEADER_LENGTH) return undefined;
  const match = /^Basic +([A-Za-z0-9+/]+={0,2}) *$/i.exec(header);
  if (!match) return undefined;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 1) return undefined;
  const email = decoded.slice(0, colon);
  const secret = decoded.slice(colon + 1);
  if (secret === '' || email.length > MAX_EMAIL_LENGTH || secret.length > MAX_SECRET_LENGTH) return undefined;
  return { email, secret };
}

/**
 * The caller of a request made the way WebDAV clients sign in: `Authorization: Bearer <token>`
 * (as the API takes it), or `Basic` with the account's e-mail and one of its tokens (an app
 * password) or its password, counted and throttled like a sign-in (ctx.basicAuth). Throws
 * UNAUTHENTICATED (401: answer with `WWW-Authenticate: BASIC_CHALLENGE`) without valid
 * credentials, RATE_LIMITED (429 with `Retry-After`) past the sign-in limits.
 */
export async function authenticateRequest(ctx: AppContext, request: FastifyRequest): Promise<Principal> {
  const header = request.headers.authorization;
  if (header !== undefined && /^Bearer\s/i.test(header)) {
    const principal = await resolvePrincipal(ctx, request);
    if (!principal) throw new AppError('UNAUTHENTICATED');
    return principal;
  }
  const credentials = parseBasicAuthorization(header);
  if (!credentials) throw new AppError('UNAUTHENTICATED');
  return ctx.basicAuth.verify(credentials, request.ip);
}
