import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, open, rm, writeFile, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, test, type TestContext } from 'node:test';
import { nodeAead } from '../../src/content/aead.js';
import { Sealer } from '../../src/content/codecs.js';
import { bufferPool } from '../../src/content/buffer-pool.js';
import { FileDecryptStream } from '../../src/content/file-decrypt-stream.js';
import {
  CipherFormatError,
  HEADER_BYTES,
  TAG_BYTES,
  newHeader,
  parseHeader,
  segmentRange,
  type SegmentRange,
} from '../../src/content/format.js';
import { requireNativeAddon, countJobs } from '../support/native.js';

const nativeAddon = requireNativeAddon();

const SEG = 65536;
const SEALED = SEG + TAG_BYTES;
/** Segments a job of the stream reads (1 MiB of plaintext). */
const PER_JOB = 16;

/** The stored format of `data` under `key`, as the upload path writes it. */
function sealWhole(key: Buffer, data: Buffer, segmentLog2 = 16): Buffer {
  const codec = new Sealer(nodeAead(key), newHeader(segmentLog2));
  return Buffer.concat([...codec.write([data]), ...codec.end()]);
}

async function tempFile(t: TestContext, bytes: Buffer): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'coffre-file-decrypt-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'blob');
  await writeFile(file, bytes);
  return file;
}

/** A stream over `[start, end]` of the plaintext of `size` bytes stored in `file`. */
async function decryptRange(
  file: string,
  key: Buffer,
  size: number,
  start = 0,
  end = size - 1,
): Promise<{ stream: FileDecryptStream; handle: FileHandle; range: SegmentRange }> {
  const handle = await open(file, 'r');
  const headerBytes = Buffer.alloc(HEADER_BYTES);
  await handle.read(headerBytes, 0, HEADER_BYTES, 0);
  const header = parseHeader(headerBytes);
  const range = segmentRange(size, start, end, header.segmentSize);
  return { stream: new FileDecryptStream(nativeAddon, handle, key, header, range), handle, range };
}

/** An HTTP server answering every request with the whole plaintext, piped from a new stream; the streams it made. */
async function decryptingServer(t: TestContext, file: string, key: Buffer, size: number) {
  const streams: FileDecryptStream[] = [];
  const server = http.createServer((_req, res) => {
    void decryptRange(file, key, size).then(({ stream }) => {
      streams.push(stream);
      res.writeHead(200, { 'content-length': size });
      stream.pipe(res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => server.close());
  return { port: (server.address() as AddressInfo).port, streams };
}

/** Everything the stream emits before it ends or fails, and its error. */
async function drain(stream: FileDecryptStream): Promise<{ out: Buffer; error?: Error }> {
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    return { out: Buffer.concat(chunks) };
  } catch (error) {
    return { out: Buffer.concat(chunks), error: error as Error };
  }
}

describe('FileDecryptStream (native read and open on the threadpool)', () => {
  test('round trips of 1, 65535, 65536, 65537 and 10 MiB + 3 bytes, and 1 KiB segments', async (t) => {
    const key = randomBytes(32);
    const cases: [number, number][] = [
      [1, 16],
      [SEG - 1, 16],
      [SEG, 16],
      [SEG + 1, 16],
      [10 * 1024 * 1024 + 3, 16],
      [3 * 1024 * 1024 + 5, 10],
    ];
    for (const [size, log2] of cases) {
      const data = randomBytes(size);
      const file = await tempFile(t, sealWhole(key, data, log2));
      const { stream } = await decryptRange(file, key, size);
      const { out, error } = await drain(stream);
      assert.equal(error, undefined, `${size} bytes in segments of 2^${log2}`);
      assert.ok(out.equals(data), `${size} bytes in segments of 2^${log2}`);
    }
  });

  test('ranges at segment and job edges emit exactly the requested bytes', async (t) => {
    const key = randomBytes(32);
    const size = 40 * SEG + 1234;
    const data = randomBytes(size);
    const file = await tempFile(t, sealWhole(key, data));
    const job = PER_JOB * SEG;
    const ranges: [number, number][] = [
      [0, 0],
      [SEG - 1, SEG],
      [SEG, 2 * SEG - 1],
      [100, size - 1],
      [size - 1024, size - 1],
      [size - 1, size - 1],
      [job - 3, job + 2],
      [job, 2 * job - 1],
      [job - 1, 2 * job],
      [5, size - 2],
    ];
    for (const [start, end] of ranges) {
      const { stream } = await decryptRange(file, key, size, start, end);
      const { out, error } = await drain(stream);
      assert.equal(error, undefined, `${start}-${end}`);
      assert.ok(out.equals(data.subarray(start, end + 1)), `${start}-${end}`);
    }
  });

  test('damage is detected and nothing of the job holding it is emitted', async (t) => {
    const key = randomBytes(32);
    const size = 40 * SEG + 1234;
    const data = randomBytes(size);
    const pristine = sealWhole(key, data);
    const flip = (at: number) => {
      const copy = Buffer.from(pristine);
      copy[at] ^= 0x5a;
      return copy;
    };
    const damaged = 20; // in the second job (segments 16-31)
    const swapped = Buffer.from(pristine);
    pristine.copy(swapped, HEADER_BYTES + 21 * SEALED, HEADER_BYTES + 20 * SEALED, HEADER_BYTES + 21 * SEALED);
    pristine.copy(swapped, HEADER_BYTES + 20 * SEALED, HEADER_BYTES + 21 * SEALED, HEADER_BYTES + 22 * SEALED);
    const cases: [string, Buffer, number][] = [
      ['a ciphertext byte', flip(HEADER_BYTES + damaged * SEALED + 100), PER_JOB * SEG],
      ['a tag byte', flip(HEADER_BYTES + damaged * SEALED + SEG + 3), PER_JOB * SEG],
      ['the nonce prefix in the header', flip(12), 0],
      ['two segments swapped', swapped, PER_JOB * SEG],
      ['the final segment cut off at an edge', pristine.subarray(0, HEADER_BYTES + 40 * SEALED), 32 * SEG],
      ['a cut inside the final segment', pristine.subarray(0, pristine.length - 10), 32 * SEG],
      ['the last full segment and the final one cut off', pristine.subarray(0, HEADER_BYTES + 39 * SEALED + 7), 32 * SEG],
    ];
    for (const [name, stored, emittedAtMost] of cases) {
      const file = await tempFile(t, stored);
      const { stream } = await decryptRange(file, key, size);
      const { out, error } = await drain(stream);
      assert.ok(error instanceof CipherFormatError, `${name}: ${error}`);
      assert.ok(out.length <= emittedAtMost, `${name}: ${out.length} bytes emitted`);
      assert.ok(out.equals(data.subarray(0, out.length)), `${name}: what was emitted is genuine`);
    }
    // A range of undamaged segments still opens.
    const file = await tempFile(t, flip(HEADER_BYTES + damaged * SEALED + 100));
    const { stream } = await decryptRange(file, key, size, 0, damaged * SEG - 1);
    const { out, error } = await drain(stream);
    assert.equal(error, undefined);
    assert.ok(out.equals(data.subarray(0, damaged * SEG)));
  });

  test('a wrong key fails at the first segment', async (t) => {
    const data = randomBytes(3 * SEG);
    const file = await tempFile(t, sealWhole(randomBytes(32), data));
    const { stream } = await decryptRange(file, randomBytes(32), data.length);
    const { out, error } = await drain(stream);
    assert.ok(error instanceof CipherFormatError);
    assert.equal(out.length, 0);
  });

  test('a read error fails the stream with its code and closes the file', async (t) => {
    const key = randomBytes(32);
    const data = randomBytes(2 * SEG);
    const file = await tempFile(t, sealWhole(key, data));
    const headerBytes = Buffer.alloc(HEADER_BYTES);
    const reader = await open(file, 'r');
    await reader.read(headerBytes, 0, HEADER_BYTES, 0);
    await reader.close();
    const header = parseHeader(headerBytes);
    // Open for writing only: every read of it fails with EBADF.
    const handle = await open(file, 'r+').then(async (h) => {
      await h.close();
      return open(file, 'a');
    });
    const stream = new FileDecryptStream(
      nativeAddon,
      handle,
      key,
      header,
      segmentRange(data.length, 0, data.length - 1, header.segmentSize),
    );
    const { out, error } = await drain(stream);
    assert.equal((error as NodeJS.ErrnoException)?.code, 'EBADF');
    assert.equal(out.length, 0);
    assert.equal(handle.fd, -1, 'the stream closed its file');
  });

  test('destroyed mid-way, it closes the file only once no job can still read it', async (t) => {
    const jobs = countJobs(t, nativeAddon, 'readOpen');
    const key = randomBytes(32);
    const size = 8 * 1024 * 1024;
    const file = await tempFile(t, sealWhole(key, randomBytes(size)));
    for (let i = 0; i < 5; i++) {
      const { stream, handle } = await decryptRange(file, key, size);
      const close = handle.close.bind(handle);
      let runningAtClose = -1;
      handle.close = () => {
        runningAtClose = jobs.running;
        return close();
      };
      await new Promise<void>((resolve) => stream.once('data', () => resolve()));
      stream.destroy();
      await new Promise<void>((resolve) => stream.once('close', () => resolve()));
      assert.equal(runningAtClose, 0, 'no job was running when the file was closed');
      assert.equal(handle.fd, -1);
    }
    assert.equal(jobs.running, 0);
  });

  test('a reader that stops reading stops the jobs', async (t) => {
    const jobs = countJobs(t, nativeAddon, 'readOpen');
    const key = randomBytes(32);
    const size = 16 * 1024 * 1024;
    const data = randomBytes(size);
    const file = await tempFile(t, sealWhole(key, data));
    const { stream } = await decryptRange(file, key, size);
    const first = await new Promise<Buffer>((resolve) =>
      stream.once('data', (chunk: Buffer) => {
        stream.pause();
        resolve(chunk);
      }),
    );
    await new Promise((resolve) => setTimeout(resolve, 200));
    // A job pushed, a job waiting in the buffer (its high-water mark), two more queued at most.
    assert.ok(jobs.queued <= 4, `${jobs.queued} jobs queued while the reader holds one chunk`);
    const rest = await drain(stream);
    assert.equal(rest.error, undefined);
    assert.ok(Buffer.concat([first, rest.out]).equals(data));
    assert.equal(jobs.queued, 16);
  });

  test('reuses an output buffer only once the HTTP response has written it out: slow and fast clients get the exact bytes', async (t) => {
    const key = randomBytes(32);
    const size = 24 * 1024 * 1024 + 777;
    const data = randomBytes(size);
    const digest = createHash('sha256').update(data).digest('hex');
    const file = await tempFile(t, sealWhole(key, data));
    const { port, streams } = await decryptingServer(t, file, key, size);
    /** Downloads once; `stall` pauses the client now and then, so the socket fills and writes wait. */
    const download = (stall: boolean) =>
      new Promise<string>((resolve, reject) => {
        http
          .get({ host: '127.0.0.1', port, path: '/', agent: false }, (res) => {
            const hash = createHash('sha256');
            let received = 0;
            let nextStall = 256 * 1024;
            res.on('data', (chunk: Buffer) => {
              hash.update(chunk);
              received += chunk.length;
              if (stall && received >= nextStall) {
                nextStall += 1024 * 1024 + 12345;
                res.pause();
                setTimeout(() => res.resume(), 15);
              }
            });
            res.on('end', () => resolve(hash.digest('hex')));
            res.on('error', reject);
          })
          .on('error', reject);
      });
    for (const stall of [true, false, true]) assert.equal(await download(stall), digest, stall ? 'a client that stalls' : 'a fast client');
    assert.ok(
      streams.some((stream) => stream.recycled > 0),
      `buffers were reused: ${streams.map((stream) => stream.recycled).join(', ')}`,
    );
  });

  test('a download that finished hands its buffers to the next one: downloads in a row allocate none after the first', async (t) => {
    const key = randomBytes(32);
    const size = 6 * 1024 * 1024 + 5;
    const data = randomBytes(size);
    const file = await tempFile(t, sealWhole(key, data));
    const { port } = await decryptingServer(t, file, key, size);
    const download = () =>
      new Promise<Buffer>((resolve, reject) => {
        http
          .get({ host: '127.0.0.1', port, path: '/', agent: false }, (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (chunk: Buffer) => chunks.push(chunk));
            // The response's 'finish' (which hands the buffers back) precedes the client's 'end'.
            res.on('end', () => setImmediate(() => resolve(Buffer.concat(chunks))));
            res.on('error', reject);
          })
          .on('error', reject);
      });
    assert.ok((await download()).equals(data));
    const { segmentSize } = parseHeader(sealWhole(key, Buffer.alloc(1)).subarray(0, HEADER_BYTES));
    const perJob = Math.floor((1024 * 1024) / segmentSize);
    const pools = [bufferPool(perJob * (segmentSize + TAG_BYTES)), bufferPool(perJob * segmentSize)];
    assert.ok(
      pools.every((pool) => pool.available > 0),
      'the first download gave its buffers back',
    );
    const before = pools.map((pool) => pool.allocated);
    for (let i = 0; i < 3; i++) assert.ok((await download()).equals(data), 'the exact bytes, from reused buffers');
    assert.deepEqual(
      pools.map((pool) => pool.allocated),
      before,
      'no read or output buffer allocated after the first download',
    );
  });

  test('piped into anything but a response or a socket, it never reuses a buffer', async (t) => {
    const key = randomBytes(32);
    const size = 8 * 1024 * 1024 + 3;
    const data = randomBytes(size);
    const file = await tempFile(t, sealWhole(key, data));
    const { stream } = await decryptRange(file, key, size);
    // A transform's writableLength drops as soon as it has passed a chunk on, still unread.
    const through = new PassThrough();
    stream.pipe(through);
    const chunks: Buffer[] = [];
    for await (const chunk of through) {
      chunks.push(chunk as Buffer);
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    assert.ok(Buffer.concat(chunks).equals(data));
    assert.equal(stream.recycled, 0);
  });
  test('read through a sink that counts what it holds, buffers are reused only once it let them go', async (t) => {
    const key = randomBytes(32);
    const size = 8 * 1024 * 1024 + 3;
    const data = randomBytes(size);
    const file = await tempFile(t, sealWhole(key, data));
    // A reader that keeps every chunk (a slow destination): it holds all it took, so nothing may be reused.
    const held = await decryptRange(file, key, size);
    let holding = 0;
    held.stream.recycleThrough({
      get writableLength() {
        return holding;
      },
      destroyed: false,
    });
    const kept: Buffer[] = [];
    for await (const chunk of held.stream) {
      holding += (chunk as Buffer).length;
      kept.push(chunk as Buffer);
    }
    assert.ok(Buffer.concat(kept).equals(data), 'every chunk kept its bytes');
    assert.equal(held.stream.recycled, 0);
    // A reader that copies each chunk out at once holds nothing: buffers come back.
    const copying = await decryptRange(file, key, size);
    copying.stream.recycleThrough({ writableLength: 0, destroyed: false });
    const copies: Buffer[] = [];
    for await (const chunk of copying.stream) copies.push(Buffer.from(chunk as Buffer));
    assert.ok(Buffer.concat(copies).equals(data));
    assert.ok(copying.stream.recycled > 0, 'buffers were reused');
  });
});
