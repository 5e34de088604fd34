import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, it, type TestContext } from 'node:test';
import { BlobNotFoundError, type BlobStore } from '../../src/blobs/blob-store.js';
import { FsBlobStore } from '../../src/blobs/fs/fs-blob-store.js';
import { S3BlobStore } from '../../src/blobs/s3/s3-blob-store.js';
import { chooseEngine } from '../../src/content/choose-engine.js';
import { createContentStore, type ContentStore, type UploadLimits } from '../../src/content/content-store.js';
import { WHOLE_READ_LIMIT, type CryptoEngine } from '../../src/content/engine.js';
import { CipherFormatError } from '../../src/content/format.js';
import { writeAll } from '../../src/db/write-batch.js';
import { DIALECTS, build } from '../helper.js';
import { tempDir } from '../support/disk.js';
import { requireNativeAddon } from '../support/native.js';
import { startTestS3, type TestS3 } from '../support/s3.js';

// ContentStore.readWhole (src/content/content-store.ts): a small version read whole in one step,
// on both engines, from local files and from S3, is exactly what `open` streams.
requireNativeAddon();
const ENGINES: CryptoEngine[] = [chooseEngine('native'), chooseEngine('node')];
const LIMITS: UploadLimits = { maxBytes: Number.MAX_SAFE_INTEGER, inlineMaxBytes: 0 };
const SIZES = [1, 65_536, 65_537, 400_000, WHOLE_READ_LIMIT];

async function fsContent(t: TestContext, engine: CryptoEngine): Promise<{ content: ContentStore; blobs: BlobStore }> {
  const { database } = await build(t, DIALECTS[0]);
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'coffre-read-whole-'));
  t.after(() => fs.rmSync(root, { recursive: true, force: true }));
  const blobs = new FsBlobStore(root, { files: engine.durableFiles });
  return { content: createContentStore(database.db, blobs, engine), blobs };
}

/** Stores each size as a stream and reads it back whole, into a buffer with room to spare. */
async function readsBackWhole(content: ContentStore, label: string): Promise<void> {
  for (const size of SIZES) {
    const plaintext = randomBytes(size);
    const stored = await content.store(Readable.from([plaintext]), LIMITS);
    const version = { blobId: stored.blobId, size, dataKey: stored.dataKey };
    const out = Buffer.alloc(WHOLE_READ_LIMIT + 10);
    const whole = await content.readWhole(version, out);
    assert.equal(whole.buffer, out.buffer, `${label}, ${size} bytes: read into the given buffer`);
    assert.ok(whole.equals(plaintext), `${label}, ${size} bytes`);
  }
}

for (const engine of ENGINES) {
  describe(`content store whole reads: ${engine.name} engine, local files`, () => {
    it('reads a stored version back whole, up to the limit', async (t) => {
      const { content } = await fsContent(t, engine);
      await readsBackWhole(content, engine.name);
    });

    it('refuses a version over the limit, a missing blob and a damaged one', async (t) => {
      const { content, blobs } = await fsContent(t, engine);
      const plaintext = randomBytes(WHOLE_READ_LIMIT + 1);
      const big = await content.store(Readable.from([plaintext]), LIMITS);
      const out = Buffer.alloc(2 * WHOLE_READ_LIMIT);
      await assert.rejects(content.readWhole({ blobId: big.blobId, size: plaintext.length, dataKey: big.dataKey }, out), RangeError);
      const small = await content.store(Readable.from([randomBytes(1000)]), LIMITS);
      const version = { blobId: small.blobId, size: 1000, dataKey: small.dataKey };
      const file = blobs.filePath(small.blobId);
      const stored = fs.readFileSync(file);
      stored[stored.length - 3] ^= 1;
      fs.writeFileSync(file, stored);
      await assert.rejects(content.readWhole(version, out), CipherFormatError);
      fs.rmSync(file);
      await assert.rejects(content.readWhole(version, out), BlobNotFoundError);
    });
  });
}

for (const dialect of DIALECTS) {
  describe(`content store whole reads: blobs kept in the database [${dialect}]`, () => {
    it("reads them whole again and again, each time releasing the driver's copy it opened", async (t) => {
      const { database } = await build(t, dialect);
      const released: Buffer[] = [];
      const engine: CryptoEngine = { ...ENGINES[0], release: (buffer) => (released.push(buffer), ENGINES[0].release(buffer)) };
      const content = createContentStore(database.db, new FsBlobStore(tempDir(t, 'inline'), {}), engine);
      for (const size of [1, 1000, 65_536]) {
        const plaintext = randomBytes(size);
        // A body read whole, small enough: kept in the database by the writes that record it.
        const stored = await content.store(plaintext, { ...LIMITS, inlineMaxBytes: 65_536 });
        assert.ok(stored.content, `${size} bytes: kept in the database`);
        const now = new Date().toISOString();
        await database.db.transaction().execute((trx) => writeAll(trx, false, content.recordWrites(trx, [stored], now)));
        const version = { blobId: stored.blobId, size, dataKey: stored.dataKey };
        for (let read = 0; read < 2; read++) {
          released.length = 0;
          const whole = await content.readWhole(version, Buffer.alloc(size + 10));
          assert.ok(whole.equals(plaintext), `${size} bytes, read ${read + 1}`);
          assert.equal(released.length, 1, `${size} bytes: the stored bytes the driver returned are released once`);
        }
      }
    });
  });
}

describe('content store whole reads: S3', () => {
  let s3: TestS3;
  before(async () => {
    s3 = await startTestS3();
  });
  after(() => s3.close());

  it('reads a stored version back whole through the store, and a missing one is not found', async (t) => {
    const { database } = await build(t, DIALECTS[0]);
    const blobs = new S3BlobStore(await s3.newBucket(), { client: { credentials: s3.credentials } });
    t.after(() => blobs.close());
    assert.throws(() => (blobs as BlobStore).filePath('x'), /does not keep blobs as local files/);
    const content = createContentStore(database.db, blobs, ENGINES[0]);
    await readsBackWhole(content, 's3');
    const stored = await content.store(Readable.from([randomBytes(10)]), LIMITS);
    await blobs.delete(stored.blobId);
    await assert.rejects(
      content.readWhole({ blobId: stored.blobId, size: 10, dataKey: stored.dataKey }, Buffer.alloc(10)),
      BlobNotFoundError,
    );
  });
});
