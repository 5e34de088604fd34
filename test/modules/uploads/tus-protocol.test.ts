// The tus 1.0.0 endpoint (issue 32, /api/uploads/) on the wire, through Fastify inject with raw
// bodies and explicit headers: discovery, creation (with and without a body, deferred length),
// PATCH in pieces, and every refusal of the contract, each leaving the upload resumable.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { DIALECTS, build } from '../../helper.js';
import {
  SEGMENT,
  TUS_VERSION,
  assertExpiresInADay,
  assertResumable,
  assertTus,
  createdUpload,
  sha256Checksum,
  tusSetup,
  tusMetadataHeader as metadata,
} from '../../support/tus-inject.js';

for (const dialect of DIALECTS) {
  describe(`tus protocol [${dialect}]`, () => {
    it('OPTIONS, without a token, tells the version, the six extensions, the size limit and the checksum algorithms', async (t) => {
      const { app } = await build(t, dialect, { config: { maxUploadBytes: 5_000_000 } });
      const res = await app.inject({ method: 'OPTIONS', url: '/api/uploads/' });
      assert.equal(res.statusCode, 204, res.body);
      assert.equal(res.headers['tus-resumable'], TUS_VERSION);
      assert.equal(res.headers['tus-version'], TUS_VERSION);
      assert.deepEqual(String(res.headers['tus-extension']).split(',').sort(), [
        'checksum',
        'creation',
        'creation-defer-length',
        'creation-with-upload',
        'expiration',
        'termination',
      ]);
      assert.equal(res.headers['tus-max-size'], '5000000');
      assert.deepEqual(String(res.headers['tus-checksum-algorithm']).split(',').sort(), ['md5', 'sha1', 'sha256']);
    });

    it('creation, HEAD, then PATCH in three pieces makes the file: details, bytes and a finished HEAD', async (t) => {
      const { tus, folderId, user } = await tusSetup(t, dialect);
      const data = randomBytes(200_000);
      const meta = metadata({ folderId, filename: 'report.pdf', filetype: 'application/pdf' });
      const res = await tus.create(meta, data.length);
      assertTus(res, 201);
      const url = String(res.headers.location);
      assert.match(url, /^\/api\/uploads\/upl_[0-9a-z]+$/);
      assertExpiresInADay(res.headers['upload-expires']);
      assert.equal(res.headers['upload-offset'], undefined, 'no body, no offset');

      const head = await tus.head(url);
      assertTus(head, 200);
      assert.equal(head.headers['upload-offset'], '0');
      assert.equal(head.headers['upload-length'], String(data.length));
      assert.equal(head.headers['upload-metadata'], meta);
      assert.equal(head.headers['cache-control'], 'no-store');
      assertExpiresInADay(head.headers['upload-expires']);

      // The first piece ends inside the second 64 KiB segment, the second on a segment boundary.
      const cuts = [0, SEGMENT + 4464, 2 * SEGMENT, data.length];
      let fileId = '';
      for (let i = 0; i < 3; i++) {
        const piece = await tus.patch(url, cuts[i], data.subarray(cuts[i], cuts[i + 1]));
        assertTus(piece, 204, undefined, `piece ${i}`);
        assert.equal(piece.headers['upload-offset'], String(cuts[i + 1]));
        assertExpiresInADay(piece.headers['upload-expires']);
        if (i < 2) assert.equal(piece.headers['coffre-file-id'], undefined, `piece ${i} does not finish the upload`);
        else fileId = String(piece.headers['coffre-file-id']);
      }
      assert.match(fileId, /^fil_/);
      const details = await user.api.get(`/api/files/details/${fileId}`);
      assert.equal(details.status, 200, JSON.stringify(details.body));
      assert.equal(details.body.name, 'report.pdf');
      assert.equal(details.body.size, data.length);
      assert.equal(details.body.contentType, 'application/pdf');
      assert.equal(details.body.checksum, sha256Checksum(data));
      assert.equal(details.body.folderId, folderId);
      assert.ok((await tus.download(fileId)).equals(data));

      const after = await tus.head(url);
      assertTus(after, 200);
      assert.equal(after.headers['upload-offset'], String(data.length));
      assert.equal(after.headers['upload-length'], String(data.length));
      assert.equal(after.headers['coffre-file-id'], fileId);
    });

    it('creation-with-upload answers the offset its body reached; the rest follows by PATCH', async (t) => {
      const { tus, folderId } = await tusSetup(t, dialect);
      const data = randomBytes(3 * SEGMENT + 10);
      const res = await tus.create(metadata({ folderId, filename: 'first-bytes.bin' }), data.length, {}, data.subarray(0, 100_000));
      assertTus(res, 201);
      assert.equal(res.headers['upload-offset'], '100000');
      assertExpiresInADay(res.headers['upload-expires']);
      await assertResumable(tus, String(res.headers.location), data, 100_000);

      // A body holding everything makes the file at once.
      const whole = randomBytes(5000);
      const atOnce = await tus.create(metadata({ folderId, filename: 'whole.bin' }), whole.length, {}, whole);
      assertTus(atOnce, 201);
      assert.equal(atOnce.headers['upload-offset'], String(whole.length));
      assert.ok((await tus.download(String(atOnce.headers['coffre-file-id']))).equals(whole));
    });

    it('deferred length: Upload-Defer-Length: 1, PATCHes, and the last PATCH declares Upload-Length', async (t) => {
      const { tus, folderId } = await tusSetup(t, dialect);
      const data = randomBytes(150_001);
      const url = await createdUpload(tus, folderId, 'streamed.bin', undefined);
      const head = await tus.head(url);
      assertTus(head, 200);
      assert.equal(head.headers['upload-defer-length'], '1');
      assert.equal(head.headers['upload-length'], undefined);
      const first = await tus.patch(url, 0, data.subarray(0, 70_000));
      assertTus(first, 204);
      assert.equal(first.headers['upload-offset'], '70000');
      const second = await tus.patch(url, 70_000, data.subarray(70_000, 140_000));
      assertTus(second, 204);
      assert.equal(second.headers['coffre-file-id'], undefined);
      // assertResumable sends the rest with Upload-Length, as the HEAD still says deferred.
      await assertResumable(tus, url, data, 140_000);
      const after = await tus.head(url);
      assert.equal(after.headers['upload-length'], String(data.length));
    });

    it('an empty file (Upload-Length: 0) is made at creation: tus-js-client sends no PATCH for one', async (t) => {
      const { tus, folderId, user } = await tusSetup(t, dialect);
      const res = await tus.create(metadata({ folderId, filename: 'empty.txt', filetype: 'text/plain' }), 0);
      assertTus(res, 201);
      assert.equal(res.headers['upload-offset'], '0');
      const fileId = String(res.headers['coffre-file-id']);
      assert.match(fileId, /^fil_/);
      assert.equal((await tus.download(fileId)).length, 0);
      const details = await user.api.get(`/api/files/details/${fileId}`);
      assert.equal(details.body.size, 0);
      assert.equal(details.body.contentType, 'text/plain');
      const head = await tus.head(String(res.headers.location));
      assert.equal(head.headers['upload-offset'], '0');
      assert.equal(head.headers['coffre-file-id'], fileId);
      assert.deepEqual(await tus.list(), []);
    });

    it('deferred length: a last PATCH with no bytes that declares Upload-Length finishes the upload', async (t) => {
      const { tus, folderId } = await tusSetup(t, dialect);
      const data = randomBytes(2 * SEGMENT);
      const url = await createdUpload(tus, folderId, 'ends-empty.bin', undefined);
      assertTus(await tus.patch(url, 0, data), 204);
      const last = await tus.patch(url, data.length, Buffer.alloc(0), { 'upload-length': String(data.length) });
      assertTus(last, 204);
      assert.equal(last.headers['upload-offset'], String(data.length));
      assert.ok((await tus.download(String(last.headers['coffre-file-id']))).equals(data));
    });

    it('Upload-Metadata: name and contentType stand for filename and filetype; keys without a value and unknown keys are kept', async (t) => {
      const { tus, folderId, user } = await tusSetup(t, dialect);
      const meta = `${metadata({ folderId, name: 'notes été.md', contentType: 'text/markdown', relativePath: 'a/b' })},is_confidential`;
      const data = Buffer.from('# notes\n');
      const res = await tus.create(meta, data.length, {}, data);
      assertTus(res, 201);
      const details = await user.api.get(`/api/files/details/${res.headers['coffre-file-id']}`);
      assert.equal(details.body.name, 'notes été.md');
      assert.equal(details.body.contentType, 'text/markdown');
      assert.equal((await tus.head(String(res.headers.location))).headers['upload-metadata'], meta);
    });
  });
}
