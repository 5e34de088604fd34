import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { ERROR_CATALOG, type ErrorCode } from '../errors.js';

/**
 * What Node's HTTP parser refuses before Fastify sees a request, by the parser's error code,
 * with the statuses Node itself gives them; anything else it cannot parse is a 400.
 */
const BY_PARSER_CODE: Partial<Record<string, ErrorCode>> = {
  // The request line (a URL over 16 KB) or the headers exceed Node's --max-http-header-size.
  HPE_HEADER_OVERFLOW: 'HEADERS_TOO_LARGE',
  HPE_CHUNK_EXTENSIONS_OVERFLOW: 'PAYLOAD_TOO_LARGE',
  ERR_HTTP_REQUEST_TIMEOUT: 'REQUEST_TIMEOUT',
};

/** The error envelope as raw HTTP/1.1 bytes: there is no request or reply object to send it with. */
function rawAnswer(code: ErrorCode): string {
  const { status, message } = ERROR_CATALOG[code];
  const body = JSON.stringify({ status, message, code, data: null });
  return [
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    // Every answer carries an id (README, "Service"); no request exists to take one from.
    `X-Request-Id: ${randomUUID()}`,
    'Connection: close',
    '',
    body,
  ].join('\r\n');
}

/**
 * Fastify's `clientErrorHandler`: answers what the HTTP parser refused with the error envelope
 * instead of Fastify's `{error, message, statusCode}`, then closes the connection (the parser
 * cannot go on with it), as Node and Fastify do.
 */
export function clientErrorHandler(this: FastifyInstance, error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const code = BY_PARSER_CODE[error.code ?? ''] ?? 'MALFORMED_REQUEST';
  this.log.debug({ err: error, code }, 'request refused by the HTTP parser');
  // A response of this connection already started (its headers left): more bytes would corrupt
  // it, so it is only cut. Node's own handler makes the same check on this internal field.
  const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (socket.writable && !inFlight?.headersSent) socket.write(rawAnswer(code));
  socket.destroy(error);
}
