import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { buffer } from 'node:stream/consumers';
import { BlobNotFoundError, NotLocalFilesError, type BlobStore } from '../../src/blobs/blob-store.js';
import { newBlobKey } from '../../src/blobs/blob-keys.js';
import { chunksOf } from '../support/chunks.js';

const MIB = 1024 * 1024;

/**
 * The staged writes of the BlobStore contract (resumable uploads: beginStaging, openStaging,
 * openStagingFile, completeStaging, abortStaging), run by blobStoreContract for every store. The sizes cross S3's
 * 5 MiB part size twice and leave a remainder, so a multipart store uploads several parts and
 * keeps pending bytes between writers.
 */
export function stagingContract(name: string, make: (t: TestContext) => Promise<{ store: BlobStore; listAll: () => Promise<string[]> }>) {
  describe(`BlobStore staging contract: ${name}`, () => {
    it('shows nothing under the key until completed, then exactly the committed bytes (writes after a commit are superseded)', async (t) => {
      const { store, listAll } = await make(t);
      const key = newBlobKey();
      const data = randomBytes(11 * MIB + 123);
      let state = await store.beginStaging(key);
      assert.equal(await store.exists(key), false, 'nothing under the key once begun');
      await assert.rejects(store.get(key), BlobNotFoundError);

      // Three writers, each from the state the one before committed; the second also writes
      // bytes it never commits (6 MiB: a part's worth on a multipart store), which the third,
      // opened from the same state, writes over with the real ones.
      state = await append(store, key, state, [data.subarray(0, 1000), Buffer.alloc(0), data.subarray(1000, 3 * MIB)]);
      assert.equal(await store.exists(key), false);
      const writer = await store.openStaging(key, state);
      await writer.write(chunksOf(data.subarray(3 * MIB, 7 * MIB), 777_777));
      state = await writer.commit();
      await writer.write([randomBytes(4 * MIB), randomBytes(2 * MIB)]);
      await writer.close();
      assert.equal(await store.exists(key), false);
      state = await append(store, key, state, chunksOf(data.subarray(7 * MIB), MIB));
      // A writer that commits nothing new leaves the state as it was.
      state = await append(store, key, state, []);
      assert.equal(await store.exists(key), false, 'nothing under the key before completeStaging');

      const { size } = await store.completeStaging(key, state);
      assert.equal(size, data.length);
      assert.equal(await store.exists(key), true);
      assert.ok((await buffer(await store.get(key))).equals(data), 'the blob is exactly the committed bytes');
      const left = await listAll();
      assert.equal(left.length, 1, `only the blob is left, not its staging: ${left.join(', ')}`);
      assert.ok(left[0].endsWith(key));
    });

    it('completes an empty staging, and one with bytes only before its first commit', async (t) => {
      const { store } = await make(t);
      const empty = newBlobKey();
      assert.equal((await store.completeStaging(empty, await store.beginStaging(empty))).size, 0);
      assert.equal((await buffer(await store.get(empty))).length, 0);

      const small = newBlobKey();
      const data = randomBytes(70_000);
      const state = await append(store, small, await store.beginStaging(small), [data]);
      assert.equal((await store.completeStaging(small, state)).size, data.length);
      assert.ok((await buffer(await store.get(small))).equals(data));
    });

    it('abortStaging removes the staging and its bytes; a staging aborted or never begun does not open', async (t) => {
      const { store, listAll } = await make(t);
      const key = newBlobKey();
      const begun = await store.beginStaging(key);
      const state = await append(store, key, begun, [randomBytes(6 * MIB + 5)]);
      await store.abortStaging(key, state);
      assert.equal(await store.exists(key), false);
      assert.deepEqual(await listAll(), [], 'no staged bytes are left');
      await store.abortStaging(key, state);
      await assert.rejects(store.openStaging(key, state), BlobNotFoundError);
      await assert.rejects(store.completeStaging(key, state), BlobNotFoundError);
      await assert.rejects(store.openStaging(key, begun), BlobNotFoundError);

      // Another staging's state does not open a key that was never begun.
      const other = newBlobKey();
      const otherState = await append(store, other, await store.beginStaging(other), [randomBytes(1000)]);
      await assert.rejects(store.openStaging(newBlobKey(), otherState), BlobNotFoundError);
      await store.abortStaging(other, otherState);
      assert.deepEqual(await listAll(), []);
    });

    it('openStagingFile hands out the staging file from where the state ends when blobs are local files, and fails with NotLocalFilesError otherwise', async (t) => {
      const { store } = await make(t);
      const key = newBlobKey();
      const data = randomBytes(3 * MIB + 9);
      let state = await append(store, key, await store.beginStaging(key), [data.subarray(0, 1000)]);
      if (!store.localFiles) {
        await assert.rejects(store.openStagingFile(key, state), NotLocalFilesError);
        await store.abortStaging(key, state);
        return;
      }
      const file = await store.openStagingFile(key, state);
      try {
        assert.equal(file.position, 1000);
        // Out of order, as writes at explicit offsets from several threads may land.
        const half = 1000 + MIB;
        fs.writeSync(file.fd, data, half, data.length - half, half);
        fs.writeSync(file.fd, data, 1000, half - 1000, 1000);
        file.wrote(half - 1000);
        file.wrote(data.length - half);
        const committed = file.commit();
        state = committed.state;
        await committed.durable;
      } finally {
        await file.close();
      }
      // Bytes written and never told to `wrote` are not staged: the next writer goes over them.
      const abandoned = await store.openStagingFile(key, state);
      fs.writeSync(abandoned.fd, randomBytes(5000), 0, 5000, abandoned.position);
      await abandoned.close();
      state = await append(store, key, state, [Buffer.from('end')]);
      assert.equal((await store.completeStaging(key, state)).size, data.length + 3);
      assert.ok((await buffer(await store.get(key))).equals(Buffer.concat([data, Buffer.from('end')])));
      await assert.rejects(store.openStagingFile(newBlobKey(), state), BlobNotFoundError);
    });

    it('removeStaleUploads leaves a staging whose key it is told to keep usable', async (t) => {
      const { store } = await make(t);
      const key = newBlobKey();
      const data = randomBytes(6 * MIB + 77);
      let state = await append(store, key, await store.beginStaging(key), [data.subarray(0, 5 * MIB + 1)]);
      assert.ok((await store.removeStaleUploads(0, new Set([key]))) >= 0);
      state = await append(store, key, state, [data.subarray(5 * MIB + 1)]);
      assert.ok((await store.removeStaleUploads(0, new Set([key]))) >= 0);
      assert.equal((await store.completeStaging(key, state)).size, data.length);
      assert.ok((await buffer(await store.get(key))).equals(data));
    });
  });
}

/** One writer: appends the chunks after `state`, commits and closes; resolves with the new state. */
async function append(store: BlobStore, key: string, state: string, chunks: Buffer[]): Promise<string> {
  const writer = await store.openStaging(key, state);
  try {
    await writer.write(chunks);
    return await writer.commit();
  } finally {
    await writer.close();
  }
}
