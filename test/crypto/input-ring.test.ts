import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import { InputRing, RING_BYTES } from '../../src/crypto/input-ring.js';
import { createCodec, type SegmentCodec } from '../../src/crypto/stream-cipher.js';

const bytesOf = (views: Uint8Array[]) => Buffer.concat(views.map((v) => Buffer.from(v.buffer, v.byteOffset, v.byteLength)));

describe('input ring', () => {
  test('a batch is copied once into shared memory and sent as views of it', () => {
    const ring = new InputRing();
    const chunks = [randomBytes(1000), randomBytes(3000)];
    const views = ring.send(chunks, 4000, true)!;
    assert.equal(views.length, 1);
    assert.ok(views[0].buffer instanceof SharedArrayBuffer);
    assert.ok(bytesOf(views).equals(Buffer.concat(chunks)));
    assert.equal(ring.inUse, 4000);
  });

  test('a region is free once its batch has been answered, in order', () => {
    const ring = new InputRing();
    ring.send([randomBytes(100)], 100, true);
    ring.send([randomBytes(200)], 200, false); // moved another way: counted, holds no ring bytes
    ring.send([randomBytes(300)], 300, true);
    assert.equal(ring.inUse, 400);
    ring.answer();
    assert.equal(ring.inUse, 300);
    ring.answer();
    assert.equal(ring.inUse, 300, 'the second batch held no ring bytes');
    ring.answer();
    assert.equal(ring.inUse, 0);
  });

  test('a batch that wraps around the end comes as two views, and regions in use are never overwritten', () => {
    const ring = new InputRing();
    const third = Math.floor(RING_BYTES / 3);
    const first = randomBytes(third);
    const second = randomBytes(third);
    const a = ring.send([first], third, true)!;
    const b = ring.send([second], third, true)!;
    assert.equal(ring.send([randomBytes(third + 100)], third + 100, true), null, 'does not fit beside the two in flight');
    assert.ok(bytesOf(a).equals(first) && bytesOf(b).equals(second));
    ring.answer(); // a: its region is free, b's is not
    const wrapped = randomBytes(third + 100);
    const c = ring.send([wrapped.subarray(0, 10), wrapped.subarray(10)], wrapped.length, true)!;
    assert.equal(c.length, 2);
    assert.ok(bytesOf(c).equals(wrapped));
    assert.ok(bytesOf(b).equals(second), 'the batch still in flight is intact');
  });
});

describe('codecs keep no reference to shared input once write returns', () => {
  /** Feeds each chunk through a shared buffer that is overwritten right after `write`. */
  function feedShared(codec: SegmentCodec, input: Buffer, chunk: number): Buffer {
    const shared = Buffer.from(new SharedArrayBuffer(chunk));
    const out: Buffer[] = [];
    for (let at = 0; at < input.length; at += chunk) {
      const piece = input.subarray(at, at + chunk);
      piece.copy(shared);
      out.push(...codec.write([shared.subarray(0, piece.length)]));
      shared.fill(0xee);
    }
    out.push(...codec.end().out);
    return Buffer.concat(out);
  }

  test('sealing, then opening, with chunks that straddle segments', () => {
    const key = randomBytes(32);
    const plaintext = randomBytes(5 * 65536 + 777);
    for (const chunk of [1000, 100_000]) {
      const sealed = feedShared(createCodec({ kind: 'seal', key, segmentLog2: 16, hash: false }), plaintext, chunk);
      const opener = createCodec({ kind: 'open', key });
      assert.ok(Buffer.concat([...opener.write([sealed]), ...opener.end().out]).equals(plaintext), `sealed from ${chunk}-byte shared chunks`);
      assert.ok(feedShared(createCodec({ kind: 'open', key }), sealed, chunk).equals(plaintext), `opened from ${chunk}-byte shared chunks`);
    }
  });
});
