import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The handler streams the body itself (an upload): only the idle limit applies, never a limit in all. */
    streamedBody?: boolean;
  }
}

export interface BodyTimeouts {
  /** COFFRE_BODY_IDLE_SECONDS: a body is timed out once this long passes without a byte of it arriving. */
  idleMs: number;
  /** COFFRE_JSON_BODY_SECONDS: a body its handler does not stream must have arrived whole within this. */
  wholeMs: number;
}

/**
 * Times out request bodies that stop arriving (408 REQUEST_TIMEOUT), and frees what they sent.
 *
 * Node's `server.requestTimeout` caps the whole request, which a 20 GB upload must never hit, so
 * it stays off (0): the idle limit is the socket's own inactivity timer, armed while a body is
 * awaited, which Node's HTTP parser refreshes as bytes arrive. Headers keep Node's
 * `headersTimeout` (60 s). A JSON body, small by COFFRE_JSON_BODY_LIMIT, also gets a limit in
 * all, so a client trickling one byte at a time cannot hold a request open either.
 */
export function installBodyTimeouts(app: FastifyInstance, limits: BodyTimeouts): void {
  app.server.requestTimeout = 0;
  app.addHook('onRequest', (request, reply, done) => {
    if (bodyToCome(request.raw)) watchBody(request, reply, limits);
    done();
  });
}

/**
 * A body announced and not all here yet (a small one usually arrives with its headers), over a
 * real socket (an injected request has none to time).
 */
function bodyToCome(req: IncomingMessage): boolean {
  if (req.complete || typeof req.socket?.setTimeout !== 'function') return false;
  const length = req.headers['content-length'];
  return length === undefined ? req.headers['transfer-encoding'] !== undefined : Number(length) > 0;
}

/** Watches one body until it has arrived, the response begins or the request ends. */
function watchBody(request: FastifyRequest, reply: FastifyReply, limits: BodyTimeouts): void {
  const req = request.raw;
  const res = reply.raw;
  const socket = req.socket;
  let stopped = false;
  let whole: NodeJS.Timeout | undefined;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    clearTimeout(whole);
    req.off('timeout', onIdle).off('end', stop).off('close', stop);
    res.off('timeout', onDone).off('prefinish', answered).off('close', stop);
    // Back to the server's setting, as Node does when a keep-alive connection takes a request.
    if (!socket.destroyed) socket.setTimeout(request.server.server.timeout || 0);
  };
  // Node emits 'timeout' on the request only while its body is incomplete.
  const onIdle = () => {
    // Bytes wait in the request's buffer: the server reads slowly, the client is not idle.
    if (req.readableLength > 0) return void socket.setTimeout(limits.idleMs);
    timeOut(request, reply, stop, `No byte of the request body arrived for ${limits.idleMs / 1000} s`);
  };
  // Listening on the response too keeps Node from destroying the socket on its own when the timer
  // fires between the body's last byte and its reading.
  const onDone = () => {
    if (req.complete) stop();
  };
  // Answered before the body has all come (a refusal): the rest is only read to be dropped.
  const answered = () =>
    req.complete ? stop() : dropRestAfterAnswer(req, res, limits.idleMs, request.server.server.keepAliveTimeout, stop);
  req.on('timeout', onIdle).once('end', stop).once('close', stop);
  res.on('timeout', onDone).once('prefinish', answered).once('close', stop);
  socket.setTimeout(limits.idleMs);
  if (!request.routeOptions.config?.streamedBody) {
    const late = `The request body did not arrive within ${limits.wholeMs / 1000} s`;
    whole = setTimeout(() => (req.complete ? stop() : timeOut(request, reply, stop, late)), limits.wholeMs);
  }
}

/**
 * Node reads and drops the rest of a body answered early, to keep the connection for the next
 * request (a client that sends its whole body before reading the answer sees the answer, not a
 * broken pipe). A client that stops sending it loses the connection after the idle time, instead
 * of holding it until the keep-alive timeout.
 */
function dropRestAfterAnswer(req: IncomingMessage, res: ServerResponse, idleMs: number, keepAliveMs: number, stop: () => void): void {
  stop();
  const socket = req.socket;
  const drop = () => socket.destroy();
  // Registered after Node's own 'finish' listener, which sets the keep-alive timeout.
  res.once('finish', () => {
    if (req.complete || socket.destroyed) return;
    socket.setTimeout(idleMs);
    socket.once('timeout', drop);
    req.once('end', () => {
      socket.off('timeout', drop);
      if (!socket.destroyed) socket.setTimeout(keepAliveMs);
    });
  });
}

/**
 * Fails the body with 408: whoever reads it (a body parser, an upload) gets the error, frees
 * what it holds and answers through the error handler, after which the connection closes.
 */
function timeOut(request: FastifyRequest, reply: FastifyReply, stop: () => void, message: string): void {
  stop();
  const req = request.raw;
  const error = new AppError('REQUEST_TIMEOUT', message);
  request.log.info({ timeout: message }, 'request body timed out');
  // The response has begun: nothing more can be said, the connection goes with the request.
  if (reply.raw.headersSent) return void req.destroy(error);
  reply.header('connection', 'close');
  // Detached from its socket first, as stream.pipeline detaches a server request it destroys:
  // destroying an incomplete request otherwise destroys the socket, and the answer with it.
  (req as { socket: unknown }).socket = null;
  req.destroy(error);
}
