import type { FastifyRequest } from 'fastify';
import type { Config } from '../config.js';

/**
 * The base URL of the links and addresses a response hands out: COFFRE_PUBLIC_URL when it is set,
 * else the origin the request came to, so that a server reached by its LAN name or address gives
 * links others can open. Behind a reverse proxy, `X-Forwarded-Proto` and `-Host` name that origin
 * when COFFRE_TRUST_PROXY is on (Fastify's `trustProxy`), and are ignored otherwise.
 */
export function publicBaseUrl(request: FastifyRequest, config: Config): string {
  if (config.publicUrl) return config.publicUrl;
  // A request without a Host header, or with one that is no host: the address the server listens on.
  const host = request.host;
  const origin = host && URL.canParse(`${request.protocol}://${host}`) ? new URL(`${request.protocol}://${host}`) : null;
  if (origin && origin.pathname === '/' && !origin.search && !origin.hash && !origin.username && !origin.password) return origin.origin;
  return `http://localhost:${config.port}`;
}
