import { createCipheriv, createDecipheriv } from 'node:crypto';
import { KEY_BYTES } from '../crypto/key-wrap.js';
import { TAG_BYTES } from './format.js';

/**
 * AES-256-GCM of one segment, as the codecs use it. Each engine brings one (node:crypto, or the
 * native addon, which keeps the expanded key per stream and writes into the caller's buffer);
 * both produce and accept exactly the same bytes (test/content/storage-format-vectors.test.ts).
 */
export interface SegmentAead {
  /**
   * Seals `plaintext` (one buffer, or pieces sealed as their concatenation: a segment straddling
   * input chunks, up to MAX_PIECES) into `out` at `at`: ciphertext, then the 16-byte tag.
   * Returns the bytes written. Throws RangeError when `out` has no room.
   */
  seal(nonce: Buffer, aad: Buffer, plaintext: Buffer | Buffer[], out: Buffer, at: number): number;
  /**
   * Opens `sealed` (ciphertext then tag) into `out` at `at`. Returns the plaintext length, or -1
   * when it does not authenticate, in which case nothing readable was left in `out`.
   */
  open(nonce: Buffer, aad: Buffer, sealed: Buffer, out: Buffer, at: number): number;
}

/** The most pieces one segment is sealed from without copying it whole first (native/aes-gcm.c's limit). */
export const MAX_PIECES = 16;

/** node:crypto: a cipher object per segment, which computes the same bytes as the native one. */
export function nodeAead(key: Buffer): SegmentAead {
  assertDataKey(key);
  return {
    seal(nonce, aad, plaintext, out, at) {
      const pieces = Array.isArray(plaintext) ? plaintext : [plaintext];
      const length = pieces.reduce((sum, piece) => sum + piece.length, 0);
      if (out.length - at < length + TAG_BYTES) throw new RangeError('seal: the output has no room for the segment and its tag');
      const cipher = createCipheriv('aes-256-gcm', key, nonce);
      cipher.setAAD(aad);
      for (const piece of pieces) at += cipher.update(piece).copy(out, at);
      cipher.final();
      cipher.getAuthTag().copy(out, at);
      return length + TAG_BYTES;
    },
    open(nonce, aad, sealed, out, at) {
      if (sealed.length < TAG_BYTES) throw new RangeError('open: the segment is shorter than its tag');
      if (out.length - at < sealed.length - TAG_BYTES) throw new RangeError('open: the output has no room for the plaintext');
      const decipher = createDecipheriv('aes-256-gcm', key, nonce);
      decipher.setAAD(aad);
      decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
      const body = decipher.update(sealed.subarray(0, sealed.length - TAG_BYTES));
      try {
        decipher.final();
      } catch {
        return -1;
      }
      body.copy(out, at);
      return body.length;
    },
  };
}

/** Data keys are AES-256 keys; anything else is refused before a stream exists. */
export function assertDataKey(key: Buffer): void {
  if (key.length !== KEY_BYTES) throw new RangeError('a data key must be 32 bytes');
}
