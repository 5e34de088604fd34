import assert from 'node:assert/strict';
import { createCipheriv, randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import { chooseEngine } from '../../src/content/choose-engine.js';
import type { SegmentAead } from '../../src/content/aead.js';
import { requireNativeAddon } from '../support/native.js';

// Both engines' segment AEADs must agree byte for byte, with each other and with node:crypto
// used directly, or blobs written by one would not open under the other.
const implementations = ['native', 'node'] as const;
const segmentAead = (key: Buffer, implementation: (typeof implementations)[number]): SegmentAead => {
  if (implementation === 'native') requireNativeAddon();
  return chooseEngine(implementation).aead(key);
};

test('auto takes the native engine whenever the addon is built (npm ci builds it), and node is always available', () => {
  requireNativeAddon();
  assert.equal(chooseEngine('auto').name, 'native');
  assert.equal(chooseEngine('native').name, 'native');
  assert.equal(chooseEngine('node').name, 'node');
});

function reference(key: Buffer, nonce: Buffer, aad: Buffer, plaintext: Buffer): Buffer {
  const cipher = createCipheriv('aes-256-gcm', key, nonce);
  cipher.setAAD(aad);
  return Buffer.concat([cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
}

for (const implementation of implementations) {
  describe(`segment AEAD (${implementation})`, () => {
    const key = randomBytes(32);
    const aad = randomBytes(16);
    const aead = segmentAead(key, implementation);

    test('seals exactly what node:crypto seals, at the given offset, and opens it back', () => {
      for (const size of [0, 1, 15, 16, 17, 65535, 65536]) {
        const nonce = randomBytes(12);
        const plaintext = randomBytes(size);
        const out = Buffer.alloc(size + 16 + 7, 0xee);
        assert.equal(aead.seal(nonce, aad, plaintext, out, 7), size + 16);
        assert.deepEqual(out.subarray(7), reference(key, nonce, aad, plaintext), `size ${size}`);
        assert.ok(
          out.subarray(0, 7).every((b) => b === 0xee),
          'nothing written before the offset',
        );
        const back = Buffer.alloc(size + 3);
        assert.equal(aead.open(nonce, aad, out.subarray(7), back, 3), size);
        assert.deepEqual(back.subarray(3), plaintext);
      }
    });

    test('a segment given in pieces is sealed as their concatenation', () => {
      const plaintext = randomBytes(65536);
      for (const cuts of [[], [0], [1], [100, 100, 65535], [15, 16, 17, 40000], Array.from({ length: 15 }, (_, i) => (i + 1) * 4000)]) {
        const nonce = randomBytes(12);
        const edges = [0, ...cuts, plaintext.length];
        const pieces = edges.slice(1).map((end, i) => plaintext.subarray(edges[i], end));
        const out = Buffer.alloc(plaintext.length + 16);
        assert.equal(aead.seal(nonce, aad, pieces, out, 0), plaintext.length + 16);
        assert.deepEqual(out, reference(key, nonce, aad, plaintext), `${pieces.length} pieces`);
      }
      const empty = Buffer.alloc(16);
      const nonce = randomBytes(12);
      assert.equal(aead.seal(nonce, aad, [], empty, 0), 16);
      assert.deepEqual(empty, reference(key, nonce, aad, Buffer.alloc(0)), 'no pieces: the empty segment');
      assert.throws(() => aead.seal(nonce, aad, [randomBytes(10), randomBytes(10)], Buffer.alloc(35), 0), 'the pieces and tag do not fit');
    });

    test('a nonce buffer reused after the call does not change what was sealed', () => {
      const nonce = randomBytes(12);
      const first = Buffer.alloc(100 + 16);
      const plaintext = randomBytes(100);
      aead.seal(nonce, aad, plaintext, first, 0);
      const expected = reference(key, Buffer.from(nonce), aad, plaintext);
      nonce[11] ^= 1;
      assert.deepEqual(first, expected);
    });

    test('every kind of damage fails to open (-1) and leaves no plaintext in the output', () => {
      const nonce = randomBytes(12);
      const plaintext = randomBytes(4096).fill(0x41, 0, 4096);
      const sealed = reference(key, nonce, aad, plaintext);
      const damaged: [string, Buffer, Buffer, Buffer, Buffer][] = [];
      for (const at of [0, 2048, 4095, 4096, 4111]) {
        const copy = Buffer.from(sealed);
        copy[at] ^= 0x01;
        damaged.push([`byte ${at}`, copy, nonce, aad, key]);
      }
      // One bit flipped: zeroing a byte would leave the nonce as it was whenever that byte was 0 already.
      const otherNonce = Buffer.from(nonce);
      otherNonce[11] ^= 0x01;
      damaged.push(['other nonce', sealed, otherNonce, aad, key]);
      damaged.push(['other aad', sealed, nonce, Buffer.alloc(16), key]);
      damaged.push(['other key', sealed, nonce, aad, randomBytes(32)]);
      damaged.push(['truncated', sealed.subarray(0, sealed.length - 1), nonce, aad, key]);
      for (const [what, input, n, a, k] of damaged) {
        const out = Buffer.alloc(4096);
        assert.equal(segmentAead(k, implementation).open(n, a, input, out, 0), -1, what);
        assert.equal(out.indexOf(0x41), -1, `${what}: no plaintext byte left in the output`);
      }
    });

    test('an output too small, or a key of the wrong size, throws instead of writing past the end', () => {
      const nonce = randomBytes(12);
      assert.throws(() => aead.seal(nonce, aad, randomBytes(100), Buffer.alloc(115), 0));
      assert.throws(() => aead.seal(nonce, aad, randomBytes(100), Buffer.alloc(200), 100));
      assert.throws(() => aead.open(nonce, aad, reference(key, nonce, aad, randomBytes(100)), Buffer.alloc(99), 0));
      assert.throws(() => segmentAead(randomBytes(16), implementation).seal(nonce, aad, Buffer.alloc(1), Buffer.alloc(17), 0), /32 bytes/);
    });
  });
}
