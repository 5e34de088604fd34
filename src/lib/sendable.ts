import type { Readable } from 'node:stream';

/** A byte range, both ends included. */
export interface ByteSpan {
  start: number;
  end: number;
}

/**
 * Stored content as a service hands it to a transport: what it is, and a way to open it whole or
 * in part. Nothing is read until `open` is called, so a transport that answers without a body
 * (a cached copy still fresh, a range outside the content) reads nothing.
 */
export interface Sendable {
  size: number;
  /** Names exactly these bytes (the version id): equal tags, equal content. */
  tag: string;
  name: string;
  contentType: string;
  /** Cache-Control of the answer; default `private, no-cache` (a cache asks again each time). */
  cacheControl?: string;
  /** The content, or only the bytes of `span`, as a stream. */
  open(span?: ByteSpan): Promise<Readable>;
}
