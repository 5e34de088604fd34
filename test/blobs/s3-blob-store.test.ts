import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import v8 from 'node:v8';
import vm from 'node:vm';
import { newBlobKey } from '../../src/blobs/blob-keys.js';
import { S3BlobStore } from '../../src/blobs/s3/s3-blob-store.js';
import { startTestS3, type TestS3 } from '../support/s3.js';
import { blobStoreContract } from './blob-store.contract.js';

const MiB = 1024 * 1024;

let s3: TestS3;
before(async () => {
  s3 = await startTestS3();
});
after(async () => {
  await s3.close();
});

async function newStore(t: import('node:test').TestContext, options: ConstructorParameters<typeof S3BlobStore>[1] = {}) {
  const location = await s3.newBucket();
  const store = new S3BlobStore(location, { ...options, client: { credentials: s3.credentials, ...options.client } });
  t.after(() => store.close());
  return { store, location };
}

blobStoreContract('s3', async (t) => {
  const { store, location } = await newStore(t);
  return { store, listAll: () => s3.listKeys(location.bucket) };
});

/** The S3 commands a store sends, by name. */
function countCommands(store: S3BlobStore): Map<string, number> {
  const counts = new Map<string, number>();
  store.client.middlewareStack.add(
    (next, context) => async (args) => {
      counts.set(context.commandName!, (counts.get(context.commandName!) ?? 0) + 1);
      return next(args);
    },
    { step: 'initialize', name: 'countCommands' },
  );
  return counts;
}

describe('S3 blob store', () => {
  it('streams a body larger than a part as a multipart upload, and reads it back whole and by range', async (t) => {
    const { store } = await newStore(t);
    const counts = countCommands(store);
    const data = randomBytes(12 * 1024 * 1024 + 3);
    const key = newBlobKey();
    // A slow-ish source of 64 KiB chunks, as a request body would be.
    const source = Readable.from(
      (function* () {
        for (let i = 0; i < data.length; i += 65536) yield data.subarray(i, i + 65536);
      })(),
    );
    const { size } = await store.put(key, source);
    assert.equal(size, data.length);
    assert.equal(counts.get('CreateMultipartUploadCommand'), 1);
    assert.equal(counts.get('UploadPartCommand'), 3, '5 MiB parts: 5 + 5 + 2');
    assert.equal(counts.get('CompleteMultipartUploadCommand'), 1);
    assert.deepEqual(await buffer(await store.get(key)), data);
    const start = 5 * 1024 * 1024 - 10;
    assert.deepEqual(await buffer(await store.get(key, { start, end: start + 20 })), data.subarray(start, start + 21));
  });

  it('aborts the multipart upload when the source fails after some parts, and no object appears', async (t) => {
    const { store, location } = await newStore(t);
    const counts = countCommands(store);
    const key = newBlobKey();
    let sent = 0;
    const failing = new Readable({
      read() {
        if (sent >= 11 * 1024 * 1024) return this.destroy(new Error('client went away'));
        sent += 1024 * 1024;
        this.push(randomBytes(1024 * 1024));
      },
    });
    await assert.rejects(store.put(key, failing), /client went away/);
    assert.equal(counts.get('CreateMultipartUploadCommand'), 1);
    assert.ok((counts.get('AbortMultipartUploadCommand') ?? 0) >= 1, 'the upload was aborted');
    assert.equal(counts.get('CompleteMultipartUploadCommand') ?? 0, 0);
    assert.equal(await store.exists(key), false);
    assert.deepEqual(await s3.listKeys(location.bucket), []);
  });

  it('keeps memory bounded while streaming a body many parts long', async (t) => {
    const { store } = await newStore(t);
    v8.setFlagsFromString('--expose-gc');
    const gc = vm.runInNewContext('gc') as () => void;
    const chunk = randomBytes(MiB);
    const total = 128;
    // The largest rise over the lowest level seen before it: buffers an earlier test left (freed
    // only during this upload) must count neither as the upload's nor lower the level it rises from
    // after they are gone. Measuring from the first sample instead once read 47 MiB in a full run.
    let floor = Infinity;
    let peak = 0;
    let samples = 0;
    // Sampled as the store pulls each chunk (a timer alone may not fire during a fast upload).
    const sample = () => {
      gc();
      samples++;
      const now = process.memoryUsage().arrayBuffers;
      floor = Math.min(floor, now);
      peak = Math.max(peak, now - floor);
    };
    sample();
    const sampler = setInterval(sample, 20);
    try {
      const source = Readable.from(
        (function* () {
          for (let i = 0; i < total; i++) {
            sample();
            yield chunk;
          }
        })(),
      );
      const { size } = await store.put(newBlobKey(), source);
      assert.equal(size, total * MiB);
    } finally {
      clearInterval(sampler);
    }
    sample();
    assert.ok(samples >= total + 2);
    // 5 MiB parts, two in flight, one being filled, whatever the body's length; s3rver runs in a process of its own, so this
    // counts the store's buffers only.
    assert.ok(peak < 40 * MiB, `peak ${(peak / MiB).toFixed(1)} MiB of buffers for a ${total} MiB upload`);
    t.diagnostic(`peak buffers ${(peak / MiB).toFixed(1)} MiB for ${total} MiB`);
  });

  it('keeps its keys under the configured prefix', async (t) => {
    const location = await s3.newBucket();
    const store = new S3BlobStore({ ...location, prefix: 'coffre/blobs/' }, { client: { credentials: s3.credentials } });
    t.after(() => store.close());
    const key = newBlobKey();
    await store.put(key, Readable.from([Buffer.from('x')]));
    assert.deepEqual(await s3.listKeys(location.bucket), [`coffre/blobs/${key}`]);
  });

  it('reports a missing bucket as an error, not as a missing blob', async (t) => {
    const location = await s3.newBucket();
    const store = new S3BlobStore({ ...location, bucket: `${location.bucket}-nope` }, { client: { credentials: s3.credentials } });
    t.after(() => store.close());
    await assert.rejects(store.ping());
    await assert.rejects(store.get(newBlobKey()), (error: Error) => error.name !== 'BlobNotFoundError');
  });

  it('treats a server that cannot list multipart uploads as having none to clean', async (t) => {
    const { store } = await newStore(t);
    assert.equal(await store.removeStaleUploads(0), 0);
  });
});

describe('S3 blob store staging', () => {
  it('uploads whole 5 MiB parts as bytes arrive and keeps the remainder as a pending object until completion', async (t) => {
    const { store, location } = await newStore(t);
    const counts = countCommands(store);
    const key = newBlobKey();
    const data = randomBytes(11 * MiB + 123);
    let state = await store.beginStaging(key);
    let writer = await store.openStaging(key, state);
    for (let at = 0; at < 8 * MiB; at += MiB) await writer.write([data.subarray(at, at + MiB)]);
    state = await writer.commit();
    await writer.close();
    assert.equal(counts.get('UploadPartCommand'), 1, 'one whole part of the first 8 MiB');
    assert.deepEqual(await s3.listKeys(location.bucket), [`staging/${key}`], 'the 3 MiB short of a part wait in the pending object');
    assert.equal(await store.exists(key), false);

    writer = await store.openStaging(key, state);
    await writer.write([data.subarray(8 * MiB)]);
    state = await writer.commit();
    await writer.close();
    assert.equal(counts.get('UploadPartCommand'), 2, 'the pending 3 MiB and the next 3 MiB make the second part');
    assert.equal(JSON.parse(state).pending, MiB + 123);

    assert.equal((await store.completeStaging(key, state)).size, data.length);
    assert.equal(counts.get('UploadPartCommand'), 3, 'the remainder is the last part');
    assert.equal(counts.get('CompleteMultipartUploadCommand'), 1);
    assert.deepEqual(await s3.listKeys(location.bucket), [key], 'the pending object is gone');
    assert.ok((await buffer(await store.get(key))).equals(data));
  });

  it('removeStaleUploads aborts stale multipart uploads but those of the stagings it keeps', async (t) => {
    const { store } = await newStore(t);
    const kept = newBlobKey();
    const data = randomBytes(6 * MiB);
    const writer = await store.openStaging(kept, await store.beginStaging(kept));
    await writer.write([data]);
    const state = await writer.commit();
    await writer.close();
    // s3rver lists no multipart uploads (NotImplemented) and aborts none (MethodNotAllowed): both
    // are answered here as S3 would, the list naming the kept staging's upload and a stale one.
    const stale = newBlobKey();
    const aborted: string[] = [];
    store.client.middlewareStack.add(
      (next, context) => async (args) => {
        const input = args.input as { Key?: string };
        if (context.commandName === 'ListMultipartUploadsCommand') {
          const initiated = new Date(Date.now() - 60_000);
          const uploads = [kept, stale].map((key) => ({ Key: key, UploadId: `upload-${key}`, Initiated: initiated }));
          return { output: { Uploads: uploads, IsTruncated: false, $metadata: {} }, response: {} } as any;
        }
        if (context.commandName === 'AbortMultipartUploadCommand') {
          aborted.push(input.Key!);
          return { output: { $metadata: {} }, response: {} } as any;
        }
        return next(args);
      },
      { step: 'initialize', name: 'fakeUploadListing' },
    );
    assert.equal(await store.removeStaleUploads(0, new Set([kept])), 1);
    assert.deepEqual(aborted, [stale]);
    assert.equal((await store.completeStaging(kept, state)).size, data.length);
    assert.ok((await buffer(await store.get(kept))).equals(data));
  });
});
