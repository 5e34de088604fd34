// The address of a new share link (issue 34): COFFRE_PUBLIC_URL when it is set, else the origin the
// request came to, so that a server reached by its LAN name gives links others can open;
// X-Forwarded-Proto and -Host name that origin only when COFFRE_TRUST_PROXY is on. The welcome
// (GET /api) gives the web app the same base for public file addresses and WebDAV.
import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import type { Config } from '../../../src/config.js';
import { DIALECTS, build, signUp } from '../../helper.js';
import { putFile, rootFolderId } from '../../support/files.js';
import { splitLink } from '../../support/links.js';

const dialect = DIALECTS[0]!;

/** Makes a file link with these request headers; its shareLink. */
async function linkMadeWith(t: TestContext, config: Partial<Config>, headers: Record<string, string>): Promise<string> {
  const { app } = await build(t, dialect, { config });
  const owner = await signUp(app);
  const file = await putFile(app, owner, await rootFolderId(owner), 'report.txt', 'hello');
  const res = await app.inject({
    method: 'POST',
    url: `/api/files/share/${file.id}`,
    headers: { authorization: `Bearer ${owner.token}`, ...headers },
    payload: {},
  });
  assert.equal(res.statusCode, 201, res.body);
  const shareLink: string = res.json().data.shareLink;
  assert.match(splitLink(shareLink).key, /^[A-Za-z0-9_-]{43}$/);
  return shareLink;
}

describe(`share link addresses [${dialect}]`, () => {
  const forwarded = { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'files.example.com' };

  it('without COFFRE_PUBLIC_URL, the Host the request came to; forwarded headers are not trusted by default', async (t) => {
    const link = await linkMadeWith(t, { publicUrl: null }, { host: 'nas.local:8080', ...forwarded });
    assert.match(link, /^http:\/\/nas\.local:8080\/s\/[A-Za-z0-9_-]+#/);
    const byAddress = await linkMadeWith(t, { publicUrl: null }, { host: '192.168.1.20:8080' });
    assert.match(byAddress, /^http:\/\/192\.168\.1\.20:8080\/s\//);
    const onPort80 = await linkMadeWith(t, { publicUrl: null }, { host: 'NAS.local:80' });
    assert.match(onPort80, /^http:\/\/nas\.local\/s\//, 'the origin as browsers write it');
  });

  it('behind a trusted proxy, the origin X-Forwarded-Proto and -Host name', async (t) => {
    const link = await linkMadeWith(t, { publicUrl: null, trustProxy: true }, { host: '10.0.0.5:8080', ...forwarded });
    assert.match(link, /^https:\/\/files\.example\.com\/s\//);
  });

  it('COFFRE_PUBLIC_URL wins over any Host or forwarded header', async (t) => {
    const link = await linkMadeWith(t, { publicUrl: 'https://share.example.org', trustProxy: true }, { host: 'nas.local', ...forwarded });
    assert.match(link, /^https:\/\/share\.example\.org\/s\//);
  });

  it('a Host that is no host gives the local address instead of a broken link', async (t) => {
    for (const host of ['evil.example/path', 'user@evil.example', 'bad host', 'evil.example#x']) {
      const link = await linkMadeWith(t, { publicUrl: null, port: 8123 }, { host });
      assert.match(link, /^http:\/\/localhost:8123\/s\//, host);
    }
  });

  it('the welcome gives the same base and the WebDAV address, for the web app to show', async (t) => {
    const { app } = await build(t, dialect, { config: { publicUrl: null } });
    const welcome = async (headers: Record<string, string>) => (await app.inject({ method: 'GET', url: '/api', headers })).json().data;
    assert.deepEqual(
      { ...(await welcome({ host: 'nas.local:8080' })), version: undefined },
      {
        name: 'Coffre',
        version: undefined,
        docs: '/api/docs',
        openapi: '/api/openapi.json',
        publicUrl: 'http://nas.local:8080',
        webdav: 'http://nas.local:8080/dav/',
      },
    );
    const configured = await build(t, dialect, { config: { publicUrl: 'https://share.example.org' } });
    const data = (await configured.app.inject({ method: 'GET', url: '/api', headers: { host: 'nas.local' } })).json().data;
    assert.equal(data.publicUrl, 'https://share.example.org');
    assert.equal(data.webdav, 'https://share.example.org/dav/');
  });
});
