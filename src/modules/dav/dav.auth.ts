import type { FastifyRequest } from 'fastify';
import type { AppContext, Principal } from '../../context.js';
import { AppError } from '../../errors.js';
import { hashToken } from '../../lib/secrets.js';
import { nowIso } from '../../lib/time.js';

/** The challenge of a 401 from /dav/: clients then ask for a user name and password. */
export const BASIC_CHALLENGE = 'Basic realm="Coffre", charset="UTF-8"';

/** Signs in a WebDAV request: Basic with the e-mail and a personal token. */
export async function signInDav(ctx: AppContext, request: FastifyRequest): Promise<Principal> {
  const header = request.headers.authorization ?? '';
  const basic = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header);
  if (!basic) throw new AppError('UNAUTHENTICATED');
  const decoded = Buffer.from(basic[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  const [email, secret] = [decoded.slice(0, colon), decoded.slice(colon + 1)];
  const row = await ctx.tokens.find(hashToken(secret), nowIso());
  if (!row || row.email !== email.toLowerCase()) throw new AppError('UNAUTHENTICATED');
  return { userId: row.userId, tokenId: row.tokenId, email: row.email, name: row.name };
}
