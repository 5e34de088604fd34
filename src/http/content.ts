/** Helpers for serving stored content safely. */

/**
 * `attachment; filename="<ascii fallback>"; filename*=UTF-8''<percent-encoded>` (RFC 6266 / 5987).
 * The fallback drops anything outside printable ASCII and the characters that break the header.
 */
export function attachmentDisposition(name: string): string {
  const fallback = name.replace(/[^\x20-\x7e]|["\\%;]/g, '_') || 'download';
  const encoded = encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${fallback}"; filename*=UTF-8''${encoded}`;
}

/** Headers that keep user content from ever running as the app's origin. */
export const CONTENT_SECURITY_HEADERS = {
  'x-content-type-options': 'nosniff',
  'content-security-policy': "sandbox; default-src 'none'",
  'cross-origin-resource-policy': 'same-origin',
} as const;

const CONTENT_TYPE = /^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+(\s*;\s*[a-z0-9!#$&^_.+-]+=("[^"\r\n]*"|[a-z0-9!#$&^_.+-]+))*$/i;

/** A client-given content type, kept only when it is a well-formed media type; else octet-stream. */
export function normalizeContentType(value: string | undefined): string {
  const trimmed = (value ?? '').trim();
  return trimmed.length <= 200 && CONTENT_TYPE.test(trimmed) ? trimmed : 'application/octet-stream';
}
