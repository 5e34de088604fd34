// When a tus PATCH's bytes are recorded (issue 32): a PATCH that follows another on the same
// instance answers before its bytes are durable, so the upload's row stays a request behind until
// the next one; HEAD on that instance tells the latest offset, HEAD anywhere else (or after a
// restart) the row's, and a client resuming from either gets exactly the bytes it sent.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { DIALECTS, type TestApp } from '../../helper.js';
import {
  SEGMENT,
  assertResumable,
  assertTus,
  createdUpload,
  tusClient,
  tusSetup,
  uploadIdOf,
  withSecondInstance,
  type TusInjectClient,
} from '../../support/tus-inject.js';

async function rowReceived(test: TestApp, url: string): Promise<number> {
  const row = await test.database.db
    .selectFrom('resumable_uploads')
    .select('received')
    .where('id', '=', uploadIdOf(url))
    .executeTakeFirstOrThrow();
  return Number(row.received);
}

async function headOffset(tus: TusInjectClient, url: string): Promise<number> {
  const head = await tus.head(url);
  assertTus(head, 200);
  return Number(head.headers['upload-offset']);
}

/** PATCHes `data` from `from` to `to`; asserts the answer's offset. */
async function patched(tus: TusInjectClient, url: string, data: Buffer, from: number, to: number): Promise<void> {
  const res = await tus.patch(url, from, data.subarray(from, to));
  assertTus(res, 204, undefined, `PATCH ${from}–${to}`);
  assert.equal(res.headers['upload-offset'], String(to));
}

for (const dialect of DIALECTS) {
  describe(`tus PATCH durability [${dialect}]`, () => {
    it('the row follows a request behind on the instance that answered; the upload finishes there with the bytes sent', async (t) => {
      const test = await tusSetup(t, dialect);
      const { tus, folderId } = test;
      const data = randomBytes(5 * SEGMENT + 99);
      const url = await createdUpload(tus, folderId, 'ahead.bin', data.length);
      await patched(tus, url, data, 0, SEGMENT);
      assert.equal(await rowReceived(test, url), SEGMENT, 'the first PATCH here waits for its bytes and records them');
      await patched(tus, url, data, SEGMENT, 2 * SEGMENT + 10);
      assert.equal(await rowReceived(test, url), SEGMENT, 'the next answers first: its row waits');
      assert.equal(await headOffset(tus, url), 2 * SEGMENT + 10, 'HEAD here tells where the upload stands');
      assert.equal((await tus.list()).find((upload) => url.endsWith(upload.id))?.offset, 2 * SEGMENT + 10);
      await patched(tus, url, data, 2 * SEGMENT + 10, 4 * SEGMENT);
      assert.equal(await rowReceived(test, url), 2 * SEGMENT + 10, 'the row now holds the previous request');
      await assertResumable(tus, url, data, 4 * SEGMENT);
      assert.equal(await rowReceived(test, url), data.length);
    });

    it('another instance (or this one restarted) tells the row’s offset, and the upload resumes from there', async (t) => {
      const test = await tusSetup(t, dialect);
      const { tus, folderId, user } = test;
      const data = randomBytes(4 * SEGMENT + 5);
      const url = await createdUpload(tus, folderId, 'elsewhere.bin', data.length);
      await patched(tus, url, data, 0, SEGMENT + 1);
      await patched(tus, url, data, SEGMENT + 1, 3 * SEGMENT);
      await withSecondInstance(test, async (other) => {
        const elsewhere = tusClient(other, user);
        assert.equal(await headOffset(elsewhere, url), SEGMENT + 1);
        await assertResumable(elsewhere, url, data, SEGMENT + 1);
      });
    });

    it('a client resending from the row’s offset here (told by HEAD elsewhere) is taken at its word', async (t) => {
      const test = await tusSetup(t, dialect);
      const { tus, folderId } = test;
      const data = randomBytes(3 * SEGMENT + 17);
      const url = await createdUpload(tus, folderId, 'back.bin', data.length);
      await patched(tus, url, data, 0, 100);
      await patched(tus, url, data, 100, 2 * SEGMENT);
      assertTus(await tus.patch(url, 2 * SEGMENT - 1, data.subarray(2 * SEGMENT - 1)), 409, 'UPLOAD_OFFSET_MISMATCH');
      await patched(tus, url, data, 100, SEGMENT + 3);
      assert.equal(await headOffset(tus, url), SEGMENT + 3);
      await assertResumable(tus, url, data, SEGMENT + 3);
    });
  });
}
