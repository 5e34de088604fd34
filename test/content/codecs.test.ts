import assert from 'node:assert/strict';
import { createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { Readable, Writable, type Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { describe, test } from 'node:test';
import { crc32 } from 'node:zlib';
import { nodeAead } from '../../src/content/aead.js';
import { CodecStream } from '../../src/content/codec-stream.js';
import { Opener, RangeOpener, Sealer } from '../../src/content/codecs.js';
import type { CryptoEngineName } from '../../src/content/engine.js';
import {
  CipherFormatError,
  FORMAT_VERSION,
  HEADER_BYTES,
  MAGIC,
  TAG_BYTES,
  type SegmentRange,
  type StreamHeader,
  newHeader,
  parseHeader,
  sealedSize,
  segmentOffset,
  segmentRange,
} from '../../src/content/format.js';
import { nativeEngine } from '../../src/content/native-engine.js';
import { requireNativeAddon } from '../support/native.js';
import { prng } from '../support/prng.js';

const SEG = 65536;
const SEALED_SEG = SEG + TAG_BYTES;

type Chunking = { name: string; sizes: (total: number) => Iterable<number> };

function fixed(n: number): Chunking {
  return {
    name: `${n}-byte chunks`,
    *sizes(total) {
      for (let i = 0; i < total; i += n) yield Math.min(n, total - i);
    },
  };
}
const WHOLE: Chunking = { name: 'one chunk', sizes: (total) => (total > 0 ? [total] : []) };
function randomSizes(seed: number): Chunking {
  return {
    name: `random chunks (seed ${seed})`,
    *sizes(total) {
      const rnd = prng(seed);
      let left = total;
      while (left > 0) {
        // Mix tiny chunks with chunks larger than a segment, to straddle every boundary.
        const r = rnd();
        const n = r < 0.3 ? 1 + Math.floor(rnd() * 32) : r < 0.6 ? 1 + Math.floor(rnd() * 4096) : 1 + Math.floor(rnd() * 150_000);
        const take = Math.min(n, left);
        left -= take;
        yield take;
      }
    },
  };
}

/** How far on each side of a boundary BYTEWISE feeds single bytes: past a header and a tag. */
const WINDOW = 64;
/** Whether `at` lies within WINDOW of a boundary: a segment's, plain or sealed, counted from the start or from the header's end. */
function nearBoundary(at: number): boolean {
  if (at < HEADER_BYTES + WINDOW) return true;
  return [SEG, SEALED_SEG].some((unit) =>
    [at, at - HEADER_BYTES].some((offset) => {
      const within = offset % unit;
      return within < WINDOW || within >= unit - WINDOW;
    }),
  );
}
/**
 * 1-byte chunks wherever a boundary may fall, one chunk for the stretch between: every boundary is
 * straddled byte by byte (as with 1-byte chunks throughout) without feeding a stream a hundred
 * thousand chunks, which only made these tests slow.
 */
const BYTEWISE: Chunking = {
  name: '1-byte chunks around every boundary',
  *sizes(total) {
    let at = 0;
    while (at < total) {
      let end = at + 1;
      if (!nearBoundary(at)) while (end < total && !nearBoundary(end)) end++;
      yield end - at;
      at = end;
    }
  },
};
const K1 = fixed(1000);
const K64 = fixed(65536);
const K5 = fixed(5000); // 14 pieces to a segment: sealed from its pieces (more are copied into one first)
const K100 = fixed(100_000);
const BIG_CHUNKINGS = [WHOLE, K1, K5, K64, K100, randomSizes(1), randomSizes(2)];
const ALL_CHUNKINGS = [BYTEWISE, ...BIG_CHUNKINGS];

function* chunksOf(data: Buffer, chunking: Chunking): Generator<Buffer> {
  let offset = 0;
  for (const n of chunking.sizes(data.length)) {
    yield data.subarray(offset, offset + n);
    offset += n;
  }
  assert.equal(offset, data.length);
}

/** Records everything a transform pushes, even bytes not yet read downstream. */
function spyOnPush(stream: Transform): Buffer[] {
  const seen: Buffer[] = [];
  const push = stream.push.bind(stream);
  stream.push = (chunk: unknown, encoding?: BufferEncoding) => {
    if (chunk !== null && chunk !== undefined) seen.push(Buffer.from(chunk as Buffer));
    return push(chunk, encoding);
  };
  return seen;
}

function collector(out: Buffer[]): Writable {
  return new Writable({
    write(chunk: Buffer, _encoding, callback) {
      out.push(chunk);
      callback();
    },
  });
}

async function run(stream: Transform, input: Buffer, chunking: Chunking = WHOLE): Promise<Buffer> {
  const out: Buffer[] = [];
  await pipeline(Readable.from(chunksOf(input, chunking)), stream, collector(out));
  return Buffer.concat(out);
}

/** The segment AEAD of an engine (the codecs run on the event loop with either). */
function aeadOf(engine: CryptoEngineName): (key: Buffer) => ReturnType<typeof nodeAead> {
  return engine === 'node' ? nodeAead : nativeEngine(requireNativeAddon()).aead;
}

/** Every suite below runs twice: the codecs over each engine's AEAD. */
test('the bytewise chunking feeds every byte near a boundary alone, and all of them', () => {
  const total = 3 * SEALED_SEG + 100;
  const sizes = [...BYTEWISE.sizes(total)];
  assert.equal(
    sizes.reduce((sum, n) => sum + n, 0),
    total,
  );
  const alone = new Set<number>();
  let at = 0;
  for (const n of sizes) {
    if (n === 1) alone.add(at);
    at += n;
  }
  for (const boundary of [HEADER_BYTES, SEG, SEALED_SEG, HEADER_BYTES + SEALED_SEG, 2 * SEG, 3 * SEALED_SEG]) {
    for (let offset = -TAG_BYTES; offset <= TAG_BYTES; offset++) assert.ok(alone.has(boundary + offset), `byte ${boundary + offset} alone`);
  }
  assert.ok(sizes.length < total / 50, `${sizes.length} chunks`);
});

function suite(engine: CryptoEngineName) {
  const aead = aeadOf(engine);
  class EncryptStream extends CodecStream {
    private readonly sealer: Sealer;
    constructor(key: Buffer, segmentLog2?: number, options: { checkInput?: (bytes: number) => void } = {}) {
      const sealer = new Sealer(aead(key), newHeader(segmentLog2), { hash: true });
      super(sealer, options);
      this.sealer = sealer;
    }
    get plaintextBytes(): number {
      return this.inputBytes;
    }
    get checksum(): string | undefined {
      return this.sealer.checksum;
    }
    get crc32(): number | undefined {
      return this.sealer.crc32;
    }
  }
  class DecryptStream extends CodecStream {
    constructor(key: Buffer) {
      super(new Opener(aead(key)));
    }
  }
  class RangeDecryptStream extends CodecStream {
    constructor(key: Buffer, header: StreamHeader, range: SegmentRange) {
      super(new RangeOpener(aead(key), header, range));
    }
  }

  const encrypt = (key: Buffer, plaintext: Buffer, chunking: Chunking = WHOLE) => run(new EncryptStream(key), plaintext, chunking);
  const decrypt = (key: Buffer, ciphertext: Buffer, chunking: Chunking = WHOLE) => run(new DecryptStream(key), ciphertext, chunking);

  /** Runs a stream that must fail; returns the error and all plaintext it emitted before failing. */
  async function runFailing(
    stream: Transform,
    input: Buffer,
    chunking: Chunking,
  ): Promise<{ error: unknown; emitted: Buffer; delivered: Buffer }> {
    const seen = spyOnPush(stream);
    const out: Buffer[] = [];
    let error: unknown = null;
    try {
      await pipeline(Readable.from(chunksOf(input, chunking)), stream, collector(out));
    } catch (e) {
      error = e;
    }
    assert.ok(error, `expected the stream to fail (${chunking.name})`);
    assert.ok(error instanceof CipherFormatError, `expected a CipherFormatError, got ${String(error)}`);
    const emitted = Buffer.concat(seen);
    const delivered = Buffer.concat(out);
    assert.ok(emitted.subarray(0, delivered.length).equals(delivered));
    return { error, emitted, delivered };
  }

  /**
   * Decryption of damaged ciphertext must fail, having emitted only whole authenticated segments
   * that come before the damage: at most `intactSegments` segments, equal to the original's prefix.
   */
  async function expectTamperDetected(key: Buffer, damaged: Buffer, plaintext: Buffer, intactSegments: number, chunkings = BIG_CHUNKINGS) {
    for (const chunking of chunkings) {
      const { emitted } = await runFailing(new DecryptStream(key), damaged, chunking);
      assert.ok(
        emitted.length <= intactSegments * SEG,
        `${chunking.name}: emitted ${emitted.length} bytes, allowed ${intactSegments * SEG}`,
      );
      assert.equal(emitted.length % SEG, 0, `${chunking.name}: emitted a partial segment (${emitted.length} bytes)`);
      assert.ok(emitted.equals(plaintext.subarray(0, emitted.length)), `${chunking.name}: emitted bytes differ from the plaintext`);
    }
  }

  function flip(buf: Buffer, at: number, mask = 0x01): Buffer {
    const copy = Buffer.from(buf);
    copy[at] ^= mask;
    return copy;
  }

  describe(`stream cipher: format (${engine})`, () => {
    test('sealedSize counts the header and one tag per segment (an empty stream has one segment)', () => {
      assert.equal(sealedSize(0), HEADER_BYTES + TAG_BYTES);
      assert.equal(sealedSize(1), HEADER_BYTES + 1 + TAG_BYTES);
      assert.equal(sealedSize(SEG), HEADER_BYTES + SEG + TAG_BYTES);
      assert.equal(sealedSize(SEG + 1), HEADER_BYTES + SEG + 1 + 2 * TAG_BYTES);
      assert.equal(sealedSize(1024, 1024), HEADER_BYTES + 1024 + TAG_BYTES);
      assert.equal(sealedSize(1025, 1024), HEADER_BYTES + 1025 + 2 * TAG_BYTES);
      assert.equal(segmentOffset(0, SEG), HEADER_BYTES);
      assert.equal(segmentOffset(3, SEG), HEADER_BYTES + 3 * SEALED_SEG);
    });

    test('header layout and segments follow the documented STREAM nonce (prefix | uint32be(index) | final flag, aad = header)', async () => {
      const key = randomBytes(32);
      const plaintext = randomBytes(SEG + 10);
      const ciphertext = await encrypt(key, plaintext);
      assert.ok(ciphertext.subarray(0, 4).equals(MAGIC));
      assert.equal(ciphertext[4], FORMAT_VERSION);
      assert.equal(ciphertext[5], 16);
      assert.deepEqual([...ciphertext.subarray(6, 9)], [0, 0, 0]);
      const header = parseHeader(ciphertext);
      assert.equal(header.segmentSize, SEG);
      assert.ok(header.noncePrefix.equals(ciphertext.subarray(9, 16)));
      assert.ok(header.bytes.equals(ciphertext.subarray(0, 16)));

      const open = (index: number, final: boolean, sealed: Buffer) => {
        const nonce = Buffer.concat([header.noncePrefix, Buffer.from([0, 0, 0, index]), Buffer.from([final ? 1 : 0])]);
        const d = createDecipheriv('aes-256-gcm', key, nonce);
        d.setAAD(ciphertext.subarray(0, HEADER_BYTES));
        d.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
        return Buffer.concat([d.update(sealed.subarray(0, sealed.length - TAG_BYTES)), d.final()]);
      };
      const seg0 = ciphertext.subarray(segmentOffset(0, SEG), segmentOffset(1, SEG));
      const seg1 = ciphertext.subarray(segmentOffset(1, SEG));
      assert.equal(seg1.length, 10 + TAG_BYTES);
      assert.ok(open(0, false, seg0).equals(plaintext.subarray(0, SEG)));
      assert.ok(open(1, true, seg1).equals(plaintext.subarray(SEG)));
      assert.throws(() => open(0, true, seg0));
      assert.throws(() => open(1, false, seg1));
    });

    test('parseHeader rejects short, foreign and malformed headers', () => {
      const good = Buffer.concat([MAGIC, Buffer.from([FORMAT_VERSION, 16, 0, 0, 0]), randomBytes(7)]);
      assert.equal(parseHeader(good).segmentSize, SEG);
      assert.throws(() => parseHeader(good.subarray(0, 15)), CipherFormatError);
      assert.throws(() => parseHeader(flip(good, 0)), CipherFormatError);
      assert.throws(() => parseHeader(flip(good, 4)), CipherFormatError);
      for (const log2 of [9, 25, 255]) {
        const bad = Buffer.from(good);
        bad[5] = log2;
        assert.throws(() => parseHeader(bad), CipherFormatError);
      }
      for (const at of [6, 7, 8]) assert.throws(() => parseHeader(flip(good, at)), CipherFormatError);
    });

    test('EncryptStream rejects a key that is not 32 bytes', () => {
      assert.throws(() => new EncryptStream(randomBytes(16)));
    });
  });

  describe(`stream cipher: round trips (${engine})`, () => {
    const key = randomBytes(32);
    const sizes = [0, 1, 65535, 65536, 65537, 2 * SEG, 3 * SEG + 100];
    for (const size of sizes) {
      test(`${size} bytes, every chunking`, async () => {
        const plaintext = randomBytes(size);
        for (const [i, chunking] of ALL_CHUNKINGS.entries()) {
          const enc = new EncryptStream(key);
          const ciphertext = await run(enc, plaintext, chunking);
          assert.equal(enc.plaintextBytes, size);
          assert.equal(ciphertext.length, sealedSize(size), chunking.name);
          // Decrypt with a different chunking than the one used to encrypt.
          const decChunking = ALL_CHUNKINGS[(i + 3) % ALL_CHUNKINGS.length];
          const back = await decrypt(key, ciphertext, decChunking);
          assert.ok(back.equals(plaintext), `${chunking.name} / ${decChunking.name}`);
        }
      });
    }

    test('10 MiB + 3 bytes', async () => {
      const size = 10 * 1024 * 1024 + 3;
      const plaintext = randomBytes(size);
      for (const [i, chunking] of BIG_CHUNKINGS.entries()) {
        const ciphertext = await encrypt(key, plaintext, chunking);
        assert.equal(ciphertext.length, sealedSize(size));
        const back = await decrypt(key, ciphertext, BIG_CHUNKINGS[(i + 1) % BIG_CHUNKINGS.length]);
        assert.ok(back.equals(plaintext), chunking.name);
      }
    });

    test('checkInput sees the running byte count, and its error fails the stream before that chunk is taken', async () => {
      const seen: number[] = [];
      const limit = 3 * SEG + 10;
      const enc = new EncryptStream(key, undefined, {
        checkInput: (bytes) => {
          seen.push(bytes);
          if (bytes > limit) throw new Error('over the limit');
        },
      });
      const chunks = Array.from({ length: 8 }, () => randomBytes(SEG));
      await assert.rejects(pipeline(Readable.from(chunks), enc, collector([])), /over the limit/);
      assert.deepEqual(seen, [SEG, 2 * SEG, 3 * SEG, 4 * SEG]);
      assert.equal(enc.plaintextBytes, 3 * SEG, 'the refused chunk was not taken');
    });

    test('the plaintext checksum is its SHA-256, and crc32 its CRC-32', async () => {
      for (const size of [0, 1, 700 * 1024, 3 * 1024 * 1024 + 5]) {
        const plaintext = randomBytes(size);
        for (const chunking of BIG_CHUNKINGS) {
          const enc = new EncryptStream(key);
          const ciphertext = await run(enc, plaintext, chunking);
          assert.equal(enc.checksum, `sha256:${createHash('sha256').update(plaintext).digest('hex')}`, `${size} bytes, ${chunking.name}`);
          assert.equal(enc.crc32, crc32(plaintext), `${size} bytes, ${chunking.name}`);
          assert.ok((await decrypt(key, ciphertext)).equals(plaintext));
        }
      }
    });

    test('two encryptions of the same plaintext differ (random nonce prefix)', async () => {
      for (const size of [0, 1, SEG + 1]) {
        const plaintext = randomBytes(size);
        const a = await encrypt(key, plaintext);
        const b = await encrypt(key, plaintext);
        assert.equal(a.length, b.length);
        assert.ok(!a.equals(b));
        assert.ok(!a.subarray(9, 16).equals(b.subarray(9, 16)), 'nonce prefixes differ');
        assert.ok(!a.subarray(HEADER_BYTES).equals(b.subarray(HEADER_BYTES)), 'segments differ');
        assert.ok((await decrypt(key, a)).equals(plaintext));
        assert.ok((await decrypt(key, b)).equals(plaintext));
      }
    });

    test('a smaller segment size (1 KiB) round trips and is recorded in the header', async () => {
      for (const size of [0, 1023, 1024, 1025, 5000]) {
        const plaintext = randomBytes(size);
        const ciphertext = await run(new EncryptStream(key, 10), plaintext, fixed(333));
        assert.equal(ciphertext[5], 10);
        assert.equal(ciphertext.length, sealedSize(size, 1024));
        assert.ok((await decrypt(key, ciphertext, fixed(777))).equals(plaintext));
      }
    });
  });

  describe(`stream cipher: back-pressure (${engine})`, () => {
    test('a slow reader holds the writer back: 64 MiB go through with a few MiB in memory', async () => {
      const key = randomBytes(32);
      const total = 64 * 1024 * 1024;
      const chunk = randomBytes(65536);
      let produced = 0;
      let consumed = 0;
      let maxLag = 0;
      const source = new Readable({
        read() {
          if (produced >= total) return this.push(null);
          produced += chunk.length;
          this.push(chunk);
        },
      });
      const slowSink = new Writable({
        highWaterMark: 1,
        write(data: Buffer, _encoding, callback) {
          consumed += data.length;
          maxLag = Math.max(maxLag, produced - consumed);
          setImmediate(callback);
        },
      });
      await pipeline(source, new EncryptStream(key), slowSink);
      assert.equal(consumed, sealedSize(total));
      assert.ok(maxLag < 16 * 1024 * 1024, `the writer ran ${(maxLag / 2 ** 20).toFixed(1)} MiB ahead of the reader`);
    });
  });

  describe(`stream cipher: tampering is detected and no unauthenticated plaintext is emitted (${engine})`, () => {
    const key = randomBytes(32);
    const plaintext = randomBytes(3 * SEG + 100); // segments 0..2 full, segment 3 final with 100 bytes
    const exact = randomBytes(3 * SEG); // segments 0..2 full, segment 2 final
    let ciphertext: Buffer;
    let exactCiphertext: Buffer;
    const seg = (i: number) => segmentOffset(i, SEG);

    test('setup', async () => {
      ciphertext = await encrypt(key, plaintext, randomSizes(7));
      exactCiphertext = await encrypt(key, exact, randomSizes(8));
      assert.equal(ciphertext.length, seg(3) + 100 + TAG_BYTES);
      assert.equal(exactCiphertext.length, seg(3));
      assert.ok((await decrypt(key, ciphertext)).equals(plaintext));
    });

    test('a flipped header byte: nothing is emitted', async () => {
      for (let at = 0; at < HEADER_BYTES; at++) {
        for (const mask of [0x01, 0x80]) {
          await expectTamperDetected(key, flip(ciphertext, at, mask), plaintext, 0, [WHOLE, K1, randomSizes(at)]);
        }
      }
      // Also a header that claims another valid segment size.
      const resized = Buffer.from(ciphertext);
      resized[5] = 12;
      await expectTamperDetected(key, resized, plaintext, 0, [WHOLE, K1]);
      await expectTamperDetected(key, flip(ciphertext, 12), plaintext, 0, [BYTEWISE]);
    });

    test('a flipped segment body byte', async () => {
      for (let k = 0; k < 4; k++) {
        for (const within of [0, 5, 50]) {
          await expectTamperDetected(key, flip(ciphertext, seg(k) + within), plaintext, k);
        }
      }
      await expectTamperDetected(key, flip(ciphertext, seg(1) + SEG - 1), plaintext, 1);
      await expectTamperDetected(key, flip(ciphertext, seg(3) + 99), plaintext, 3);
    });

    test('a flipped tag byte', async () => {
      for (let k = 0; k < 3; k++) {
        await expectTamperDetected(key, flip(ciphertext, seg(k) + SEG), plaintext, k);
        await expectTamperDetected(key, flip(ciphertext, seg(k + 1) - 1, 0x40), plaintext, k);
      }
      await expectTamperDetected(key, flip(ciphertext, ciphertext.length - 1), plaintext, 3);
      await expectTamperDetected(key, flip(ciphertext, ciphertext.length - TAG_BYTES), plaintext, 3);
    });

    test('two swapped segments', async () => {
      const swap = (buf: Buffer, a: number, b: number) => {
        const copy = Buffer.from(buf);
        buf.copy(copy, seg(a), seg(b), seg(b + 1));
        buf.copy(copy, seg(b), seg(a), seg(a + 1));
        return copy;
      };
      await expectTamperDetected(key, swap(ciphertext, 0, 1), plaintext, 0);
      await expectTamperDetected(key, swap(ciphertext, 1, 2), plaintext, 1);
      await expectTamperDetected(key, swap(ciphertext, 0, 2), plaintext, 0);
      // The final segment swapped with a full one in an exact-multiple stream.
      await expectTamperDetected(key, swap(exactCiphertext, 1, 2), exact, 1);
      // A segment repeated in place of the next one.
      const repeated = Buffer.from(ciphertext);
      ciphertext.copy(repeated, seg(2), seg(1), seg(2));
      await expectTamperDetected(key, repeated, plaintext, 2);
    });

    test('truncation at a segment edge (the previous segment then ends the stream)', async () => {
      await expectTamperDetected(key, ciphertext.subarray(0, seg(3)), plaintext, 2);
      await expectTamperDetected(key, ciphertext.subarray(0, seg(2)), plaintext, 1);
      await expectTamperDetected(key, ciphertext.subarray(0, seg(1)), plaintext, 0);
      await expectTamperDetected(key, exactCiphertext.subarray(0, seg(2)), exact, 1);
      // Only the header left, or less.
      await expectTamperDetected(key, ciphertext.subarray(0, HEADER_BYTES), plaintext, 0, [WHOLE, BYTEWISE]);
      await expectTamperDetected(key, ciphertext.subarray(0, HEADER_BYTES - 1), plaintext, 0, [WHOLE, BYTEWISE]);
      await expectTamperDetected(key, Buffer.alloc(0), plaintext, 0, [WHOLE]);
    });

    test('truncation between segment edges', async () => {
      await expectTamperDetected(key, ciphertext.subarray(0, seg(2) + 1000), plaintext, 2);
      await expectTamperDetected(key, ciphertext.subarray(0, seg(2) + SEG), plaintext, 2); // tag removed
      await expectTamperDetected(key, ciphertext.subarray(0, seg(3) - 1), plaintext, 2);
      await expectTamperDetected(key, ciphertext.subarray(0, ciphertext.length - 1), plaintext, 3);
      await expectTamperDetected(key, ciphertext.subarray(0, seg(3) + TAG_BYTES - 1), plaintext, 3);
      await expectTamperDetected(key, ciphertext.subarray(0, seg(0) + 5), plaintext, 0);
      await expectTamperDetected(key, exactCiphertext.subarray(0, exactCiphertext.length - 1), exact, 2);
    });

    test('appended bytes: a whole extra segment, or a few bytes', async () => {
      // A full fake segment after a stream whose last segment is full: that segment is no longer final.
      await expectTamperDetected(key, Buffer.concat([exactCiphertext, randomBytes(SEALED_SEG)]), exact, 2);
      await expectTamperDetected(key, Buffer.concat([exactCiphertext, exactCiphertext.subarray(seg(1), seg(2))]), exact, 2);
      await expectTamperDetected(key, Buffer.concat([ciphertext, randomBytes(SEALED_SEG)]), plaintext, 3);
      await expectTamperDetected(key, Buffer.concat([ciphertext, randomBytes(100 + TAG_BYTES)]), plaintext, 3);
      // A few bytes.
      for (const n of [1, 15, 16, 17]) {
        await expectTamperDetected(key, Buffer.concat([ciphertext, randomBytes(n)]), plaintext, 3);
        await expectTamperDetected(key, Buffer.concat([exactCiphertext, randomBytes(n)]), exact, 2);
      }
      await expectTamperDetected(key, Buffer.concat([exactCiphertext, Buffer.alloc(TAG_BYTES)]), exact, 2, [BYTEWISE]);
    });

    test('a wrong key: nothing is emitted', async () => {
      await expectTamperDetected(randomBytes(32), ciphertext, plaintext, 0, ALL_CHUNKINGS);
      await expectTamperDetected(randomBytes(32), await encrypt(key, Buffer.alloc(0)), Buffer.alloc(0), 0, [WHOLE]);
      // A key of the wrong length is refused before any stream exists.
      assert.throws(() => new DecryptStream(randomBytes(16)), /32 bytes/);
    });

    test('an empty stream with a damaged tag fails', async () => {
      const empty = await encrypt(key, Buffer.alloc(0));
      assert.ok((await decrypt(key, empty)).equals(Buffer.alloc(0)));
      await expectTamperDetected(key, flip(empty, HEADER_BYTES + 3), Buffer.alloc(0), 0, [WHOLE, BYTEWISE]);
    });
  });

  describe(`stream cipher: ranged decryption (${engine})`, () => {
    const key = randomBytes(32);
    const size = 3 * SEG + 100;
    const plaintext = randomBytes(size);
    let ciphertext: Buffer;

    const ranged = (cipher: Buffer, start: number, end: number, plainSize = size) => {
      const range = segmentRange(plainSize, start, end, SEG);
      return { range, stored: cipher.subarray(range.storedStart, range.storedEnd + 1) };
    };

    test('setup', async () => {
      ciphertext = await encrypt(key, plaintext);
    });

    test('segmentRange maps ranges to stored bytes', () => {
      assert.deepEqual(segmentRange(size, 0, SEG - 1, SEG), {
        firstSegment: 0,
        lastSegment: 0,
        storedStart: HEADER_BYTES,
        storedEnd: HEADER_BYTES + SEALED_SEG - 1,
        skip: 0,
        length: SEG,
        totalSegments: 4,
      });
      assert.deepEqual(segmentRange(size, SEG - 1, SEG, SEG), {
        firstSegment: 0,
        lastSegment: 1,
        storedStart: HEADER_BYTES,
        storedEnd: HEADER_BYTES + 2 * SEALED_SEG - 1,
        skip: SEG - 1,
        length: 2,
        totalSegments: 4,
      });
      const last = segmentRange(size, size - 1, size - 1, SEG);
      assert.equal(last.firstSegment, 3);
      assert.equal(last.storedStart, segmentOffset(3, SEG));
      assert.equal(last.storedEnd, sealedSize(size) - 1);
      assert.equal(last.skip, 99);
      assert.equal(last.length, 1);
      const whole = segmentRange(size, 0, size - 1, SEG);
      assert.equal(whole.storedStart, HEADER_BYTES);
      assert.equal(whole.storedEnd, sealedSize(size) - 1);
      const exactLast = segmentRange(2 * SEG, 2 * SEG - 1, 2 * SEG - 1, SEG);
      assert.equal(exactLast.storedEnd, sealedSize(2 * SEG) - 1);
      assert.equal(exactLast.totalSegments, 2);
    });

    const cases: Array<[string, number, number]> = [
      ['first segment exactly (0..65535)', 0, SEG - 1],
      ['across the first edge (65535..65536)', SEG - 1, SEG],
      ['first byte of segment 1 (65536..65536)', SEG, SEG],
      ['segment 1 exactly (65536..131071)', SEG, 2 * SEG - 1],
      ['last byte only', size - 1, size - 1],
      ['whole file', 0, size - 1],
      ['first byte only', 0, 0],
      ['one byte in the middle', 100_000, 100_000],
      ['spanning three segments', 60_000, 140_000],
      ['spanning into the final segment', 2 * SEG - 5, 3 * SEG + 5],
      ['the final segment exactly', 3 * SEG, size - 1],
    ];
    for (const [name, start, end] of cases) {
      test(`range ${name}`, async () => {
        const { range, stored } = ranged(ciphertext, start, end);
        for (const chunking of ALL_CHUNKINGS) {
          const out = await run(new RangeDecryptStream(key, parseHeader(ciphertext), range), stored, chunking);
          assert.ok(out.equals(plaintext.subarray(start, end + 1)), `${chunking.name}`);
        }
      });
    }

    test('random ranges (seeded)', async () => {
      const rnd = prng(42);
      const header = parseHeader(ciphertext);
      for (let i = 0; i < 40; i++) {
        const a = Math.floor(rnd() * size);
        const b = Math.floor(rnd() * size);
        const [start, end] = a <= b ? [a, b] : [b, a];
        const { range, stored } = ranged(ciphertext, start, end);
        const out = await run(new RangeDecryptStream(key, header, range), stored, randomSizes(i));
        assert.ok(out.equals(plaintext.subarray(start, end + 1)), `${start}..${end}`);
      }
    });

    test('ranges of a stream whose size is a multiple of the segment size', async () => {
      const exact = randomBytes(2 * SEG);
      const cipher = await encrypt(key, exact);
      for (const [start, end] of [
        [0, 2 * SEG - 1],
        [SEG, 2 * SEG - 1],
        [2 * SEG - 1, 2 * SEG - 1],
        [0, SEG - 1],
      ]) {
        const { range, stored } = ranged(cipher, start, end, exact.length);
        const out = await run(new RangeDecryptStream(key, parseHeader(cipher), range), stored, K1);
        assert.ok(out.equals(exact.subarray(start, end + 1)));
      }
    });

    /** Only whole authenticated segments before the damage, trimmed to the range, may come out. */
    async function expectRangeFails(
      input: Buffer,
      start: number,
      end: number,
      intactSegments: number,
      opts: { key?: Buffer; plainSize?: number; header?: Buffer } = {},
    ) {
      const range = segmentRange(opts.plainSize ?? size, start, end, SEG);
      const allowed = Math.max(0, Math.min(end + 1, (range.firstSegment + intactSegments) * SEG) - start);
      for (const chunking of [WHOLE, K1, K64, randomSizes(3)]) {
        const stream = new RangeDecryptStream(opts.key ?? key, parseHeader(opts.header ?? ciphertext), range);
        const { emitted } = await runFailing(stream, input, chunking);
        assert.ok(emitted.length <= allowed, `${chunking.name}: emitted ${emitted.length}, allowed ${allowed}`);
        assert.ok(emitted.equals(plaintext.subarray(start, start + emitted.length)), chunking.name);
      }
    }

    test('tampering within a ranged segment fails', async () => {
      const [start, end] = [60_000, 140_000]; // segments 0..2
      const { range, stored } = ranged(ciphertext, start, end);
      const at = (segment: number, within: number) => segmentOffset(segment, SEG) - range.storedStart + within;
      await expectRangeFails(flip(stored, at(0, 7)), start, end, 0);
      await expectRangeFails(flip(stored, at(1, 7)), start, end, 1);
      await expectRangeFails(flip(stored, at(1, SEG + 3)), start, end, 1); // tag
      await expectRangeFails(flip(stored, stored.length - 1), start, end, 2); // last tag byte
      // Segments swapped within the range.
      const swapped = Buffer.from(stored);
      stored.copy(swapped, at(1, 0), at(2, 0), at(3, 0));
      stored.copy(swapped, at(2, 0), at(1, 0), at(2, 0));
      await expectRangeFails(swapped, start, end, 1);
      // The final segment damaged.
      const last = ranged(ciphertext, size - 10, size - 1);
      await expectRangeFails(flip(last.stored, 3), size - 10, size - 1, 0);
      // Bytes read from the wrong offset.
      const shifted = ciphertext.subarray(range.storedStart + 1, range.storedEnd + 2);
      await expectRangeFails(shifted, start, end, 0);
    });

    test('a damaged header or a wrong key fails', async () => {
      const { stored } = ranged(ciphertext, 0, size - 1);
      await expectRangeFails(stored, 0, size - 1, 0, { key: randomBytes(32) });
      for (const at of [5, 9, 15]) {
        const header = flip(ciphertext.subarray(0, HEADER_BYTES), at);
        if (at === 5) {
          assert.throws(() => parseHeader(flip(ciphertext.subarray(0, HEADER_BYTES), at, 0x80)), CipherFormatError);
        }
        await expectRangeFails(stored, 0, size - 1, 0, { header });
      }
    });

    test('a truncated or lengthened ranged input fails at the end', async () => {
      const [start, end] = [60_000, 140_000];
      const { stored } = ranged(ciphertext, start, end);
      await expectRangeFails(stored.subarray(0, stored.length - 1), start, end, 2);
      await expectRangeFails(stored.subarray(0, 2 * SEALED_SEG), start, end, 2); // last segment missing
      await expectRangeFails(stored.subarray(0, SEALED_SEG + 10), start, end, 1);
      await expectRangeFails(Buffer.alloc(0), start, end, 0);
      await expectRangeFails(Buffer.concat([stored, Buffer.from([0])]), start, end, 3);
      const last = ranged(ciphertext, size - 1, size - 1);
      await expectRangeFails(last.stored.subarray(0, last.stored.length - 1), size - 1, size - 1, 0);
      await expectRangeFails(Buffer.concat([last.stored, randomBytes(SEALED_SEG)]), size - 1, size - 1, 1);
    });

    test('a wrong plaintext size (the blob looks shortened) fails on the final flag', async () => {
      // Claim the blob holds 2 segments: segment 1 is then read as the final one, and is not.
      const claimed = 2 * SEG;
      const { range, stored } = ranged(ciphertext, 0, claimed - 1, claimed);
      assert.equal(range.totalSegments, 2);
      await expectRangeFails(stored, 0, claimed - 1, 1, { plainSize: claimed });
      // Claim more than there is: the final segment is read as a full, non-final one.
      const bigger = 4 * SEG;
      const r = segmentRange(bigger, 3 * SEG, 3 * SEG + 50, SEG);
      await expectRangeFails(ciphertext.subarray(r.storedStart, r.storedEnd + 1), 3 * SEG, 3 * SEG + 50, 0, { plainSize: bigger });
    });

    test('out-of-range arguments throw RangeError', () => {
      assert.throws(() => segmentRange(size, -1, 10, SEG), RangeError);
      assert.throws(() => segmentRange(size, 10, 9, SEG), RangeError);
      assert.throws(() => segmentRange(size, 0, size, SEG), RangeError);
      assert.throws(() => segmentRange(size, size, size, SEG), RangeError);
      assert.throws(() => segmentRange(size, size + 5, size + 10, SEG), RangeError);
      assert.throws(() => segmentRange(0, 0, 0, SEG), RangeError);
      assert.doesNotThrow(() => segmentRange(size, 0, size - 1, SEG));
      assert.doesNotThrow(() => segmentRange(1, 0, 0, SEG));
    });
  });
}

for (const engine of ['node', 'native'] as const) suite(engine);
