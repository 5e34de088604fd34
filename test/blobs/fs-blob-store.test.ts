import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { describe, it } from 'node:test';
import { newBlobKey } from '../../src/blobs/blob-keys.js';
import { FsBlobStore } from '../../src/blobs/fs/fs-blob-store.js';
import { blobStoreContract } from './blob-store.contract.js';

function listFiles(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? listFiles(path.join(dir, e.name)) : [path.join(dir, e.name)]));
}

blobStoreContract('fs', async (t) => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'coffre-blobs-'));
  t.after(() => fs.rmSync(root, { recursive: true, force: true }));
  return { store: new FsBlobStore(root), listAll: async () => listFiles(root) };
});

describe('FsBlobStore write-behind', () => {
  it('keeps every byte of a put whose data is synced in the background as it is written, and fails a body that breaks mid-way cleanly', async (t) => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'coffre-blobs-'));
    t.after(() => fs.rmSync(root, { recursive: true, force: true }));
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

function* chunks(data: Buffer, size: number) {
  for (let at = 0; at < data.length; at += size) yield data.subarray(at, at + size);
}
