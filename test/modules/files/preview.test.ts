// Previews (issue 35): GET /api/files/preview/:fileId serves content inline to anyone who may see
// the file (a "can view" grantee too), only as a type of the allow-list, with the headers that keep
// it inert on the app's origin; Range for media; texts cut to their first MiB.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS, build, client, signUp, type TestUser } from '../../helper.js';
import { putFile, rootFolderId } from '../../support/files.js';
import { assertError } from '../../support/errors.js';

const MiB = 1024 * 1024;

async function setup(t: Parameters<typeof build>[0], dialect: (typeof DIALECTS)[number]) {
  const { app } = await build(t, dialect);
  const owner = await signUp(app, 'Owner');
  const viewer = await signUp(app, 'Viewer');
  const stranger = await signUp(app, 'Stranger');
  const folder = await rootFolderId(owner);
  return { app, owner, viewer, stranger, folder };
}

const preview = (user: TestUser | undefined, app: Parameters<typeof client>[0], fileId: string, headers: Record<string, string> = {}) =>
  app.inject({
    method: 'GET',
    url: `/api/files/preview/${fileId}`,
    headers: { ...(user ? { authorization: `Bearer ${user.token}` } : {}), ...headers },
  });

for (const dialect of DIALECTS) {
  describe(`file previews [${dialect}]`, () => {
    it('the owner and a "can view" grantee (no download right) preview; others 404, no token 401', async (t) => {
      const { app, owner, viewer, stranger, folder } = await setup(t, dialect);
      const file = await putFile(app, owner, folder, 'photo.png', Buffer.from('not really a png'));
      const grant = await owner.api.put(`/api/files/shared/${file.id}/${viewer.id}`, { canView: true, canDownload: false, canEdit: false });
      assert.ok(grant.status === 200 || grant.status === 201, JSON.stringify(grant.body));
      assertError(await viewer.api.get(`/api/files/download/${file.id}`), 404, 'FILE_NOT_FOUND');

      for (const user of [owner, viewer]) {
        const res = await preview(user, app, file.id);
        assert.equal(res.statusCode, 200, res.body);
        assert.equal(res.body, 'not really a png');
        assert.equal(res.headers['content-type'], 'image/png');
        assert.equal(res.headers['x-content-type-options'], 'nosniff');
        assert.match(String(res.headers['content-security-policy']), /^sandbox; default-src 'none'$/);
        assert.match(String(res.headers['content-disposition']), /^inline; filename="photo.png"/);
        assert.match(String(res.headers['cache-control']), /private/);
      }
      assertError(await stranger.api.get(`/api/files/preview/${file.id}`), 404, 'FILE_NOT_FOUND');
      const anonymous = await preview(undefined, app, file.id);
      assert.equal(anonymous.statusCode, 401);
      assert.equal(anonymous.json().code, 'UNAUTHENTICATED');
    });

    it('types come from the name and an allow-list: HTML and code as text, SVG as an image, the rest 415', async (t) => {
      const { app, owner, folder } = await setup(t, dialect);
      const cases: [string, string][] = [
        ['a.jpg', 'image/jpeg'],
        ['a.GIF', 'image/gif'],
        ['a.webp', 'image/webp'],
        ['a.avif', 'image/avif'],
        ['a.pdf', 'application/pdf'],
        ['a.wav', 'audio/wav'],
        ['a.webm', 'video/webm'],
        ['page.html', 'text/plain; charset=utf-8'],
        ['main.ts', 'text/plain; charset=utf-8'],
        ['notes.txt', 'text/plain; charset=utf-8'],
        ['drawing.svg', 'image/svg+xml'],
      ];
      for (const [name, type] of cases) {
        // The uploader's type is ignored: only the allow-list decides.
        const res = await app.inject({
          method: 'PUT',
          url: `/api/files/upload/${folder}?name=${encodeURIComponent(name)}`,
          headers: { authorization: `Bearer ${owner.token}`, 'content-type': 'text/html' },
          payload: '<script>alert(1)</script>',
        });
        assert.equal(res.statusCode, 201, res.body);
        const shown = await preview(owner, app, res.json().data.id);
        assert.equal(shown.statusCode, 200, `${name}: ${shown.body}`);
        assert.equal(shown.headers['content-type'], type, name);
        assert.match(String(shown.headers['content-security-policy']), /sandbox/, name);
        assert.equal(shown.headers['x-content-type-options'], 'nosniff', name);
      }
      for (const name of ['setup.exe', 'archive.zip', 'noextension', 'page.xhtmlx']) {
        const file = await putFile(app, owner, folder, name, 'bytes');
        assertError(await owner.api.get(`/api/files/preview/${file.id}`), 415, 'PREVIEW_NOT_SUPPORTED');
      }
    });

    it('answers a Range with 206 and the right bytes (seeking in audio and video)', async (t) => {
      const { app, owner, folder } = await setup(t, dialect);
      const bytes = Buffer.alloc(300_000);
      for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 7) % 251;
      const file = await putFile(app, owner, folder, 'clip.webm', bytes);
      const res = await preview(owner, app, file.id, { range: 'bytes=100000-100099' });
      assert.equal(res.statusCode, 206);
      assert.equal(res.headers['content-range'], 'bytes 100000-100099/300000');
      assert.equal(res.headers['content-type'], 'video/webm');
      assert.deepEqual(res.rawPayload, bytes.subarray(100000, 100100));
      const beyond = await preview(owner, app, file.id, { range: 'bytes=400000-' });
      assert.equal(beyond.statusCode, 416);
    });

    it('cuts a text to its first MiB and says so; a short one is whole', async (t) => {
      const { app, owner, folder } = await setup(t, dialect);
      const long = Buffer.alloc(MiB + 5000, 'a');
      long.write('END', MiB + 4000);
      const file = await putFile(app, owner, folder, 'big.log', long);
      const res = await preview(owner, app, file.id);
      assert.equal(res.statusCode, 200);
      assert.equal(res.rawPayload.length, MiB);
      assert.equal(res.headers['x-coffre-truncated'], 'true');
      assert.ok(!res.body.includes('END'));
      const small = await putFile(app, owner, folder, 'small.md', '# hello');
      const whole = await preview(owner, app, small.id);
      assert.equal(whole.body, '# hello');
      assert.equal(whole.headers['x-coffre-truncated'], undefined);
    });

    it('previews an older version with versionId', async (t) => {
      const { app, owner, folder } = await setup(t, dialect);
      await putFile(app, owner, folder, 'v.txt', 'first');
      const second = await putFile(app, owner, folder, 'v.txt', 'second');
      const versions = await owner.api.get(`/api/files/versions/${second.id}`);
      const old = versions.body.data.find((v: any) => v.id !== second.currentVersionId && v.size === 5) ?? versions.body.data.at(-1);
      const res = await app.inject({
        method: 'GET',
        url: `/api/files/preview/${second.id}?versionId=${old.id}`,
        headers: { authorization: `Bearer ${owner.token}` },
      });
      assert.equal(res.body, 'first');
    });
  });
}
