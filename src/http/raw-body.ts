import { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import type { FastifyRequest } from 'fastify';
import { readWholeUpTo } from '../lib/read-whole.js';

/**
 * Raw bodies announced (Content-Length) at most this long are read whole and sealed in one step:
 * for a small file the stream machinery (meter, cipher stream, pipeline) costs more than the
 * work. One 64 KiB segment; the memory this holds per request is what the socket buffers anyway.
 */
export const WHOLE_BODY_BYTES = 64 * 1024;

/** A raw upload body (a PUT of the files API or of WebDAV) as the file service stores it. */
export interface RawUploadBody {
  body: Readable | Buffer;
  /**
   * Node's HTTP parser copies each body chunk into memory of its own (node_http_parser's on_body),
   * and only the handler reads the request: the native engine reads a streamed body's chunks in
   * place and frees them once sealed (test/http/body-chunks.test.ts guards the assumption). Not so
   * for a request built another way (Fastify's inject pushes the caller's own buffers).
   */
  bodyOwnsChunks: boolean;
  /** A streamed body's Content-Length, held against the quota at once. */
  announcedBytes?: number;
}

/**
 * The raw request body: in memory when it is small, else the stream itself. A body announced
 * larger (Content-Length) is streamed at once; one of unknown length (chunked) is read up to
 * WHOLE_BODY_BYTES first, like a multipart part.
 */
export async function rawUploadBody(request: FastifyRequest): Promise<RawUploadBody> {
  const length = announcedLength(request);
  const body = length !== undefined && length > WHOLE_BODY_BYTES ? request.raw : await readWholeUpTo(request.raw, WHOLE_BODY_BYTES);
  const streamed = body === request.raw;
  return {
    body,
    bodyOwnsChunks: streamed && request.raw instanceof IncomingMessage,
    announcedBytes: streamed ? length : undefined,
  };
}

/** The body's length as Content-Length announces it; none for a chunked body. */
export function announcedLength(request: FastifyRequest): number | undefined {
  const length = request.headers['content-length'];
  return length === undefined ? undefined : Number(length);
}
