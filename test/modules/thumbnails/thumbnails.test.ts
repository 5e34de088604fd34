// Thumbnails (issue 35): made by the background job after an upload, stored encrypted, served to
// whoever may see the file, deleted with it; hostile images fail fast and keep the generic icon.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { describe, it } from 'node:test';
import sharp from 'sharp';
import { collectGarbage } from '../../../src/blobs/blob-collector.js';
import { isoPlus, nowIso } from '../../../src/lib/time.js';
import { makeThumbnails, MAX_ATTEMPTS } from '../../../src/modules/thumbnails/thumbnails.job.js';
import { claimPending, finishClaim } from '../../../src/modules/thumbnails/thumbnails.repository.js';
import { DIALECTS, build, client, signUp, type TestApp } from '../../helper.js';
import { listFiles } from '../../support/disk.js';
import { assertError } from '../../support/errors.js';
import { putFile, rootFolderId } from '../../support/files.js';
import { assertStatus, mkdir } from '../../support/folders.js';
import { davClient } from '../../support/dav.js';
import { contextOf, photo, pngBomb, putTyped } from '../../support/thumbnails.js';

/** Apps whose thumbnails are made only when a test runs the job. */
const NO_WORKER = { config: { thumbnailIntervalSeconds: 0 } };

async function thumbnailRow(test: TestApp, versionId: string) {
  return test.database.db.selectFrom('thumbnails').selectAll().where('version_id', '=', versionId).executeTakeFirst();
}

async function usedBytes(test: TestApp, userId: string): Promise<number> {
  const row = await test.database.db.selectFrom('users').select('used_bytes').where('id', '=', userId).executeTakeFirstOrThrow();
  return Number(row.used_bytes);
}

for (const dialect of DIALECTS) {
  describe(`thumbnails [${dialect}]`, () => {
    it('makes a small encrypted thumbnail of an uploaded photo, outside the quota, served with a cache key', async (t) => {
      const test = await build(t, dialect, NO_WORKER);
      const user = await signUp(test.app);
      const root = await rootFolderId(user);
      const file = await putTyped(test.app, user, root, 'photo.jpg', 'image/jpeg', await photo());
      const text = await putFile(test.app, user, root, 'notes.txt', 'plain words');
      assert.equal((await thumbnailRow(test, file.currentVersionId))?.state, 'pending');
      const rows = await test.database.db.selectFrom('thumbnails').select('file_id').execute();
      assert.deepEqual(
        rows.map((r) => r.file_id),
        [file.id],
        'a text file waits for no thumbnail',
      );
      assertError(await user.api.get(`/api/files/thumbnail/${file.id}`), 404, 'THUMBNAIL_PENDING', 'not made yet');

      const used = await usedBytes(test, user.id);
      assert.deepEqual(await makeThumbnails(await contextOf(test)), { made: 1, failed: 0 });
      assert.equal(await usedBytes(test, user.id), used, 'a thumbnail counts in no quota');

      const res = await test.app.inject({
        url: `/api/files/thumbnail/${file.id}?v=${file.currentVersionId}`,
        headers: { authorization: `Bearer ${user.token}` },
      });
      assert.equal(res.statusCode, 200);
      assert.equal(res.headers['content-type'], 'image/webp');
      assert.equal(res.headers['cache-control'], 'private, max-age=31536000, immutable');
      assert.equal(res.headers.etag, `"${file.currentVersionId}"`);
      assert.equal(res.headers['x-content-type-options'], 'nosniff');
      assert.match(String(res.headers['content-security-policy']), /sandbox/);
      const meta = await sharp(res.rawPayload).metadata();
      assert.deepEqual([meta.format, meta.width, meta.height], ['webp', 256, 192]);
      // Without the version in the address the answer may change: caches ask again.
      const current = await test.app.inject({ url: `/api/files/thumbnail/${file.id}`, headers: { authorization: `Bearer ${user.token}` } });
      assert.equal(current.headers['cache-control'], 'private, no-cache');
      assert.ok(current.rawPayload.equals(res.rawPayload));
      const again = await test.app.inject({
        url: `/api/files/thumbnail/${file.id}?v=${file.currentVersionId}`,
        headers: { authorization: `Bearer ${user.token}`, 'if-none-match': `"${file.currentVersionId}"` },
      });
      assert.equal(again.statusCode, 304);
      // Nowhere on disk in clear (the blobs, and the SQLite database where small blobs live).
      const probe = res.rawPayload.subarray(res.rawPayload.length >> 1, (res.rawPayload.length >> 1) + 32);
      const onDisk = listFiles(test.config.dataDir);
      assert.ok(onDisk.length > 0);
      for (const path of onDisk) assert.ok(!fs.readFileSync(path).includes(probe), `${path} holds the thumbnail in clear`);
      assertError(await user.api.get(`/api/files/thumbnail/${text.id}`), 404, 'THUMBNAIL_NOT_FOUND');
    });

    it("judges a file stored with a generic type by its name's extension (raw and WebDAV PUTs)", async (t) => {
      const test = await build(t, dialect, NO_WORKER);
      const user = await signUp(test.app);
      const root = await rootFolderId(user);
      const png = await sharp(await photo(400, 300))
        .png()
        .toBuffer();
      const octet = await putTyped(test.app, user, root, 'photo.jpg', 'application/octet-stream', await photo(400, 300));
      // No Content-Type at all: stored as application/octet-stream; the extension's case does not matter.
      const untyped = await test.app.inject({
        method: 'PUT',
        url: `/api/files/upload/${root}?name=shot.PNG`,
        headers: { authorization: `Bearer ${user.token}` },
        payload: png,
      });
      assert.equal(untyped.statusCode, 201, untyped.body);
      assert.equal(untyped.json().data.contentType, 'application/octet-stream', 'the stored type stays as given');
      // WebDAV keeps a type other than application/octet-stream as given, generic as it is.
      const dav = davClient(test.app, user);
      const put = await dav('PUT', 'default/dav.jpeg', { body: await photo(300, 300), headers: { 'content-type': 'binary/octet-stream' } });
      assert.equal(put.statusCode, 201, put.body);
      // A name that lies: the job tries, sharp refuses, the file keeps the generic icon.
      const liar = await putTyped(test.app, user, root, 'notes.jpg', 'application/octet-stream', Buffer.from('plain words'));
      await putTyped(test.app, user, root, 'data.bin', 'application/octet-stream', await photo(100, 100));
      await putTyped(test.app, user, root, 'page.jpg', 'text/html', Buffer.from('<p>not generic</p>'));

      const rows = await test.database.db
        .selectFrom('thumbnails')
        .innerJoin('files', 'files.id', 'thumbnails.file_id')
        .select('files.name')
        .execute();
      assert.deepEqual(
        rows.map((r) => r.name).sort(),
        ['dav.jpeg', 'notes.jpg', 'photo.jpg', 'shot.PNG'],
        'a generic type with an image extension waits for a thumbnail; another extension, or a type that is not generic, does not',
      );
      assert.deepEqual(await makeThumbnails(await contextOf(test)), { made: 3, failed: 1 });
      for (const id of [octet.id, untyped.json().data.id]) assert.equal((await user.api.get(`/api/files/thumbnail/${id}`)).status, 200);
      assertError(await user.api.get(`/api/files/thumbnail/${liar.id}`), 404, 'THUMBNAIL_NOT_FOUND');
    });

    it('serves a thumbnail to a viewer without the download right, and to nobody else', async (t) => {
      const test = await build(t, dialect, NO_WORKER);
      const [owner, viewer, stranger] = [
        await signUp(test.app, 'Owner'),
        await signUp(test.app, 'Viewer'),
        await signUp(test.app, 'Stranger'),
      ];
      const shared = await mkdir(owner, 'Shared');
      const file = await putTyped(
        test.app,
        owner,
        shared,
        'p.png',
        'image/png',
        await sharp(await photo(800, 600))
          .png()
          .toBuffer(),
      );
      assertStatus(
        await owner.api.post(`/api/folders/share-users/${shared}`, { users: [{ userId: viewer.id, canView: true, canDownload: false }] }),
        201,
      );
      await makeThumbnails(await contextOf(test));
      assert.notEqual((await viewer.api.get(`/api/files/download/${file.id}`)).status, 200, 'the viewer may not download');
      assert.equal((await viewer.api.get(`/api/files/thumbnail/${file.id}`)).status, 200);
      assertError(await stranger.api.get(`/api/files/thumbnail/${file.id}`), 404, 'FILE_NOT_FOUND');
      assertError(await client(test.app).get(`/api/files/thumbnail/${file.id}`), 401, 'UNAUTHENTICATED');
    });

    it('gives a new version its own thumbnail and deletes thumbnails with their file', async (t) => {
      const test = await build(t, dialect, NO_WORKER);
      const user = await signUp(test.app);
      const root = await rootFolderId(user);
      const first = await putTyped(test.app, user, root, 'p.jpg', 'image/jpeg', await photo(400, 300));
      const second = await putTyped(test.app, user, root, 'p.jpg', 'image/jpeg', await photo(300, 400));
      assert.equal(second.id, first.id);
      assert.notEqual(second.currentVersionId, first.currentVersionId);
      const ctx = await contextOf(test);
      assert.deepEqual(await makeThumbnails(ctx), { made: 2, failed: 0 });
      const sizeOf = async (v: string) => {
        const res = await test.app.inject({
          url: `/api/files/thumbnail/${first.id}?v=${v}`,
          headers: { authorization: `Bearer ${user.token}` },
        });
        const meta = await sharp(res.rawPayload).metadata();
        return [meta.width, meta.height];
      };
      assert.deepEqual(await sizeOf(first.currentVersionId), [256, 192]);
      assert.deepEqual(await sizeOf(second.currentVersionId), [192, 256]);

      const thumbBlobs = (await test.database.db.selectFrom('thumbnails').select('blob_id').execute()).map((r) => r.blob_id!);
      assert.equal(thumbBlobs.length, 2);
      assertStatus(await user.api.delete(`/api/files/delete/${first.id}?trash=hard`), 200);
      assert.equal((await test.database.db.selectFrom('thumbnails').selectAll().execute()).length, 0);
      await collectGarbage(test.database, ctx.blobs);
      const left = await test.database.db.selectFrom('blobs').select('id').where('id', 'in', thumbBlobs).execute();
      assert.deepEqual(left, [], "the thumbnails' blobs are collected");
    });

    it('deletes the thumbnail of a file purged from the trash', async (t) => {
      const test = await build(t, dialect, NO_WORKER);
      const user = await signUp(test.app);
      const file = await putTyped(test.app, user, await rootFolderId(user), 'p.jpg', 'image/jpeg', await photo(400, 300));
      await makeThumbnails(await contextOf(test));
      const row = await thumbnailRow(test, file.currentVersionId);
      assert.equal(row?.state, 'done');
      assertStatus(await user.api.delete(`/api/files/delete/${file.id}`), 200);
      assert.equal((await thumbnailRow(test, file.currentVersionId))?.state, 'done', 'kept while the file is in the trash');
      assertStatus(await user.api.delete('/api/trash/empty'), 200);
      assert.equal(await thumbnailRow(test, file.currentVersionId), undefined);
      const blob = await test.database.db.selectFrom('blobs').select('ref_count').where('id', '=', row!.blob_id!).executeTakeFirst();
      assert.ok(!blob || Number(blob.ref_count) === 0, 'its blob is no longer referenced');
    });

    it('fails a decompression bomb and a truncated JPEG quickly; the server and the files are fine', async (t) => {
      const test = await build(t, dialect, NO_WORKER);
      const user = await signUp(test.app);
      const root = await rootFolderId(user);
      const bomb = pngBomb();
      assert.ok(bomb.length < 64 * 1024, 'the bomb is small');
      const jpeg = await photo(2000, 1500);
      const truncated = jpeg.subarray(0, jpeg.length >> 1);
      const bombFile = await putTyped(test.app, user, root, 'bomb.png', 'image/png', bomb);
      const cutFile = await putTyped(test.app, user, root, 'cut.jpg', 'image/jpeg', truncated);
      const started = Date.now();
      assert.deepEqual(await makeThumbnails(await contextOf(test)), { made: 0, failed: 2 });
      assert.ok(Date.now() - started < 5000, `took ${Date.now() - started} ms`);
      for (const [file, data] of [
        [bombFile, bomb],
        [cutFile, truncated],
      ] as const) {
        assert.equal((await thumbnailRow(test, file.currentVersionId))?.state, 'failed');
        assertError(await user.api.get(`/api/files/thumbnail/${file.id}`), 404, 'THUMBNAIL_NOT_FOUND');
        const download = await test.app.inject({
          url: `/api/files/download/${file.id}`,
          headers: { authorization: `Bearer ${user.token}` },
        });
        assert.equal(download.statusCode, 200);
        assert.ok(download.rawPayload.equals(data));
      }
      assert.equal((await client(test.app).get('/healthz')).status, 200);
    });

    it('claims again a row whose lease ran out (a crash), and the late job records nothing', async (t) => {
      const test = await build(t, dialect, NO_WORKER);
      const user = await signUp(test.app);
      const file = await putTyped(test.app, user, await rootFolderId(user), 'p.jpg', 'image/jpeg', await photo(400, 300));
      const { db } = test.database;
      const now = nowIso();
      const [crashed] = await claimPending(db, now, isoPlus(now, 60_000), 10, test.database.capabilities.skipLocked);
      assert.equal(crashed.versionId, file.currentVersionId);
      const ctx = await contextOf(test);
      assert.deepEqual(await makeThumbnails(ctx), { made: 0, failed: 0 }, 'a held row is left alone');
      // The instance holding it died: its lease runs out.
      await db
        .updateTable('thumbnails')
        .set({ claimed_until: isoPlus(now, -1000) })
        .execute();
      crashed.claimedUntil = isoPlus(now, -1000);
      assert.deepEqual(await makeThumbnails(ctx), { made: 1, failed: 0 });
      assert.equal((await thumbnailRow(test, file.currentVersionId))?.attempts, 2);
      assert.equal(await finishClaim(db, crashed, nowIso()), false, 'the first claim no longer holds');
      assert.equal((await thumbnailRow(test, file.currentVersionId))?.state, 'done');
    });

    it('fails a row the job crashed on each time', async (t) => {
      const test = await build(t, dialect, NO_WORKER);
      const user = await signUp(test.app);
      const file = await putTyped(test.app, user, await rootFolderId(user), 'p.jpg', 'image/jpeg', await photo(400, 300));
      await test.database.db.updateTable('thumbnails').set({ attempts: MAX_ATTEMPTS }).execute();
      assert.deepEqual(await makeThumbnails(await contextOf(test)), { made: 0, failed: 1 });
      assert.equal((await thumbnailRow(test, file.currentVersionId))?.state, 'failed');
    });

    it('never makes a thumbnail twice when two jobs run at once', async (t) => {
      const test = await build(t, dialect, NO_WORKER);
      const user = await signUp(test.app);
      const root = await rootFolderId(user);
      for (let i = 0; i < 8; i++) await putTyped(test.app, user, root, `p${i}.jpg`, 'image/jpeg', await photo(400 + i, 300));
      const [a, b] = [await contextOf(test), await contextOf(test)];
      const rounds = await Promise.all([makeThumbnails(a), makeThumbnails(b)]);
      assert.equal(rounds[0].made + rounds[1].made, 8);
      const rows = await test.database.db.selectFrom('thumbnails').selectAll().execute();
      assert.deepEqual(
        rows.map((r) => [r.state, r.attempts]),
        rows.map(() => ['done', 1]),
      );
      const thumbBlobs = await test.database.db
        .selectFrom('blobs')
        .select('id')
        .where(
          'id',
          'in',
          rows.map((r) => r.blob_id!),
        )
        .execute();
      assert.equal(thumbBlobs.length, 8);
      assert.equal((await test.database.db.selectFrom('blobs').select('id').execute()).length, 16, 'no blob of a second thumbnail is left');
    });
  });
}
