import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * Preview tickets: what lets an `<audio>` or `<video>` element, which cannot send the bearer
 * token, stream a preview with Range requests (seeking as it plays). A ticket names one session,
 * one file and version, and an expiry, sealed with AES-256-GCM under a key derived from the master
 * key, so any instance opens it and nobody can make or read one. The session is checked live at
 * every request: signing out ends the ticket; rights are checked again as for any preview.
 */
export interface TicketClaims {
  tokenId: string;
  fileId: string;
  /** The version asked for, or '' for the current one. */
  versionId: string;
  /** Seconds since the epoch. */
  expiresAt: number;
}

/** Long enough to watch a film in one sitting: the player asks for ranges as it plays and seeks. */
export const PREVIEW_TICKET_SECONDS = 6 * 60 * 60;
const AAD = Buffer.from('coffre preview ticket v1');

export function sealTicket(key: Buffer, claims: TicketClaims): string {
  const nonce = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, nonce).setAAD(AAD);
  const payload = JSON.stringify([claims.tokenId, claims.fileId, claims.versionId, claims.expiresAt]);
  const sealed = Buffer.concat([nonce, cipher.update(payload, 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return sealed.toString('base64url');
}

/** The claims of a ticket this key sealed and that has not expired at `nowSeconds`, else undefined. */
export function openTicket(key: Buffer, ticket: string, nowSeconds: number): TicketClaims | undefined {
  const sealed = Buffer.from(ticket, 'base64url');
  if (sealed.length < 12 + 16 + 2 || sealed.toString('base64url') !== ticket) return undefined;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, 12)).setAAD(AAD);
    decipher.setAuthTag(sealed.subarray(sealed.length - 16));
    const payload = Buffer.concat([decipher.update(sealed.subarray(12, sealed.length - 16)), decipher.final()]).toString('utf8');
    const [tokenId, fileId, versionId, expiresAt] = JSON.parse(payload) as [string, string, string, number];
    return expiresAt > nowSeconds ? { tokenId, fileId, versionId, expiresAt } : undefined;
  } catch {
    return undefined;
  }
}
