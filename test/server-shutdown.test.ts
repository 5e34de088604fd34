import assert from 'node:assert/strict';
import { once } from 'node:events';
import { Readable } from 'node:stream';
import { after, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from 'undici';
import { openDatabase, type DatabaseHandle } from '../src/db/database.js';
import { DIALECTS, PG_URL, databaseUrlFor, newSchemaName } from './helper.js';
import { http, startInstance } from './support/instances.js';

/**
 * SIGTERM on a real server process (a rolling restart): the upload in flight finishes and is
 * recorded, and the process exits at once with 0 although its client keeps the connection open
 * (keep-alive), instead of waiting for that client until the 10 s limit ends it with an error.
 */
for (const dialect of DIALECTS) {
  describe(`graceful shutdown under a keep-alive client [${dialect}]`, () => {
    const databases: DatabaseHandle[] = [];
    after(async () => {
      for (const database of databases) await database.close();
    });

    it('finishes the upload in flight and exits with 0 at once, although its client keeps the connection open', async () => {
      const env: Record<string, string> = { COFFRE_REGISTRATION: 'open', LOG_LEVEL: 'info' };
      let database: DatabaseHandle | undefined;
      if (dialect === 'postgres') {
        database = await openDatabase({ url: PG_URL, pgSchema: newSchemaName(), poolSize: 1 });
        databases.push(database);
        env.DATABASE_URL = databaseUrlFor(database)!;
      }
      const instance = await startInstance(`shutdown-${dialect}`, env);
      const client = new Client(instance.url);
      try {
        const registered = await http(instance.url, 'POST', '/api/auth/register', { json: { email: 'shutdown@example.com', password: 'correct horse battery', name: 'Shutdown' } });
        assert.equal(registered.status, 201, JSON.stringify(registered.body));
        const token = registered.body.data.accessToken as string;
        const roots = await http(instance.url, 'GET', '/api/folders/root/subfolders', { token });
        const rootId = roots.body.data.parentFolder.id as string;
        const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/octet-stream' };

        // A request on the client's connection first, so the upload reuses a kept-alive one.
        const warm = await client.request({ method: 'GET', path: '/api/folders/root/subfolders', headers });
        assert.equal(warm.statusCode, 200);
        await warm.body.dump();

        // The upload sends half its body, then waits for the signal before sending the rest.
        let release!: () => void;
        const released = new Promise<void>((resolve) => (release = resolve));
        const half = Buffer.alloc(512 * 1024, 1);
        const body = Readable.from(
          (async function* () {
            yield half;
            await released;
            yield half;
          })(),
        );
        const uploading = client.request({ method: 'PUT', path: `/api/files/upload/${rootId}?name=during-shutdown.bin`, headers, body });
        for (let i = 0; !instance.logs.some((line) => (line.req as { url?: string } | undefined)?.url?.includes('during-shutdown')); i++) {
          assert.ok(i < 200, 'the server never logged the upload');
          await sleep(25);
        }

        const exited = once(instance.process, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
        instance.process.kill('SIGTERM');
        for (let i = 0; !instance.logs.some((line) => line.msg === 'shutting down: finishing in-flight requests'); i++) {
          assert.ok(i < 200, 'the server never began its shutdown');
          await sleep(25);
        }
        release();
        const uploaded = await uploading;
        const answer = (await uploaded.body.json()) as { data: { size: number; name: string } };
        assert.equal(uploaded.statusCode, 201, JSON.stringify(answer));
        assert.equal(answer.data.size, 1024 * 1024);
        const answeredAt = Date.now();

        // The client keeps its connection: the process must not wait for it.
        const [code, signal] = await exited;
        const exitDelay = Date.now() - answeredAt;
        assert.equal(signal, null);
        assert.equal(code, 0, instance.output.join('\n'));
        assert.ok(exitDelay < 3000, `the process exited ${exitDelay} ms after the last answer`);
        assert.ok(!instance.logs.some((line) => Number(line.level) >= 50), JSON.stringify(instance.logs.filter((line) => Number(line.level) >= 50)));

        if (database) {
          // The upload answered before the exit is recorded, with its blob stored.
          const files = await database.db.selectFrom('files').select(['name', 'size']).execute();
          assert.deepEqual(files.map((f) => [f.name, Number(f.size)]), [['during-shutdown.bin', 1024 * 1024]]);
          const blobs = await database.db.selectFrom('blobs').select('state').execute();
          assert.deepEqual(blobs.map((b) => b.state), ['ready']);
        }
      } finally {
        await client.close().catch(() => {});
        await instance.stop();
      }
    });
  });
}
