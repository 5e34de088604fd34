import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
/** Every key of the hierarchy (master, bucket, folder, file, data, link) is an AES-256 key. */
export const KEY_BYTES = 32;

/**
 * Key wrapping for the key hierarchy (master → bucket → folder → file → data key, and link keys):
 * AES-256-GCM with a random nonce and the wrapped key's id as associated data, so a wrapped key
 * moved onto another row does not open. Result: base64url(nonce | ciphertext | tag), 60 bytes.
 */
export class KeyUnwrapError extends Error {
  constructor() {
    super('key does not unwrap');
    this.name = 'KeyUnwrapError';
  }
}

export function newKey(): Buffer {
  return randomBytes(KEY_BYTES);
}

export function wrapKey(kek: Buffer, key: Buffer, keyId: string): string {
  if (key.length !== KEY_BYTES) throw new Error('only 32-byte keys can be wrapped');
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', kek, iv);
  cipher.setAAD(Buffer.from(keyId, 'utf8'));
  const body = Buffer.concat([cipher.update(key), cipher.final()]);
  return Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64url');
}

/** base64url of 60 bytes uses every bit of its 80 characters, so each wrap has exactly one accepted form. */
const WRAPPED_FORM = /^[A-Za-z0-9_-]{80}$/;

export function unwrapKey(kek: Buffer, wrapped: string, keyId: string): Buffer {
  // Buffer.from(…, 'base64url') skips stray characters and trailing bits, so check the form first.
  // A key-encryption key of the wrong size (e.g. a bad link key from a client) is just a wrong key.
  if (kek.length !== KEY_BYTES || !WRAPPED_FORM.test(wrapped)) throw new KeyUnwrapError();
  const raw = Buffer.from(wrapped, 'base64url');
  if (raw.length !== 12 + KEY_BYTES + 16) throw new KeyUnwrapError();
  const decipher = createDecipheriv('aes-256-gcm', kek, raw.subarray(0, 12));
  decipher.setAAD(Buffer.from(keyId, 'utf8'));
  decipher.setAuthTag(raw.subarray(12 + KEY_BYTES));
  try {
    return Buffer.concat([decipher.update(raw.subarray(12, 12 + KEY_BYTES)), decipher.final()]);
  } catch {
    throw new KeyUnwrapError();
  }
}
