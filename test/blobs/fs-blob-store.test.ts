import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { describe, it } from 'node:test';
import { newBlobKey } from '../../src/blobs/blob-keys.js';
import { nodeFsDurableFiles } from '../../src/blobs/fs/durable-files.js';
import { nativeEngine } from '../../src/content/native-engine.js';
import { requireNativeAddon } from '../support/native.js';
import { FsBlobStore } from '../../src/blobs/fs/fs-blob-store.js';
import { blobStoreContract } from './blob-store.contract.js';
import { listFiles } from '../support/disk.js';
import { eventually } from '../support/wait.js';

/** A fresh store folder, removed after the test. */
function tempRoot(t: { after(fn: () => void): void }): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'coffre-blobs-'));
  t.after(() => fs.rmSync(root, { recursive: true, force: true }));
  return root;
}

// Small blobs are written by the native engine's jobs or through node:fs: both run the contract.
for (const [name, files] of [
  ['native files', nativeEngine(requireNativeAddon()).durableFiles],
  ['node:fs files', nodeFsDurableFiles],
] as const) {
  blobStoreContract(`fs (${name})`, async (t) => {
    const root = tempRoot(t);
    return { store: new FsBlobStore(root, { files }), listAll: async () => listFiles(root) };
  });
}

describe('FsBlobStore write-behind', () => {
  it('keeps every byte of a put whose data is synced in the background as it is written, and fails a body that breaks mid-way cleanly', async (t) => {
    const root = tempRoot(t);
    // A background fdatasync after every 1 MiB batch: many of them overlap the writes.
    const store = new FsBlobStore(root, { writeBehindBytes: 1 });
    const data = randomBytes(24 * 1024 * 1024 + 3);
    const key = newBlobKey();
    assert.equal((await store.put(key, Readable.from(chunks(data, 64 * 1024)))).size, data.length);
    assert.ok(Buffer.concat(await (await store.get(key)).toArray()).equals(data));

    async function* breaking() {
      yield* chunks(data.subarray(0, 5 * 1024 * 1024), 64 * 1024);
      throw new Error('client gone');
    }
    const broken = newBlobKey();
    await assert.rejects(store.put(broken, Readable.from(breaking())), /client gone/);
    assert.equal(await store.exists(broken), false);
    assert.deepEqual(fs.readdirSync(path.join(root, 'tmp')), [], 'the temp file is removed');
  });
});

describe('FsBlobStore small blobs', () => {
  it('removes what a failed small-file write left, and keeps nothing under the key', async (t) => {
    const root = tempRoot(t);
    const diskFull = {
      async writeFileDurably(file: string) {
        fs.writeFileSync(file, 'half');
        throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
      },
      syncDirectory: nodeFsDurableFiles.syncDirectory,
    };
    const store = new FsBlobStore(root, { files: diskFull });
    const key = newBlobKey();
    await assert.rejects(store.put(key, Readable.from([Buffer.from('small body')])), { code: 'ENOSPC' });
    assert.equal(await store.exists(key), false);
    assert.deepEqual(fs.readdirSync(path.join(root, 'tmp')), [], 'the half-written temp file is removed');
  });
});

describe('FsBlobStore durableLater', () => {
  it('resolves a put once the blob is under its key, with `durable` settling on the directory sync; without it, the put waits for the sync', async (t) => {
    const root = tempRoot(t);
    const pending: { resolve: () => void; reject: (error: Error) => void }[] = [];
    const store = new FsBlobStore(root, { syncDirectory: () => new Promise<void>((resolve, reject) => pending.push({ resolve, reject })) });
    const settled = async (promise: Promise<unknown>) => {
      let done = false;
      void promise.then(
        () => (done = true),
        () => (done = true),
      );
      await new Promise((resolve) => setTimeout(resolve, 20));
      return done;
    };
    // The next directory sync the store asks for, once it has asked (a loaded machine may take
    // longer than any fixed pause to get there).
    const nextSync = () => eventually(() => pending.shift() ?? assert.fail('no directory sync asked for yet'));

    // All three keys share their directories (keys of the same 10 s do): the later puts then need
    // one sync each. Keys made apart could fall on both sides of a 10 s boundary, and a new
    // directory's parent syncs would then take the one this test releases.
    const now = Date.now();
    const key = newBlobKey(now);
    // The key's directories are new: their creation waits for syncs of their parents first.
    const first = store.put(key, Readable.from([Buffer.from('first')]), { durableLater: true });
    while (!(await settled(first))) pending.shift()?.resolve();
    const { size, durable } = await first;
    assert.equal(size, 5);
    assert.ok(durable, 'a durable promise is given');
    assert.ok(Buffer.concat(await (await store.get(key)).toArray()).equals(Buffer.from('first')), 'readable before it is durable');
    assert.equal(await settled(durable!), false, 'durable waits for the directory sync');
    (await nextSync()).resolve();
    await durable;

    const waiting = store.put(newBlobKey(now), Readable.from([Buffer.from('second')]));
    assert.equal(await settled(waiting), false, 'without durableLater the put itself waits');
    (await nextSync()).resolve();
    assert.deepEqual(await waiting, { size: 6 });

    const failing = await store.put(newBlobKey(now), Readable.from([Buffer.from('third')]), { durableLater: true });
    (await nextSync()).reject(new Error('disk gone'));
    await assert.rejects(failing.durable!, /disk gone/);
  });
});

describe('FsBlobStore staging', () => {
  it('keeps a staging as one file under staging/, which removeStaleUploads never touches, until it is completed', async (t) => {
    const root = tempRoot(t);
    const store = new FsBlobStore(root);
    const key = newBlobKey();
    const data = randomBytes(300_000);
    const writer = await store.openStaging(key, await store.beginStaging(key));
    await writer.write([data]);
    const state = await writer.commit();
    await writer.close();
    assert.deepEqual(fs.readdirSync(path.join(root, 'staging')), [key]);
    // Even without `keep`: the fs store leaves stagings to their uploads.
    await store.removeStaleUploads(0);
    assert.deepEqual(fs.readdirSync(path.join(root, 'staging')), [key]);
    assert.equal((await store.completeStaging(key, state)).size, data.length);
    assert.deepEqual(fs.readdirSync(path.join(root, 'staging')), []);
    assert.ok(Buffer.concat(await (await store.get(key)).toArray()).equals(data));
  });
});

function* chunks(data: Buffer, size: number) {
  for (let at = 0; at < data.length; at += size) yield data.subarray(at, at + size);
}
