// The tus endpoint's refusals (issue 32, docs: the tus contract): each answers its status, the
// API's envelope with its code and Tus-Resumable, and leaves the upload where it stood: HEAD tells
// the same offset, and a correct PATCH then finishes it into the exact bytes.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { DIALECTS, signUp } from '../../helper.js';
import {
  TUS_VERSION,
  assertResumable,
  assertTus,
  createdUpload,
  tusClient,
  tusMetadataHeader as metadata,
  tusSetup,
} from '../../support/tus-inject.js';

const sha1 = (data: Buffer) => `sha1 ${createHash('sha1').update(data).digest('base64')}`;

for (const dialect of DIALECTS) {
  describe(`tus refusals [${dialect}]`, () => {
    it('a wrong Upload-Offset is 409 UPLOAD_OFFSET_MISMATCH', async (t) => {
      const { tus, folderId } = await tusSetup(t, dialect);
      const data = randomBytes(100_000);
      const url = await createdUpload(tus, folderId, 'offsets.bin', data.length);
      assertTus(await tus.patch(url, 0, data.subarray(0, 50_000)), 204);
      for (const offset of [0, 49_999, 50_001])
        assertTus(await tus.patch(url, offset, data.subarray(offset, offset + 1000)), 409, 'UPLOAD_OFFSET_MISMATCH', `offset ${offset}`);
      await assertResumable(tus, url, data, 50_000);
    });

    it('a missing or other Tus-Resumable is 412 with Tus-Version, on POST, HEAD, PATCH and DELETE', async (t) => {
      const { tus, folderId } = await tusSetup(t, dialect);
      const data = randomBytes(80_000);
      const url = await createdUpload(tus, folderId, 'versions.bin', data.length);
      assertTus(await tus.patch(url, 0, data.subarray(0, 30_000)), 204);
      for (const version of [undefined, '0.2.2', '1.0']) {
        const label = `Tus-Resumable ${version ?? 'missing'}`;
        const header = { 'tus-resumable': version };
        const answers = {
          POST: await tus.create(metadata({ folderId, filename: 'other.bin' }), 10, header),
          HEAD: await tus.head(url, header),
          PATCH: await tus.patch(url, 30_000, data.subarray(30_000), header),
          DELETE: await tus.remove(url, header),
        };
        for (const [method, res] of Object.entries(answers)) {
          assertTus(res, 412, 'TUS_VERSION_UNSUPPORTED', `${label}, ${method}`);
          assert.equal(res.headers['tus-version'], TUS_VERSION, `${label}, ${method}: Tus-Version`);
        }
      }
      assert.deepEqual(
        (await tus.list()).map((u) => u.name),
        ['versions.bin'],
        'no refused POST created an upload',
      );
      await assertResumable(tus, url, data, 30_000);
    });

    it('a PATCH body that is not application/offset+octet-stream is 415', async (t) => {
      const { tus, folderId } = await tusSetup(t, dialect);
      const data = randomBytes(70_000);
      const url = await createdUpload(tus, folderId, 'types.bin', data.length);
      for (const type of ['application/octet-stream', 'text/plain'])
        assertTus(await tus.patch(url, 0, data, { 'content-type': type }), 415, 'UNSUPPORTED_MEDIA_TYPE', type);
      await assertResumable(tus, url, data, 0);
    });

    it('more bytes than Upload-Length are 413 UPLOAD_LENGTH_EXCEEDED and keep nothing of the request', async (t) => {
      const { tus, folderId } = await tusSetup(t, dialect);
      const data = randomBytes(100_000);
      const url = await createdUpload(tus, folderId, 'too-long.bin', data.length);
      assertTus(await tus.patch(url, 0, data.subarray(0, 30_000)), 204);
      const over = Buffer.concat([data.subarray(30_000), randomBytes(80_000)]);
      assertTus(await tus.patch(url, 30_000, over), 413, 'UPLOAD_LENGTH_EXCEEDED');
      assertTus(await tus.patch(url, 30_000, Buffer.concat([data.subarray(30_000), Buffer.from('x')])), 413, 'UPLOAD_LENGTH_EXCEEDED');
      await assertResumable(tus, url, data, 30_000);
    });

    it("another user's upload URL is 404 UPLOAD_NOT_FOUND on HEAD, PATCH and DELETE", async (t) => {
      const { app, tus, folderId } = await tusSetup(t, dialect);
      const other = tusClient(app, await signUp(app));
      const data = randomBytes(90_000);
      const url = await createdUpload(tus, folderId, 'mine.bin', data.length);
      assertTus(await tus.patch(url, 0, data.subarray(0, 10_000)), 204);
      assertTus(await other.head(url), 404, 'UPLOAD_NOT_FOUND', 'HEAD');
      assertTus(await other.patch(url, 10_000, data.subarray(10_000)), 404, 'UPLOAD_NOT_FOUND', 'PATCH');
      assertTus(await other.remove(url), 404, 'UPLOAD_NOT_FOUND', 'DELETE');
      assert.deepEqual(await other.list(), []);
      // Nor may they write into the owner's folder with an upload of their own.
      assertTus(await other.create(metadata({ folderId, filename: 'intruder.bin' }), 10), 404, 'FOLDER_NOT_FOUND');
      await assertResumable(tus, url, data, 10_000);
    });

    it('a PATCH on a finished upload is 410 UPLOAD_FINISHED; its file stays as it was', async (t) => {
      const { tus, folderId } = await tusSetup(t, dialect);
      const data = randomBytes(20_000);
      const url = await createdUpload(tus, folderId, 'done.bin', data.length);
      const fileId = await assertResumable(tus, url, data, 0);
      assertTus(await tus.patch(url, data.length, Buffer.from('more')), 410, 'UPLOAD_FINISHED', 'at the end');
      assertTus(await tus.patch(url, 0, data), 410, 'UPLOAD_FINISHED', 'from the start');
      const head = await tus.head(url);
      assertTus(head, 200);
      assert.equal(head.headers['upload-offset'], String(data.length));
      assert.equal(head.headers['coffre-file-id'], fileId);
      assert.ok((await tus.download(fileId)).equals(data));
    });

    it('malformed Upload-Metadata is 400 UPLOAD_BAD_METADATA and creates nothing', async (t) => {
      const { tus, folderId } = await tusSetup(t, dialect);
      const data = randomBytes(10_000);
      const url = await createdUpload(tus, folderId, 'kept.bin', data.length);
      const folder = `folderId ${Buffer.from(folderId).toString('base64')}`;
      const cases: Record<string, string> = {
        'bad base64': `${folder},filename !!!!`,
        'base64 of a wrong length': `${folder},filename YWJj=`,
        'not UTF-8': `${folder},filename ${Buffer.from([0xff, 0xfe, 0x41]).toString('base64')}`,
        'a duplicate key': `${folder},filename ${Buffer.from('a.bin').toString('base64')},filename ${Buffer.from('b.bin').toString('base64')}`,
        'no folderId': metadata({ filename: 'a.bin' }),
        'no filename': metadata({ folderId }),
        'an empty header': '',
        'an unknown onConflict': metadata({ folderId, filename: 'a.bin', onConflict: 'overwrite' }),
      };
      for (const [label, meta] of Object.entries(cases)) assertTus(await tus.create(meta, 10), 400, 'UPLOAD_BAD_METADATA', label);
      assert.deepEqual(
        (await tus.list()).map((u) => u.name),
        ['kept.bin'],
      );
      await assertResumable(tus, url, data, 0);
    });

    it('an Upload-Length over COFFRE_MAX_UPLOAD_BYTES is 413, at creation and when a deferred length is declared', async (t) => {
      const { tus, folderId } = await tusSetup(t, dialect, { maxUploadBytes: 300_000 });
      const meta = metadata({ folderId, filename: 'big.bin' });
      assertTus(await tus.create(meta, 300_001), 413, 'PAYLOAD_TOO_LARGE');
      assert.deepEqual(await tus.list(), []);
      const data = randomBytes(120_000);
      const url = await createdUpload(tus, folderId, 'deferred.bin', undefined);
      assertTus(await tus.patch(url, 0, data.subarray(0, 100_000)), 204);
      assertTus(await tus.patch(url, 100_000, data.subarray(100_000), { 'upload-length': '300001' }), 413, 'PAYLOAD_TOO_LARGE');
      // Without a declared length, the limit bounds what a deferred upload takes.
      assertTus(await tus.patch(url, 100_000, randomBytes(200_001)), 413, 'UPLOAD_LENGTH_EXCEEDED');
      await assertResumable(tus, url, data, 100_000);
      assertTus(await tus.create(meta, 300_000), 201, undefined, 'the limit itself is allowed');
    });

    it('Upload-Checksum: a mismatch (sha1, sha256, md5) is 460 and keeps nothing, a matching one is taken, an unknown algorithm is 400', async (t) => {
      const { tus, folderId } = await tusSetup(t, dialect);
      const data = randomBytes(200_000);
      const url = await createdUpload(tus, folderId, 'checked.bin', data.length);
      const first = data.subarray(0, 90_000);
      const corrupted = Buffer.from(first);
      corrupted[70_000] ^= 1;
      assertTus(await tus.patch(url, 0, corrupted, { 'upload-checksum': sha1(first) }), 460, 'UPLOAD_CHECKSUM_MISMATCH');
      assertTus(await tus.head(url), 200);
      assert.equal((await tus.head(url)).headers['upload-offset'], '0', 'nothing of a mismatched body is kept');
      const taken = await tus.patch(url, 0, first, { 'upload-checksum': sha1(first) });
      assertTus(taken, 204);
      assert.equal(taken.headers['upload-offset'], '90000');
      const next = data.subarray(90_000, 100_000);
      const unknown = `crc32 ${Buffer.from('abcd').toString('base64')}`;
      assertTus(await tus.patch(url, 90_000, next, { 'upload-checksum': unknown }), 400, 'UPLOAD_CHECKSUM_UNSUPPORTED');
      assertTus(await tus.patch(url, 90_000, next, { 'upload-checksum': 'sha1' }), 400, 'UPLOAD_BAD_HEADER', 'no digest');
      for (const algorithm of ['sha256', 'md5']) {
        const digest = createHash(algorithm).update(next).digest('base64');
        assertTus(
          await tus.patch(url, 90_000, next, { 'upload-checksum': `${algorithm} ${digest}x` }),
          400,
          'UPLOAD_BAD_HEADER',
          algorithm,
        );
        assertTus(
          await tus.patch(url, 90_000, randomBytes(next.length), { 'upload-checksum': `${algorithm} ${digest}` }),
          460,
          'UPLOAD_CHECKSUM_MISMATCH',
          algorithm,
        );
      }
      const sha256 = createHash('sha256').update(next).digest('base64');
      assertTus(await tus.patch(url, 90_000, next, { 'upload-checksum': `sha256 ${sha256}` }), 204, undefined, 'a matching sha256');
      await assertResumable(tus, url, data, 100_000);
    });

    it('malformed length and offset headers are 400 UPLOAD_BAD_HEADER', async (t) => {
      const { tus, folderId } = await tusSetup(t, dialect);
      const meta = metadata({ folderId, filename: 'lengths.bin' });
      const creations: Record<string, Record<string, string | undefined>> = {
        'both Upload-Length and Upload-Defer-Length': { 'upload-defer-length': '1' },
        'neither of them': { 'upload-length': undefined },
        'Upload-Defer-Length: 2': { 'upload-length': undefined, 'upload-defer-length': '2' },
        'a negative Upload-Length': { 'upload-length': '-1' },
        'a fractional Upload-Length': { 'upload-length': '10.5' },
      };
      for (const [label, headers] of Object.entries(creations))
        assertTus(await tus.create(meta, 10, headers), 400, 'UPLOAD_BAD_HEADER', label);
      assert.deepEqual(await tus.list(), []);

      const data = randomBytes(100_000);
      const known = await createdUpload(tus, folderId, 'known.bin', data.length);
      assertTus(await tus.patch(known, 0, data.subarray(0, 40_000)), 204);
      const next = data.subarray(40_000, 50_000);
      assertTus(await tus.patch(known, 40_000, next, { 'upload-offset': undefined }), 400, 'UPLOAD_BAD_HEADER', 'no Upload-Offset');
      assertTus(await tus.patch(known, 40_000, next, { 'upload-offset': 'abc' }), 400, 'UPLOAD_BAD_HEADER', 'Upload-Offset abc');
      assertTus(await tus.patch(known, 40_000, next, { 'upload-length': '100001' }), 400, 'UPLOAD_BAD_HEADER', 'another length');
      await assertResumable(tus, known, data, 40_000, 'known');

      const deferred = await createdUpload(tus, folderId, 'deferred.bin', undefined);
      assertTus(await tus.patch(deferred, 0, data.subarray(0, 40_000)), 204);
      assertTus(await tus.patch(deferred, 40_000, next, { 'upload-length': '39999' }), 400, 'UPLOAD_BAD_HEADER', 'less than arrived');
      await assertResumable(tus, deferred, data, 40_000, 'deferred');
    });

    it('creation-with-upload whose body is refused still answers Location: the upload is kept at offset 0', async (t) => {
      const { tus, folderId } = await tusSetup(t, dialect);
      const data = randomBytes(90_000);
      const meta = metadata({ folderId, filename: 'first-body.bin' });
      const refusals = [
        {
          code: 'UPLOAD_CHECKSUM_MISMATCH',
          status: 460,
          headers: { 'upload-checksum': sha1(randomBytes(10)) },
          body: data.subarray(0, 50_000),
        },
        { code: 'UPLOAD_LENGTH_EXCEEDED', status: 413, headers: {}, body: Buffer.concat([data, Buffer.from('x')]) },
      ];
      for (const { code, status, headers, body } of refusals) {
        const res = await tus.create(meta, data.length, headers, body);
        assertTus(res, status, code);
        assert.match(String(res.headers.location), /^\/api\/uploads\/upl_/, `${code}: Location`);
        await assertResumable(tus, String(res.headers.location), data, 0, code);
      }
      assert.deepEqual(await tus.list(), []);
    });
  });
}
