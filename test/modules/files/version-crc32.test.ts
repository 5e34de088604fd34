// Every version records the CRC-32 of its plaintext beside its SHA-256 (issue 33: zip archives laid
// out before their first byte need every entry's CRC): whichever way its bytes came in (raw PUT
// read whole or streamed, multipart, tus over several PATCHes and instances, WebDAV PUT), on
// either engine and either blob store, and copies and restored versions carry their source's.
import { after, before, describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../../../src/config.js';
import type { DialectName } from '../../../src/db/database.js';
import { DIALECTS, build, signUp, type TestApp, type TestUser } from '../../helper.js';
import { davClient } from '../../support/dav.js';
import { putFile, rootFolderId } from '../../support/files.js';
import { mkdir } from '../../support/folders.js';
import { multipart } from '../../support/multipart.js';
import { startTestS3, type TestS3 } from '../../support/s3.js';
import { SEGMENT, assertTus, createdUpload, tusClient, tusMetadataHeader, withSecondInstance } from '../../support/tus-inject.js';

const MIB = 1024 * 1024;

interface Setup extends TestApp {
  user: TestUser;
  root: string;
}

async function setup(t: TestContext, dialect: DialectName, config: Partial<Config> = {}): Promise<Setup> {
  const test = await build(t, dialect, { config });
  const user = await signUp(test.app);
  return { ...test, user, root: await rootFolderId(user) };
}

/** The CRC-32 recorded for each of a file's versions, newest first. */
async function versionCrcs({ database }: TestApp, fileId: string): Promise<(number | null)[]> {
  const rows = await database.db.selectFrom('file_versions').select('crc32').where('file_id', '=', fileId).orderBy('id', 'desc').execute();
  return rows.map((row) => row.crc32);
}

async function assertCrc(test: TestApp, fileId: string, data: Buffer, label: string): Promise<void> {
  assert.deepEqual(await versionCrcs(test, fileId), [crc32(data)], `${label}: the version's CRC-32 is the content's`);
}

async function multipartUpload(app: FastifyInstance, user: TestUser, folderId: string, files: Record<string, Buffer>): Promise<any[]> {
  const { body, contentType } = multipart(Object.entries(files).map(([filename, data]) => ({ filename, data })));
  const res = await app.inject({
    method: 'POST',
    url: `/api/files/upload/${folderId}`,
    headers: { authorization: `Bearer ${user.token}`, 'content-type': contentType },
    payload: body,
  });
  assert.equal(res.statusCode, 201, res.body);
  return res.json().data;
}

/** Sizes crossing the paths: empty, kept in the database, read whole, streamed over segments and runs. */
const SIZES = [0, 1000, 60_000, 200_000, 3 * MIB + 17];

/** Raw PUTs and a multipart request of every size, and a second version: each version's CRC is its content's. */
async function assertDirectUploads(s: Setup, label: string): Promise<void> {
  for (const size of SIZES) {
    const data = randomBytes(size);
    const file = await putFile(s.app, s.user, s.root, `raw-${size}.bin`, data);
    await assertCrc(s, file.id, data, `${label}, raw PUT of ${size} bytes`);
  }
  const parts = Object.fromEntries(SIZES.map((size) => [`part-${size}.bin`, randomBytes(size)]));
  const uploaded = await multipartUpload(s.app, s.user, s.root, parts);
  for (const file of uploaded) await assertCrc(s, file.id, parts[file.name], `${label}, multipart part ${file.name}`);
  const first = randomBytes(100_000);
  const second = randomBytes(MIB + 1);
  await putFile(s.app, s.user, s.root, 'twice.bin', first);
  const again = await putFile(s.app, s.user, s.root, 'twice.bin', second);
  assert.deepEqual(await versionCrcs(s, again.id), [crc32(second), crc32(first)], `${label}: each version its own`);
}

/**
 * A tus upload in PATCHes cut mid-segment, on a segment edge and past a staging write, each from
 * the offset HEAD tells: two here (the second answers before its row is written), then one on
 * another instance, which resumes from the row's offset (resending bytes) and catches the hash up
 * from the tail, and the last back here.
 */
async function assertTusUpload(s: Setup, label: string): Promise<void> {
  const data = randomBytes(5 * MIB + 3 * SEGMENT + 123);
  const url = await createdUpload(tusClient(s.app, s.user), s.root, 'tus.bin', data.length);
  let fileId = '';
  const patchTo = async (app: FastifyInstance, to: number) => {
    const tus = tusClient(app, s.user);
    const head = await tus.head(url);
    assertTus(head, 200, undefined, `${label}: HEAD`);
    const from = Number(head.headers['upload-offset']);
    const res = await tus.patch(url, from, data.subarray(from, to));
    assertTus(res, 204, undefined, `${label}: PATCH ${from}–${to}`);
    fileId = String(res.headers['coffre-file-id'] ?? '');
  };
  await patchTo(s.app, SEGMENT + 7);
  await patchTo(s.app, 2 * SEGMENT);
  await withSecondInstance(s, (other) => patchTo(other, 5 * MIB));
  await patchTo(s.app, data.length);
  assert.match(fileId, /^fil_/, `${label}: the last PATCH finished the upload`);
  assert.ok((await tusClient(s.app, s.user).download(fileId)).equals(data));
  await assertCrc(s, fileId, data, `${label}, tus`);
}

for (const dialect of DIALECTS) {
  describe(`version CRC-32 [${dialect}]`, () => {
    for (const engine of ['native', 'node'] as const) {
      it(`raw and multipart uploads on local files, ${engine} engine`, async (t) => {
        await assertDirectUploads(await setup(t, dialect, { cryptoEngine: engine }), engine);
      });

      it(`a tus upload over several PATCHes and two instances, ${engine} engine`, async (t) => {
        await assertTusUpload(await setup(t, dialect, { cryptoEngine: engine }), engine);
      });
    }

    it('tus uploads finished by their creation: an empty one, and one sent whole with it', async (t) => {
      const s = await setup(t, dialect);
      const tus = tusClient(s.app, s.user);
      for (const data of [Buffer.alloc(0), randomBytes(SEGMENT + 3)]) {
        const meta = tusMetadataHeader({ folderId: s.root, filename: `created-${data.length}.bin`, filetype: 'application/x-test' });
        const created = await tus.create(meta, data.length, {}, data.length > 0 ? data : undefined);
        assertTus(created, 201, undefined, `creation of ${data.length} bytes`);
        await assertCrc(s, String(created.headers['coffre-file-id']), data, `tus creation of ${data.length} bytes`);
      }
    });

    it('WebDAV PUT, small and streamed, new file and new version', async (t) => {
      const s = await setup(t, dialect);
      const dav = davClient(s.app, s.user);
      const first = randomBytes(500);
      const second = randomBytes(2 * MIB + 5);
      assert.equal((await dav('PUT', 'default/dav.bin', { body: first })).statusCode, 201);
      assert.equal((await dav('PUT', 'default/dav.bin', { body: second })).statusCode, 204);
      const listed = await s.user.api.get(`/api/files/list/${s.root}?limit=100`);
      const file = listed.body.data.data.find((f: any) => f.name === 'dav.bin');
      assert.deepEqual(await versionCrcs(s, file.id), [crc32(second), crc32(first)]);
    });

    it('a copied file, a copied folder and a restored version carry their source CRC-32', async (t) => {
      const s = await setup(t, dialect);
      const older = randomBytes(70_000);
      const newer = randomBytes(300);
      await putFile(s.app, s.user, s.root, 'kept.bin', older);
      const file = await putFile(s.app, s.user, s.root, 'kept.bin', newer);
      const target = await mkdir(s.user, 'target');
      const copy = await s.user.api.post(`/api/files/copy/${file.id}`, { targetFolderId: target });
      assert.equal(copy.status, 201, JSON.stringify(copy.body));
      await assertCrc(s, copy.body.data.id, newer, 'file copy');

      const folder = await mkdir(s.user, 'source');
      const inside = await putFile(s.app, s.user, folder, 'inside.bin', older);
      const copied = await s.user.api.post(`/api/folders/copy/${folder}`, { targetParentId: target });
      assert.equal(copied.status, 201, JSON.stringify(copied.body));
      const listed = await s.user.api.get(`/api/files/list/${copied.body.data.id}?limit=100`);
      const copiedFile = listed.body.data.data.find((f: any) => f.name === 'inside.bin');
      assert.notEqual(copiedFile.id, inside.id);
      await assertCrc(s, copiedFile.id, older, 'folder copy');

      const versions = (await s.user.api.get(`/api/files/versions/${file.id}`)).body.data;
      const restored = await s.user.api.post(`/api/files/versions/${file.id}/${versions[1].id}/restore`);
      assert.equal(restored.status, 200, JSON.stringify(restored.body));
      assert.deepEqual(await versionCrcs(s, file.id), [crc32(older), crc32(newer), crc32(older)]);
    });
  });
}

describe('version CRC-32 on the S3 store', () => {
  let s3: TestS3;
  before(async () => {
    s3 = await startTestS3();
    // The app's S3 client takes its credentials from the standard variables.
    for (const [name, value] of Object.entries(s3.env)) process.env[name] ??= value;
  });
  after(() => s3.close());

  async function s3Setup(t: TestContext): Promise<Setup> {
    const location = await s3.newBucket();
    // Nothing kept in the database: small bodies too are sealed whole and put in the bucket.
    return setup(t, DIALECTS[0], { blobStore: { kind: 's3', partSize: 5 * MIB, queueSize: 2, ...location }, inlineBlobBytes: 0 });
  }

  it('raw and multipart uploads (sealed whole or through the codec stream)', async (t) => {
    await assertDirectUploads(await s3Setup(t), 's3');
  });

  it('a tus upload over several PATCHes and two instances (segments sealed on the event loop)', async (t) => {
    await assertTusUpload(await s3Setup(t), 's3');
  });
});
