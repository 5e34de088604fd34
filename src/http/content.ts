import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import type { Sendable } from '../lib/sendable.js';
import { answerConditional, conditionalHeaders, entityTag } from './conditional.js';
import type { Metrics } from './metrics.js';

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

/** The same, `inline`: for a preview, which the web app shows rather than saves. */
export function inlineDisposition(name: string): string {
  return attachmentDisposition(name).replace(/^attachment/, 'inline');
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

/**
 * Sends stored content as the request's conditional headers ask (304, 200 or 206), with the
 * headers that keep it inert in a browser; counts its bytes once all are sent. The content is
 * opened before any header is set, so a failure to open it answers as a plain error. A HEAD gets
 * the same headers and never opens it: a HEAD's body is discarded, but content handed to it would
 * still be read (and decrypted) to its end.
 */
export async function sendContent(reply: FastifyReply, content: Sendable, metrics: Metrics, options: { inline?: boolean } = {}) {
  const etag = entityTag(content.tag);
  const answer = answerConditional(conditionalHeaders(reply.request.headers), etag, content.size);
  const head = reply.request.method === 'HEAD';
  const withBody = answer.status !== 304 && !head;
  // Fastify answers a HEAD route's missing body with Content-Length 0, and drains a stream: an
  // empty one keeps the length set below.
  const body = withBody ? await content.open(answer.status === 206 ? answer.span : undefined) : head ? Readable.from([]) : undefined;
  reply.headers({
    ...CONTENT_SECURITY_HEADERS,
    etag,
    'accept-ranges': 'bytes',
    'cache-control': content.cacheControl ?? 'private, no-cache',
    'content-disposition': options.inline ? inlineDisposition(content.name) : attachmentDisposition(content.name),
  });
  if (answer.status === 304) return reply.code(304).send();
  reply.type(content.contentType);
  const span = answer.status === 206 ? answer.span : undefined;
  const length = span ? span.end - span.start + 1 : content.size;
  if (span) reply.header('content-range', `bytes ${span.start}-${span.end}/${content.size}`);
  reply.header('content-length', length);
  // 'finish' only follows a response written out completely, not one the client broke off.
  if (withBody) reply.raw.once('finish', () => metrics.recordDownloadedBytes(length));
  return reply.code(answer.status).send(body);
}
