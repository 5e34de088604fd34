import { createHash, randomBytes } from 'node:crypto';
import { hash, verify, Algorithm } from '@node-rs/argon2';

/** A new bearer token: 256 random bits, base64url, with a recognisable prefix for secret scanners. */
export function newBearerToken(): string {
  return `cof_${randomBytes(32).toString('base64url')}`;
}

/** Tokens are looked up by this hash; the token itself is never stored. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** Argon2id with the library's defaults (19 MiB, 2 passes), the OWASP baseline. */
export function hashPassword(password: string): Promise<string> {
  return hash(password, { algorithm: Algorithm.Argon2id });
}

export async function verifyPassword(passwordHash: string, password: string): Promise<boolean> {
  try {
    return await verify(passwordHash, password);
  } catch {
    return false;
  }
}
