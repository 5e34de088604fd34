// Preview addresses (issue 35): GET /api/files/preview-address/:fileId gives the preview route
// with a ticket, so that <audio> and <video>, which cannot send the bearer token, stream and seek
// with Range requests. The ticket opens that file's (and version's) preview only, only while its
// session lasts and the rights hold.
import { describe, it, type TestContext } from 'node:test';
import type { FastifyInstance } from 'fastify';
import assert from 'node:assert/strict';
import type { DialectName } from '../../../src/db/database.js';
import { DIALECTS, build, signUp } from '../../helper.js';
import { putFile, rootFolderId } from '../../support/files.js';
import { assertError } from '../../support/errors.js';
import { captureLog } from '../../support/log-capture.js';
import { openTicket, sealTicket } from '../../../src/modules/files/preview-tickets.js';

const CONTENT = Buffer.from('0123456789abcdefghij'.repeat(1000));

/** An owner's media file, shared "can view" (no download) with a viewer. */
async function sharedMedia(t: TestContext, dialect: DialectName, name: string) {
  const { app } = await build(t, dialect);
  const owner = await signUp(app, 'Owner');
  const viewer = await signUp(app, 'Viewer');
  const file = await putFile(app, owner, await rootFolderId(owner), name, CONTENT);
  await owner.api.put(`/api/files/shared/${file.id}/${viewer.id}`, { canView: true, canDownload: false, canEdit: false });
  return { app, owner, viewer, file };
}

/** A GET with no token, as a media element sends it, answered as the error helpers read it. */
async function tokenless(app: FastifyInstance, url: string) {
  const res = await app.inject({ method: 'GET', url });
  return {
    status: res.statusCode,
    body: res.headers['content-type']?.toString().startsWith('application/json') ? res.json() : res.body,
    headers: res.headers,
  };
}

for (const dialect of DIALECTS) {
  describe(`preview addresses [${dialect}]`, () => {
    it('stream a preview without the token, with ranges, for the owner and a "can view" grantee', async (t) => {
      const { app, owner, viewer, file } = await sharedMedia(t, dialect, 'film.mp4');

      for (const user of [owner, viewer]) {
        const address = await user.api.get(`/api/files/preview-address/${file.id}`);
        assert.equal(address.status, 200, JSON.stringify(address.body));
        const { url, expiresAt } = address.body.data;
        assert.match(url, new RegExp(`^/api/files/preview/${file.id}\\?ticket=[A-Za-z0-9_-]+$`));
        assert.ok(Date.parse(expiresAt) > Date.now() + 5 * 3600 * 1000, 'valid for hours');
        const part = await app.inject({ method: 'GET', url, headers: { range: 'bytes=1000-1009' } });
        assert.equal(part.statusCode, 206, part.body);
        assert.equal(part.body, CONTENT.subarray(1000, 1010).toString());
        assert.equal(part.headers['content-type'], 'video/mp4');
        assert.equal(part.headers['content-range'], `bytes 1000-1009/${CONTENT.length}`);
        const whole = await app.inject({ method: 'GET', url });
        assert.equal(whole.statusCode, 200);
        assert.equal(whole.rawPayload.length, CONTENT.length);
      }
    });

    it('a ticket opens only its own file and version, not a download, and not once altered', async (t) => {
      const { app } = await build(t, dialect);
      const owner = await signUp(app, 'Owner');
      const root = await rootFolderId(owner);
      const file = await putFile(app, owner, root, 'song.mp3', CONTENT);
      const other = await putFile(app, owner, root, 'other.mp3', CONTENT);
      const { url } = (await owner.api.get(`/api/files/preview-address/${file.id}`)).body.data;
      const ticket = new URL(url, 'http://x').searchParams.get('ticket')!;

      const refused = async (path: string) => assertError(await tokenless(app, path), 401, 'UNAUTHENTICATED');
      await refused(`/api/files/preview/${other.id}?ticket=${ticket}`);
      await refused(`/api/files/download/${file.id}?ticket=${ticket}`);
      await refused(`/api/files/preview/${file.id}?ticket=${ticket}&versionId=ver_01m8mdc0vv2xdknct4bye1fy1n`);
      const flipped = ticket.slice(0, 20) + (ticket[20] === 'A' ? 'B' : 'A') + ticket.slice(21);
      await refused(`/api/files/preview/${file.id}?ticket=${flipped}`);
      await refused(`/api/files/preview/${file.id}?ticket=not-a-ticket`);
      await refused(`/api/files/preview/${file.id}`);

      assertError(await owner.api.get(`/api/files/preview-address/${other.id}?versionId=bad`), 400);
      const text = await putFile(app, owner, root, 'data.bin', CONTENT);
      assertError(await owner.api.get(`/api/files/preview-address/${text.id}`), 415, 'PREVIEW_NOT_SUPPORTED');
    });

    it('ends with its session, and follows the rights of the moment', async (t) => {
      const { app, owner, viewer, file } = await sharedMedia(t, dialect, 'clip.webm');
      const ownerUrl = (await owner.api.get(`/api/files/preview-address/${file.id}`)).body.data.url;
      const viewerUrl = (await viewer.api.get(`/api/files/preview-address/${file.id}`)).body.data.url;

      const revoked = await owner.api.delete(`/api/files/share-users/${file.id}/${viewer.id}`);
      assert.equal(revoked.status, 200, JSON.stringify(revoked.body));
      assertError(await tokenless(app, viewerUrl), 404, 'FILE_NOT_FOUND');

      assert.equal((await app.inject({ method: 'GET', url: ownerUrl })).statusCode, 200);
      const out = await owner.api.post('/api/auth/logout', {});
      assert.ok(out.status < 300, JSON.stringify(out.body));
      assertError(await tokenless(app, ownerUrl), 401, 'UNAUTHENTICATED');
    });
  });
}

describe('preview tickets', () => {
  it('never reach the log', async (t) => {
    const log = captureLog();
    const { app } = await build(t, 'sqlite', { config: { logLevel: 'trace' } as never, logStream: log.stream });
    const owner = await signUp(app, 'Owner');
    const file = await putFile(app, owner, await rootFolderId(owner), 'film.mp4', CONTENT);
    const { url } = (await owner.api.get(`/api/files/preview-address/${file.id}`)).body.data;
    assert.equal((await tokenless(app, url)).status, 200);
    const ticket = new URL(url, 'http://x').searchParams.get('ticket')!;
    const logged = log.text();
    assert.match(logged, /ticket=\[redacted\]/, 'the request is logged');
    assert.ok(!logged.includes(ticket), 'without its ticket');
  });

  it('open with their key until they expire', () => {
    const key = Buffer.alloc(32, 7);
    const claims = { tokenId: 'tok_1', fileId: 'fil_1', versionId: '', expiresAt: 2_000 };
    const ticket = sealTicket(key, claims);
    assert.deepEqual(openTicket(key, ticket, 1_999), claims);
    assert.equal(openTicket(key, ticket, 2_000), undefined, 'expired');
    assert.equal(openTicket(Buffer.alloc(32, 8), ticket, 1_000), undefined, 'another key');
    assert.notEqual(sealTicket(key, claims), ticket, 'each sealing differs');
  });
});
