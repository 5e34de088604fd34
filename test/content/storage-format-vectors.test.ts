import assert from 'node:assert/strict';
import { createCipheriv, createDecipheriv, createHash } from 'node:crypto';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { Readable } from 'node:stream';
import { chooseEngine } from '../../src/content/choose-engine.js';
import { Opener, RangeOpener, Sealer, type SegmentCodec } from '../../src/content/codecs.js';
import { CipherFormatError, newHeader, parseHeader, sealedSize, segmentCount, segmentRange } from '../../src/content/format.js';
import { KeyUnwrapError, unwrapKey, wrapKey } from '../../src/crypto/key-wrap.js';
import { requireNativeAddon } from '../support/native.js';
import {
  DamagedContentError,
  SegmentDecryptor,
  WrongKeyError,
  decryptStream,
  unwrapChain,
  type WebKey,
} from '../../web/src/crypto/sealed.js';

// The vectors of docs/storage-format.md (test/fixtures/storage-format-vectors.json, written by
// test/fixtures/make-storage-format-vectors.ts), checked against a reference written here with raw
// node:crypto, and against every implementation of the format: the segment codecs on both AES-GCM
// implementations, the native addon's calls, the browser's decryptor and the key wrapping.

interface RangeVector {
  start: number;
  end: number;
  firstSegment: number;
  lastSegment: number;
  storedStart: number;
  storedEnd: number;
  skip: number;
}
interface StreamVector {
  name: string;
  dataKey: string;
  noncePrefix: string;
  segmentLog2: number;
  plaintext: { hex: string } | { pattern: 'i % 251'; length: number };
  segments: number;
  stored: { hex: string } | { length: number; sha256: string; first64: string; last64: string };
  ranges: RangeVector[];
}
interface RejectedVector {
  name: string;
  from: string;
  dataKey: string;
  stored: { hex: string };
}
interface WrapVector {
  name: string;
  kek: string;
  key: string;
  keyId: string;
  nonce: string;
  wrapped: string;
}
interface ChainVector {
  name: string;
  linkKey: string;
  chain: string[];
  ids: string[];
  wraps: string[];
  stream: string;
}
interface Vectors {
  streams: StreamVector[];
  rejected: RejectedVector[];
  keyWraps: WrapVector[];
  linkChains: ChainVector[];
}

const vectors = JSON.parse(readFileSync(new URL('../fixtures/storage-format-vectors.json', import.meta.url), 'utf8')) as Vectors;
const hex = (text: string) => Buffer.from(text, 'hex');

// --- The reference: the document in raw node:crypto ------------------------------------------

const TAG = 16;

function nonceOf(prefix: Buffer, index: number, final: boolean): Buffer {
  const nonce = Buffer.alloc(12);
  prefix.copy(nonce, 0);
  nonce.writeUInt32BE(index, 7);
  nonce[11] = final ? 1 : 0;
  return nonce;
}

function refSealSegment(key: Buffer, header: Buffer, index: number, final: boolean, plain: Buffer): Buffer {
  const cipher = createCipheriv('aes-256-gcm', key, nonceOf(header.subarray(9, 16), index, final));
  cipher.setAAD(header);
  return Buffer.concat([cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
}

function refOpenSegment(key: Buffer, header: Buffer, index: number, final: boolean, sealed: Buffer): Buffer {
  if (sealed.length < TAG) throw new Error(`segment ${index} is shorter than a tag`);
  const decipher = createDecipheriv('aes-256-gcm', key, nonceOf(header.subarray(9, 16), index, final));
  decipher.setAAD(header);
  decipher.setAuthTag(sealed.subarray(sealed.length - TAG));
  return Buffer.concat([decipher.update(sealed.subarray(0, sealed.length - TAG)), decipher.final()]);
}

function refHeader(segmentLog2: number, prefix: Buffer): Buffer {
  const header = Buffer.alloc(16);
  header.write('CFRS', 0, 'ascii');
  header[4] = 1;
  header[5] = segmentLog2;
  prefix.copy(header, 9);
  return header;
}

function refSeal(key: Buffer, prefix: Buffer, segmentLog2: number, plaintext: Buffer): Buffer {
  const header = refHeader(segmentLog2, prefix);
  const size = 1 << segmentLog2;
  const out = [header];
  let index = 0;
  let at = 0;
  do {
    const plain = plaintext.subarray(at, at + size);
    at += plain.length;
    out.push(refSealSegment(key, header, index++, at >= plaintext.length, plain));
  } while (at < plaintext.length);
  return Buffer.concat(out);
}

/** Opens a whole stored stream: the last segment present is the final one. */
function refOpen(key: Buffer, stored: Buffer): Buffer {
  const header = stored.subarray(0, 16);
  if (header.length < 16 || header.toString('latin1', 0, 4) !== 'CFRS' || header[4] !== 1) throw new Error('bad header');
  if (header[5] < 10 || header[5] > 24 || header[6] !== 0 || header[7] !== 0 || header[8] !== 0) throw new Error('bad header');
  const sealed = (1 << header[5]) + TAG;
  const body = stored.subarray(16);
  if (body.length === 0) throw new Error('no segment');
  const out: Buffer[] = [];
  for (let index = 0, at = 0; at < body.length; index++, at += sealed) {
    out.push(refOpenSegment(key, header, index, at + sealed >= body.length, body.subarray(at, at + sealed)));
  }
  return Buffer.concat(out);
}

/** Opens the segments of a range (stored bytes storedStart..storedEnd) and trims them to the range. */
function refOpenRange(key: Buffer, header: Buffer, storedRange: Buffer, r: RangeVector, totalSegments: number): Buffer {
  const sealed = (1 << header[5]) + TAG;
  const out: Buffer[] = [];
  for (let index = r.firstSegment, at = 0; index <= r.lastSegment; index++, at += sealed) {
    out.push(refOpenSegment(key, header, index, index === totalSegments - 1, storedRange.subarray(at, at + sealed)));
  }
  return Buffer.concat(out).subarray(r.skip, r.skip + r.end - r.start + 1);
}

function refWrap(kek: Buffer, key: Buffer, keyId: string, nonce: Buffer): string {
  const cipher = createCipheriv('aes-256-gcm', kek, nonce);
  cipher.setAAD(Buffer.from(keyId, 'utf8'));
  return Buffer.concat([nonce, cipher.update(key), cipher.final(), cipher.getAuthTag()]).toString('base64url');
}

function refUnwrap(kek: Buffer, wrapped: string, keyId: string): Buffer {
  const raw = Buffer.from(wrapped, 'base64url');
  const decipher = createDecipheriv('aes-256-gcm', kek, raw.subarray(0, 12));
  decipher.setAAD(Buffer.from(keyId, 'utf8'));
  decipher.setAuthTag(raw.subarray(44));
  return Buffer.concat([decipher.update(raw.subarray(12, 44)), decipher.final()]);
}

// --- The vectors' data -------------------------------------------------------------------------

function plaintextOf(v: StreamVector): Buffer {
  if ('hex' in v.plaintext) return hex(v.plaintext.hex);
  assert.equal(v.plaintext.pattern, 'i % 251', 'the only plaintext generator');
  const out = Buffer.alloc(v.plaintext.length);
  for (let i = 0; i < out.length; i++) out[i] = i % 251;
  return out;
}

/** The first offset where two buffers differ (or the shorter length). */
function firstDifference(a: Buffer, b: Buffer): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return i;
  return n;
}

/** Asserts that `bytes` are the vector's stored bytes, in whichever form the vector gives them. */
function assertStored(v: StreamVector, bytes: Buffer, what: string): void {
  if ('hex' in v.stored) {
    const expected = hex(v.stored.hex);
    assert.ok(
      bytes.equals(expected),
      `${what} (${v.name}): ${bytes.length} stored bytes, expected ${expected.length}, first difference at byte ${firstDifference(bytes, expected)}`,
    );
    return;
  }
  assert.equal(bytes.length, v.stored.length, `${what} (${v.name}): stored length`);
  assert.equal(bytes.subarray(0, 64).toString('hex'), v.stored.first64, `${what} (${v.name}): first 64 stored bytes`);
  assert.equal(bytes.subarray(-64).toString('hex'), v.stored.last64, `${what} (${v.name}): last 64 stored bytes`);
  assert.equal(createHash('sha256').update(bytes).digest('hex'), v.stored.sha256, `${what} (${v.name}): SHA-256 of the stored bytes`);
}

interface Stream {
  v: StreamVector;
  key: Buffer;
  prefix: Buffer;
  segmentSize: number;
  plaintext: Buffer;
  /**
   * The stored bytes: the vector's hex, or for a long vector the reference's (which the reference's
   * test checks against the vector's length, digest and ends).
   */
  stored: Buffer;
  /** The header built from the vector's fields (segment log2, nonce prefix), not read from `stored`. */
  header: Buffer;
}

const streams: Stream[] = vectors.streams.map((v) => {
  const key = hex(v.dataKey);
  const prefix = hex(v.noncePrefix);
  const plaintext = plaintextOf(v);
  const stored = 'hex' in v.stored ? hex(v.stored.hex) : refSeal(key, prefix, v.segmentLog2, plaintext);
  return { v, key, prefix, segmentSize: 2 ** v.segmentLog2, plaintext, stored, header: refHeader(v.segmentLog2, prefix) };
});
const streamNamed = (name: string) => streams.find((s) => s.v.name === name)!;

/** Cuts `bytes` into chunks of the sizes given, over and over (odd sizes: socket reads never line up with segments). */
function chunked(bytes: Buffer, sizes: number[]): Buffer[] {
  const out: Buffer[] = [];
  for (let at = 0, i = 0; at < bytes.length; i++) {
    const size = sizes[i % sizes.length];
    out.push(bytes.subarray(at, at + size));
    at += size;
  }
  return out;
}
const CHUNKINGS = [[1 << 30], [1, 15, 16, 17, 1039, 1041, 4093], [7], [1000, 3]];

test('the fixture holds every case the document promises', () => {
  const shapes = streams.map((s) => `${s.plaintext.length}@${s.v.segmentLog2}`);
  for (const shape of ['0@16', '1@16', '1024@10', '1025@10', '2500@10', '65537@16']) assert.ok(shapes.includes(shape), `a ${shape} vector`);
  assert.ok(
    streams.some((s) => !('hex' in s.v.stored)),
    'a long-form vector',
  );
  assert.ok(vectors.rejected.length >= 5 && vectors.keyWraps.length >= 7 && vectors.linkChains.length >= 2);
});

// --- Reference ---------------------------------------------------------------------------------

describe('storage-format vectors: raw node:crypto reference', () => {
  for (const s of streams) {
    test(`${s.v.name}: seals to the stored bytes and opens back`, () => {
      assertStored(s.v, refSeal(s.key, s.prefix, s.v.segmentLog2, s.plaintext), 'reference seal');
      assert.equal(
        s.stored.length,
        16 + s.plaintext.length + TAG * Math.max(1, Math.ceil(s.plaintext.length / s.segmentSize)),
        'stored size formula',
      );
      assert.equal(s.v.segments, Math.max(1, Math.ceil(s.plaintext.length / s.segmentSize)), 'segment count');
      assert.ok(refOpen(s.key, s.stored).equals(s.plaintext), 'reference open');
    });
    if (s.v.ranges.length > 0) {
      test(`${s.v.name}: each range's stored bytes open to its plaintext`, () => {
        for (const r of s.v.ranges) {
          const got = refOpenRange(s.key, s.header, s.stored.subarray(r.storedStart, r.storedEnd + 1), r, s.v.segments);
          assert.ok(got.equals(s.plaintext.subarray(r.start, r.end + 1)), `range ${r.start}-${r.end}`);
        }
      });
    }
  }
  for (const r of vectors.rejected) {
    test(`rejected ${r.name}: does not open`, () => {
      assert.throws(() => refOpen(hex(r.dataKey), hex(r.stored.hex)));
    });
  }
});

// --- Segment codecs ----------------------------------------------------------------------------

function runCodec(codec: SegmentCodec, chunks: Buffer[]): Buffer {
  const out: Buffer[] = [];
  for (const chunk of chunks) out.push(...codec.write([chunk]));
  out.push(...codec.end());
  return Buffer.concat(out);
}

describe('storage-format vectors: format arithmetic (format.ts)', () => {
  for (const s of streams) {
    test(`${s.v.name}: sizes and range mapping`, () => {
      assert.equal(sealedSize(s.plaintext.length, s.segmentSize), s.stored.length, 'sealedSize');
      assert.equal(segmentCount(s.plaintext.length, s.segmentSize), s.v.segments, 'segmentCount');
      for (const r of s.v.ranges) {
        const range = segmentRange(s.plaintext.length, r.start, r.end, s.segmentSize);
        assert.deepEqual(
          {
            firstSegment: range.firstSegment,
            lastSegment: range.lastSegment,
            storedStart: range.storedStart,
            storedEnd: range.storedEnd,
            skip: range.skip,
            length: range.length,
            totalSegments: range.totalSegments,
          },
          {
            firstSegment: r.firstSegment,
            lastSegment: r.lastSegment,
            storedStart: r.storedStart,
            storedEnd: r.storedEnd,
            skip: r.skip,
            length: r.end - r.start + 1,
            totalSegments: s.v.segments,
          },
          `range ${r.start}-${r.end}`,
        );
      }
    });
  }
});

const nativeAddon = requireNativeAddon();
const ENGINES = [chooseEngine('native'), chooseEngine('node')];

for (const engine of ENGINES) {
  describe(`storage-format vectors: segment codecs (${engine.name} engine's AES-GCM)`, () => {
    for (const s of streams) {
      test(`${s.v.name}: seals to the stored bytes, opens back, opens ranges`, () => {
        for (const sizes of CHUNKINGS) {
          const sealer = new Sealer(engine.aead(s.key), newHeader(s.v.segmentLog2, s.prefix), { hash: true });
          assertStored(s.v, runCodec(sealer, chunked(s.plaintext, sizes)), `seal in chunks of ${sizes}`);
          assert.equal(sealer.checksum, `sha256:${createHash('sha256').update(s.plaintext).digest('hex')}`, 'checksum of the plaintext');
          const opened = runCodec(new Opener(engine.aead(s.key)), chunked(s.stored, sizes));
          assert.ok(opened.equals(s.plaintext), `open in chunks of ${sizes}`);
        }
        for (const r of s.v.ranges) {
          const range = segmentRange(s.plaintext.length, r.start, r.end, s.segmentSize);
          for (const sizes of [[1 << 30], [13, 1041]]) {
            const opened = runCodec(
              new RangeOpener(engine.aead(s.key), parseHeader(s.header), range),
              chunked(s.stored.subarray(r.storedStart, r.storedEnd + 1), sizes),
            );
            assert.ok(opened.equals(s.plaintext.subarray(r.start, r.end + 1)), `range ${r.start}-${r.end} in chunks of ${sizes}`);
          }
        }
      });
    }
    for (const r of vectors.rejected) {
      test(`rejected ${r.name}: the opener fails`, () => {
        for (const sizes of [[1 << 30], [7]]) {
          assert.throws(() => runCodec(new Opener(engine.aead(hex(r.dataKey))), chunked(hex(r.stored.hex), sizes)), CipherFormatError);
        }
      });
    }
  });

  describe(`storage-format vectors: ${engine.name} engine into and out of a blob file`, () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'coffre-vectors-engine-'));
    after(() => rmSync(dir, { recursive: true, force: true }));
    for (const s of streams) {
      test(`${s.v.name}: sealIntoFile writes the stored bytes; openFile reads back every range`, async () => {
        const file = path.join(dir, `${engine.name}-${s.v.name}`);
        const fd = openSync(file, 'w');
        try {
          const summary = await engine.sealIntoFile(
            Readable.from(chunked(s.plaintext, [4093])),
            s.key,
            { fd, wrote: () => {} },
            { sourceOwnsChunks: false, checkInput: () => {}, segmentLog2: s.v.segmentLog2, noncePrefix: s.prefix },
          );
          assert.equal(summary.size, s.plaintext.length);
        } finally {
          closeSync(fd);
        }
        assertStored(s.v, readFileSync(file), 'sealIntoFile');
        for (const r of s.v.ranges) {
          const opened = engine.openFile(
            await open(file, 'r'),
            s.key,
            parseHeader(s.header),
            segmentRange(s.plaintext.length, r.start, r.end, s.segmentSize),
          );
          assert.ok(Buffer.concat(await opened.toArray()).equals(s.plaintext.subarray(r.start, r.end + 1)), `range ${r.start}-${r.end}`);
        }
      });
    }
  });
}

// --- Native addon ------------------------------------------------------------------------------

describe('storage-format vectors: native addon (native/*.c)', () => {
  const addon = nativeAddon;
  const dir = mkdtempSync(path.join(tmpdir(), 'coffre-vectors-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  let files = 0;
  /** A new file holding `bytes`, open for reading and writing; closed after `use`. */
  async function withFile<T>(bytes: Buffer, use: (fd: number, file: string) => Promise<T>): Promise<T> {
    const file = path.join(dir, `blob-${files++}`);
    writeFileSync(file, bytes);
    const fd = openSync(file, 'r+');
    try {
      return await use(fd, file);
    } finally {
      closeSync(fd);
    }
  }

  for (const s of streams) {
    const segmentPlain = (i: number) => s.plaintext.subarray(i * s.segmentSize, (i + 1) * s.segmentSize);
    const segmentStored = (i: number) => s.stored.subarray(16 + i * (s.segmentSize + TAG), 16 + (i + 1) * (s.segmentSize + TAG));

    test(`${s.v.name}: seal and open, one segment at a time`, () => {
      const context = addon.context(s.key);
      for (let i = 0; i < s.v.segments; i++) {
        const final = i === s.v.segments - 1;
        const plain = segmentPlain(i);
        const out = Buffer.alloc(plain.length + TAG + 3, 0xee);
        assert.equal(addon.seal(context, nonceOf(s.prefix, i, final), s.header, plain, out, 3), plain.length + TAG);
        assert.ok(out.subarray(3).equals(segmentStored(i)), `segment ${i} sealed`);
        const pieces = [plain.subarray(0, 1), plain.subarray(1, 500), plain.subarray(500)];
        const fromPieces = Buffer.alloc(plain.length + TAG);
        addon.seal(context, nonceOf(s.prefix, i, final), s.header, pieces, fromPieces, 0);
        assert.ok(fromPieces.equals(segmentStored(i)), `segment ${i} sealed from pieces`);
        const back = Buffer.alloc(plain.length + 5);
        assert.equal(
          addon.open(context, nonceOf(s.prefix, i, final), s.header, segmentStored(i), back, 5),
          plain.length,
          `segment ${i} opens`,
        );
        assert.ok(back.subarray(5).equals(plain), `segment ${i} opened`);
        assert.equal(
          addon.open(context, nonceOf(s.prefix, i, !final), s.header, segmentStored(i), back, 5),
          -1,
          `segment ${i} with the other final flag`,
        );
      }
    });

    test(`${s.v.name}: sealWrite writes the stored bytes`, async () => {
      // In one job, from odd-sized chunks.
      await withFile(Buffer.alloc(0), async (fd, file) => {
        const written = await addon.sealWrite(fd, 0, s.key, s.header, 0, true, chunked(s.plaintext, [1, 1039, 333]), true);
        assert.equal(written, s.stored.length, 'bytes written');
        assertStored(s.v, readFileSync(file), 'sealWrite in one job');
      });
      // In two jobs: whole segments first (header included), then the rest, final, after them.
      if (s.v.segments > 1) {
        await withFile(Buffer.alloc(0), async (fd, file) => {
          const first = s.v.segments - 1;
          const split = first * s.segmentSize;
          const firstWritten = await addon.sealWrite(
            fd,
            0,
            s.key,
            s.header,
            0,
            false,
            chunked(s.plaintext.subarray(0, split), [777]),
            true,
          );
          const position = 16 + first * (s.segmentSize + TAG);
          assert.equal(firstWritten, position, 'first job: header and whole segments');
          const lastWritten = await addon.sealWrite(fd, position, s.key, s.header, first, true, [s.plaintext.subarray(split)], false);
          assert.equal(lastWritten, s.stored.length - position, 'second job: the final segment');
          assertStored(s.v, readFileSync(file), 'sealWrite in two jobs');
        });
      }
    });

    test(`${s.v.name}: readOpen reads back the plaintext and its ranges`, async () => {
      await withFile(s.stored, async (fd) => {
        const storedBytes = s.stored.length - 16;
        const out = Buffer.alloc(s.plaintext.length);
        const opened = await addon.readOpen(fd, 16, storedBytes, s.key, s.header, 0, s.v.segments - 1, Buffer.alloc(storedBytes), out);
        assert.equal(opened, s.plaintext.length, 'whole stream: bytes opened');
        assert.ok(out.equals(s.plaintext), 'whole stream');
        for (const r of s.v.ranges) {
          const length = r.storedEnd - r.storedStart + 1;
          const plain = Buffer.alloc(length - (r.lastSegment - r.firstSegment + 1) * TAG);
          assert.equal(
            await addon.readOpen(fd, r.storedStart, length, s.key, s.header, r.firstSegment, s.v.segments - 1, Buffer.alloc(length), plain),
            plain.length,
          );
          assert.ok(
            plain.subarray(r.skip, r.skip + r.end - r.start + 1).equals(s.plaintext.subarray(r.start, r.end + 1)),
            `range ${r.start}-${r.end}`,
          );
        }
      });
    });
  }

  for (const r of vectors.rejected) {
    // readOpen opens the segments its caller names: a header alone names none (its caller checks
    // the stored size against the plaintext size first), so that case is the codecs' alone.
    if (r.name === 'no-segment') continue;
    test(`rejected ${r.name}: readOpen fails`, async () => {
      const stored = hex(r.stored.hex);
      const header = stored.subarray(0, 16);
      const storedBytes = stored.length - 16;
      // The segments the file holds by its length: the last one is read as final.
      const segments = Math.ceil(storedBytes / (2 ** header[5] + TAG));
      await withFile(stored, async (fd) => {
        await assert.rejects(
          addon.readOpen(
            fd,
            16,
            storedBytes,
            hex(r.dataKey),
            header,
            0,
            segments - 1,
            Buffer.alloc(storedBytes),
            Buffer.alloc(storedBytes),
          ),
          (error: Error & { code?: string }) => error.code === 'ERR_CIPHER_FORMAT',
        );
      });
    });
  }
});

// --- Browser decryptor -------------------------------------------------------------------------

async function webKey(raw: Buffer): Promise<WebKey> {
  return crypto.subtle.importKey('raw', new Uint8Array(raw), { name: 'AES-GCM' }, false, ['decrypt']);
}

async function webDecrypt(key: WebKey, stored: Buffer, sizes: number[]): Promise<Buffer> {
  const chunks = chunked(stored, sizes);
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(new Uint8Array(chunk));
      controller.close();
    },
  });
  const parts: Uint8Array[] = [];
  await decryptStream(body, key, (plain) => {
    parts.push(plain);
  });
  return Buffer.concat(parts);
}

describe('storage-format vectors: browser decryptor (web/src/crypto/sealed.ts)', () => {
  for (const s of streams) {
    test(`${s.v.name}: decrypts the stored bytes in odd-sized chunks`, async () => {
      const key = await webKey(s.key);
      for (const sizes of CHUNKINGS.filter((c) => c[0] !== 7 || s.stored.length < 10_000)) {
        assert.ok((await webDecrypt(key, s.stored, sizes)).equals(s.plaintext), `decryptStream in chunks of ${sizes}`);
      }
      const decryptor = new SegmentDecryptor(key);
      const parts: Uint8Array[] = [];
      for (const chunk of chunked(s.stored, [3, 1021])) parts.push(...(await decryptor.push(new Uint8Array(chunk))));
      parts.push(...(await decryptor.end()));
      assert.ok(Buffer.concat(parts).equals(s.plaintext), 'SegmentDecryptor');
    });
  }
  for (const r of vectors.rejected) {
    test(`rejected ${r.name}: fails`, async () => {
      await assert.rejects(webDecrypt(await webKey(hex(r.dataKey)), hex(r.stored.hex), [5, 1000]), DamagedContentError);
    });
  }
  for (const w of vectors.keyWraps) {
    test(`wrap ${w.name}: unwrapChain opens it`, async () => {
      // unwrapChain's key cannot be exported: it proves itself by opening a stream sealed under the wrapped key.
      const key = await unwrapChain(hex(w.kek).toString('base64url'), [w.wrapped], [w.keyId]);
      const plain = Buffer.from(`sealed under ${w.name}`);
      const stored = refSeal(hex(w.key), Buffer.alloc(7, 9), 10, plain);
      assert.ok((await webDecrypt(key, stored, [1 << 30])).equals(plain));
      await assert.rejects(unwrapChain(hex(w.kek).toString('base64url'), [w.wrapped], [`${w.keyId}x`]), WrongKeyError, 'another id');
    });
  }
  for (const c of vectors.linkChains) {
    test(`link chain ${c.name}: the link key opens the chain and the stream`, async () => {
      const s = streamNamed(c.stream);
      const key = await unwrapChain(c.linkKey, c.chain, c.ids);
      assert.ok((await webDecrypt(key, s.stored, [1041, 7])).equals(s.plaintext));
      const otherKey = Buffer.from(c.linkKey, 'base64url');
      otherKey[0] ^= 1;
      await assert.rejects(unwrapChain(otherKey.toString('base64url'), c.chain, c.ids), WrongKeyError, 'another link key');
      await assert.rejects(unwrapChain(c.linkKey, c.chain, [...c.ids].reverse()), WrongKeyError, 'ids in another order');
    });
  }
});

// --- Key wrapping ------------------------------------------------------------------------------

describe('storage-format vectors: key wraps (key-wrap.ts)', () => {
  for (const w of vectors.keyWraps) {
    test(`${w.name}: reference, unwrapKey and wrapKey agree with the vector`, () => {
      const kek = hex(w.kek);
      const key = hex(w.key);
      assert.equal(w.wrapped.length, 80, 'wrapped form: 80 characters');
      assert.equal(refWrap(kek, key, w.keyId, hex(w.nonce)), w.wrapped, 'reference wrap');
      assert.ok(refUnwrap(kek, w.wrapped, w.keyId).equals(key), 'reference unwrap');
      assert.ok(unwrapKey(kek, w.wrapped, w.keyId).equals(key), 'unwrapKey');
      assert.throws(() => unwrapKey(kek, w.wrapped, `${w.keyId}x`), KeyUnwrapError, 'another id');
      const damaged = `${w.wrapped.slice(0, 40)}${w.wrapped[40] === 'A' ? 'B' : 'A'}${w.wrapped.slice(41)}`;
      assert.throws(() => unwrapKey(kek, damaged, w.keyId), KeyUnwrapError, 'a changed character');
      // wrapKey picks its nonce at random: with that nonce, the reference must give exactly its output.
      const wrapped = wrapKey(kek, key, w.keyId);
      assert.equal(wrapped.length, 80);
      assert.equal(refWrap(kek, key, w.keyId, Buffer.from(wrapped, 'base64url').subarray(0, 12)), wrapped, 'wrapKey');
    });
  }
  for (const c of vectors.linkChains) {
    test(`link chain ${c.name}: unwrapKey down the chain gives the stream's data key`, () => {
      const wraps = c.wraps.map((name) => vectors.keyWraps.find((w) => w.name === name)!);
      assert.deepEqual(
        c.chain,
        wraps.map((w) => w.wrapped),
      );
      assert.deepEqual(
        c.ids,
        wraps.map((w) => w.keyId),
      );
      let key: Buffer = Buffer.from(c.linkKey, 'base64url');
      assert.equal(key.toString('hex'), wraps[0].kek, 'the link key is the first key-encryption key');
      for (const [i, id] of c.ids.entries()) key = unwrapKey(key, c.chain[i], id);
      assert.equal(key.toString('hex'), streamNamed(c.stream).v.dataKey);
    });
  }
});
