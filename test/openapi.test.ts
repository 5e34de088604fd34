import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Validator } from '@seriousme/openapi-schema-validator';
import { WEB_PAGES } from '../src/http/web.js';
import { DIALECTS, build, client } from './helper.js';

describe('OpenAPI document', () => {
  it('is a valid OpenAPI 3.1 document that lists every registered route', async (t) => {
    const { app } = await build(t, DIALECTS[0]);
    const res = await client(app).get('/api/openapi.json');
    assert.equal(res.status, 200);
    const doc = res.body;
    assert.equal(doc.openapi, '3.1.0');

    const validator = new Validator();
    const result = await validator.validate(doc);
    assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2));

    const documented = new Set<string>();
    for (const [path, item] of Object.entries<Record<string, unknown>>(doc.paths)) {
      for (const method of Object.keys(item)) documented.add(`${method.toUpperCase()} ${path}`);
    }
    const expected = app.registeredRoutes
      .filter((r) => r.method !== 'HEAD' && !r.url.startsWith('/api/docs'))
      // WebDAV (/dav/) is its own protocol, described in docs/webdav.md, not an API operation.
      .filter((r) => r.url !== '/dav' && !r.url.startsWith('/dav/'))
      // The web application's pages and assets are not part of the API.
      .filter((r) => !(WEB_PAGES as readonly string[]).includes(r.url) && r.url !== '/favicon.svg' && !r.url.startsWith('/assets/'))
      .map((r) => `${r.method} ${r.url.replace(/:([A-Za-z]+)/g, '{$1}')}`);
    assert.ok(expected.length >= 20, `only ${expected.length} routes registered`);
    const missing = expected.filter((route) => !documented.has(route));
    assert.deepEqual(missing, [], 'routes missing from the OpenAPI document');
  });

  it('documents an operation summary, tags and error responses for every API route', async (t) => {
    const { app } = await build(t, DIALECTS[0]);
    const doc = (await client(app).get('/api/openapi.json')).body;
    for (const [path, item] of Object.entries<Record<string, any>>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(item)) {
        assert.ok(op.summary, `${method} ${path} has no summary`);
        assert.ok(op.tags?.length, `${method} ${path} has no tag`);
        const protectedRoute = !(op.security && op.security.length === 0);
        if (protectedRoute) assert.ok(op.responses['401'], `${method} ${path} does not document 401`);
      }
    }
  });

  it('declares the public routes public (security: []), so clients call them without a token', async (t) => {
    const { app } = await build(t, DIALECTS[0]);
    const doc = (await client(app).get('/api/openapi.json')).body;
    const publicOps = [
      'post /api/files/shared/{sharedHash}',
      'post /api/folders/shared/{sharedHash}',
      'post /api/files/download/public/{sharedHash}',
      'post /api/files/download/public/{sharedHash}/sealed',
      'post /api/folders/download/public/{sharedHash}/zip',
      'get /api/files/public/{hashName}',
    ];
    for (const op of publicOps) {
      const [method, path] = op.split(' ');
      assert.deepEqual(doc.paths[path]?.[method]?.security, [], `${op} is documented as public`);
    }
  });

  it('serves the interactive reference from the package itself, without a CDN', async (t) => {
    const { app } = await build(t, DIALECTS[0]);
    const api = client(app);
    let res = await api.get('/api/docs');
    if (res.status >= 300 && res.status < 400) res = await api.get(String(res.headers.location).replace(/^\.\//, '/api/docs/'));
    assert.equal(res.status, 200);
    assert.match(String(res.headers['content-type']), /text\/html/);
    assert.doesNotMatch(String(res.body), /<script[^>]+src="https?:\/\//);
    const asset = await api.get('/api/docs/static/swagger-ui-bundle.js');
    assert.equal(asset.status, 200);
  });
});
