import type { FastifyInstance } from 'fastify';
import { AppError } from '../errors.js';

/** Apps whose close has begun (see closeGracefully). */
const closing = new WeakSet<FastifyInstance>();

/**
 * While the app closes, a request arriving on a connection still open is answered 503
 * SERVICE_UNAVAILABLE in the error envelope, with `Connection: close` (Fastify sets it), so a
 * load balancer or client sends it again elsewhere. Fastify's own answer for this case
 * (`return503OnClosing`, turned off in app.ts) has a body of its own shape.
 */
export function installClosingAnswer(app: FastifyInstance): void {
  app.addHook('onRequest', (_request, _reply, done) => {
    if (closing.has(app)) done(new AppError('SERVICE_UNAVAILABLE', 'The server is shutting down: send the request again'));
    else done();
  });
}

/**
 * Closes the app for a restart: no request in flight is cut, and no idle client holds the exit.
 *
 * `app.close()` stops accepting connections and waits for the requests in flight. But Node
 * closes idle keep-alive connections only once, when the close starts (fastify/fastify#7044). A
 * connection whose request was in flight then is, once answered, kept open for its client's next
 * request for `keepAliveTimeout` (72 s in Fastify), and the close waits for it: a server stopped
 * under load did not exit until its time limit ended it with an error. With the keep-alive timeout
 * down to 1 ms, each such connection closes as soon as its response is written; a client that
 * sends its next request at once gets the 503 of installClosingAnswer.
 */
export async function closeGracefully(app: FastifyInstance): Promise<void> {
  closing.add(app);
  app.server.keepAliveTimeout = 1;
  await app.close();
}
