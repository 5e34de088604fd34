import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { PassThrough, Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { readWholeUpTo } from '../../src/lib/read-whole.js';

async function collect(stream: Readable): Promise<Buffer> {
  const out: Buffer[] = [];
  await pipeline(
    stream,
    new Writable({
      write(chunk, _e, cb) {
        out.push(chunk);
        cb();
      },
    }),
  );
  return Buffer.concat(out);
}

/** A byte stream fed chunk by chunk on later ticks, like a socket. */
function trickle(chunks: Buffer[]): PassThrough {
  const stream = new PassThrough();
  (async () => {
    for (const chunk of chunks) {
      await new Promise((resolve) => setImmediate(resolve));
      stream.write(chunk);
    }
    stream.end();
  })();
  return stream;
}

describe('readWholeUpTo', () => {
  it('gives a stream that ends within the limit as one buffer, the limit itself included', async () => {
    const data = randomBytes(1000);
    const whole = await readWholeUpTo(trickle([data.subarray(0, 10), data.subarray(10, 600), data.subarray(600)]), 1000);
    assert.ok(Buffer.isBuffer(whole));
    assert.ok(whole.equals(data));
    const empty = await readWholeUpTo(trickle([]), 1000);
    assert.ok(Buffer.isBuffer(empty) && empty.length === 0);
  });

  it('gives back a longer stream itself, every byte from the start and in order', async () => {
    const data = randomBytes(300_000);
    const chunks = Array.from({ length: 30 }, (_, i) => data.subarray(i * 10_000, (i + 1) * 10_000));
    for (const limit of [0, 1, 9_999, 10_000, 65_536]) {
      const source = trickle(chunks);
      const result = await readWholeUpTo(source, limit);
      assert.equal(result, source, `limit ${limit}`);
      assert.ok((await collect(result as Readable)).equals(data), `limit ${limit}`);
    }
    // One byte over the limit is enough to stream.
    const over = await readWholeUpTo(trickle([data.subarray(0, 1001)]), 1000);
    assert.ok(!Buffer.isBuffer(over));
    assert.ok((await collect(over)).equals(data.subarray(0, 1001)));
  });

  it('rejects when the stream fails or is destroyed before its end', async () => {
    const failing = new PassThrough();
    const failed = readWholeUpTo(failing, 1000);
    failing.write(Buffer.alloc(10));
    failing.destroy(new Error('client gone'));
    await assert.rejects(failed, /client gone/);
    const cut = new PassThrough();
    const closed = readWholeUpTo(cut, 1000);
    cut.write(Buffer.alloc(10));
    cut.destroy();
    await assert.rejects(closed, { code: 'ERR_STREAM_PREMATURE_CLOSE' });
  });
});
