import { randomBytes } from 'node:crypto';

/** A new blob key: 144 random bits, base64url (24 characters); never derived from names or content. */
export function newBlobKey(): string {
  return randomBytes(18).toString('base64url');
}
