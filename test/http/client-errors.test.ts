import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import type { FastifyInstance } from 'fastify';
import { ERROR_CATALOG } from '../../src/errors.js';
import { DIALECTS, build } from '../helper.js';

// Issue 29 item 6b: requests Node refuses before Fastify sees them (its HTTP parser: a URL or
// headers too large, a malformed request, a timeout) are answered with the error envelope too.
// `inject` does not go through the parser, hence real sockets.

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: any;
  /** The socket was closed by the server after the answer. */
  closed: boolean;
}

function parseAnswer(raw: string, closed: boolean): RawAnswer {
  const [head, ...rest] = raw.split('\r\n\r\n');
  const [statusLine, ...lines] = head.split('\r\n');
  const match = /^HTTP\/1\.1 (\d{3}) /.exec(statusLine);
  assert.ok(match, `no status line in ${JSON.stringify(raw.slice(0, 200))}`);
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const text = rest.join('\r\n\r\n');
  assert.equal(Buffer.byteLength(text), Number(headers['content-length']), 'Content-Length is the body length');
  return { status: Number(match[1]), headers, body: JSON.parse(text), closed };
}

/** Writes `request` as raw bytes to the listening app; the raw answer, read until the server closes. */
async function rawRequest(port: number, request: string | Buffer): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no close within 5 s; got ${Buffer.concat(chunks).toString().slice(0, 300)}`));
    }, 5000);
    socket.on('data', (chunk) => chunks.push(chunk));
    // The server may close while a large request is still being written: what it said counts.
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(timer);
      try {
        resolve(parseAnswer(Buffer.concat(chunks).toString(), true));
      } catch (error) {
        reject(error);
      }
    });
    socket.write(request);
  });
}

async function listening(t: TestContext, dialect: (typeof DIALECTS)[number]): Promise<{ app: FastifyInstance; port: number }> {
  const { app } = await build(t, dialect);
  await app.listen({ port: 0, host: '127.0.0.1' });
  return { app, port: (app.server.address() as net.AddressInfo).port };
}

function assertClosingError(answer: RawAnswer, status: number, code: keyof typeof ERROR_CATALOG) {
  assert.equal(answer.status, status, JSON.stringify(answer));
  assert.deepEqual(
    Object.keys(answer.body).sort(),
    ['code', 'data', 'message', 'status'],
    `not the envelope: ${JSON.stringify(answer.body)}`,
  );
  assert.equal(answer.body.code, code);
  assert.equal(ERROR_CATALOG[code].status, status, `${code} has status ${status} in the catalog`);
  assert.match(answer.headers['content-type'], /^application\/json; charset=utf-8$/);
  assert.deepEqual(answer.body, { status, message: ERROR_CATALOG[code].message, code, data: null });
  assert.match(answer.headers['x-request-id'], UUID, 'an x-request-id, as on every answer');
  assert.equal(answer.headers.connection, 'close');
  assert.ok(answer.closed);
}

for (const dialect of DIALECTS) {
  describe(`errors Node answers before routing carry the envelope [${dialect}]`, () => {
    it('a URL over 16 KB: 431 HEADERS_TOO_LARGE', async (t) => {
      const { port } = await listening(t, dialect);
      const answer = await rawRequest(port, `GET /api/${'a'.repeat(17 * 1024)} HTTP/1.1\r\nHost: localhost\r\n\r\n`);
      assertClosingError(answer, 431, 'HEADERS_TOO_LARGE');
    });

    it('headers over 16 KB: 431 HEADERS_TOO_LARGE', async (t) => {
      const { port } = await listening(t, dialect);
      const answer = await rawRequest(port, `GET /api HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'b'.repeat(20 * 1024)}\r\n\r\n`);
      assertClosingError(answer, 431, 'HEADERS_TOO_LARGE');
    });

    it('a malformed request: 400 MALFORMED_REQUEST', async (t) => {
      const { port } = await listening(t, dialect);
      for (const request of [
        'NOT AN HTTP REQUEST\r\n\r\n',
        'GET /api HTTP/1.1\r\nHost: localhost\r\nBad Header: x\r\n\r\n',
        'GET /api HTTP/9.9\r\n\r\n',
      ]) {
        assertClosingError(await rawRequest(port, request), 400, 'MALFORMED_REQUEST');
      }
    });

    it('a chunk extension over 16 KB: 413 PAYLOAD_TOO_LARGE', async (t) => {
      const { port } = await listening(t, dialect);
      const request = `POST /api/auth/login HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n2;${'e'.repeat(20 * 1024)}\r\n{}\r\n0\r\n\r\n`;
      assertClosingError(await rawRequest(port, request), 413, 'PAYLOAD_TOO_LARGE');
    });

    it('a request that times out: 408 REQUEST_TIMEOUT', async (t) => {
      const { app, port } = await listening(t, dialect);
      // Node checks request timeouts every 30 s: the test raises its timeout error itself, on
      // the server's end of a real connection, as Node does.
      const serverSide = new Promise<net.Socket>((resolve) => app.server.once('connection', resolve));
      const answer = new Promise<RawAnswer>((resolve, reject) => {
        const socket = net.connect(port, '127.0.0.1');
        const chunks: Buffer[] = [];
        socket.on('data', (chunk) => chunks.push(chunk));
        socket.on('error', () => {});
        socket.on('close', () => {
          try {
            resolve(parseAnswer(Buffer.concat(chunks).toString(), true));
          } catch (error) {
            reject(error);
          }
        });
        socket.write('GET /api HTTP/1.1\r\nHost: local');
      });
      const timeout = Object.assign(new Error('Request timeout'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' });
      app.server.emit('clientError', timeout, await serverSide);
      assertClosingError(await answer, 408, 'REQUEST_TIMEOUT');
    });

    it('a well-formed request on the same server is still answered as usual', async (t) => {
      const { port } = await listening(t, dialect);
      const res = await fetch(`http://127.0.0.1:${port}/api/nowhere`);
      assert.equal(res.status, 404);
      assert.equal(((await res.json()) as { code: string }).code, 'ROUTE_NOT_FOUND');
    });
  });
}
