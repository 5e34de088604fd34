// A folder link's tree as one zip (issue 33, item 3): the checks of the public routes, one access
// per archive with a pass that resumes it, and an archive whose folder is trashed while it streams
// ending in a cut connection, never in a file that looks whole.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { describe, it } from 'node:test';
import { DIALECTS, build, signUp } from '../../helper.js';
import { tempDir } from '../../support/disk.js';
import { assertError } from '../../support/errors.js';
import { putFile } from '../../support/files.js';
import { assertStatus, mkdir } from '../../support/folders.js';
import { publicPost, splitLink } from '../../support/links.js';
import { listen } from '../../support/raw-http.js';
import { checkZipWithTools } from '../../support/zip-tools.js';

const TOOLS = { timeout: 300_000 };
const zipUrl = (hash: string) => `/api/folders/download/public/${hash}/zip`;

/** Reads a response slowly: after the first chunk it waits `pauseMs`, then reads on; tells how it ended. */
function readSlowly(port: number, url: string, headers: Record<string, string>, pauseMs: number, duringPause: () => Promise<void>) {
  return new Promise<{ status: number; length: number; received: number; ended: 'complete' | 'cut' }>((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: url, method: 'GET', agent: false, headers });
    req.on('error', reject);
    req.on('response', (res) => {
      let received = 0;
      let paused = false;
      const length = Number(res.headers['content-length']);
      res.on('data', (chunk: Buffer) => {
        received += chunk.length;
        if (paused) return;
        paused = true;
        res.pause();
        duringPause()
          .then(() => new Promise((r) => setTimeout(r, pauseMs)))
          .then(() => res.resume(), reject);
      });
      res.on('end', () => resolve({ status: res.statusCode!, length, received, ended: received === length ? 'complete' : 'cut' }));
      res.on('error', () => resolve({ status: res.statusCode!, length, received, ended: 'cut' }));
      res.on('aborted', () => resolve({ status: res.statusCode!, length, received, ended: 'cut' }));
    });
    req.end();
  });
}

for (const dialect of DIALECTS) {
  describe(`folder link zips [${dialect}]`, () => {
    it('password, key and counting as a download; the same archive the owner gets; a pass resumes it', TOOLS, async (t) => {
      const { app } = await build(t, dialect);
      const owner = await signUp(app);
      const shared = await mkdir(owner, 'Holiday');
      const inner = await mkdir(owner, 'Inner', shared);
      await putFile(app, owner, shared, 'a.bin', randomBytes(100_000));
      await putFile(app, owner, inner, 'b.txt', 'b');
      const created = await owner.api.post(`/api/folders/share/${shared}`, { password: 'pw', maxAccess: 1 });
      assertStatus(created, 201);
      const { hash, key } = splitLink(created.body.data.shareLink);
      assertError(await publicPost(app, zipUrl(hash), { encryptionKey: key }), 401, 'PASSWORD_REQUIRED');
      assertError(await publicPost(app, zipUrl(hash), { encryptionKey: key, password: 'no' }), 403, 'INVALID_PASSWORD');
      assertError(await publicPost(app, zipUrl(hash), { password: 'pw' }), 400, 'VALIDATION_FAILED');
      const wrongKey = randomBytes(32).toString('base64url');
      assertError(await publicPost(app, zipUrl(hash), { encryptionKey: wrongKey, password: 'pw' }), 403, 'INVALID_ENCRYPTION_KEY');
      assertError(await publicPost(app, zipUrl('unknownhash'), { encryptionKey: key }), 404, 'LINK_NOT_FOUND');

      const zip = await publicPost(app, zipUrl(hash), { encryptionKey: key, password: 'pw' });
      assert.equal(zip.status, 200);
      assert.equal(zip.headers['content-type'], 'application/zip');
      assert.equal(Number(zip.headers['content-length']), zip.raw.length);
      const pass = String(zip.headers['x-coffre-pass']);
      assert.match(pass, /^[A-Za-z0-9_-]{16,64}$/, 'the archive comes with a resume pass');
      const mine = await app.inject({
        method: 'GET',
        url: `/api/folders/download/${shared}`,
        headers: { authorization: `Bearer ${owner.token}` },
      });
      assert.ok(mine.rawPayload.equals(zip.raw), "the link's archive is the owner's, byte for byte");
      const dir = tempDir(t, 'coffre-link-zip-');
      fs.writeFileSync(path.join(dir, 'link.zip'), zip.raw);
      await checkZipWithTools(t, path.join(dir, 'link.zip'));

      assertError(await publicPost(app, zipUrl(hash), { encryptionKey: key, password: 'pw' }), 410, 'LINK_EXHAUSTED');
      const rest = await publicPost(
        app,
        zipUrl(hash),
        { encryptionKey: key, password: 'pw' },
        { headers: { 'x-coffre-pass': pass, range: 'bytes=5000-' } },
      );
      assert.equal(rest.status, 206, 'the pass resumes the archive past the limit');
      assert.ok(Buffer.concat([zip.raw.subarray(0, 5000), rest.raw]).equals(zip.raw));
      assertError(
        await publicPost(app, zipUrl(hash), { encryptionKey: key }, { headers: { 'x-coffre-pass': pass } }),
        401,
        'PASSWORD_REQUIRED',
      );
    });

    it('a link without downloads, a file link, a trashed folder: refused', async (t) => {
      const { app } = await build(t, dialect);
      const owner = await signUp(app);
      const shared = await mkdir(owner, 'NoDownload');
      const file = await putFile(app, owner, shared, 'f.txt', 'f');
      const viewOnly = splitLink((await owner.api.post(`/api/folders/share/${shared}`, { canDownload: false })).body.data.shareLink);
      assertError(await publicPost(app, zipUrl(viewOnly.hash), { encryptionKey: viewOnly.key }), 403, 'DOWNLOAD_NOT_ALLOWED');
      const fileLink = splitLink((await owner.api.post(`/api/files/share/${file.id}`, {})).body.data.shareLink);
      assertError(await publicPost(app, zipUrl(fileLink.hash), { encryptionKey: fileLink.key }), 404, 'LINK_NOT_FOUND');
      const open = splitLink((await owner.api.post(`/api/folders/share/${shared}`, {})).body.data.shareLink);
      assertStatus(await owner.api.delete(`/api/folders/delete/${shared}`), 200);
      assertError(await publicPost(app, zipUrl(open.hash), { encryptionKey: open.key }), 404, 'LINK_NOT_FOUND');
    });

    it('a folder trashed while its zip streams: the connection is cut, not ended', { timeout: 120_000 }, async (t) => {
      const { app } = await build(t, dialect);
      const owner = await signUp(app);
      const folder = await mkdir(owner, 'Moving');
      for (let i = 0; i < 3; i++) await putFile(app, owner, folder, `big ${i}.bin`, randomBytes(8 * 1024 * 1024));
      const port = await listen(app);
      const answer = await readSlowly(
        port,
        `/api/folders/download/${folder}`,
        { authorization: `Bearer ${owner.token}` },
        1500,
        async () => {
          assertStatus(await owner.api.delete(`/api/folders/delete/${folder}`), 200);
        },
      );
      assert.equal(answer.status, 200);
      assert.equal(answer.ended, 'cut', `the archive was cut (${answer.received} of ${answer.length} bytes)`);
      assert.ok(answer.received < answer.length);
      const untouched = await mkdir(owner, 'Still');
      await putFile(app, owner, untouched, 'big.bin', randomBytes(8 * 1024 * 1024));
      const whole = await readSlowly(
        port,
        `/api/folders/download/${untouched}`,
        { authorization: `Bearer ${owner.token}` },
        1500,
        async () => {},
      );
      assert.equal(whole.ended, 'complete', 'the same slow reader gets a whole archive when nothing changes');
    });
  });
}
