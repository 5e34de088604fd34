import assert from 'node:assert/strict';
import { randomBytes, randomFillSync } from 'node:crypto';
import { closeSync, fstatSync, openSync, writeFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable, Writable } from 'node:stream';
import { finished, pipeline } from 'node:stream/promises';
import { describe, test, type TestContext } from 'node:test';
import { crc32 } from 'node:zlib';
import { nodeAead } from '../../src/content/aead.js';
import { CodecStream } from '../../src/content/codec-stream.js';
import { Opener, Sealer } from '../../src/content/codecs.js';
import { FileEncryptStream, type FileEncryptOptions } from '../../src/content/file-encrypt-stream.js';
import { CipherFormatError, HEADER_BYTES, MAGIC, TAG_BYTES, newHeader, sealedSize } from '../../src/content/format.js';
import { requireNativeAddon, countJobs } from '../support/native.js';
import { sha256Tag } from '../support/disk.js';

const nativeAddon = requireNativeAddon();

const SEG = 65536;
const MIB = 1024 * 1024;

/** A new empty file in a temp dir removed after the test, open for writing (closed after the test too). */
async function outputFile(t: TestContext): Promise<{ file: string; fd: number }> {
  const dir = await mkdtemp(path.join(tmpdir(), 'coffre-file-encrypt-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'blob');
  const fd = openSync(file, 'w');
  t.after(() => closeSync(fd));
  return { file, fd };
}

function* chunksOf(data: Buffer, size: number): Generator<Buffer> {
  for (let at = 0; at < data.length; at += size) yield data.subarray(at, at + size);
}

/** Resolves on the stream's 'close'; rejects when it does not come, rather than hanging the run. */
function closed(stream: Writable, ms = 10_000): Promise<void> {
  if (stream.closed) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no 'close' within ${ms} ms`)), ms);
    stream.once('close', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/** The plaintext of a stored blob, read back with the existing reader. */
async function openStored(key: Buffer, stored: Buffer): Promise<Buffer> {
  const out: Buffer[] = [];
  const collect = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      out.push(chunk);
      callback();
    },
  });
  await pipeline(Readable.from([stored]), new CodecStream(new Opener(nodeAead(key))), collect);
  return Buffer.concat(out);
}

interface Report {
  bytes: number;
  total: number;
  fileSize: number;
}

/** Encrypts `chunks` into a new file; resolves once the stream has closed, with the stored bytes and every `wrote` call. */
async function encryptToFile(t: TestContext, key: Buffer, chunks: Iterable<Buffer>, options: FileEncryptOptions = {}) {
  const { file, fd } = await outputFile(t);
  const reports: Report[] = [];
  let total = 0;
  const wrote = (bytes: number) => {
    total += bytes;
    reports.push({ bytes, total, fileSize: fstatSync(fd).size });
  };
  const stream = new FileEncryptStream(nativeAddon, key, { fd, wrote }, options);
  await pipeline(Readable.from(chunks), stream);
  await closed(stream);
  return { stream, reports, stored: await readFile(file) };
}

const SIZES = [0, 1, SEG - 1, SEG, SEG + 1, MIB, MIB + 1, 10 * MIB + 3];

describe('FileEncryptStream (native seal and write on the threadpool)', () => {
  async function roundTrip(t: TestContext, size: number, chunkSize: number, segmentLog2 = 16): Promise<void> {
    const what = `${size} bytes in ${chunkSize}-byte chunks, segments of 2^${segmentLog2}`;
    const key = randomBytes(32);
    const data = randomBytes(size);
    const { stream, reports, stored } = await encryptToFile(t, key, chunksOf(data, chunkSize), { segmentLog2 });
    assert.equal(stored.length, sealedSize(size, 2 ** segmentLog2), what);
    assert.ok(stored.subarray(0, HEADER_BYTES).equals(stream.header.bytes), `${what}: the header comes first`);
    assert.ok((await openStored(key, stored)).equals(data), what);
    assert.equal(stream.checksum, sha256Tag(data), what);
    assert.equal(stream.crc32, crc32(data), what);
    assert.equal(stream.plaintextBytes, size, what);
    assert.ok(reports.length > 0, what);
    assert.equal(reports.at(-1)!.total, stored.length, `${what}: the writes reported add up to the file`);
    for (const [i, { bytes, total, fileSize }] of reports.entries()) {
      assert.ok(bytes > 0, `${what}: report ${i} is of ${bytes} bytes`);
      assert.ok(total <= fileSize, `${what}: report ${i} says ${total} bytes are written, the file has ${fileSize}`);
      // In order: each report but the last ends the header and whole sealed segments.
      if (i < reports.length - 1)
        assert.equal((total - HEADER_BYTES) % (2 ** segmentLog2 + TAG_BYTES), 0, `${what}: report ${i} ends at ${total}`);
    }
  }

  test('round trips of 0 to 10 MiB + 3 bytes in 65529-byte chunks', async (t) => {
    for (const size of SIZES) await roundTrip(t, size, 65529);
  });

  test('round trips of 0 to 10 MiB + 3 bytes in one chunk', async (t) => {
    for (const size of SIZES) await roundTrip(t, size, Math.max(size, 1));
  });

  test('a round trip of 1 MiB + 1 byte in 1000-byte chunks', async (t) => {
    await roundTrip(t, MIB + 1, 1000);
  });

  test('a round trip of 200 KiB + 5 bytes in 1 KiB segments', async (t) => {
    await roundTrip(t, 200 * 1024 + 5, 3001, 10);
  });

  test('without ownsInput, a writer refilling its one buffer after each write callback does not change what is stored', async (t) => {
    const key = randomBytes(32);
    const { file, fd } = await outputFile(t);
    const stream = new FileEncryptStream(nativeAddon, key, { fd, wrote: () => {} });
    const buffer = Buffer.alloc(100_003);
    const written: Buffer[] = [];
    for (let i = 0; i < 60; i++) {
      randomFillSync(buffer);
      written.push(Buffer.from(buffer));
      await new Promise<void>((resolve, reject) => stream.write(buffer, (error) => (error ? reject(error) : resolve())));
    }
    buffer.fill(0);
    stream.end();
    await finished(stream);
    await closed(stream);
    const data = Buffer.concat(written);
    assert.ok((await openStored(key, await readFile(file))).equals(data));
    assert.equal(stream.checksum, sha256Tag(data));
    assert.equal(stream.crc32, crc32(data));
  });

  test('with ownsInput, chunks read in place round trip; views of a shared buffer are not freed', async (t) => {
    const key = randomBytes(32);
    const data = randomBytes(3 * MIB + 17);
    const { stream, stored } = await encryptToFile(t, key, chunksOf(data, 65529), { ownsInput: true });
    assert.ok((await openStored(key, stored)).equals(data));
    assert.equal(stream.checksum, sha256Tag(data));
    // Every chunk was a view of `data`: its memory may not have been detached (it would read empty).
    assert.equal(data.length, 3 * MIB + 17);
  });

  test('with ownsInput, chunks filling memory of their own are freed once sealed and hashed, split ones after their last run', async (t) => {
    const key = randomBytes(32);
    const data = randomBytes(5 * MIB + 3);
    // Each chunk in its own ArrayBuffer, as Node's HTTP parser gives body chunks; 65529 bytes, so
    // most chunks straddle two segments and some two runs.
    const chunks = [...chunksOf(data, 65529)].map((view) => {
      const own = Buffer.allocUnsafeSlow(view.length);
      view.copy(own);
      return own;
    });
    for (const chunk of chunks) assert.equal(chunk.byteLength, chunk.buffer.byteLength);
    const { stream, stored } = await encryptToFile(t, key, chunks, { ownsInput: true });
    assert.ok((await openStored(key, stored)).equals(data));
    assert.equal(stream.checksum, sha256Tag(data));
    assert.equal(stream.crc32, crc32(data), 'the CRC was taken before the chunks were freed');
    // Detached: their memory is gone now rather than at a full garbage collection.
    assert.deepEqual(
      chunks.map((chunk) => chunk.buffer.byteLength),
      chunks.map(() => 0),
    );
  });

  test('checkInput sees the running byte count before each chunk, and what it throws fails the stream', async (t) => {
    const key = randomBytes(32);
    const data = randomBytes(3 * MIB + 5);
    const seen: number[] = [];
    await encryptToFile(t, key, chunksOf(data, 65529), { checkInput: (bytes) => void seen.push(bytes) });
    const expected = [...chunksOf(data, 65529)].map((_, i) => Math.min((i + 1) * 65529, data.length));
    assert.deepEqual(seen, expected);

    const { fd } = await outputFile(t);
    const tooLarge = new Error('Files are limited to 2 MiB');
    const stream = new FileEncryptStream(
      nativeAddon,
      key,
      { fd, wrote: () => {} },
      {
        checkInput: (bytes) => {
          if (bytes > 2 * MIB) throw tooLarge;
        },
      },
    );
    await assert.rejects(pipeline(Readable.from(chunksOf(data, 65529)), stream), (error) => error === tooLarge);
    await closed(stream);
    assert.ok(stream.plaintextBytes <= 2 * MIB, `${stream.plaintextBytes} bytes taken`);
    assert.equal(stream.checksum, undefined);
  });

  test('a promise checkInput returns holds the chunk until it settles; a rejected one fails the stream (both engines)', async (t) => {
    const key = randomBytes(32);
    const data = randomBytes(3 * MIB + 5);
    const refused = new Error('the quota cannot take more');
    // A step every MiB, as a quota hold takes them: the chunk waits for it, whatever the engine.
    const holding = (refuseAbove: number) => {
      let held = 0;
      return (bytes: number) => {
        if (bytes <= held) return;
        return new Promise<void>((resolve, reject) =>
          setTimeout(() => (bytes > refuseAbove ? reject(refused) : resolve(void (held += MIB))), 5),
        );
      };
    };
    const { stream, stored } = await encryptToFile(t, key, chunksOf(data, 65529), { checkInput: holding(Infinity) });
    assert.equal(stream.checksum, sha256Tag(data));
    assert.ok((await openStored(key, stored)).equals(data));
    const { fd } = await outputFile(t);
    const native = new FileEncryptStream(nativeAddon, key, { fd, wrote: () => {} }, { checkInput: holding(2 * MIB) });
    await assert.rejects(pipeline(Readable.from(chunksOf(data, 65529)), native), (error) => error === refused);
    await closed(native);
    assert.ok(native.plaintextBytes <= 2 * MIB, `${native.plaintextBytes} bytes taken`);

    const out: Buffer[] = [];
    const sealer = new Sealer(nodeAead(key), newHeader(), { hash: true });
    await pipeline(
      Readable.from(chunksOf(data, 65529)),
      new CodecStream(sealer, { checkInput: holding(Infinity) }),
      new Writable({ write: (c: Buffer, _e, cb) => void (out.push(c), cb()) }),
    );
    assert.ok((await openStored(key, Buffer.concat(out))).equals(data));
    const portable = new CodecStream(new Sealer(nodeAead(key), newHeader(), { hash: true }), { checkInput: holding(2 * MIB) });
    await assert.rejects(
      pipeline(Readable.from(chunksOf(data, 65529)), portable, new Writable({ write: (_c, _e, cb) => cb() })),
      (error) => error === refused,
    );
    assert.ok(portable.inputBytes <= 2 * MIB, `${portable.inputBytes} bytes taken`);
  });

  test('a failing write fails the stream with its code and syscall, and it still closes', async (t) => {
    const key = randomBytes(32);
    const { file } = await outputFile(t);
    writeFileSync(file, '');
    // Opened for reading only: every pwrite into it fails with EBADF.
    const readOnly = openSync(file, 'r');
    t.after(() => closeSync(readOnly));
    let reported = 0;
    const stream = new FileEncryptStream(nativeAddon, key, { fd: readOnly, wrote: (bytes) => (reported += bytes) });
    await assert.rejects(pipeline(Readable.from(chunksOf(randomBytes(3 * MIB), 65529)), stream), { code: 'EBADF', syscall: 'write' });
    await closed(stream);
    assert.equal(reported, 0);
    assert.equal(stream.checksum, undefined);
  });

  test('a `wrote` that throws fails the stream with its error', async (t) => {
    const key = randomBytes(32);
    const { fd } = await outputFile(t);
    const syncFailed = new Error('background sync failed');
    const stream = new FileEncryptStream(nativeAddon, key, {
      fd,
      wrote: () => {
        throw syncFailed;
      },
    });
    await assert.rejects(pipeline(Readable.from(chunksOf(randomBytes(3 * MIB), 65529)), stream), (error) => error === syncFailed);
    await closed(stream);
    assert.equal(stream.checksum, undefined);
  });

  test('destroyed mid-way, it closes only once no job can still write into the file', async (t) => {
    const jobs = countJobs(t, nativeAddon, 'sealWrite');
    const key = randomBytes(32);
    const input = randomBytes(32 * MIB);
    const runningAtDestroy: number[] = [];
    for (let i = 0; i < 3; i++) {
      const { fd } = await outputFile(t);
      let reported = 0;
      const stream = new FileEncryptStream(nativeAddon, key, {
        fd,
        wrote: (bytes) => {
          reported += bytes;
          // The client goes away once a few MiB are written, with the next jobs in flight.
          if (reported >= 3 * MIB && !stream.destroyed) {
            runningAtDestroy.push(jobs.running);
            stream.destroy();
          }
        },
      });
      let sizeAtClose = -1;
      let runningAtClose = -1;
      stream.once('close', () => {
        sizeAtClose = fstatSync(fd).size;
        runningAtClose = jobs.running;
      });
      await assert.rejects(pipeline(Readable.from(chunksOf(input, 256 * 1024)), stream), { code: 'ERR_STREAM_PREMATURE_CLOSE' });
      await closed(stream);
      assert.equal(runningAtClose, 0, 'no sealWrite job was running at the close');
      await new Promise((resolve) => setTimeout(resolve, 200));
      assert.equal(fstatSync(fd).size, sizeAtClose, 'no write landed after the close');
      assert.ok(reported <= sizeAtClose && sizeAtClose < input.length, `${reported} bytes reported, ${sizeAtClose} in the file`);
    }
    assert.ok(
      runningAtDestroy.some((running) => running > 0),
      `jobs were in flight at the destroy: ${runningAtDestroy.join(', ')}`,
    );
    assert.equal(jobs.running, 0);
  });

  test('the stored bytes do not show the plaintext', async (t) => {
    const key = randomBytes(32);
    const marker = Buffer.from('COFFRE-PLAINTEXT-MARKER-0123456789');
    const data = Buffer.concat(Array.from({ length: 40_000 }, () => marker));
    const { stored } = await encryptToFile(t, key, chunksOf(data, 65529));
    assert.ok(stored.subarray(0, MAGIC.length).equals(MAGIC));
    assert.equal(stored.indexOf(marker), -1, 'the marker is not in the file');
    assert.equal(stored.indexOf(marker.subarray(0, 12)), -1, 'nor a part of it');
    const again = await encryptToFile(t, key, chunksOf(data, 65529));
    assert.ok(!again.stored.equals(stored), 'each stream has its own nonce prefix');
    assert.ok((await openStored(key, stored)).equals(data));
  });

  test('a flipped byte of a stored segment is detected by the reader', async (t) => {
    const key = randomBytes(32);
    const data = randomBytes(3 * SEG + 100);
    const { stored } = await encryptToFile(t, key, chunksOf(data, 65529));
    assert.ok((await openStored(key, stored)).equals(data));
    for (const at of [HEADER_BYTES + (SEG + TAG_BYTES) + 100, stored.length - 1, 5]) {
      const tampered = Buffer.from(stored);
      tampered[at] ^= 0x01;
      await assert.rejects(openStored(key, tampered), CipherFormatError, `byte ${at} flipped`);
    }
    await assert.rejects(openStored(randomBytes(32), stored), CipherFormatError, 'another key');
  });
});
