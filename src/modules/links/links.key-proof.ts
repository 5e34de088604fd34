import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/**
 * A link's key proof: base64url(HMAC-SHA256(link key, "coffre-link-key-check")). The link page
 * computes it with WebCrypto and sends it instead of the key, so the sealed route (where the key
 * never leaves the browser) can still refuse a visitor without the key before counting an access.
 * The server keeps only the SHA-256 of the proof (`key_check`): a database reader learns neither.
 */
export const KEY_PROOF_LABEL = 'coffre-link-key-check';

export function keyProofOf(linkKey: Buffer): string {
  return createHmac('sha256', linkKey).update(KEY_PROOF_LABEL).digest('base64url');
}

/** What a link stores: the hex SHA-256 of its proof's text. */
export function keyCheckOf(proof: string): string {
  return createHash('sha256').update(proof, 'utf8').digest('hex');
}

/** Whether `proof` is the one `keyCheck` was made from (compared in constant time). */
export function proofMatches(keyCheck: string, proof: string | undefined): boolean {
  if (!proof) return false;
  const expected = Buffer.from(keyCheck, 'hex');
  const given = Buffer.from(keyCheckOf(proof), 'hex');
  return expected.length === given.length && timingSafeEqual(expected, given);
}

/** 43 base64url characters are exactly 32 bytes; anything else cannot be a link key (an empty buffer opens nothing). */
export function linkKeyBytes(key: string | undefined): Buffer {
  return key && /^[A-Za-z0-9_-]{43}$/.test(key) ? Buffer.from(key, 'base64url') : Buffer.alloc(0);
}
