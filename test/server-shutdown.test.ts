import assert from 'node:assert/strict';
import { once } from 'node:events';
import net from 'node:net';
import { after, describe, it } from 'node:test';
import { openDatabase, type DatabaseHandle } from '../src/db/database.js';
import { DIALECTS, PG_URL, databaseUrlFor, newSchemaName } from './helper.js';
import { http, startInstance, type Instance } from './support/instances.js';
import { eventually } from './support/wait.js';

interface Server {
  instance: Instance;
  database: DatabaseHandle | undefined;
  token: string;
  hostname: string;
  half: Buffer;
  startUpload(name: string): Promise<{ socket: net.Socket; received: Buffer[]; closed: Promise<unknown[]> }>;
  exited: Promise<[number | null, NodeJS.Signals | null]>;
  terminate(): Promise<void>;
}

/**
 * SIGTERM on a real server process (a rolling restart), with a client that keeps its connection
 * open: the upload in flight finishes and is recorded, the request the client sends next on that
 * connection is refused in the error envelope, and the process exits at once with 0 instead of
 * waiting for the client until its 10 s limit ends it with an error.
 */
for (const dialect of DIALECTS) {
  describe(`graceful shutdown under a keep-alive client [${dialect}]`, () => {
    const databases: DatabaseHandle[] = [];
    after(async () => {
      for (const database of databases) await database.close();
    });

    /**
     * A server process for the dialect (with `extraEnv`), a signed-up user, and uploads over raw
     * kept-alive connections that send half their body and wait: `run` gets them, then everything
     * is stopped.
     */
    async function withServer(extraEnv: Record<string, string>, run: (server: Server) => Promise<void>): Promise<void> {
      const env: Record<string, string> = { COFFRE_REGISTRATION: 'open', LOG_LEVEL: 'info', ...extraEnv };
      let database: DatabaseHandle | undefined;
      if (dialect === 'postgres') {
        database = await openDatabase({ url: PG_URL, pgSchema: newSchemaName(), poolSize: 1 });
        databases.push(database);
        env.DATABASE_URL = databaseUrlFor(database)!;
      }
      const instance = await startInstance(`shutdown-${dialect}`, env);
      const sockets: net.Socket[] = [];
      try {
        const registered = await http(instance.url, 'POST', '/api/auth/register', {
          json: { email: 'shutdown@example.com', password: 'correct horse battery', name: 'Shutdown' },
        });
        assert.equal(registered.status, 201, JSON.stringify(registered.body));
        const token = registered.body.data.accessToken as string;
        const roots = await http(instance.url, 'GET', '/api/folders/root/subfolders', { token });
        const rootId = roots.body.data.parentFolder.id as string;
        const { hostname, port } = new URL(instance.url);
        const half = Buffer.alloc(512 * 1024, 1);
        const startUpload = async (name: string) => {
          const socket = net.connect(Number(port), hostname);
          sockets.push(socket);
          await once(socket, 'connect');
          const received: Buffer[] = [];
          socket.on('data', (chunk: Buffer) => received.push(chunk));
          socket.write(
            `PUT /api/files/upload/${rootId}?name=${name} HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${token}\r\n` +
              `Content-Type: application/octet-stream\r\nContent-Length: ${2 * half.length}\r\nConnection: keep-alive\r\n\r\n`,
          );
          socket.write(half);
          await until(
            instance,
            (line) => (line.req as { url?: string } | undefined)?.url?.includes(name) === true,
            `the server never logged ${name}`,
          );
          return { socket, received, closed: once(socket, 'close') };
        };
        const exited = once(instance.process, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
        const terminate = async () => {
          instance.process.kill('SIGTERM');
          await until(
            instance,
            (line) => line.msg === 'shutting down: finishing in-flight requests',
            'the server never began its shutdown',
          );
        };
        await run({ instance, database, token, hostname, half, startUpload, exited, terminate });
      } finally {
        for (const socket of sockets) socket.destroy();
        await instance.stop();
      }
    }

    it('finishes the uploads in flight, refuses a next request with 503, and exits with 0 at once though a connection stays open', async () => {
      await withServer({}, async ({ instance, database, token, hostname, half, startUpload, exited, terminate }) => {
        const staying = await startUpload('kept-open.bin');
        const asking = await startUpload('then-more.bin');

        await terminate();
        // One client sends the rest of its body and keeps its connection, saying nothing more; the
        // other sends its next request right behind the body, on the same connection.
        staying.socket.write(half);
        asking.socket.write(half);
        asking.socket.write(`GET /api/folders/root/subfolders HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${token}\r\n\r\n`);
        await asking.closed;
        await eventually(
          () => assert.ok(parseResponses(Buffer.concat(staying.received)).length > 0, 'the upload kept open was never answered'),
          10_000,
        );
        const answeredAt = Date.now();

        const [kept, ...keptRest] = parseResponses(Buffer.concat(staying.received));
        assert.equal(keptRest.length, 0);
        assert.equal(kept.status, 201, kept.body);
        assert.equal(kept.headers.connection, 'keep-alive');
        const [uploaded, refused, ...rest] = parseResponses(Buffer.concat(asking.received));
        assert.equal(rest.length, 0);
        assert.equal(uploaded.status, 201, uploaded.body);
        assert.equal(JSON.parse(uploaded.body).data.size, 1024 * 1024);
        assert.equal(refused.status, 503);
        assert.equal(refused.headers.connection, 'close');
        assert.deepEqual(JSON.parse(refused.body), {
          status: 503,
          message: 'The server is shutting down: send the request again',
          code: 'SERVICE_UNAVAILABLE',
          data: null,
        });

        const [code, signal] = await exited;
        const exitDelay = Date.now() - answeredAt;
        assert.equal(signal, null);
        assert.equal(code, 0, instance.output.join('\n'));
        assert.ok(exitDelay < 3000, `the process exited ${exitDelay} ms after the last answer`);
        assert.deepEqual(
          instance.logs.filter((line) => Number(line.level) >= 50),
          [],
        );

        if (database) {
          // The uploads answered during the shutdown are recorded, their blobs stored.
          const files = await database.db.selectFrom('files').select(['name', 'size']).execute();
          assert.deepEqual(files.map((f) => [f.name, Number(f.size)]).sort(), [
            ['kept-open.bin', 1024 * 1024],
            ['then-more.bin', 1024 * 1024],
          ]);
          const blobs = await database.db.selectFrom('blobs').select('state').execute();
          assert.deepEqual(
            blobs.map((b) => b.state),
            ['ready', 'ready'],
          );
        }
      });
    });

    it('cuts what still runs after COFFRE_SHUTDOWN_GRACE_SECONDS and exits with 1, recording nothing of it', async () => {
      await withServer({ COFFRE_SHUTDOWN_GRACE_SECONDS: '1' }, async ({ instance, database, startUpload, exited, terminate }) => {
        await startUpload('never-finished.bin');
        const started = Date.now();
        await terminate();
        const [code, signal] = await exited;
        const took = Date.now() - started;
        assert.equal(signal, null);
        assert.equal(code, 1);
        assert.ok(took >= 900 && took < 5000, `exited after ${took} ms`);
        assert.ok(instance.logs.some((line) => line.msg === 'shutdown took longer than 1 s (COFFRE_SHUTDOWN_GRACE_SECONDS), exiting'));
        if (database) {
          assert.deepEqual(await database.db.selectFrom('files').select('name').execute(), []);
          // Its blob row stays `uploading`, for the collector (see files.storage.ts).
          const blobs = await database.db.selectFrom('blobs').select('state').execute();
          assert.deepEqual(
            blobs.map((b) => b.state),
            ['uploading'],
          );
        }
      });
    });
  });
}

async function until(instance: Instance, seen: (line: Record<string, unknown>) => boolean, failure: string): Promise<void> {
  await eventually(() => assert.ok(instance.logs.some(seen), failure), 10_000);
}

/** HTTP/1.1 responses one after another on a connection (each with a Content-Length). */
function parseResponses(bytes: Buffer): { status: number; headers: Record<string, string>; body: string }[] {
  const responses = [];
  let at = 0;
  while (at < bytes.length) {
    const end = bytes.indexOf('\r\n\r\n', at);
    assert.ok(end > at, `an incomplete response: ${bytes.subarray(at).toString('latin1').slice(0, 200)}`);
    const [statusLine, ...lines] = bytes.subarray(at, end).toString('latin1').split('\r\n');
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
    }
    const length = Number(headers['content-length']);
    assert.ok(Number.isInteger(length), `no Content-Length in: ${statusLine}`);
    responses.push({ status: Number(statusLine.split(' ')[1]), headers, body: bytes.subarray(end + 4, end + 4 + length).toString('utf8') });
    at = end + 4 + length;
  }
  return responses;
}
