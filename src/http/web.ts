import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply } from 'fastify';

/**
 * The policy of the web application's pages: nothing but its own script, stylesheet and API; no
 * inline script or style, no framing, no referrer (a link page's path names a shared item).
 */
export const WEB_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  // Previews: the app fetches content with its token and shows it from blob: URLs it made itself;
  // audio and video stream from the preview route (a ticket in its address stands for the token).
  "media-src 'self' blob:",
  'frame-src blob:',
  "font-src 'self'",
  "connect-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** The headers of every document the origin serves: it holds the web app's bearer token in localStorage. */
const PAGE_HEADERS = {
  'content-security-policy': WEB_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
} as const;

/**
 * Gives every response of `scope` (an encapsulated context) the pages' headers: for documents
 * served by a plugin of its own, such as the API reference, whose pages run on the web app's
 * origin and could otherwise be framed or load script from elsewhere.
 */
export function addPageHeaders(scope: FastifyInstance): void {
  scope.addHook('onRequest', async (_request, reply) => {
    reply.headers(PAGE_HEADERS);
  });
}

/** The pages of the single-page application: each answers index.html, the app routes in the browser. */
export const WEB_PAGES = [
  '/',
  '/login',
  '/signup',
  '/files',
  '/files/:folderId',
  '/shared',
  '/trash',
  '/app-passwords',
  '/users',
  '/invite/:token',
  '/s/:sharedHash',
] as const;

/** dist/web, wherever this module runs from: dist/src/http (built) or src/http (tsx). */
function findWebRoot(): string | null {
  const here = path.dirname(fileURLToPath(import.meta.url));
  for (const candidate of [path.resolve(here, '../../web'), path.resolve(here, '../../dist/web')]) {
    if (fs.existsSync(path.join(candidate, 'index.html'))) return candidate;
  }
  return null;
}

const NOT_BUILT = `<!doctype html><html lang="en"><meta charset="utf-8"><title>Coffre</title>
<h1>Coffre</h1><p>The web application is not built. Run <code>npm run build</code> (or <code>npm start</code>, which builds it) and reload.</p>
<p>The API is available: <a href="/api/docs">/api/docs</a>.</p></html>`;

/** Serves the web application from dist/web: its pages at `/` and the app routes, its assets under `/assets/`. */
export async function installWeb(app: FastifyInstance, root = findWebRoot()): Promise<void> {
  const sendPage = (reply: FastifyReply) => {
    reply.headers({ ...PAGE_HEADERS, 'cache-control': 'no-cache' });
    if (!root) return reply.code(503).type('text/html; charset=utf-8').send(NOT_BUILT);
    return reply.type('text/html; charset=utf-8').send(fs.createReadStream(path.join(root, 'index.html')));
  };
  for (const url of WEB_PAGES) {
    app.get(url, { schema: { hide: true } }, async (_request, reply) => sendPage(reply));
  }
  if (!root) return;
  app.get('/favicon.svg', { schema: { hide: true } }, async (_request, reply) =>
    reply
      .headers({ ...PAGE_HEADERS, 'cache-control': 'public, max-age=86400' })
      .type('image/svg+xml')
      .send(fs.createReadStream(path.join(root, 'favicon.svg'))),
  );
  await app.register(fastifyStatic, {
    root: path.join(root, 'assets'),
    prefix: '/assets/',
    index: false,
    wildcard: true,
    // The build wrote each asset compressed beside it (scripts/build-web.mjs): brotli or gzip
    // as the browser accepts, with Vary: Accept-Encoding.
    preCompressed: true,
    // Asset names carry a content hash: they never change, so browsers may keep them.
    cacheControl: false,
    setHeaders: (reply) => {
      reply.headers({ ...PAGE_HEADERS, 'cache-control': 'public, max-age=31536000, immutable' });
    },
    schemaHide: true,
  });
}
