import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import fs from 'node:fs';
import { BlobNotFoundError, NotLocalFilesError, type BlobStore } from '../../src/blobs/blob-store.js';
import { newBlobKey } from '../../src/blobs/blob-keys.js';
import { stagingContract } from './staging.contract.js';

/**
 * The contract every BlobStore passes (run by one test file per store). `make` returns a fresh
 * store and a function that lists every stored object, temp files included, to check that
 * failed writes leave nothing behind.
 */
export function blobStoreContract(
  name: string,
  make: (t: import('node:test').TestContext) => Promise<{ store: BlobStore; listAll: () => Promise<string[]> }>,
) {
  describe(`BlobStore contract: ${name}`, () => {
    it('puts and gets back the same bytes, and reports the size', async (t) => {
      const { store } = await make(t);
      for (const size of [0, 1, 65536, 3 * 1024 * 1024 + 7]) {
        const key = newBlobKey();
        const data = randomBytes(size);
        const { size: stored } = await store.put(key, Readable.from([data]));
        assert.equal(stored, size);
        assert.ok(await store.exists(key));
        assert.deepEqual(await buffer(await store.get(key)), data);
      }
    });

    it('reads byte ranges, inclusive at both ends', async (t) => {
      const { store } = await make(t);
      const key = newBlobKey();
      const data = randomBytes(200_000);
      await store.put(key, Readable.from(chunks(data, 7777)));
      for (const [start, end] of [
        [0, 0],
        [0, 65535],
        [65536, 65536],
        [199_999, 199_999],
        [1000, 150_000],
      ]) {
        assert.deepEqual(await buffer(await store.get(key, { start, end })), data.subarray(start, end + 1), `range ${start}-${end}`);
      }
    });

    it('each chunk read stays unchanged after the read (the store does not reuse its memory)', async (t) => {
      const { store } = await make(t);
      const key = newBlobKey();
      const data = randomBytes(3 * 1024 * 1024 + 5);
      await store.put(key, Readable.from([data]));
      const seen: Buffer[] = [];
      const copies: Buffer[] = [];
      for await (const chunk of await store.get(key)) {
        seen.push(chunk);
        copies.push(Buffer.from(chunk));
      }
      assert.deepEqual(Buffer.concat(copies), data);
      // Chunks read earlier still hold their bytes: the store did not reuse their memory.
      seen.forEach((chunk, i) => assert.ok(chunk.equals(copies[i]), `chunk ${i} changed after it was read`));
    });

    it('putFile and openFile work as documented when blobs are local files, and fail with NotLocalFilesError otherwise', async (t) => {
      const { store, listAll } = await make(t);
      const key = newBlobKey();
      const data = randomBytes(3 * 1024 * 1024 + 7);
      if (!store.localFiles) {
        await assert.rejects(
          store.putFile(key, async () => assert.fail('the writer must not run')),
          NotLocalFilesError,
        );
        await assert.rejects(store.openFile(key), NotLocalFilesError);
        assert.deepEqual(await listAll(), []);
        return;
      }
      const result = await store.putFile(key, async (file) => {
        // Out of order, as writes at explicit offsets from several threads may land.
        const half = 2 * 1024 * 1024;
        fs.writeSync(file.fd, data, half, data.length - half, half);
        fs.writeSync(file.fd, data, 0, half, 0);
        file.wrote(half);
        file.wrote(data.length - half);
      });
      assert.equal(result.size, data.length);
      assert.ok((await buffer(await store.get(key))).equals(data));
      const handle = await store.openFile(key);
      try {
        const head = Buffer.alloc(100);
        await handle.read(head, 0, 100, 0);
        assert.ok(head.equals(data.subarray(0, 100)));
      } finally {
        await handle.close();
      }
      await assert.rejects(store.openFile(newBlobKey()), BlobNotFoundError);

      const failed = newBlobKey();
      await assert.rejects(
        store.putFile(failed, async (file) => {
          fs.writeSync(file.fd, data, 0, 1024, 0);
          throw new Error('client gone');
        }),
        /client gone/,
      );
      const refused = newBlobKey();
      await assert.rejects(
        store.putFile(refused, async (file) => void fs.writeSync(file.fd, data, 0, 1024, 0), {
          visibleAfter: Promise.reject(new Error('row not recorded')),
        }),
        /row not recorded/,
      );
      assert.equal(await store.exists(failed), false);
      assert.equal(await store.exists(refused), false);
      assert.equal((await listAll()).length, 1, 'only the stored blob is left');
    });

    it('removeStaleUploads keeps what is recent and answers how many it removed; close resolves', async (t) => {
      const { store } = await make(t);
      const key = newBlobKey();
      await store.put(key, Readable.from([randomBytes(1000)]));
      assert.equal(await store.removeStaleUploads(60 * 60 * 1000), 0);
      assert.ok(await store.exists(key));
      await store.close();
    });

    it('shows nothing under the key before visibleAfter resolves, and nothing at all when it rejects', async (t) => {
      const { store, listAll } = await make(t);
      const key = newBlobKey();
      let allow!: () => void;
      const put = store.put(key, Readable.from([randomBytes(1000)]), { visibleAfter: new Promise<void>((resolve) => (allow = resolve)) });
      await new Promise((resolve) => setTimeout(resolve, 50));
      assert.equal(await store.exists(key), false);
      allow();
      assert.equal((await put).size, 1000);
      assert.equal(await store.exists(key), true);

      const refused = newBlobKey();
      await assert.rejects(
        store.put(refused, Readable.from([randomBytes(1000)]), { visibleAfter: Promise.reject(new Error('row not written')) }),
        /row not written/,
      );
      assert.equal(await store.exists(refused), false);
      assert.deepEqual(
        (await listAll()).filter((item) => !item.includes(key)),
        [],
      );
    });

    it('with durableLater, the blob is readable once put resolves, and `durable` (where given) resolves', async (t) => {
      const { store } = await make(t);
      const key = newBlobKey();
      const data = randomBytes(70_000);
      const result = await store.put(key, Readable.from([data]), { durableLater: true });
      assert.equal(result.size, data.length);
      assert.ok(Buffer.concat(await (await store.get(key)).toArray()).equals(data));
      await result.durable;
    });

    it('rejects an unknown key with BlobNotFoundError', async (t) => {
      const { store } = await make(t);
      await assert.rejects(store.get(newBlobKey()), BlobNotFoundError);
      assert.equal(await store.exists(newBlobKey()), false);
    });

    it('deletes, and deleting twice is not an error', async (t) => {
      const { store, listAll } = await make(t);
      const key = newBlobKey();
      await store.put(key, Readable.from([Buffer.from('hello')]));
      await store.delete(key);
      await store.delete(key);
      assert.equal(await store.exists(key), false);
      assert.deepEqual(await listAll(), []);
    });

    it('leaves nothing behind when the source stream fails mid-way', async (t) => {
      const { store, listAll } = await make(t);
      const key = newBlobKey();
      const failing = new Readable({
        read() {
          this.push(randomBytes(100_000));
          this.destroy(new Error('client went away'));
        },
      });
      await assert.rejects(store.put(key, failing), /client went away/);
      assert.equal(await store.exists(key), false);
      assert.deepEqual(await listAll(), []);
    });

    it('refuses keys that are not blob keys (no path tricks)', async (t) => {
      const { store } = await make(t);
      for (const bad of ['../../etc/passwd', 'a/b', '', 'short']) {
        await assert.rejects(async () => store.put(bad, Readable.from([Buffer.from('x')])));
        await assert.rejects(async () => store.get(bad));
      }
    });

    it('answers ping', async (t) => {
      const { store } = await make(t);
      await store.ping();
    });
  });
  stagingContract(name, make);
}

function* chunks(data: Buffer, size: number) {
  for (let i = 0; i < data.length; i += size) yield data.subarray(i, i + size);
}
