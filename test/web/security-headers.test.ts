import assert from 'node:assert/strict';
import fs from 'node:fs';
import { describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { DIALECTS, build, signUp } from '../helper.js';
import { fakeWebRoot } from '../support/web-root.js';

// Issue 29 item 6: the web application keeps its bearer token in localStorage, so every HTML
// document of its origin (the app's pages, the link page, the API reference, any error page)
// must forbid framing and foreign or inline script.

const HTML_LIKE = /^(text\/html|application\/xhtml\+xml|image\/svg\+xml)/;

/** Every GET route the app registered, its parameters filled in, and paths nothing serves. */
function urlsToVisit(app: FastifyInstance): string[] {
  const urls = new Set<string>([
    '/nowhere',
    '/api/nowhere',
    '/api/docs/',
    '/api/docs/static/index.html',
    '/api/docs/static/oauth2-redirect.html',
    '/api/docs/static/nope.html',
  ]);
  for (const route of app.registeredRoutes) {
    if (route.method !== 'GET') continue;
    urls.add(
      route.url
        .replace(/:(\w+)/g, (_m, name: string) =>
          name.endsWith('Id') ? `${name.slice(0, 3)}_01jd3kq8m7c9x4v2b6n0p5r8st` : 'Q2hhbmdlIG1lIQ',
        )
        .replace(/\*$/, 'index.html'),
    );
  }
  return [...urls];
}

function assertPageHeaders(url: string, headers: Record<string, unknown>) {
  const csp = String(headers['content-security-policy'] ?? '');
  assert.match(csp, /(^|; )frame-ancestors 'none'(;|$)/, `${url}: no frame-ancestors 'none' in "${csp}"`);
  assert.match(csp, /(^|; )default-src 'none'(;|$)/, `${url}: default-src is not 'none' in "${csp}"`);
  assert.match(csp, /(^|; )script-src 'self'(;|$)/, `${url}: script-src is not 'self' alone in "${csp}"`);
  assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|https?:|\*/, `${url}: a loose source in "${csp}"`);
  // Previews show content only from blob: URLs the app made itself, and media from the preview
  // route of its own origin (docs/api.md, Previews).
  for (const [directive, allowed] of [
    ['media-src', "'self' blob:"],
    ['frame-src', 'blob:'],
  ]) {
    const sources = new RegExp(`(^|; )${directive} ([^;]*)`).exec(csp)?.[2];
    assert.ok(sources === undefined || sources === allowed, `${url}: ${directive} allows more than ${allowed} in "${csp}"`);
  }
  assert.equal(headers['x-frame-options'], 'DENY', `${url}: X-Frame-Options`);
  assert.equal(headers['x-content-type-options'], 'nosniff', `${url}: X-Content-Type-Options`);
  assert.equal(headers['referrer-policy'], 'no-referrer', `${url}: Referrer-Policy`);
}

for (const dialect of DIALECTS) {
  describe(`security headers on every HTML response [${dialect}]`, () => {
    it('the app pages, the link page, the API reference and error pages: CSP, no framing, nosniff', async (t) => {
      const root = fakeWebRoot();
      t.after(() => fs.rmSync(root, { recursive: true, force: true }));
      const { app } = await build(t, dialect, { webRoot: root });
      const user = await signUp(app);
      const html: string[] = [];
      for (const url of urlsToVisit(app)) {
        for (const headers of [{}, { authorization: `Bearer ${user.token}` }]) {
          const res = await app.inject({ method: 'GET', url, headers });
          if (!HTML_LIKE.test(String(res.headers['content-type'] ?? ''))) continue;
          assertPageHeaders(url, res.headers);
          html.push(url);
        }
      }
      // Guards against a check that silently visits nothing.
      for (const url of [
        '/',
        '/login',
        '/s/Q2hhbmdlIG1lIQ',
        '/api/docs',
        '/api/docs/',
        '/api/docs/static/oauth2-redirect.html',
        '/favicon.svg',
      ]) {
        assert.ok(html.includes(url), `${url} was not seen as an HTML response: ${[...new Set(html)].join(', ')}`);
      }
    });

    it('the API reference loads nothing but its own files, and cannot be framed', async (t) => {
      const { app } = await build(t, dialect, { webRoot: null });
      const page = await app.inject({ method: 'GET', url: '/api/docs' });
      assert.equal(page.statusCode, 200);
      assertPageHeaders('/api/docs', page.headers);
      assert.doesNotMatch(page.body, /<script(?![^>]*\bsrc=)[^>]*>/, 'no inline script: the policy would block it');
      for (const asset of [
        '/api/docs/static/swagger-ui-bundle.js',
        '/api/docs/static/swagger-initializer.js',
        '/api/docs/static/swagger-ui.css',
      ]) {
        const res = await app.inject({ method: 'GET', url: asset });
        assert.equal(res.statusCode, 200, asset);
        assert.equal(res.headers['x-content-type-options'], 'nosniff', asset);
      }
    });

    it('the page that says the app is not built', async (t) => {
      const { app } = await build(t, dialect, { webRoot: null });
      const res = await app.inject({ method: 'GET', url: '/' });
      assert.equal(res.statusCode, 503);
      assertPageHeaders('/ (not built)', res.headers);
    });
  });
}
