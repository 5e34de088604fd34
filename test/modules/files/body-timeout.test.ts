// Request bodies that stop arriving (issue 29, item 1): a body that makes no progress for
// COFFRE_BODY_IDLE_SECONDS is answered 408 REQUEST_TIMEOUT and what it sent is freed at once; a
// long upload that keeps moving is never cut; a JSON body has COFFRE_JSON_BODY_SECONDS in all.
// Real sockets throughout: the stalls are what a client does on the wire.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadConfig, type Config } from '../../../src/config.js';
import type { DatabaseHandle } from '../../../src/db/database.js';
import { DIALECTS, build, signUp, type TestUser } from '../../helper.js';
import { rootFolderId, unknownId } from '../../support/files.js';
import { connect, listen, tempFiles, type RawAnswer, type RawConnection } from '../../support/raw-http.js';
import { eventually } from '../../support/wait.js';

const BOUNDARY = 'idle-boundary-29';

function rawPutHead(folderId: string, user: TestUser, name: string, length: number | 'chunked'): string {
  const framing = length === 'chunked' ? 'Transfer-Encoding: chunked' : `Content-Length: ${length}`;
  return `PUT /api/files/upload/${folderId}?name=${name} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${user.token}\r\nContent-Type: application/octet-stream\r\n${framing}\r\n\r\n`;
}

function assertTimedOut(answer: RawAnswer, idleMs: number): void {
  assert.equal(
    answer.status,
    408,
    `a 408 is expected ${answer.sinceLastSendMs} ms after the last byte, got ${answer.status ?? 'no answer'}`,
  );
  const body = JSON.parse(answer.body);
  assert.deepEqual({ ...body, message: typeof body.message }, { status: 408, code: 'REQUEST_TIMEOUT', message: 'string', data: null });
  assert.equal(answer.headers.connection, 'close');
  assert.ok(answer.sinceLastSendMs >= idleMs - 100, `answered after ${answer.sinceLastSendMs} ms, before the idle time`);
}

/** What a timed-out upload must leave as it was: rows, stored and temp files, the quota. */
/**
 * Runs `work` over new connections and closes them however it ends: before the app's own close
 * (a `t.after` of build, run first), which would wait for their requests forever.
 */
async function withConnections(port: number, count: number, work: (connections: RawConnection[]) => Promise<void>): Promise<void> {
  const opened = await Promise.all(Array.from({ length: count }, () => connect(port)));
  try {
    await work(opened);
  } finally {
    for (const connection of opened) connection.close();
  }
}

async function leftovers(database: DatabaseHandle, config: Config, userId: string) {
  const blobs = await database.db.selectFrom('blobs').select(['id', 'state']).execute();
  const files = await database.db.selectFrom('files').select('name').execute();
  const user = await database.db.selectFrom('users').selectAll().where('id', '=', userId).executeTakeFirstOrThrow();
  return { blobs, files: files.map((f) => f.name), tmp: tempFiles(config).files, usedBytes: Number(user.used_bytes) };
}

/** Log lines of an app, parsed. */
function logCollector(): { stream: Writable; lines: Record<string, any>[] } {
  const lines: Record<string, any>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) lines.push(JSON.parse(line));
      callback();
    },
  });
  return { stream, lines };
}

for (const dialect of DIALECTS) {
  describe(`request bodies that stop arriving [${dialect}]`, () => {
    it('the defaults: 60 s without progress, 30 s in all for a JSON body', () => {
      const config = loadConfig({});
      assert.equal(config.bodyIdleSeconds, 60);
      assert.equal(config.jsonBodySeconds, 30);
      assert.equal(loadConfig({ COFFRE_BODY_IDLE_SECONDS: '5', COFFRE_JSON_BODY_SECONDS: '7' }).bodyIdleSeconds, 5);
      assert.throws(() => loadConfig({ COFFRE_BODY_IDLE_SECONDS: '0' }), /COFFRE_BODY_IDLE_SECONDS/);
    });

    it('a raw upload stalled mid-body is answered 408 after the idle time, and nothing of it stays', async (t) => {
      const logs = logCollector();
      const { app, database, config } = await build(t, dialect, {
        config: { bodyIdleSeconds: 1, logLevel: 'info' },
        logStream: logs.stream,
        webRoot: null,
      });
      const user = await signUp(app);
      const folder = await rootFolderId(user);
      const port = await listen(app);
      const before = await leftovers(database, config, user.id);

      await withConnections(port, 1, async ([client]) => {
        await client.send(rawPutHead(folder, user, 'stalled.bin', 10_000_000));
        await client.send(randomBytes(200_000));
        // The server is storing it: a temp file exists while the body is awaited.
        await eventually(() => assert.equal(tempFiles(config).files.length, 1));
        const answer = await client.answer(5000);
        assertTimedOut(answer, 1000);
        assert.ok(answer.sinceLastSendMs < 3000, `answered only after ${answer.sinceLastSendMs} ms`);
        await eventually(async () => assert.equal((await client.answer(1000)).closedByServer, true));
      });
      await eventually(async () => assert.deepEqual(await leftovers(database, config, user.id), before), 1000);
      // A client gone quiet is no fault of the server's: told at info level, never as an error.
      assert.deepEqual(
        logs.lines.filter((l) => l.level >= 40).map((l) => l.msg),
        [],
      );
      assert.equal(logs.lines.filter((l) => l.msg === 'request body timed out').length, 1);
    });

    it('an upload answered before its body has arrived drops the rest, and the connection once the client stops sending', async (t) => {
      const { app } = await build(t, dialect, { config: { bodyIdleSeconds: 1 }, webRoot: null });
      const user = await signUp(app);
      const port = await listen(app);
      await withConnections(port, 2, async ([sending, stopping]) => {
        // A client that sends its whole body before reading: the refusal, then the next request.
        await sending.send(rawPutHead(unknownId('fld'), user, 'refused.bin', 300_000));
        await sending.send(randomBytes(300_000));
        assert.equal((await sending.answer(5000)).status, 404);
        sending.reset();
        await sending.send(`GET /api/auth/me HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${user.token}\r\n\r\n`);
        assert.equal((await sending.answer(5000)).status, 200, 'the connection serves the next request');

        // A client that stops in the middle of the body: closed after the idle time, not the keep-alive timeout (72 s).
        await stopping.send(rawPutHead(unknownId('fld'), user, 'refused.bin', 10_000_000));
        await stopping.send(randomBytes(100_000));
        assert.equal((await stopping.answer(5000)).status, 404);
        await eventually(async () => assert.equal((await stopping.answer(500)).closedByServer, true), 4000);
      });
    });

    it('a multipart upload stalled mid-part, and a chunked one, are answered 408 and leave nothing', async (t) => {
      const { app, database, config } = await build(t, dialect, { config: { bodyIdleSeconds: 1 } });
      const user = await signUp(app);
      const folder = await rootFolderId(user);
      const port = await listen(app);
      const before = await leftovers(database, config, user.id);

      await withConnections(port, 2, async ([multipart, chunked]) => {
        await multipart.send(
          `POST /api/files/upload/${folder} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${user.token}\r\nContent-Type: multipart/form-data; boundary=${BOUNDARY}\r\nContent-Length: 10000000\r\n\r\n`,
        );
        await multipart.send(
          `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="part.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
        );
        await multipart.send(randomBytes(300_000));
        await chunked.send(rawPutHead(folder, user, 'chunked.bin', 'chunked'));
        const chunk = randomBytes(300_000);
        await chunked.send(Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]));
        const [a, b] = await Promise.all([multipart.answer(5000), chunked.answer(5000)]);
        assertTimedOut(a, 1000);
        assertTimedOut(b, 1000);
      });
      await eventually(async () => assert.deepEqual(await leftovers(database, config, user.id), before), 1000);
    });

    it('a login with a body that never comes is answered 408, without an account', async (t) => {
      const { app } = await build(t, dialect, { config: { bodyIdleSeconds: 1 } });
      const port = await listen(app);
      await withConnections(port, 1, async ([client]) => {
        await client.send(
          'POST /api/auth/login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 500000\r\n\r\n',
        );
        await client.send('{"email":"a');
        const answer = await client.answer(5000);
        assertTimedOut(answer, 1000);
        assert.ok(answer.sinceLastSendMs < 3000, `answered only after ${answer.sinceLastSendMs} ms`);
      });
    });

    it('a JSON body that trickles in has a limit in all, though it never stalls', async (t) => {
      const { app } = await build(t, dialect, { config: { bodyIdleSeconds: 5, jsonBodySeconds: 1 } });
      const port = await listen(app);
      await withConnections(port, 1, async ([client]) => {
        const started = Date.now();
        await client.send(
          'POST /api/auth/login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n',
        );
        let answer: RawAnswer | undefined;
        for (let i = 0; i < 20 && !answer?.status && !answer?.closedByServer; i++) {
          await client.send(' ').catch(() => {});
          answer = await client.answer(200);
        }
        assert.equal(answer?.status, 408, 'the trickle is cut');
        assert.equal(JSON.parse(answer!.body).code, 'REQUEST_TIMEOUT');
        const took = Date.now() - started;
        assert.ok(took >= 900 && took < 3000, `cut after ${took} ms`);
      });
    });

    it('a long upload that keeps moving is not cut, and its connection serves the next request', async (t) => {
      const { app, database } = await build(t, dialect, { config: { bodyIdleSeconds: 1 } });
      const user = await signUp(app);
      const folder = await rootFolderId(user);
      const port = await listen(app);
      const data = randomBytes(3 * 1024 * 1024);
      await withConnections(port, 1, async ([client]) => {
        const started = Date.now();
        await client.send(rawPutHead(folder, user, 'slow.bin', data.length));
        // 3 MiB in 12 pieces 300 ms apart: 3.3 s in all, three times the idle time.
        for (let at = 0; at < data.length; at += 256 * 1024) {
          await client.send(data.subarray(at, at + 256 * 1024));
          if (at + 256 * 1024 < data.length) await sleep(300);
        }
        const answer = await client.answer(5000);
        assert.equal(answer.status, 201, answer.body);
        assert.ok(Date.now() - started > 3000);
        const detail = JSON.parse(answer.body).data;
        assert.equal(detail.checksum, `sha256:${createHash('sha256').update(data).digest('hex')}`);
        assert.equal(answer.closedByServer, false);

        // Idle longer than the body idle time between two requests: the keep-alive connection stays.
        await sleep(1500);
        client.reset();
        await client.send(`GET /api/files/details/${detail.id} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${user.token}\r\n\r\n`);
        const next = await client.answer(3000);
        assert.equal(next.status, 200, `the connection was closed: ${next.closedByServer}`);
      });
      const row = await database.db.selectFrom('users').select('used_bytes').where('id', '=', user.id).executeTakeFirstOrThrow();
      assert.equal(Number(row.used_bytes), data.length);
    });
  });
}
