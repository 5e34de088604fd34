import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { listFiles } from './disk.js';
import type { Config } from '../../src/config.js';

/** Listens on a free port of 127.0.0.1; returns the port. */
export async function listen(app: FastifyInstance): Promise<number> {
  await app.listen({ port: 0, host: '127.0.0.1' });
  return (app.server.address() as net.AddressInfo).port;
}

/** A free TCP port of 127.0.0.1 (for a peer server that takes its port on the command line). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** What came back on a raw connection: the parsed response, if one came, and whether the server closed it. */
export interface RawAnswer {
  status?: number;
  headers: Record<string, string>;
  body: string;
  /** Milliseconds from the end of the last `send` to the answer (or to giving up). */
  sinceLastSendMs: number;
  closedByServer: boolean;
}

/**
 * A client connection driven byte by byte, for bodies that stall or trickle: `send` writes, and
 * `answer` waits for a whole response (or the server closing the connection).
 */
export interface RawConnection {
  socket: net.Socket;
  send(data: string | Buffer): Promise<void>;
  /** Resolves with the first whole response, the server's close, or after `ms` (then `status` is unset). */
  answer(ms: number): Promise<RawAnswer>;
  /** Forgets the response read so far (before a second request on the same connection). */
  reset(): void;
  close(): void;
}

export async function connect(port: number): Promise<RawConnection> {
  const socket = net.connect(port, '127.0.0.1');
  socket.on('error', () => {});
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', () => resolve());
    socket.once('error', reject);
  });
  const opened = Date.now();
  let received = Buffer.alloc(0);
  let closed = false;
  const changed = new Set<() => void>();
  socket.on('data', (d: Buffer) => {
    received = Buffer.concat([received, d]);
    for (const wake of changed) wake();
  });
  socket.on('close', () => {
    closed = true;
    for (const wake of changed) wake();
  });
  const parse = (): Pick<RawAnswer, 'status' | 'headers' | 'body'> | null => {
    const text = received.toString('latin1');
    const end = text.indexOf('\r\n\r\n');
    if (end < 0) return null;
    const [statusLine, ...lines] = text.slice(0, end).split('\r\n');
    const headers: Record<string, string> = {};
    for (const line of lines) headers[line.slice(0, line.indexOf(':')).toLowerCase()] = line.slice(line.indexOf(':') + 1).trim();
    const length = Number(headers['content-length'] ?? 0);
    if (received.length < end + 4 + length) return null;
    return { status: Number(statusLine.split(' ')[1]), headers, body: received.subarray(end + 4, end + 4 + length).toString('utf8') };
  };
  let lastSent = opened;
  const result = (): RawAnswer => {
    const parsed = parse();
    return {
      status: parsed?.status,
      headers: parsed?.headers ?? {},
      body: parsed?.body ?? '',
      sinceLastSendMs: Date.now() - lastSent,
      closedByServer: closed,
    };
  };
  return {
    socket,
    send: (data) =>
      new Promise<void>((resolve, reject) =>
        socket.write(data, (e) => {
          lastSent = Date.now();
          return e ? reject(e) : resolve();
        }),
      ),
    answer: (ms) =>
      new Promise<RawAnswer>((resolve) => {
        const finish = () => {
          clearTimeout(timer);
          changed.delete(check);
          resolve(result());
        };
        const check = () => void ((parse() || closed) && finish());
        const timer = setTimeout(finish, ms);
        changed.add(check);
        check();
      }),
    reset: () => {
      received = Buffer.alloc(0);
    },
    close: () => socket.destroy(),
  };
}

/** The temp files of uploads in progress (`<data>/blobs/tmp/*.part`) and their total size. */
export function tempFiles(config: Config): { files: string[]; bytes: number } {
  const files = listFiles(path.join(config.dataDir, 'blobs', 'tmp'));
  const bytes = files.reduce((sum, file) => sum + (fs.statSync(file, { throwIfNoEntry: false })?.size ?? 0), 0);
  return { files, bytes };
}
