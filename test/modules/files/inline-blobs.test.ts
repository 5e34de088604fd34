import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { collectGarbage } from '../../../src/blobs/blob-collector.js';
import { FsBlobStore } from '../../../src/blobs/fs/fs-blob-store.js';
import type { Config } from '../../../src/config.js';
import { unwrapKey } from '../../../src/crypto/key-wrap.js';
import { keyProofOf } from '../../../src/modules/links/links.key-proof.js';
import { openSealed } from '../../support/sealed.js';
import type { DatabaseHandle } from '../../../src/db/database.js';
import { DIALECTS, build, signUp, type TestUser } from '../../helper.js';
import { putFile, rootFolderId } from '../../support/files.js';

/** Files under the blob store's folder, its temp folder left out. */
function storedBlobFiles(config: Config): string[] {
  const root = path.join(config.dataDir, 'blobs');
  const walk = (dir: string): string[] =>
    fs
      .readdirSync(dir, { withFileTypes: true })
      .flatMap((entry) => (entry.isDirectory() ? walk(path.join(dir, entry.name)) : [path.join(dir, entry.name)]));
  return fs.existsSync(root) ? walk(root).filter((file) => !file.startsWith(path.join(root, 'tmp') + path.sep)) : [];
}

async function blobRowOf(database: DatabaseHandle, fileId: string) {
  const version = await database.db
    .selectFrom('file_versions')
    .select('blob_id')
    .where('file_id', '=', fileId)
    .orderBy('created_at', 'desc')
    .executeTakeFirstOrThrow();
  return database.db.selectFrom('blobs').selectAll().where('id', '=', version.blob_id).executeTakeFirstOrThrow();
}

async function download(app: FastifyInstance, user: TestUser, fileId: string, headers: Record<string, string> = {}) {
  return app.inject({
    method: 'GET',
    url: `/api/files/download/${fileId}`,
    headers: { authorization: `Bearer ${user.token}`, ...headers },
  });
}

for (const dialect of DIALECTS) {
  describe(`small files kept in the database [${dialect}]`, () => {
    async function inlineBlobsFixture(t: TestContext, config: Partial<Config> = {}) {
      const ctx = await build(t, dialect, { config });
      const user = await signUp(ctx.app);
      return { ...ctx, user, root: await rootFolderId(user) };
    }

    it('a small upload is one row: its ciphertext in the blob row, no file in the blob store, no uploading row', async (t) => {
      const { app, database, config, user, root } = await inlineBlobsFixture(t);
      const data = randomBytes(5000);
      const file = await putFile(app, user, root, 'small.bin', data);
      const blob = await blobRowOf(database, file.id);
      assert.equal(blob.state, 'ready');
      assert.equal(blob.ref_count, 1);
      assert.ok(Buffer.isBuffer(blob.content), 'the content is in the row');
      assert.equal(blob.content!.length, Number(blob.stored_size));
      // Header (16 bytes) and one sealed segment (its tag: 16 bytes).
      assert.equal(Number(blob.stored_size), 16 + data.length + 16);
      assert.equal(blob.content!.indexOf(data.subarray(0, 32)), -1, 'the row holds ciphertext');
      assert.deepEqual(storedBlobFiles(config), []);
      assert.equal((await database.db.selectFrom('blobs').select('id').where('state', '!=', 'ready').execute()).length, 0);

      const whole = await download(app, user, file.id);
      assert.equal(whole.statusCode, 200);
      assert.ok(whole.rawPayload.equals(data));
      assert.equal(whole.headers['content-length'], String(data.length));
      const ranged = await download(app, user, file.id, { range: 'bytes=100-4099' });
      assert.equal(ranged.statusCode, 206);
      assert.ok(ranged.rawPayload.equals(data.subarray(100, 4100)));
      const last = await download(app, user, file.id, { range: 'bytes=-1' });
      assert.equal(last.statusCode, 206);
      assert.ok(last.rawPayload.equals(data.subarray(-1)));
      assert.equal((await download(app, user, file.id, { 'if-none-match': String(whole.headers.etag) })).statusCode, 304);
    });

    it('keeps up to 64 KiB (one segment) in the database and a byte more in the blob store', async (t) => {
      const { app, database, config, user, root } = await inlineBlobsFixture(t);
      const put = await app.inject({
        method: 'PUT',
        url: `/api/files/upload/${root}?name=empty.bin`,
        headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/octet-stream', 'content-length': '0' },
        payload: Buffer.alloc(0),
      });
      assert.equal(put.statusCode, 201, put.body);
      const empty = put.json().data;
      assert.equal((await blobRowOf(database, empty.id)).content?.length, 32, 'an empty file: header and one empty sealed segment');
      assert.equal((await download(app, user, empty.id)).rawPayload.length, 0);
      const atLimit = randomBytes(64 * 1024);
      const over = randomBytes(64 * 1024 + 1);
      const inline = await putFile(app, user, root, 'at-limit.bin', atLimit);
      assert.ok((await blobRowOf(database, inline.id)).content);
      assert.deepEqual(storedBlobFiles(config), []);
      const stored = await putFile(app, user, root, 'over.bin', over);
      const row = await blobRowOf(database, stored.id);
      assert.equal(row.content, null);
      assert.deepEqual(
        storedBlobFiles(config).map((file) => path.basename(file)),
        [row.id],
      );
      assert.ok((await download(app, user, inline.id)).rawPayload.equals(atLimit));
      assert.ok((await download(app, user, stored.id)).rawPayload.equals(over));
    });

    it('multipart parts and chunked raw bodies of unknown length: small ones in the database, larger ones streamed to the store', async (t) => {
      const { app, database, config, user, root } = await inlineBlobsFixture(t);
      const small = randomBytes(20_000);
      const large = randomBytes(200_000);
      const boundary = 'inline-boundary-51c';
      const part = (name: string, data: Buffer) =>
        Buffer.concat([
          Buffer.from(
            `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
          ),
          data,
          Buffer.from('\r\n'),
        ]);
      const multipart = await app.inject({
        method: 'POST',
        url: `/api/files/upload/${root}`,
        headers: { authorization: `Bearer ${user.token}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
        payload: Buffer.concat([part('part-small.bin', small), part('part-large.bin', large), Buffer.from(`--${boundary}--\r\n`)]),
      });
      assert.equal(multipart.statusCode, 201, multipart.body);
      const [partSmall, partLarge] = multipart.json().data;
      assert.ok((await blobRowOf(database, partSmall.id)).content, 'the small part is kept in the database');
      assert.equal((await blobRowOf(database, partLarge.id)).content, null, 'the large part is in the store');

      // Over real HTTP without Content-Length: Transfer-Encoding: chunked.
      await app.listen({ port: 0, host: '127.0.0.1' });
      const { port } = app.server.address() as import('node:net').AddressInfo;
      const chunked = (name: string, data: Buffer) =>
        new Promise<any>((resolve, reject) => {
          const req = http.request(
            {
              port,
              method: 'PUT',
              path: `/api/files/upload/${root}?name=${name}`,
              headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/octet-stream' },
            },
            (res) => {
              const out: Buffer[] = [];
              res.on('data', (c) => out.push(c));
              res.on('end', () => resolve({ status: res.statusCode, body: JSON.parse(Buffer.concat(out).toString()) }));
            },
          );
          req.on('error', reject);
          for (let at = 0; at < data.length; at += 7_000) req.write(data.subarray(at, at + 7_000));
          req.end();
        });
      const chunkedSmall = await chunked('chunked-small.bin', small);
      const chunkedLarge = await chunked('chunked-large.bin', large);
      assert.equal(chunkedSmall.status, 201, JSON.stringify(chunkedSmall.body));
      assert.equal(chunkedLarge.status, 201, JSON.stringify(chunkedLarge.body));
      assert.ok((await blobRowOf(database, chunkedSmall.body.data.id)).content);
      assert.equal((await blobRowOf(database, chunkedLarge.body.data.id)).content, null);
      assert.equal(storedBlobFiles(config).length, 2);
      for (const [file, data] of [
        [partSmall, small],
        [partLarge, large],
        [chunkedSmall.body.data, small],
        [chunkedLarge.body.data, large],
      ] as const) {
        assert.equal(file.size, data.length);
        assert.ok((await download(app, user, file.id)).rawPayload.equals(data), file.name);
      }
    });

    it('COFFRE_INLINE_BLOB_BYTES=0 keeps every file in the blob store; a smaller limit keeps what is larger there', async (t) => {
      const off = await inlineBlobsFixture(t, { inlineBlobBytes: 0 });
      const tiny = await putFile(off.app, off.user, off.root, 'tiny.txt', 'hello');
      const empty = await putFile(off.app, off.user, off.root, 'empty.txt', '');
      assert.equal((await blobRowOf(off.database, tiny.id)).content, null);
      assert.equal((await blobRowOf(off.database, empty.id)).content, null);
      assert.equal(storedBlobFiles(off.config).length, 2);
      assert.equal((await download(off.app, off.user, tiny.id)).rawPayload.toString(), 'hello');
      assert.equal((await download(off.app, off.user, empty.id)).rawPayload.length, 0);

      const small = await inlineBlobsFixture(t, { inlineBlobBytes: 1000 });
      const under = await putFile(small.app, small.user, small.root, 'under.bin', randomBytes(1000));
      const above = await putFile(small.app, small.user, small.root, 'above.bin', randomBytes(1001));
      assert.ok((await blobRowOf(small.database, under.id)).content);
      assert.equal((await blobRowOf(small.database, above.id)).content, null);
      assert.equal(storedBlobFiles(small.config).length, 1);
    });

    it('versions, copies and the collector: a shared small blob goes once no version uses it, and only from the database', async (t) => {
      const { app, database, config, user, root } = await inlineBlobsFixture(t);
      const first = await putFile(app, user, root, 'doc.txt', 'first version');
      const second = await putFile(app, user, root, 'doc.txt', 'second version');
      assert.equal(second.versionCount, 2);
      const versions = (await user.api.get(`/api/files/versions/${first.id}`)).body.data;
      assert.equal(versions.length, 2);
      const old = versions.find((v: any) => v.size === 'first version'.length);
      const oldBody = await app.inject({
        method: 'GET',
        url: `/api/files/download/${first.id}?versionId=${old.id}`,
        headers: { authorization: `Bearer ${user.token}` },
      });
      assert.equal(oldBody.rawPayload.toString(), 'first version');
      assert.equal((await download(app, user, first.id)).rawPayload.toString(), 'second version');

      const copied = await user.api.post(`/api/files/copy/${first.id}`, { targetFolderId: root, name: 'doc copy.txt' });
      assert.equal(copied.status, 201, JSON.stringify(copied.body));
      const shared = await blobRowOf(database, copied.body.data.id);
      assert.equal(shared.ref_count, 2, 'the copy shares the current blob');

      // A store that fails every delete: collecting small blobs never asks it.
      const store = new FsBlobStore(path.join(config.dataDir, 'blobs'));
      store.delete = async () => {
        throw new Error('the blob store was asked to delete a small blob');
      };
      assert.equal((await user.api.delete(`/api/files/delete/${first.id}?trash=hard`)).status, 200);
      assert.equal(await collectGarbage(database, store), 1, "the first version's blob goes; the current one is still the copy's");
      assert.equal((await database.db.selectFrom('blobs').select('id').where('id', '=', shared.id).executeTakeFirst())?.id, shared.id);
      assert.equal((await download(app, user, copied.body.data.id)).rawPayload.toString(), 'second version');
      assert.equal((await user.api.delete(`/api/files/delete/${copied.body.data.id}?trash=hard`)).status, 200);
      assert.equal(await collectGarbage(database, store), 1);
      assert.equal((await database.db.selectFrom('blobs').select('id').execute()).length, 0);
      assert.deepEqual(storedBlobFiles(config), []);
    });

    it('a refused small upload (quota) leaves no blob row and no file', async (t) => {
      const { app, database, config, user, root } = await inlineBlobsFixture(t, { defaultQuotaBytes: 3000 });
      await putFile(app, user, root, 'fits.bin', randomBytes(2000));
      const refused = await app.inject({
        method: 'PUT',
        url: `/api/files/upload/${root}?name=too-much.bin`,
        headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/octet-stream' },
        payload: randomBytes(2000),
      });
      assert.equal(refused.statusCode, 507, refused.body);
      assert.equal(refused.json().code, 'QUOTA_EXCEEDED');
      assert.equal((await database.db.selectFrom('blobs').select('id').execute()).length, 1);
      assert.equal((await database.db.selectFrom('files').select('id').execute()).length, 1);
      assert.deepEqual(storedBlobFiles(config), []);
    });

    it('a changed byte in the stored row is a 500 CONTENT_INTEGRITY, never altered content', async (t) => {
      const { app, database, user, root } = await inlineBlobsFixture(t);
      const file = await putFile(app, user, root, 'kept.bin', randomBytes(3000));
      const blob = await blobRowOf(database, file.id);
      for (const offset of [3 /* header */, 16 + 1500 /* segment */, blob.content!.length - 1 /* tag */]) {
        const damaged = Buffer.from(blob.content!);
        damaged[offset] ^= 0x5a;
        await database.db.updateTable('blobs').set({ content: damaged }).where('id', '=', blob.id).execute();
        for (const range of [undefined, 'bytes=10-20']) {
          const res = await download(app, user, file.id, range ? { range } : {});
          assert.equal(res.statusCode, 500, `offset ${offset}, range ${range}`);
          assert.equal(res.json().code, 'CONTENT_INTEGRITY');
        }
      }
    });

    it("the sealed link route returns the row's ciphertext, which the link key opens", async (t) => {
      const { app, database, user, root } = await inlineBlobsFixture(t);
      const data = randomBytes(7000);
      const file = await putFile(app, user, root, 'shared.bin', data);
      const link = (await user.api.post(`/api/files/share/${file.id}`, {})).body.data.shareLink as string;
      const [, hash, key] = /\/s\/([A-Za-z0-9_-]+)#([A-Za-z0-9_-]{43})$/.exec(link)!;
      const res = await app.inject({
        method: 'POST',
        url: `/api/files/download/public/${hash}/sealed`,
        payload: { keyProof: keyProofOf(Buffer.from(key, 'base64url')) },
      });
      assert.equal(res.statusCode, 200, res.body);
      assert.ok(res.rawPayload.equals((await blobRowOf(database, file.id)).content!));
      const wraps = String(res.headers['x-coffre-key-chain']).split(',');
      const ids = String(res.headers['x-coffre-key-ids']).split(',');
      let k: Buffer = Buffer.from(key, 'base64url');
      for (let i = 0; i < wraps.length; i++) k = unwrapKey(k, wraps[i], ids[i]);
      assert.ok(openSealed(k, res.rawPayload).equals(data));
    });
  });
}
