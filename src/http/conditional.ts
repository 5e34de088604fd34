import { AppError } from '../errors.js';
import type { ByteSpan } from '../lib/sendable.js';
import { parseRange } from './range.js';

/** The request headers that make a download conditional or partial. */
export interface ConditionalHeaders {
  /** The raw `Range` header. */
  range?: string;
  ifRange?: string;
  ifNoneMatch?: string;
}

/** What to answer a conditional request: the client's copy is fresh, the whole content, or one range. */
export type ConditionalAnswer = { status: 304 } | { status: 200 } | { status: 206; span: ByteSpan };

/** The headers of a request that bear on a download (the first value of each). */
export function conditionalHeaders(headers: Record<string, string | string[] | undefined>): ConditionalHeaders {
  const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);
  return { range: one(headers.range), ifRange: one(headers['if-range']), ifNoneMatch: one(headers['if-none-match']) };
}

/** The strong entity tag of content named `tag` (RFC 9110 §8.8.3). */
export function entityTag(tag: string): string {
  return `"${tag}"`;
}

/**
 * Decides between 304, 200 and 206 for content of `size` bytes whose entity tag is `etag`;
 * a range outside the content is a 416 error carrying the size the client should have asked within.
 */
export function answerConditional(request: ConditionalHeaders, etag: string, size: number): ConditionalAnswer {
  if (request.ifNoneMatch && request.ifNoneMatch.split(',').some((tag) => tag.trim() === etag || tag.trim() === '*')) {
    return { status: 304 };
  }
  // If-Range with another validator: the client's copy is stale, so it gets the whole file.
  const range = request.ifRange && request.ifRange !== etag ? ({ kind: 'none' } as const) : parseRange(request.range, size);
  if (range.kind === 'unsatisfiable')
    throw new AppError('RANGE_NOT_SATISFIABLE', undefined, undefined, { 'content-range': `bytes */${size}` });
  if (range.kind === 'range') return { status: 206, span: { start: range.start, end: range.end } };
  return { status: 200 };
}
