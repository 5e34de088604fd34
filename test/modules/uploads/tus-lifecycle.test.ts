// A tus upload's life beyond its requests (issue 32): the owner's quota held from creation and
// counted once when the file is made, termination and the listing, the write lease against a
// concurrent PATCH, a PATCH cut midway, and expiry with the upkeep that removes what is left.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { maintenanceRound } from '../../../src/jobs.js';
import { isoPlus, nowIso } from '../../../src/lib/time.js';
import { DIALECTS, signUp, type TestApp } from '../../helper.js';
import { putFile, rootFolderId } from '../../support/files.js';
import { listFiles } from '../../support/disk.js';
import { heldNow, upkeepContext } from '../../support/holds.js';
import { connect, listen } from '../../support/raw-http.js';
import {
  OFFSET_STREAM,
  SEGMENT,
  TUS_VERSION,
  assertExpiresInADay,
  assertResumable,
  assertTus,
  createdUpload,
  tusClient,
  tusMetadataHeader as metadata,
  tusSetup,
  uploadIdOf,
  withSecondInstance,
} from '../../support/tus-inject.js';
import { eventually } from '../../support/wait.js';

async function uploadRow(test: TestApp, url: string) {
  return test.database.db.selectFrom('resumable_uploads').selectAll().where('id', '=', uploadIdOf(url)).executeTakeFirst();
}

/** Whether the blob store (the data folder's) still stages the bytes of an upload. */
function staged(test: TestApp, blobId: string): boolean {
  return fs.existsSync(path.join(test.config.dataDir, 'blobs', 'staging', blobId));
}

/** How many bytes the blob store stages for an upload so far (0 before its first segment). */
function stagedBytes(test: TestApp, blobId: string): number {
  const file = path.join(test.config.dataDir, 'blobs', 'staging', blobId);
  return fs.existsSync(file) ? fs.statSync(file).size : 0;
}

/** The head of a PATCH written by hand on a raw connection. */
function patchHead(url: string, token: string, offset: number, length: number): string {
  return (
    `PATCH ${url} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\nTus-Resumable: ${TUS_VERSION}\r\n` +
    `Upload-Offset: ${offset}\r\nContent-Type: ${OFFSET_STREAM}\r\nContent-Length: ${length}\r\n\r\n`
  );
}

for (const dialect of DIALECTS) {
  describe(`tus upload lifecycle [${dialect}]`, () => {
    it('the quota holds an announced length at creation (507 when it cannot) and counts the finished file once', async (t) => {
      const test = await tusSetup(t, dialect, { defaultQuotaBytes: 1_000_000 });
      const { tus, folderId, user } = test;
      const status = async () => (await user.api.get('/api/storage/status')).body.data;
      const meta = (name: string) => metadata({ folderId, filename: name });
      assertTus(await tus.create(meta('too-big.bin'), 1_000_001), 507, 'QUOTA_EXCEEDED');
      assert.deepEqual(await tus.list(), []);
      assert.deepEqual(await heldNow(test.database, user.id), { used: 0, held: 0, rows: [] });

      const data = randomBytes(600_000);
      const url = await createdUpload(tus, folderId, 'held.bin', data.length);
      assert.equal((await status()).in_progress_bytes, 600_000);
      assertTus(await tus.create(meta('second.bin'), 400_001), 507, 'QUOTA_EXCEEDED', 'the hold counts');
      assertTus(await tus.patch(url, 0, data.subarray(0, 300_000)), 204);
      assert.deepEqual(await heldNow(test.database, user.id), { used: 0, held: 600_000, rows: [600_000] }, 'held once, not per PATCH');
      await assertResumable(tus, url, data, 300_000);
      const after = await status();
      assert.equal(after.used_bytes, 600_000);
      assert.equal(after.in_progress_bytes, 0);
      assert.deepEqual(await heldNow(test.database, user.id), { used: 600_000, held: 0, rows: [] }, 'the hold is released');
      assertTus(await tus.create(meta('third.bin'), 400_001), 507, 'QUOTA_EXCEEDED');

      // A deferred upload is held as its bytes come: past the quota is 507 and keeps nothing.
      const rest = randomBytes(400_000);
      const deferred = await createdUpload(tus, folderId, 'deferred.bin', undefined);
      assertTus(await tus.patch(deferred, 0, randomBytes(400_001)), 507, 'QUOTA_EXCEEDED');
      await assertResumable(tus, deferred, rest, 0);
      assert.deepEqual(await heldNow(test.database, user.id), { used: 1_000_000, held: 0, rows: [] });
    });

    it('DELETE terminates an upload (bytes and hold gone, then 404); GET /api/uploads lists the caller’s unfinished ones only', async (t) => {
      const test = await tusSetup(t, dialect);
      const { app, tus, folderId, user } = test;
      const other = tusClient(app, await signUp(app));
      const theirs = await createdUpload(other, await rootFolderId(other.user), 'theirs.bin', 10);
      const cancelled = await createdUpload(tus, folderId, 'cancelled.bin', 100_000);
      assertTus(await tus.patch(cancelled, 0, randomBytes(70_000)), 204);
      const deferred = await createdUpload(tus, folderId, 'deferred.bin', undefined);
      assertTus(await tus.patch(deferred, 0, randomBytes(1000)), 204);
      const whole = randomBytes(3000);
      const done = await tus.create(metadata({ folderId, filename: 'done.bin' }), whole.length, {}, whole);
      assertTus(done, 201);

      const listed = await tus.list();
      assert.deepEqual(listed.map((u) => u.id).sort(), [uploadIdOf(cancelled), uploadIdOf(deferred)].sort());
      const byName = Object.fromEntries(listed.map((u) => [u.name, u]));
      assert.deepEqual(Object.keys(byName['cancelled.bin']).sort(), [
        'createdAt',
        'expiresAt',
        'folderId',
        'id',
        'length',
        'name',
        'offset',
      ]);
      assert.equal(byName['cancelled.bin'].length, 100_000);
      assert.equal(byName['cancelled.bin'].offset, 70_000);
      assert.equal(byName['cancelled.bin'].folderId, folderId);
      assert.equal(byName['deferred.bin'].length, null);
      assert.equal(byName['deferred.bin'].offset, 1000);
      assert.deepEqual(
        (await other.list()).map((u) => u.id),
        [uploadIdOf(theirs)],
      );

      const row = (await uploadRow(test, cancelled))!;
      assert.ok(staged(test, row.blob_id), 'the unfinished upload is staged');
      const removed = await tus.remove(cancelled);
      assertTus(removed, 204);
      assertTus(await tus.head(cancelled), 404);
      assertTus(await tus.patch(cancelled, 70_000, randomBytes(10)), 404, 'UPLOAD_NOT_FOUND');
      assertTus(await tus.remove(cancelled), 404, 'UPLOAD_NOT_FOUND');
      assert.equal(staged(test, row.blob_id), false, 'its bytes are gone');
      assert.deepEqual(
        (await tus.list()).map((u) => u.id),
        [uploadIdOf(deferred)],
      );
      const counters = await heldNow(test.database, user.id);
      assert.equal(counters.rows.length, 1, 'only the deferred upload still holds quota');
      assert.equal(counters.used, whole.length);

      // Terminating a finished upload forgets the upload, not its file.
      const fileId = String(done.headers['coffre-file-id']);
      assertTus(await tus.remove(String(done.headers.location)), 204);
      assert.ok((await tus.download(fileId)).equals(whole));
    });

    it('a PATCH or DELETE on another instance while a PATCH still sends its body is 423 UPLOAD_BUSY; the first then finishes', async (t) => {
      const test = await tusSetup(t, dialect);
      const { app, tus, folderId, user } = test;
      const data = randomBytes(300_000);
      const url = await createdUpload(tus, folderId, 'leased.bin', data.length);
      const connection = await connect(await listen(app));
      await withSecondInstance(test, async (other) => {
        const elsewhere = tusClient(other, user);
        await connection.send(patchHead(url, user.token, 0, data.length));
        await connection.send(data.subarray(0, 150_000));
        await eventually(async () => assert.notEqual((await uploadRow(test, url))!.lock_token, '', 'the first PATCH holds the lease'));
        assertTus(await elsewhere.patch(url, 0, data), 423, 'UPLOAD_BUSY', 'PATCH');
        assertTus(await elsewhere.remove(url), 423, 'UPLOAD_BUSY', 'DELETE');
        const head = await elsewhere.head(url);
        assertTus(head, 200, undefined, 'HEAD is not held up');
        assert.equal(head.headers['upload-offset'], '0');
        await connection.send(data.subarray(150_000));
        const answer = await connection.answer(20_000);
        assert.equal(answer.status, 204, answer.body);
        assert.equal(answer.headers['tus-resumable'], TUS_VERSION);
        assert.equal(answer.headers['upload-offset'], String(data.length));
        assert.ok((await elsewhere.download(answer.headers['coffre-file-id'])).equals(data));
        assert.equal((await elsewhere.head(url)).headers['coffre-file-id'], answer.headers['coffre-file-id']);
      }).finally(() => connection.close());
    });

    it('a newer PATCH on the same instance stops the older one, whose bytes are kept: the newer one learns the offset (409), then resumes', async (t) => {
      const test = await tusSetup(t, dialect);
      const { app, tus, folderId, user } = test;
      // More than one write batch of the store (4 MiB), so that some of it is staged while the rest is awaited.
      const data = randomBytes(6 * 1024 * 1024);
      const sent = 5 * 1024 * 1024;
      const url = await createdUpload(tus, folderId, 'stopped.bin', data.length);
      const connection = await connect(await listen(app));
      try {
        await connection.send(patchHead(url, user.token, 0, data.length));
        await connection.send(data.subarray(0, sent));
        // Until the server has read some of the body, a PATCH at offset 0 would rightly be taken whole.
        const blobId = (await uploadRow(test, url))!.blob_id;
        await eventually(async () => assert.ok(stagedBytes(test, blobId) >= SEGMENT, 'some segments are staged'));
        // The client came back over a new connection, its offset from before the older request.
        assertTus(await tus.patch(url, 0, data), 409, 'UPLOAD_OFFSET_MISMATCH', 'not 423: the older request was stopped');
        const offset = Number((await tus.head(url)).headers['upload-offset']);
        assert.ok(offset >= SEGMENT && offset <= sent, `kept ${offset} of the ${sent} bytes the older request brought`);
        const older = await connection.answer(5000);
        assert.ok(older.closedByServer || older.status === 204, `the older request: ${older.status} ${older.body}`);
        if (older.status === 204) assert.equal(older.headers['upload-offset'], String(offset));
        await assertResumable(tus, url, data, offset);
      } finally {
        connection.close();
      }
    });

    it('a DELETE on the same instance while a PATCH still sends its body stops it and terminates the upload', async (t) => {
      const test = await tusSetup(t, dialect);
      const { app, tus, folderId, user } = test;
      const url = await createdUpload(tus, folderId, 'cancelled.bin', 300_000);
      const blobId = (await uploadRow(test, url))!.blob_id;
      const connection = await connect(await listen(app));
      try {
        await connection.send(patchHead(url, user.token, 0, 300_000));
        await connection.send(randomBytes(150_000));
        await eventually(async () => assert.notEqual((await uploadRow(test, url))!.lock_token, ''));
        assertTus(await tus.remove(url), 204);
        assertTus(await tus.head(url), 404);
        assert.equal(staged(test, blobId), false, 'its bytes are gone');
        assert.deepEqual(await heldNow(test.database, user.id), { used: 0, held: 0, rows: [] });
      } finally {
        connection.close();
      }
    });

    it('an upload begun on one instance is continued and finished on another', async (t) => {
      const test = await tusSetup(t, dialect);
      const { tus, folderId, user } = test;
      const data = randomBytes(3 * SEGMENT + 77);
      const url = await createdUpload(tus, folderId, 'travels.bin', data.length);
      assertTus(await tus.patch(url, 0, data.subarray(0, SEGMENT + 5)), 204);
      await withSecondInstance(test, (other) => assertResumable(tusClient(other, user), url, data, SEGMENT + 5).then(() => {}));
    });

    it('a lease left by a crashed request runs out; each PATCH pushes the expiry of the upload and its hold 24 h ahead', async (t) => {
      const test = await tusSetup(t, dialect);
      const { tus, folderId } = test;
      const db = test.database.db;
      const data = randomBytes(100_000);
      const url = await createdUpload(tus, folderId, 'leases.bin', data.length);
      const id = uploadIdOf(url);
      const soon = isoPlus(nowIso(), 3600_000);
      await db.updateTable('resumable_uploads').set({ expires_at: soon }).where('id', '=', id).execute();
      await db.updateTable('upload_holds').set({ expires_at: soon }).where('id', '=', id).execute();
      const first = await tus.patch(url, 0, data.subarray(0, 10_000));
      assertTus(first, 204);
      assertExpiresInADay(first.headers['upload-expires']);
      const row = (await uploadRow(test, url))!;
      assert.ok(row.expires_at > isoPlus(nowIso(), 23 * 3600_000), `the upload expires at ${row.expires_at}`);
      const hold = await db.selectFrom('upload_holds').select('expires_at').where('id', '=', id).executeTakeFirstOrThrow();
      assert.equal(hold.expires_at, row.expires_at, 'the hold lasts as long as the upload');

      // What a request on an instance that died leaves: a lease that has not run out yet.
      const lease = (until: number) =>
        db
          .updateTable('resumable_uploads')
          .set({ lock_token: 'crashed', locked_until: isoPlus(nowIso(), until) })
          .where('id', '=', id)
          .execute();
      await lease(60_000);
      assertTus(await tus.patch(url, 10_000, data.subarray(10_000)), 423, 'UPLOAD_BUSY');
      await lease(-1000);
      await assertResumable(tus, url, data, 10_000);
    });

    it('a PATCH cut midway keeps what arrived: HEAD tells where to resume', async (t) => {
      const test = await tusSetup(t, dialect);
      const { app, tus, folderId, user } = test;
      const data = randomBytes(300_000);
      const url = await createdUpload(tus, folderId, 'cut.bin', data.length);
      const connection = await connect(await listen(app));
      await connection.send(patchHead(url, user.token, 0, data.length));
      await connection.send(data.subarray(0, 150_000));
      await eventually(async () => assert.notEqual((await uploadRow(test, url))!.lock_token, ''));
      connection.close();
      // The lease is released once the server has kept what it read.
      const row = await eventually(async () => {
        const now = (await uploadRow(test, url))!;
        assert.equal(now.lock_token, '');
        return now;
      });
      // Everything sent is usually kept; how much of what was still buffered when the connection
      // dropped depends on timing, so the test asks HEAD, as a client does.
      const offset = Number(row.received);
      assert.ok(offset <= 150_000, `kept ${offset} bytes of 150000 sent`);
      assert.equal((await tus.head(url)).headers['upload-offset'], String(offset));
      await assertResumable(tus, url, data, offset);
    });

    it('past its expiry an upload is 410 UPLOAD_EXPIRED; the upkeep removes its row, staged bytes and hold', async (t) => {
      const test = await tusSetup(t, dialect);
      const { tus, folderId, user } = test;
      const data = randomBytes(100_000);
      const expiring = await createdUpload(tus, folderId, 'expiring.bin', data.length);
      const live = await createdUpload(tus, folderId, 'live.bin', data.length);
      for (const url of [expiring, live]) assertTus(await tus.patch(url, 0, data.subarray(0, 70_000)), 204);
      const blobId = (await uploadRow(test, expiring))!.blob_id;
      const liveBlobId = (await uploadRow(test, live))!.blob_id;
      assert.ok(staged(test, blobId) && staged(test, liveBlobId));
      assert.deepEqual(await heldNow(test.database, user.id), { used: 0, held: 200_000, rows: [100_000, 100_000] });

      await test.database.db
        .updateTable('resumable_uploads')
        .set({ expires_at: isoPlus(nowIso(), -1000) })
        .where('id', '=', uploadIdOf(expiring))
        .execute();
      assertTus(await tus.patch(expiring, 70_000, data.subarray(70_000)), 410, 'UPLOAD_EXPIRED');
      assertTus(await tus.head(expiring), 410);
      assert.deepEqual(
        (await tus.list()).map((u) => u.name),
        ['live.bin'],
        'an expired upload is no longer offered for resuming',
      );

      await maintenanceRound(upkeepContext(t, test));
      assert.equal(await uploadRow(test, expiring), undefined, 'the row is gone');
      assert.equal(staged(test, blobId), false, 'the staged bytes are gone');
      assert.deepEqual(await heldNow(test.database, user.id), { used: 0, held: 100_000, rows: [100_000] }, 'its hold is released');
      assertTus(await tus.head(expiring), 404);
      assertTus(await tus.patch(expiring, 70_000, data.subarray(70_000)), 404, 'UPLOAD_NOT_FOUND');
      // The live upload is untouched.
      assert.ok(staged(test, liveBlobId));
      await assertResumable(tus, live, data, 70_000);
      assert.deepEqual(await heldNow(test.database, user.id), { used: 100_000, held: 0, rows: [] });
    });

    it('onConflict: a taken name gets a new version by default, a free name with rename, 409 with fail (at creation or at the end)', async (t) => {
      const test = await tusSetup(t, dialect);
      const { app, tus, folderId, user } = test;
      const existing = await putFile(app, user, folderId, 'dup.bin', randomBytes(100));
      const data = randomBytes(5000);
      const upload = async (onConflict?: string) => {
        const meta = metadata({ folderId, filename: 'dup.bin', ...(onConflict ? { onConflict } : {}) });
        return tus.create(meta, data.length, {}, data);
      };
      const versioned = await upload();
      assertTus(versioned, 201);
      assert.equal(versioned.headers['coffre-file-id'], existing.id, 'the same file, a new version');
      assert.equal((await user.api.get(`/api/files/details/${existing.id}`)).body.versionCount, 2);
      const renamed = await upload('rename');
      assertTus(renamed, 201);
      const copy = (await user.api.get(`/api/files/details/${renamed.headers['coffre-file-id']}`)).body;
      assert.notEqual(copy.id, existing.id);
      assert.notEqual(copy.name, 'dup.bin');
      assertTus(await upload('fail'), 409, 'NAME_CONFLICT', 'the name is taken at creation');

      // Free at creation, taken before the last byte: the last PATCH answers 409, and the upload
      // (its bytes, its hold) is gone with it.
      const url = await createdUpload(tus, folderId, 'late.bin', data.length);
      const late = await tus.create(metadata({ folderId, filename: 'late2.bin', onConflict: 'fail' }), data.length);
      assertTus(late, 201);
      const lateUrl = String(late.headers.location);
      assertTus(await tus.patch(lateUrl, 0, data.subarray(0, 1000)), 204);
      await putFile(app, user, folderId, 'late2.bin', randomBytes(10));
      assertTus(await tus.patch(lateUrl, 1000, data.subarray(1000)), 409, 'NAME_CONFLICT');
      assertTus(await tus.head(lateUrl), 404);
      await assertResumable(tus, url, data, 0);
      assert.deepEqual(await heldNow(test.database, user.id), { used: 100 + 3 * data.length + 10, held: 0, rows: [] });
    });

    it('an unfinished upload is ciphertext at rest: its staged segments, its tail row, the data folder', async (t) => {
      const test = await tusSetup(t, dialect);
      const { tus, folderId } = test;
      const marker = `COFFRE-TUS-MARKER-${randomBytes(12).toString('hex')}`;
      const data = Buffer.from(`${marker}\n`.repeat(8000));
      const url = await createdUpload(tus, folderId, 'secret.txt', data.length);
      // Whole segments are staged; the rest of the last one waits in the tail.
      const sent = 2 * SEGMENT + 1000;
      assertTus(await tus.patch(url, 0, data.subarray(0, sent)), 204);
      const needle = Buffer.from(marker);
      const row = (await uploadRow(test, url))!;
      assert.ok(fs.statSync(path.join(test.config.dataDir, 'blobs', 'staging', row.blob_id)).size > 2 * SEGMENT, 'two segments are staged');
      assert.ok(Buffer.from(row.tail, 'base64').length > 1000, 'the tail holds the rest');
      assert.equal(Buffer.from(row.tail, 'base64').indexOf(needle), -1, 'the tail row holds plaintext');
      for (const file of listFiles(test.config.dataDir))
        assert.equal(fs.readFileSync(file).indexOf(needle), -1, `${path.relative(test.config.dataDir, file)} holds plaintext`);
      await assertResumable(tus, url, data, sent);
    });
  });
}
