import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { chooseEngine } from '../../src/content/choose-engine.js';
import type { CryptoEngine } from '../../src/content/engine.js';
import { requireNativeAddon } from '../support/native.js';

// A resumable upload's SHA-256 is carried from request to request, and instance to instance, as a
// midstate (src/content/sha256-midstate.ts): both engines compute it alike and continue each other's.
requireNativeAddon();
const ENGINES: CryptoEngine[] = [chooseEngine('native'), chooseEngine('node')];

function nodeSha256(data: Buffer): Buffer {
  return createHash('sha256').update(data).digest();
}

describe('resumable SHA-256 (midstates)', () => {
  for (const engine of ENGINES) {
    it(`${engine.name}: digests equal node:crypto's, whatever the chunking and the length`, async () => {
      for (const length of [0, 1, 55, 56, 63, 64, 65, 119, 120, 128, 1000, 3 * 65536 + 7]) {
        const data = randomBytes(length);
        const hash = engine.sha256();
        await hash.update([data.subarray(0, length >> 1)]);
        await hash.update([data.subarray(length >> 1, length - 3), data.subarray(length - 3)]);
        assert.deepEqual(hash.digest(), nodeSha256(data), `length ${length}`);
      }
    });

    it(`${engine.name}: refuses a midstate that is not at a 64-byte boundary, or malformed`, async () => {
      const hash = engine.sha256();
      await hash.update([randomBytes(100)]);
      assert.throws(() => hash.midstate());
      const good = engine.sha256().midstate();
      assert.equal(good.length, 40);
      assert.throws(() => engine.sha256(good.subarray(0, 39)));
      const unaligned = Buffer.from(good);
      unaligned.writeUInt32BE(100, 36);
      assert.throws(() => engine.sha256(unaligned));
    });
  }

  for (const [from, to] of [
    [ENGINES[0], ENGINES[1]],
    [ENGINES[1], ENGINES[0]],
    [ENGINES[0], ENGINES[0]],
  ]) {
    it(`a midstate saved by ${from.name} is carried on by ${to.name} to the digest of the whole`, async () => {
      const data = randomBytes(64 * 5000 + 17);
      const first = from.sha256();
      await first.update([data.subarray(0, 64 * 1000), data.subarray(64 * 1000, 64 * 3000)]);
      const midstate = first.midstate();
      assert.equal(midstate.readUInt32BE(36), 64 * 3000, 'the midstate counts the bytes hashed');
      const second = to.sha256(midstate);
      await second.update([data.subarray(64 * 3000)]);
      assert.deepEqual(second.digest(), nodeSha256(data));
    });
  }
});
