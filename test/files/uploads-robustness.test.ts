import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance } from 'fastify';
import { collectGarbage } from '../../src/blobs/blob-collector.js';
import { FsBlobStore } from '../../src/blobs/fs/fs-blob-store.js';
import type { Config } from '../../src/config.js';
import type { DatabaseHandle } from '../../src/db/database.js';
import { DIALECTS, build, signUp, type TestUser } from '../helper.js';

function listFiles(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? listFiles(path.join(dir, e.name)) : [path.join(dir, e.name)]));
}

async function rootOf(user: TestUser): Promise<string> {
  return (await user.api.get('/api/folders/root/subfolders')).body.data.parentFolder.id;
}

async function rawUpload(app: FastifyInstance, user: TestUser, folderId: string, name: string, data: Buffer) {
  return app.inject({
    method: 'PUT',
    url: `/api/files/upload/${folderId}?name=${encodeURIComponent(name)}`,
    headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/octet-stream' },
    payload: data,
  });
}

function multipartBody(files: { name: string; data: Buffer }[], boundary = 'coffre-boundary') {
  const parts = files.flatMap((f) => [
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${f.name}"\r\nContent-Type: application/octet-stream\r\n\r\n`),
    f.data,
    Buffer.from('\r\n'),
  ]);
  return { body: Buffer.concat([...parts, Buffer.from(`--${boundary}--\r\n`)]), contentType: `multipart/form-data; boundary=${boundary}` };
}

/** What must be unchanged after a refused or broken upload. */
async function snapshot(database: DatabaseHandle, config: Config, user: TestUser) {
  const count = async (table: 'files' | 'file_versions' | 'blobs') =>
    Number((await database.db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
  const root = await user.api.get(`/api/folders/details/${await rootOf(user)}`);
  const used = await database.db.selectFrom('users').select('used_bytes').where('id', '=', user.id).executeTakeFirstOrThrow();
  return {
    files: await count('files'),
    versions: await count('file_versions'),
    blobs: await count('blobs'),
    storedFiles: listFiles(path.join(config.dataDir, 'blobs')).length,
    totalFiles: root.body.data.totalFiles,
    totalSizeByte: root.body.data.totalSizeByte,
    usedBytes: Number(used.used_bytes),
  };
}

async function eventually(check: () => Promise<void>, ms = 3000) {
  const until = Date.now() + ms;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > until) throw error;
      await sleep(50);
    }
  }
}

/** Sends the head of a request and part of its body over a raw socket, then cuts the connection. */
async function abortMidBody(port: number, head: string, partial: Buffer) {
  const socket = net.connect(port, '127.0.0.1');
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  socket.write(head);
  socket.write(partial);
  await sleep(150);
  socket.destroy();
}

for (const dialect of DIALECTS) {
  describe(`uploads that fail leave nothing behind [${dialect}]`, () => {
    it('a client that disconnects mid-upload (raw and multipart) leaves no file, version, blob or bytes', async (t) => {
      const { app, database, config } = await build(t, dialect);
      const user = await signUp(app);
      const root = await rootOf(user);
      await app.listen({ port: 0, host: '127.0.0.1' });
      const port = (app.server.address() as net.AddressInfo).port;
      const kept = randomBytes(50_000);
      assert.equal((await rawUpload(app, user, root, 'kept.bin', kept)).statusCode, 201);
      const before = await snapshot(database, config, user);

      await abortMidBody(
        port,
        `PUT /api/files/upload/${root}?name=cut.bin HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${user.token}\r\nContent-Type: application/octet-stream\r\nContent-Length: 10000000\r\n\r\n`,
        randomBytes(3_000_000),
      );
      await eventually(async () => assert.deepEqual(await snapshot(database, config, user), before));

      // A multipart request whose first file is complete and whose second is cut: the first stays.
      const first = randomBytes(20_000);
      const { body } = multipartBody([{ name: 'whole.bin', data: first }]);
      const opened = body.subarray(0, body.length - Buffer.from('--coffre-boundary--\r\n').length);
      const secondHead = Buffer.from('--coffre-boundary\r\nContent-Disposition: form-data; name="file"; filename="cut2.bin"\r\n\r\n');
      await abortMidBody(
        port,
        `POST /api/files/upload/${root} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${user.token}\r\nContent-Type: multipart/form-data; boundary=coffre-boundary\r\nContent-Length: 9000000\r\n\r\n`,
        Buffer.concat([opened, secondHead, randomBytes(2_000_000)]),
      );
      // One request, one outcome: the complete first part is taken back too.
      await eventually(async () => {
        const after = await snapshot(database, config, user);
        assert.deepEqual({ ...after, blobs: 0, storedFiles: 0 }, { ...before, blobs: 0, storedFiles: 0 });
        const referenced = await database.db.selectFrom('blobs').select('id').where('ref_count', '>', 0).execute();
        assert.equal(referenced.length, 1, 'only kept.bin still uses a blob');
      });
      const list = await user.api.get(`/api/files/list/${root}`);
      assert.deepEqual(list.body.data.data.map((f: any) => f.name), ['kept.bin']);
      assert.deepEqual(listFiles(path.join(config.dataDir, 'blobs', 'tmp')), [], 'no temp file is left');
    });

    it('413 beyond COFFRE_MAX_UPLOAD_BYTES, exactly the limit passes', async (t) => {
      const { app, database, config } = await build(t, dialect, { config: { maxUploadBytes: 100_000 } });
      const user = await signUp(app);
      const root = await rootOf(user);
      const before = await snapshot(database, config, user);
      const tooBig = await rawUpload(app, user, root, 'big.bin', randomBytes(100_001));
      assert.equal(tooBig.statusCode, 413);
      assert.equal(tooBig.json().code, 'PAYLOAD_TOO_LARGE');
      const { body, contentType } = multipartBody([{ name: 'big.bin', data: randomBytes(100_001) }]);
      const tooBigMultipart = await app.inject({ method: 'POST', url: `/api/files/upload/${root}`, headers: { authorization: `Bearer ${user.token}`, 'content-type': contentType }, payload: body });
      assert.equal(tooBigMultipart.statusCode, 413);
      assert.deepEqual(await snapshot(database, config, user), before);
      assert.equal((await rawUpload(app, user, root, 'fits.bin', randomBytes(100_000))).statusCode, 201);
    });

    it('507 beyond the quota, counting versions and copies, exact under concurrency', async (t) => {
      const { app, database, config } = await build(t, dialect, { config: { defaultQuotaBytes: 300_000 } });
      const user = await signUp(app);
      const root = await rootOf(user);
      const a = await rawUpload(app, user, root, 'a.bin', randomBytes(200_000));
      assert.equal(a.statusCode, 201);
      await rawUpload(app, user, root, 'b.bin', randomBytes(50_000));
      const before = await snapshot(database, config, user);
      const version = await rawUpload(app, user, root, 'a.bin', randomBytes(60_000));
      assert.equal(version.statusCode, 507);
      assert.equal(version.json().code, 'QUOTA_EXCEEDED');
      const copy = await user.api.post(`/api/files/copy/${a.json().data.id}`, { targetFolderId: root });
      assert.equal(copy.status, 507);
      assert.deepEqual(await snapshot(database, config, user), before);
      const status = await user.api.delete(`/api/files/delete/${a.json().data.id}?trash=hard`);
      assert.equal(status.status, 200);

      // 250 KB free now: of 8 concurrent 100 KB uploads exactly 2 fit.
      const results = await Promise.all(Array.from({ length: 8 }, (_, i) => rawUpload(app, user, root, `c${i}.bin`, randomBytes(100_000))));
      const codes = results.map((r) => r.statusCode).sort();
      assert.deepEqual(codes, [201, 201, 507, 507, 507, 507, 507, 507]);
      const used = await database.db.selectFrom('users').select('used_bytes').where('id', '=', user.id).executeTakeFirstOrThrow();
      assert.equal(Number(used.used_bytes), 250_000);
      // b.bin and the two accepted uploads hold a blob each; refused uploads left no row behind
      // (a.bin's blob waits, unreferenced, for the collector).
      await eventually(async () => {
        const rows = await database.db.selectFrom('blobs').select(['state', 'ref_count']).execute();
        assert.equal(rows.filter((b) => b.ref_count > 0).length, 3);
        assert.equal(rows.filter((b) => b.state !== 'ready').length, 0);
        assert.equal(rows.length, 4);
      });
    });

    it('the collector deletes blobs no version uses, and keeps shared ones', async (t) => {
      const { app, database, config } = await build(t, dialect, { config: { collectIntervalSeconds: 0 } });
      const store = new FsBlobStore(path.join(config.dataDir, 'blobs'));
      const user = await signUp(app);
      const root = await rootOf(user);
      const original = (await rawUpload(app, user, root, 'o.bin', randomBytes(70_000))).json().data;
      const copy = (await user.api.post(`/api/files/copy/${original.id}`, { targetFolderId: root })).body.data;
      const blobs = async () => (await database.db.selectFrom('blobs').select('id').execute()).map((b) => b.id);
      const [blobId] = await blobs();
      await user.api.delete(`/api/files/delete/${original.id}?trash=hard`);
      assert.equal(await collectGarbage(database.db, store), 0, 'the copy still uses the blob');
      assert.ok(await store.exists(blobId));
      const download = await app.inject({ method: 'GET', url: `/api/files/download/${copy.id}`, headers: { authorization: `Bearer ${user.token}` } });
      assert.equal(download.statusCode, 200);
      assert.equal(`sha256:${createHash('sha256').update(download.rawPayload).digest('hex')}`, original.checksum);
      await user.api.delete(`/api/files/delete/${copy.id}?trash=hard`);
      assert.equal(await collectGarbage(database.db, store), 1);
      assert.equal(await store.exists(blobId), false);
      assert.deepEqual(await blobs(), []);

      // An upload abandoned by a crash: collected once stale, not before.
      const now = Date.now();
      for (const [id, age] of [['stale-upload-blob-0001', 7 * 3600_000], ['fresh-upload-blob-0001', 60_000]] as const) {
        const at = new Date(now - age).toISOString();
        await database.db.insertInto('blobs').values({ id, state: 'uploading', ref_count: 0, stored_size: 0, created_at: at, updated_at: at }).execute();
        await store.put(id, (await import('node:stream')).Readable.from([Buffer.from('partial')]));
      }
      assert.equal(await collectGarbage(database.db, store), 1);
      assert.equal(await store.exists('stale-upload-blob-0001'), false);
      assert.equal(await store.exists('fresh-upload-blob-0001'), true);
    });

    it('a damaged stored blob is never served in clear past the damage', async (t) => {
      const { app, config } = await build(t, dialect);
      const user = await signUp(app);
      const root = await rootOf(user);
      const data = randomBytes(5 * 65536);
      const file = (await rawUpload(app, user, root, 'd.bin', data)).json().data;
      const blobsDir = path.join(config.dataDir, 'blobs');
      const [blobPath] = listFiles(blobsDir).filter((p) => !path.relative(blobsDir, p).startsWith('tmp'));
      const stored = fs.readFileSync(blobPath);
      const damagedSegment = 3;
      const offset = 16 + damagedSegment * (65536 + 16) + 100;
      stored[offset] ^= 0xff;
      fs.writeFileSync(blobPath, stored);

      await app.listen({ port: 0, host: '127.0.0.1' });
      const port = (app.server.address() as net.AddressInfo).port;
      const received = await new Promise<{ bytes: Buffer; complete: boolean; status?: number }>((resolve) => {
        const chunks: Buffer[] = [];
        const req = http.get({ port, host: '127.0.0.1', path: `/api/files/download/${file.id}`, headers: { authorization: `Bearer ${user.token}` } }, (res) => {
          res.on('data', (c) => chunks.push(c));
          res.on('end', () => resolve({ bytes: Buffer.concat(chunks), complete: res.complete, status: res.statusCode }));
          res.on('error', () => resolve({ bytes: Buffer.concat(chunks), complete: false }));
          res.on('aborted', () => resolve({ bytes: Buffer.concat(chunks), complete: false }));
        });
        req.on('error', () => resolve({ bytes: Buffer.concat(chunks), complete: false }));
      });
      // Either the damage shows before the first byte is sent (a 500 error body) or the response is cut.
      if (received.complete) {
        assert.equal(received.status, 500);
        assert.equal(JSON.parse(received.bytes.toString()).code, 'INTERNAL_ERROR');
      } else {
        assert.ok(received.bytes.length <= damagedSegment * 65536, `${received.bytes.length} bytes delivered`);
        assert.deepEqual(received.bytes, data.subarray(0, received.bytes.length));
      }

      const intact = await app.inject({ method: 'GET', url: `/api/files/download/${file.id}`, headers: { authorization: `Bearer ${user.token}`, range: 'bytes=65536-131071' } });
      assert.equal(intact.statusCode, 206);
      assert.deepEqual(intact.rawPayload, data.subarray(65536, 131072));
    });
  });
}
