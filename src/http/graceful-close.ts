import type { FastifyInstance } from 'fastify';

/**
 * Closes the app for a restart: no request in flight is cut, and no idle client holds the exit.
 *
 * `app.close()` stops accepting connections, answers 503 to new requests on open ones and waits
 * for the requests in flight. But Node closes idle keep-alive connections only once, when the
 * close starts (fastify/fastify#7044). A connection whose request was in flight then is, once
 * answered, kept open for its client's next request for `keepAliveTimeout` (72 s in Fastify),
 * and the close waits for it: a server stopped under load did not exit until its 10 s limit
 * ended it with an error. With the keep-alive timeout down to 1 ms, each such connection closes
 * as soon as its response is written; a client that sends its next request at once still gets
 * the 503 and `Connection: close`.
 */
export async function closeGracefully(app: FastifyInstance): Promise<void> {
  app.server.keepAliveTimeout = 1;
  await app.close();
}
