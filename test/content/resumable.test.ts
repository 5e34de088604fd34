import assert from 'node:assert/strict';
import { createHash, hkdfSync, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { after, before, describe, it, type TestContext } from 'node:test';
import { crc32 } from 'node:zlib';
import { BlobNotFoundError } from '../../src/blobs/blob-store.js';
import { FsBlobStore } from '../../src/blobs/fs/fs-blob-store.js';
import { S3BlobStore } from '../../src/blobs/s3/s3-blob-store.js';
import { nodeAead } from '../../src/content/aead.js';
import { chooseEngine } from '../../src/content/choose-engine.js';
import { createContentStore, type ContentStore } from '../../src/content/content-store.js';
import type { CryptoEngine } from '../../src/content/engine.js';
import { CipherFormatError, TAG_BYTES, sealedSize } from '../../src/content/format.js';
import type { AppendLimits, ResumableContent } from '../../src/content/resumable.js';
import { DIALECTS, build } from '../helper.js';
import { listFiles, sha256Tag } from '../support/disk.js';
import { requireNativeAddon } from '../support/native.js';
import { startTestS3, type TestS3 } from '../support/s3.js';
import { prng } from '../support/prng.js';
import { openSealed } from '../support/sealed.js';

// Resumable content (src/content/resumable.ts) over the content store of a real database and an fs
// blob store, on both crypto engines: whatever the cuts between requests, the finished blob is the
// stored format of exactly the bytes sent, and no plaintext is ever at rest in between.
requireNativeAddon();
const ENGINES: CryptoEngine[] = [chooseEngine('native'), chooseEngine('node')];
const SEGMENT = 64 * 1024;
const MIB = 1024 * 1024;
const MARKER = 'COFFRE-PLAINTEXT-MARKER';
const UNLIMITED: AppendLimits = { maxBytes: Number.MAX_SAFE_INTEGER };

interface Setup {
  content: ContentStore;
  /** Another instance: a content store of its own over the same database and blob store. */
  elsewhere: (engine: CryptoEngine) => ContentStore;
  blobs: FsBlobStore | S3BlobStore;
  /** The blob store's folder (staging/, tmp/ and the blobs). */
  root: string;
}

async function setup(t: TestContext, engine: CryptoEngine): Promise<Setup> {
  const { database } = await build(t, DIALECTS[0]);
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'coffre-resumable-'));
  t.after(() => fs.rmSync(root, { recursive: true, force: true }));
  const blobs = new FsBlobStore(root, { files: engine.durableFiles });
  const elsewhere = (other: CryptoEngine) => createContentStore(database.db, blobs, other);
  return { content: createContentStore(database.db, blobs, engine), elsewhere, blobs, root };
}

/** A request body: `data` in chunks of the given sizes (cycled). */
function body(data: Buffer, sizes: number[] = [SEGMENT]): Readable {
  const chunks: Buffer[] = [];
  for (let at = 0, i = 0; at < data.length; i++) {
    const size = Math.max(1, sizes[i % sizes.length]);
    chunks.push(data.subarray(at, at + size));
    at += size;
  }
  return Readable.from(chunks);
}

/** Appends each piece as a request of its own, checking the offset after each; resolves with the last state. */
async function appendPieces(
  { content }: Setup,
  state: ResumableContent,
  dataKey: Buffer,
  pieces: Buffer[],
  limits: AppendLimits = UNLIMITED,
  afterEach?: (state: ResumableContent) => void,
): Promise<ResumableContent> {
  for (const piece of pieces) {
    const received = state.received + piece.length;
    const appended = await content.resumable.append(state, dataKey, body(piece, [1000, 65536, 7, 300_000]), limits);
    assert.equal(appended.broken, false);
    assert.equal(appended.content.received, received);
    state = appended.content;
    afterEach?.(state);
  }
  return state;
}

/**
 * Finishes, then checks the blob against `plaintext`: its format and length, the normal reader,
 * size, checksum and CRC-32 (`crc` when given: null for an upload whose CRC is unknown).
 */
async function finishAndCheck(
  { content, blobs }: Setup,
  state: ResumableContent,
  dataKey: Buffer,
  plaintext: Buffer,
  label = '',
  crc: number | null = crc32(plaintext),
) {
  const stored = await content.resumable.finish(state, dataKey);
  await stored.durable;
  assert.equal(stored.blobId, state.blobId);
  assert.equal(stored.size, plaintext.length, label);
  assert.equal(stored.checksum, sha256Tag(plaintext), `${label}: the checksum is the SHA-256 of the plaintext`);
  assert.equal(stored.crc32, crc, `${label}: the CRC-32 is the plaintext's`);
  const sealed = await buffer(await blobs.get(stored.blobId));
  assert.equal(sealed.length, sealedSize(plaintext.length), `${label}: the stored length is the format's`);
  assert.equal(stored.storedSize, sealed.length);
  assert.ok(openSealed(dataKey, sealed).equals(plaintext), `${label}: the stored bytes open to the plaintext`);
  const opened = await content.open({ blobId: stored.blobId, size: stored.size, dataKey });
  assert.equal(opened.length, plaintext.length);
  assert.ok((await buffer(opened.stream)).equals(plaintext), `${label}: open() reads the plaintext back`);
  return stored;
}

/** The length of an upload's staging file, bytes written after its last commit included. */
function stagedBytes({ root }: Setup, state: ResumableContent): number {
  return fs.statSync(path.join(root, 'staging', state.blobId)).size;
}

/** An engine whose SHA-256 updates wait until `release` (the hash of a busy instance, far behind its writes). */
function heldHashes(engine: CryptoEngine) {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const held = { updates: 0, release };
  const sha256: CryptoEngine['sha256'] = (midstate) => {
    const hash = engine.sha256(midstate);
    const update = async (chunks: Buffer[]) => {
      held.updates++;
      await released;
      await hash.update(chunks);
    };
    return { update, midstate: () => hash.midstate(), digest: () => hash.digest() };
  };
  return { engine: { ...engine, sha256 }, held };
}

/**
 * The tail record as it was before it carried the CRC-32 (nonce, then AES-256-GCM under the key
 * derived from the data key, bound to the header and offset, of: midstate, pending plaintext),
 * made from a current one (bound to "crc32" too, its CRC between midstate and pending). Written
 * out here on purpose: rows of uploads in flight hold such tails, whatever the code becomes.
 */
function legacyTail(state: ResumableContent, dataKey: Buffer): Buffer {
  const aead = nodeAead(Buffer.from(hkdfSync('sha256', dataKey, Buffer.alloc(0), 'coffre resumable tail', 32)));
  const offset = Buffer.alloc(8);
  offset.writeBigUInt64BE(BigInt(state.received));
  const plaintext = Buffer.alloc(state.tail.length - 12 - TAG_BYTES);
  const opened = aead.open(
    state.tail.subarray(0, 12),
    Buffer.concat([state.header, offset, Buffer.from('crc32')]),
    state.tail.subarray(12),
    plaintext,
    0,
  );
  assert.equal(opened, plaintext.length, 'the current tail opens as documented');
  const legacy = Buffer.concat([plaintext.subarray(0, 40), plaintext.subarray(44)]);
  const record = Buffer.alloc(12 + legacy.length + TAG_BYTES);
  randomBytes(12).copy(record);
  aead.seal(record.subarray(0, 12), Buffer.concat([state.header, offset]), legacy, record, 12);
  return record;
}

/** Rejects when `promise` takes longer than a few seconds: an append that waits for a held hash never settles. */
function settlesSoon<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} waited for its hash`)), 5000)));
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** `data` cut at the given offsets (sorted; repeats make empty pieces). */
function cutAt(data: Buffer, cuts: number[]): Buffer[] {
  const edges = [0, ...[...cuts].sort((a, b) => a - b), data.length];
  return edges.slice(1).map((end, i) => data.subarray(edges[i], end));
}

for (const engine of ENGINES) {
  describe(`resumable content: ${engine.name} engine`, () => {
    it('finishes an empty content, with or without an empty request first', async (t) => {
      const s = await setup(t, engine);
      for (const pieces of [[], [Buffer.alloc(0)]]) {
        const { content: begun, dataKey } = await s.content.resumable.begin();
        const state = await appendPieces(s, begun, dataKey, pieces);
        await finishAndCheck(s, state, dataKey, Buffer.alloc(0), `${pieces.length} requests`);
      }
    });

    it('finishes to the bytes sent whatever the cuts: segment edges, empty requests, whole segments, random', async (t) => {
      const s = await setup(t, engine);
      const random = prng(0x7e5ab1e);
      const cases: { size: number; cuts: number[]; label: string }[] = [
        { size: 3 * SEGMENT, cuts: [SEGMENT, 2 * SEGMENT], label: 'whole segments, cut on their edges' },
        { size: 3 * SEGMENT, cuts: [SEGMENT, SEGMENT, 3 * SEGMENT], label: 'an empty request on an edge, one at the end' },
        { size: SEGMENT, cuts: [0, SEGMENT], label: 'one whole segment between empty requests' },
        { size: 2 * SEGMENT + 1, cuts: [2 * SEGMENT], label: 'one byte past an edge' },
        { size: 2 * SEGMENT - 1, cuts: [1, SEGMENT - 1, SEGMENT], label: 'one byte short of an edge' },
        { size: 4 * MIB + 3 * SEGMENT, cuts: [SEGMENT + 5], label: 'a request longer than a staging write' },
      ];
      for (let i = 0; i < 12; i++) {
        const size = Math.floor(random() * 10 * SEGMENT);
        const cuts = Array.from({ length: Math.floor(random() * 6) }, () => {
          const at = Math.floor(random() * (size + 1));
          // Every third cut snapped to a segment edge (within the content).
          return random() < 0.33 ? Math.min(size, Math.round(at / SEGMENT) * SEGMENT) : at;
        });
        cases.push({ size, cuts, label: `random ${i}` });
      }
      for (const { size, cuts, label } of cases) {
        const plaintext = randomBytes(size);
        for (const length of [undefined, size]) {
          const { content: begun, dataKey } = await s.content.resumable.begin();
          const state = await appendPieces(s, begun, dataKey, cutAt(plaintext, cuts), { ...UNLIMITED, length });
          await finishAndCheck(
            s,
            state,
            dataKey,
            plaintext,
            `${label} (${size} bytes at ${cuts.join(', ')}; length ${length ?? 'deferred'})`,
          );
        }
      }
    });

    it('never keeps plaintext at rest: neither the staged bytes nor the tail hold any of it', async (t) => {
      const s = await setup(t, engine);
      const plaintext = Buffer.from(MARKER.repeat(Math.ceil((5 * SEGMENT + 1234) / MARKER.length)));
      const marker = Buffer.from(MARKER);
      let scans = 0;
      let longestTail = 0;
      const scan = (state: ResumableContent) => {
        assert.equal(state.tail.includes(marker), false, `the tail at ${state.received} holds plaintext`);
        for (const file of listFiles(s.root))
          assert.equal(fs.readFileSync(file).includes(marker), false, `${file} holds plaintext at ${state.received}`);
        scans++;
        longestTail = Math.max(longestTail, state.tail.length);
      };
      // Cuts mid-segment, so that the tail holds up to a segment of plaintext each time.
      const cuts = [10, SEGMENT - 3, SEGMENT + 1000, 3 * SEGMENT + 40_000, 3 * SEGMENT + 40_000];
      const { content: begun, dataKey } = await s.content.resumable.begin();
      scan(begun);
      const state = await appendPieces(s, begun, dataKey, cutAt(plaintext, cuts), UNLIMITED, scan);
      assert.equal(scans, cuts.length + 2);
      assert.ok(longestTail > 40_000, 'a tail held a partial segment of 40,000 bytes (sealed)');
      const stored = await finishAndCheck(s, state, dataKey, plaintext);
      assert.equal(
        fs.readFileSync(path.join(s.root, stored.blobId.slice(0, 2), stored.blobId.slice(2, 4), stored.blobId)).includes(marker),
        false,
      );
    });

    it('keeps what arrived before a source fails, and the next request continues from there', async (t) => {
      const s = await setup(t, engine);
      const plaintext = randomBytes(6 * SEGMENT + 999);
      const { content: begun, dataKey } = await s.content.resumable.begin();
      const first = await appendPieces(s, begun, dataKey, [plaintext.subarray(0, SEGMENT + 7)]);
      let sent = first.received;
      const failing = new Readable({
        read() {
          if (sent >= 4 * SEGMENT + 100) return void this.destroy(new Error('client gone'));
          this.push(plaintext.subarray(sent, sent + 10_000));
          sent += 10_000;
        },
      });
      const broken = await s.content.resumable.append(first, dataKey, failing, UNLIMITED);
      assert.equal(broken.broken, true);
      const kept = broken.content.received;
      assert.ok(kept > first.received && kept <= sent, `kept ${kept} of the ${sent} sent (from ${first.received})`);
      const state = await appendPieces(s, broken.content, dataKey, [plaintext.subarray(kept)]);
      await finishAndCheck(s, state, dataKey, plaintext);
    });

    it('keeps nothing of a request past maxBytes (UPLOAD_LENGTH_EXCEEDED): the state before it goes on', async (t) => {
      const s = await setup(t, engine);
      const maxBytes = 6 * MIB;
      const plaintext = randomBytes(maxBytes);
      const { content: begun, dataKey } = await s.content.resumable.begin();
      const before = await appendPieces(s, begun, dataKey, [plaintext.subarray(0, MIB + 5)], { maxBytes });
      // Other bytes, one too many: more than a staging write of them is written before the limit is hit.
      const tooLong = randomBytes(maxBytes - before.received + 1);
      await assert.rejects(s.content.resumable.append(before, dataKey, body(tooLong), { maxBytes }), { code: 'UPLOAD_LENGTH_EXCEEDED' });
      assert.ok(stagedBytes(s, before) > 4 * MIB, 'the refused request had written to the staging');
      const state = await appendPieces(s, before, dataKey, [plaintext.subarray(before.received)], { maxBytes });
      await finishAndCheck(s, state, dataKey, plaintext);
    });

    it('keeps nothing of a request its verification refuses (UPLOAD_CHECKSUM_MISMATCH), and keeps one it accepts', async (t) => {
      const s = await setup(t, engine);
      const plaintext = randomBytes(5 * MIB + 3);
      const { content: begun, dataKey } = await s.content.resumable.begin();
      const before = await appendPieces(s, begun, dataKey, [plaintext.subarray(0, SEGMENT / 2)]);
      const refuse = () => ({ update: () => {}, matches: () => false });
      await assert.rejects(s.content.resumable.append(before, dataKey, body(randomBytes(5 * MIB)), { ...UNLIMITED, verify: refuse }), {
        code: 'UPLOAD_CHECKSUM_MISMATCH',
      });
      assert.ok(stagedBytes(s, before) > 4 * MIB, 'the refused request had written to the staging');
      // A verification of the request's bytes, in order, as the tus checksum extension makes.
      const rest = plaintext.subarray(before.received);
      const expected = createHash('sha256').update(rest).digest();
      const sha256 = () => {
        const hash = createHash('sha256');
        return { update: (chunk: Buffer) => void hash.update(chunk), matches: () => hash.digest().equals(expected) };
      };
      const state = await appendPieces(s, before, dataKey, [rest], { ...UNLIMITED, verify: sha256 });
      await finishAndCheck(s, state, dataKey, plaintext);
    });

    it('does not open a tail of another offset or another upload (CipherFormatError), and goes on with its own', async (t) => {
      const s = await setup(t, engine);
      const plaintext = randomBytes(3 * SEGMENT + 10);
      const { content: begun, dataKey } = await s.content.resumable.begin();
      const older = await appendPieces(s, begun, dataKey, [plaintext.subarray(0, 1000)]);
      const current = await appendPieces(s, older, dataKey, [plaintext.subarray(1000, SEGMENT + 50)]);
      const other = await s.content.resumable.begin();
      const otherAt = await appendPieces(s, other.content, other.dataKey, [randomBytes(current.received)]);
      const wrong: [string, ResumableContent, Buffer][] = [
        ['an older tail', { ...current, tail: older.tail }, dataKey],
        ['another offset', { ...current, received: current.received + 1 }, dataKey],
        ["another upload's tail", { ...current, tail: otherAt.tail }, dataKey],
        ["another upload's tail and key", { ...current, tail: otherAt.tail }, other.dataKey],
        ['another data key', current, other.dataKey],
      ];
      for (const [label, state, key] of wrong) {
        await assert.rejects(s.content.resumable.append(state, key, body(randomBytes(10)), UNLIMITED), CipherFormatError, label);
        await assert.rejects(s.content.resumable.finish(state, key), CipherFormatError, label);
      }
      const state = await appendPieces(s, current, dataKey, [plaintext.subarray(current.received)]);
      await finishAndCheck(s, state, dataKey, plaintext);
    });

    it('an upload whose tail predates the CRC-32 goes on across requests and finishes with its CRC unknown (null)', async (t) => {
      const s = await setup(t, engine);
      const plaintext = randomBytes(3 * SEGMENT + 4321);
      const { content: begun, dataKey } = await s.content.resumable.begin();
      const current = await appendPieces(s, begun, dataKey, [plaintext.subarray(0, SEGMENT + 1000)]);
      const old = { ...current, tail: legacyTail(current, dataKey) };
      const state = await appendPieces(s, old, dataKey, [plaintext.subarray(old.received, 2 * SEGMENT), plaintext.subarray(2 * SEGMENT)]);
      // Its tails stay in the format without a CRC: a tail claiming one for these bytes would be wrong.
      assert.throws(() => legacyTail(state, dataKey), /the current tail opens as documented/);
      await finishAndCheck(s, state, dataKey, plaintext, 'a tail of before', null);
    });

    it('abort removes the staged bytes; the upload then no longer appends', async (t) => {
      const s = await setup(t, engine);
      const { content: begun, dataKey } = await s.content.resumable.begin();
      const state = await appendPieces(s, begun, dataKey, [randomBytes(2 * SEGMENT + 5)]);
      await s.content.resumable.abort(state);
      assert.deepEqual(listFiles(path.join(s.root, 'staging')), []);
      await assert.rejects(s.content.resumable.append(state, dataKey, body(randomBytes(10)), UNLIMITED), BlobNotFoundError);
    });
  });
}

describe('resumable content: a request answers before its hash is done (native engine)', () => {
  const native = chooseEngine('native');
  const plaintext = randomBytes(6 * MIB + 12_345);
  const firstPart = plaintext.subarray(0, 3 * MIB + 100);

  /** A first request whose hash is held: it answers all the same, its segments written. */
  async function firstRequest(t: TestContext) {
    const { engine, held } = heldHashes(native);
    const s = await setup(t, engine);
    t.after(() => held.release());
    const { content: begun, dataKey } = await s.content.resumable.begin();
    const first = await settlesSoon(s.content.resumable.append(begun, dataKey, body(firstPart), UNLIMITED), 'the request');
    assert.equal(first.content.received, firstPart.length);
    assert.ok(held.updates > 0, 'the hash was held');
    assert.ok(stagedBytes(s, first.content) > 3 * MIB, 'the segments were written');
    return { s, held, dataKey, first: first.content };
  }

  it('the next request on this instance carries on with the hash still running', async (t) => {
    const { s, held, dataKey, first } = await firstRequest(t);
    const second = await settlesSoon(
      s.content.resumable.append(first, dataKey, body(plaintext.subarray(first.received)), UNLIMITED),
      'the second request',
    );
    held.release();
    await finishAndCheck(s, second.content, dataKey, plaintext);
  });

  it('another instance catches the hash up from the staged segments', async (t) => {
    const { s, dataKey, first } = await firstRequest(t);
    const elsewhere = { ...s, content: s.elsewhere(native) };
    const state = await appendPieces(elsewhere, first, dataKey, [plaintext.subarray(first.received)]);
    await finishAndCheck(elsewhere, state, dataKey, plaintext);
  });

  it('after a refused request (nothing kept), the next one here catches up rather than reuse a hash of refused bytes', async (t) => {
    const { s, held, dataKey, first } = await firstRequest(t);
    const refuse = () => ({ update: () => {}, matches: () => false });
    await assert.rejects(s.content.resumable.append(first, dataKey, body(randomBytes(2 * MIB)), { ...UNLIMITED, verify: refuse }), {
      code: 'UPLOAD_CHECKSUM_MISMATCH',
    });
    held.release();
    const state = await appendPieces(s, first, dataKey, [plaintext.subarray(first.received)]);
    await finishAndCheck(s, state, dataKey, plaintext);
  });

  it('a staged segment that does not open fails the catching up (CipherFormatError)', async (t) => {
    const { s, dataKey, first } = await firstRequest(t);
    const staged = path.join(s.root, 'staging', first.blobId);
    const file = fs.openSync(staged, 'r+');
    fs.writeSync(file, Buffer.from([0xff]), 0, 1, 100_000);
    fs.closeSync(file);
    await assert.rejects(s.elsewhere(native).resumable.append(first, dataKey, body(Buffer.alloc(10)), UNLIMITED), CipherFormatError);
  });
});

describe('resumable content on the S3 store', () => {
  let s3: TestS3;
  before(async () => {
    s3 = await startTestS3();
  });
  after(() => s3.close());

  it('finishes to the bytes sent across 5 MiB parts and pending remainders, then reads back', async (t) => {
    const engine = ENGINES[0];
    const { database } = await build(t, DIALECTS[0]);
    const location = await s3.newBucket();
    const blobs = new S3BlobStore(location, { client: { credentials: s3.credentials } });
    t.after(() => blobs.close());
    const elsewhere = (other: CryptoEngine) => createContentStore(database.db, blobs, other);
    const s: Setup = { content: elsewhere(engine), elsewhere, blobs, root: '' };
    const plaintext = randomBytes(11 * MIB + 5);
    // Requests ending short of a part, on one, and past one; an empty one; a broken one.
    const cuts = [1000, 5 * MIB - 16, 5 * MIB - 16, 6 * MIB + 3];
    const { content: begun, dataKey } = await s.content.resumable.begin();
    let state = await appendPieces(s, begun, dataKey, cutAt(plaintext, cuts).slice(0, -1));
    const failing = Readable.from(
      (function* () {
        yield plaintext.subarray(state.received, state.received + 3 * MIB);
        throw new Error('client gone');
      })(),
    );
    const broken = await s.content.resumable.append(state, dataKey, failing, UNLIMITED);
    assert.equal(broken.broken, true);
    state = await appendPieces(s, broken.content, dataKey, [plaintext.subarray(broken.content.received)]);
    await finishAndCheck(s, state, dataKey, plaintext);
    assert.deepEqual(await s3.listKeys(location.bucket), [state.blobId], 'only the blob is left, no pending object');
  });
});
