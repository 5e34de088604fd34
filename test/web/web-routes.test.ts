import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import zlib from 'node:zlib';
// @ts-expect-error: a plain .mjs script without type declarations
import { buildWeb } from '../../scripts/build-web.mjs';
import { WEB_CSP } from '../../src/http/web.js';
import { DIALECTS, build, client, signUp } from '../helper.js';
import { tempDir } from '../support/disk.js';
import { fakeWebRoot } from '../support/web-root.js';

const dialect = DIALECTS[0];
describe('web application routes', () => {
  it('serves the pages of the app and the link page under a strict CSP, and leaves unknown paths to the API 404', async (t) => {
    const root = fakeWebRoot();
    t.after(() => fs.rmSync(root, { recursive: true, force: true }));
    const { app } = await build(t, dialect, { webRoot: root });
    for (const url of [
      '/',
      '/login',
      '/signup',
      '/files',
      '/files/fld_01jd3kq8m7c9x4v2b6n0p5r8st',
      '/shared',
      '/trash',
      '/app-passwords',
      '/users',
      '/invite/AbCdEf0123456789_-AbCdEf0123456789_-AbCdEf0',
      '/s/Q2hhbmdlIG1lIQ',
    ]) {
      const res = await app.inject({ method: 'GET', url });
      assert.equal(res.statusCode, 200, url);
      assert.match(String(res.headers['content-type']), /^text\/html/);
      assert.equal(res.headers['content-security-policy'], WEB_CSP);
      assert.equal(res.headers['referrer-policy'], 'no-referrer');
      assert.match(res.body, /<title>Coffre<\/title>/);
    }
    assert.doesNotMatch(WEB_CSP, /unsafe-inline|unsafe-eval/);
    const asset = await app.inject({ method: 'GET', url: '/assets/app-X.js' });
    assert.equal(asset.statusCode, 200);
    assert.match(String(asset.headers['cache-control']), /immutable/);
    assert.equal(asset.headers['content-security-policy'], WEB_CSP);
    const unknown = await client(app).get('/nowhere');
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.code, 'ROUTE_NOT_FOUND');
    assert.equal((await client(app).get('/assets/missing.js')).status, 404);
  });

  it('sends the built script and stylesheet compressed at build time: brotli, gzip or as they are', async (t) => {
    const root: string = await buildWeb({ outDir: path.join(tempDir(t, 'coffre-web-built-'), 'web') });
    const { app } = await build(t, dialect, { webRoot: root });
    const html = (await app.inject({ method: 'GET', url: '/' })).body;
    const assets = [...html.matchAll(/(?:src|href)="(\/assets\/app-[^"]+\.(?:js|css))"/g)].map((match) => match[1]!);
    assert.equal(assets.length, 2, html);
    for (const url of assets) {
      const original = fs.readFileSync(path.join(root, url));
      const type = url.endsWith('.js') ? /^(text|application)\/javascript/ : /^text\/css/;
      for (const [accepted, encoding, decode] of [
        ['gzip, deflate, br, zstd', 'br', zlib.brotliDecompressSync],
        ['gzip', 'gzip', zlib.gunzipSync],
        [undefined, undefined, (body: Buffer) => body],
      ] as const) {
        const res = await app.inject({ method: 'GET', url, headers: accepted ? { 'accept-encoding': accepted } : {} });
        const label = `${url} for ${accepted ?? 'no Accept-Encoding'}`;
        assert.equal(res.statusCode, 200, label);
        assert.equal(res.headers['content-encoding'], encoding, label);
        assert.match(String(res.headers['content-type']), type, label);
        assert.match(String(res.headers.vary), /accept-encoding/i, label);
        assert.match(String(res.headers['cache-control']), /max-age=31536000, immutable/, label);
        assert.ok(decode(res.rawPayload).equals(original), `${label}: the asset's bytes`);
        if (encoding)
          assert.ok(res.rawPayload.length < original.length / 3, `${label}: ${res.rawPayload.length} of ${original.length} bytes`);
      }
    }
  });

  it('says how to build the app when it is not built', async (t) => {
    const { app } = await build(t, dialect, { webRoot: null });
    const res = await app.inject({ method: 'GET', url: '/' });
    assert.equal(res.statusCode, 503);
    assert.match(res.body, /npm run build/);
    assert.equal((await app.inject({ method: 'GET', url: '/api' })).statusCode, 200);
  });
});

for (const d of DIALECTS) {
  describe(`registration policy for the sign-in page [${d}]`, () => {
    it('tells whether a sign-up would be accepted now', async (t) => {
      const open = await build(t, d);
      assert.deepEqual((await client(open.app).get('/api/auth/registration')).body.data, { policy: 'open', open: true });
      const closed = await build(t, d, { config: { registration: 'closed' } });
      assert.deepEqual((await client(closed.app).get('/api/auth/registration')).body.data, { policy: 'closed', open: false });
      const first = await build(t, d, { config: { registration: 'first-user' } });
      assert.deepEqual((await client(first.app).get('/api/auth/registration')).body.data, { policy: 'first-user', open: true });
      await signUp(first.app);
      assert.deepEqual((await client(first.app).get('/api/auth/registration')).body.data, { policy: 'first-user', open: false });
    });
  });
}
