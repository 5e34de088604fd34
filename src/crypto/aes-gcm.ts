import { createCipheriv, createDecipheriv } from 'node:crypto';
import { nativeAddon } from '../native.js';

/**
 * AES-256-GCM of one segment, for the segment codecs: the native build when it is there (see
 * native/aes-gcm.c: one context per stream keeps the expanded key and writes into the caller's
 * buffer, 4.4 GB/s per thread on the 2-core bench VM), else node:crypto, which computes the same
 * bytes with a cipher object, a key expansion, an output buffer and a copy per segment. Both
 * produce and accept exactly the same stored format (tests check each against the other).
 */
export interface SegmentAead {
  /**
   * Seals `plaintext` (one buffer, or pieces sealed as their concatenation: a segment straddling
   * input chunks, up to 16 pieces) into `out` at `at`: ciphertext, then the 16-byte tag. Returns
   * the bytes written.
   */
  seal(nonce: Buffer, aad: Buffer, plaintext: Buffer | Buffer[], out: Buffer, at: number): number;
  /**
   * Opens `sealed` (ciphertext then tag) into `out` at `at`. Returns the plaintext length, or -1
   * when it does not authenticate, in which case nothing readable was left in `out`.
   */
  open(nonce: Buffer, aad: Buffer, sealed: Buffer, out: Buffer, at: number): number;
}

export type AeadImplementation = 'native' | 'node:crypto';

const TAG_BYTES = 16;

// COFFRE_AES_GCM=node forces node:crypto even when the addon is built.
const native = process.env.COFFRE_AES_GCM === 'node' ? null : nativeAddon;

/** Which implementation this process uses (COFFRE_AES_GCM=node forces node:crypto). */
export const aeadImplementation: AeadImplementation = native ? 'native' : 'node:crypto';

export function segmentAead(key: Buffer, implementation: AeadImplementation = aeadImplementation): SegmentAead {
  if (implementation === 'native') {
    if (!native) throw new Error('the native addon is not built (npm run postinstall)');
    const context = native.context(key);
    return {
      seal: (nonce, aad, plaintext, out, at) => native.seal(context, nonce, aad, plaintext, out, at),
      open: (nonce, aad, sealed, out, at) => native.open(context, nonce, aad, sealed, out, at),
    };
  }
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
