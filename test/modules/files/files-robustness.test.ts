import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { collectGarbage } from '../../../src/blobs/blob-collector.js';
import { newBlobKey } from '../../../src/blobs/blob-keys.js';
import { FsBlobStore } from '../../../src/blobs/fs/fs-blob-store.js';
import type { Config } from '../../../src/config.js';
import type { DatabaseHandle } from '../../../src/db/database.js';
import { DIALECTS, build, signUp, type TestUser } from '../../helper.js';
import { listen } from '../../support/raw-http.js';
import { prng as mulberry32 } from '../../support/prng.js';
import { mkdir } from '../../support/folders.js';
import { rootFolderId } from '../../support/files.js';
import { eventually } from '../../support/wait.js';
import { sha256Tag } from '../../support/disk.js';

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/** Every regular file under `dir`, recursively (absolute paths, sorted). */
function listFilesRec(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? listFilesRec(path.join(dir, e.name)) : [path.join(dir, e.name)]))
    .sort();
}

/** Stored blob files (outside blobs/tmp) and temp files (inside blobs/tmp). */
function storedFiles(config: Config): { blobs: string[]; tmp: string[] } {
  const root = path.join(config.dataDir, 'blobs');
  const tmpDir = path.join(root, 'tmp');
  const all = listFilesRec(root);
  return {
    blobs: all.filter((p) => !p.startsWith(tmpDir + path.sep)),
    tmp: listFilesRec(tmpDir),
  };
}

function blobPath(config: Config, blobId: string): string {
  return path.join(config.dataDir, 'blobs', blobId.slice(0, 2), blobId.slice(2, 4), blobId);
}

function rawUpload(app: FastifyInstance, user: TestUser, folderId: string, name: string, data: Buffer, query = '') {
  return app.inject({
    method: 'PUT',
    url: `/api/files/upload/${folderId}?name=${encodeURIComponent(name)}${query}`,
    headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/octet-stream' },
    payload: data,
  });
}

async function uploadOk(app: FastifyInstance, user: TestUser, folderId: string, name: string, data: Buffer) {
  const res = await rawUpload(app, user, folderId, name, data);
  assert.equal(res.statusCode, 201, res.body);
  return res.json().data as { id: string; size: number; checksum: string; versionCount: number; name: string };
}

const BOUNDARY = 'robustness-boundary-7d1f';

function partHead(name: string): Buffer {
  return Buffer.from(
    `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
  );
}

function multipartBody(files: { name: string; data: Buffer }[]): Buffer {
  return Buffer.concat([...files.flatMap((f) => [partHead(f.name), f.data, Buffer.from('\r\n')]), Buffer.from(`--${BOUNDARY}--\r\n`)]);
}

function multipartUpload(app: FastifyInstance, user: TestUser, folderId: string, files: { name: string; data: Buffer }[]) {
  return app.inject({
    method: 'POST',
    url: `/api/files/upload/${folderId}`,
    headers: { authorization: `Bearer ${user.token}`, 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
    payload: multipartBody(files),
  });
}

async function countRows(database: DatabaseHandle, table: 'files' | 'file_versions' | 'blobs'): Promise<number> {
  const row = await database.db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

async function usedBytes(database: DatabaseHandle, userId: string): Promise<number> {
  const row = await database.db.selectFrom('users').select('used_bytes').where('id', '=', userId).executeTakeFirstOrThrow();
  return Number(row.used_bytes);
}

async function folderTotals(user: TestUser, folderId: string) {
  const res = await user.api.get(`/api/folders/details/${folderId}`);
  assert.equal(res.status, 200);
  return {
    totalFiles: res.body.data.totalFiles as number,
    totalSizeByte: res.body.data.totalSizeByte as number,
    totalSubfolders: res.body.data.totalSubfolders as number,
  };
}

/** Everything a refused or broken upload must leave unchanged. */
async function storageSnapshot(database: DatabaseHandle, config: Config, user: TestUser, folderIds: string[]) {
  const stored = storedFiles(config);
  const blobRows = await database.db.selectFrom('blobs').select(['id', 'state', 'ref_count']).orderBy('id').execute();
  const totals: Record<string, unknown> = {};
  for (const id of folderIds) totals[id] = await folderTotals(user, id);
  return {
    files: await countRows(database, 'files'),
    versions: await countRows(database, 'file_versions'),
    blobRows: blobRows.map((b) => `${b.id}:${b.state}:${Number(b.ref_count)}`),
    storedBlobs: stored.blobs.map((p) => path.basename(p)),
    tmpFiles: stored.tmp,
    usedBytes: await usedBytes(database, user.id),
    totals,
  };
}

/** Open file descriptors of this process (the server runs in it). */
function openFds(): number {
  return fs.readdirSync('/proc/self/fd').length;
}

/**
 * Opens a raw connection, sends `head` and `body`, waits until the server is visibly storing
 * the upload (`ready` passes), then cuts the connection.
 */
async function abortUpload(port: number, head: string, body: Buffer, ready: () => Promise<void>): Promise<void> {
  const socket = net.connect(port, '127.0.0.1');
  socket.on('error', () => {});
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', () => resolve());
    socket.once('error', reject);
  });
  let answered = '';
  socket.on('data', (d) => (answered += d.toString('latin1')));
  await new Promise<void>((resolve, reject) => socket.write(head, (e) => (e ? reject(e) : resolve())));
  await new Promise<void>((resolve, reject) => socket.write(body, (e) => (e ? reject(e) : resolve())));
  try {
    await eventually(ready, 3000);
  } finally {
    socket.destroy();
  }
  assert.equal(answered, '', 'the server must not answer a request whose body is still arriving');
}

interface HttpResult {
  status?: number;
  headers?: http.IncomingHttpHeaders;
  body: Buffer;
  complete: boolean;
  error?: string;
}

/** One request over real HTTP; never rejects: a cut connection shows as `complete: false`. */
function httpRequest(
  port: number,
  options: { method: string; path: string; headers?: Record<string, string | number>; body?: Buffer },
): Promise<HttpResult> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let settled = false;
    let result: HttpResult = { body: Buffer.alloc(0), complete: false };
    const done = (extra: Partial<HttpResult>) => {
      if (settled) return;
      settled = true;
      resolve({ ...result, body: Buffer.concat(chunks), ...extra });
    };
    const req = http.request(
      { host: '127.0.0.1', port, method: options.method, path: options.path, headers: options.headers, agent: false },
      (res) => {
        result = { status: res.statusCode, headers: res.headers, body: Buffer.alloc(0), complete: false };
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => done({ complete: res.complete }));
        res.on('aborted', () => done({ complete: false, error: 'aborted' }));
        res.on('error', (e) => done({ complete: false, error: e.message }));
        res.on('close', () => done({ complete: res.complete }));
      },
    );
    req.on('error', (e) => done({ complete: false, error: (e as NodeJS.ErrnoException).code ?? e.message }));
    req.end(options.body);
  });
}

function parseJson(result: HttpResult): any {
  try {
    return JSON.parse(result.body.toString('utf8'));
  } catch {
    return undefined;
  }
}

function assertErrorEnvelope(body: any, status: number, code: string) {
  assert.equal(typeof body, 'object', `an envelope is expected, got ${JSON.stringify(body)}`);
  assert.equal(body.status, status);
  assert.equal(body.code, code);
  assert.equal(typeof body.message, 'string');
  assert.ok(body.message.length > 0);
  assert.equal(body.data, null);
}

/**
 * Recomputes, from the folders, files and versions rows, what every maintained number should be,
 * and lists each difference. A folder counts the descendants (folders and files) that share its
 * trash_batch, reached through folders that share it too; subtree_bytes sums the current sizes.
 */
async function aggregateProblems(database: DatabaseHandle, userId: string): Promise<string[]> {
  const problems: string[] = [];
  const folders = await database.db.selectFrom('folders').selectAll().where('owner_id', '=', userId).execute();
  const files = await database.db.selectFrom('files').selectAll().where('owner_id', '=', userId).execute();
  const versions = await database.db
    .selectFrom('file_versions')
    .innerJoin('files', 'files.id', 'file_versions.file_id')
    .select(['file_versions.id', 'file_versions.file_id', 'file_versions.size', 'file_versions.blob_id'])
    .where('files.owner_id', '=', userId)
    .execute();
  const byId = new Map(folders.map((f) => [f.id, f]));
  const children = new Map<string, typeof folders>();
  for (const f of folders) if (f.parent_id) children.set(f.parent_id, [...(children.get(f.parent_id) ?? []), f]);
  const filesIn = new Map<string, typeof files>();
  for (const f of files) filesIn.set(f.folder_id, [...(filesIn.get(f.folder_id) ?? []), f]);

  for (const folder of folders) {
    const batch = folder.trash_batch;
    const reached: string[] = [];
    const stack = [folder.id];
    while (stack.length > 0) {
      const id = stack.pop()!;
      for (const child of children.get(id) ?? []) {
        if (child.trash_batch !== batch) continue;
        reached.push(child.id);
        stack.push(child.id);
      }
    }
    const counted = [folder.id, ...reached].flatMap((id) => (filesIn.get(id) ?? []).filter((f) => f.trash_batch === batch));
    const expected = {
      subtree_folders: reached.length,
      subtree_files: counted.length,
      subtree_bytes: counted.reduce((sum, f) => sum + Number(f.size), 0),
      child_folders: (children.get(folder.id) ?? []).filter((c) => c.trash_batch === batch).length,
      child_files: (filesIn.get(folder.id) ?? []).filter((f) => f.trash_batch === batch).length,
    };
    const actual = {
      subtree_folders: Number(folder.subtree_folders),
      subtree_files: Number(folder.subtree_files),
      subtree_bytes: Number(folder.subtree_bytes),
      child_folders: Number(folder.child_folders),
      child_files: Number(folder.child_files),
    };
    for (const key of Object.keys(expected) as (keyof typeof expected)[]) {
      if (expected[key] !== actual[key])
        problems.push(`folder ${folder.name} [${batch || 'live'}] ${key}: stored ${actual[key]}, recounted ${expected[key]}`);
    }
    // Structure: a live folder hangs under a live folder.
    if (batch === '' && folder.parent_id && byId.get(folder.parent_id)?.trash_batch !== '')
      problems.push(`live folder ${folder.name} under a trashed or missing parent`);
  }

  const versionsOf = new Map<string, typeof versions>();
  for (const v of versions) versionsOf.set(v.file_id, [...(versionsOf.get(v.file_id) ?? []), v]);
  for (const file of files) {
    const own = versionsOf.get(file.id) ?? [];
    const current = own.find((v) => v.id === file.current_version_id);
    if (!current) problems.push(`file ${file.name}: current version missing`);
    else if (Number(current.size) !== Number(file.size))
      problems.push(`file ${file.name}: size ${file.size}, current version ${current.size}`);
    if (own.length !== Number(file.version_count))
      problems.push(`file ${file.name}: version_count ${file.version_count}, versions ${own.length}`);
    const bytes = own.reduce((sum, v) => sum + Number(v.size), 0);
    if (bytes !== Number(file.versions_bytes))
      problems.push(`file ${file.name}: versions_bytes ${file.versions_bytes}, recounted ${bytes}`);
    const folder = byId.get(file.folder_id);
    if (!folder) problems.push(`file ${file.name}: folder missing`);
    else if (file.trash_batch === '' && folder.trash_batch !== '') problems.push(`live file ${file.name} in trashed folder ${folder.name}`);
  }
  // Live sibling names are unique (folders and files share one namespace).
  const seen = new Set<string>();
  for (const item of [...folders.filter((f) => f.parent_id), ...files.map((f) => ({ ...f, parent_id: f.folder_id }))]) {
    if (item.trash_batch !== '') continue;
    const key = `${item.parent_id}/${item.name}`;
    if (seen.has(key)) problems.push(`two live items named ${item.name} in one folder`);
    seen.add(key);
  }

  const used = await usedBytes(database, userId);
  const sum = versions.reduce((total, v) => total + Number(v.size), 0);
  if (used !== sum) problems.push(`users.used_bytes ${used}, sum of version sizes ${sum}`);

  // Every blob row counts exactly the versions (of anyone) that use it.
  const allRefs = await database.db.selectFrom('file_versions').select('blob_id').execute();
  const refs = new Map<string, number>();
  for (const r of allRefs) refs.set(r.blob_id, (refs.get(r.blob_id) ?? 0) + 1);
  const blobs = await database.db.selectFrom('blobs').selectAll().execute();
  const blobIds = new Set(blobs.map((b) => b.id));
  for (const b of blobs) {
    if (Number(b.ref_count) !== (refs.get(b.id) ?? 0))
      problems.push(`blob ${b.id}: ref_count ${b.ref_count}, used by ${refs.get(b.id) ?? 0} versions`);
    if ((refs.get(b.id) ?? 0) > 0 && b.state !== 'ready') problems.push(`blob ${b.id} in use but ${b.state}`);
  }
  for (const id of refs.keys()) if (!blobIds.has(id)) problems.push(`a version uses blob ${id}, which has no row`);
  return problems;
}

for (const dialect of DIALECTS) {
  // -------------------------------------------------------------------------------------------
  // 1. Aborted uploads over real HTTP
  // -------------------------------------------------------------------------------------------
  describe(`files robustness: aborted uploads over real HTTP [${dialect}]`, () => {
    it('a raw PUT cut mid-body leaves no file, version, blob, stored bytes, temp file, quota or aggregate change', async (t) => {
      const { app, database, config } = await build(t, dialect);
      const user = await signUp(app);
      const root = await rootFolderId(user);
      const folder = await mkdir(user, 'dest');
      const existing = randomBytes(30_000);
      const kept = await uploadOk(app, user, folder, 'existing.bin', existing);
      const port = await listen(app);
      const before = await storageSnapshot(database, config, user, [root, folder]);
      assert.deepEqual(before.tmpFiles, []);

      // A new file, cut after ~3 MB of a declared 10 MB.
      await abortUpload(
        port,
        `PUT /api/files/upload/${folder}?name=x.bin HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${user.token}\r\nContent-Type: application/octet-stream\r\nContent-Length: 10000000\r\n\r\n`,
        randomBytes(3_000_000),
        async () => {
          // The server is storing it: an 'uploading' blob row and a temp file exist.
          const uploading = await database.db.selectFrom('blobs').select('id').where('state', '=', 'uploading').execute();
          assert.equal(uploading.length, 1);
          assert.equal(storedFiles(config).tmp.length, 1);
        },
      );
      await eventually(async () => assert.deepEqual(await storageSnapshot(database, config, user, [root, folder]), before));
      const named = await database.db.selectFrom('files').select('id').where('name', '=', 'x.bin').execute();
      assert.deepEqual(named, []);

      // A new version of an existing file, cut the same way: the file keeps one version.
      await abortUpload(
        port,
        `PUT /api/files/upload/${folder}?name=existing.bin HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${user.token}\r\nContent-Length: 10000000\r\n\r\n`,
        randomBytes(3_000_000),
        async () => assert.equal(storedFiles(config).tmp.length, 1),
      );
      await eventually(async () => assert.deepEqual(await storageSnapshot(database, config, user, [root, folder]), before));
      const detail = await user.api.get(`/api/files/details/${kept.id}`);
      assert.equal(detail.body.versionCount, 1);
      assert.equal(detail.body.checksum, sha256Tag(existing));

      // The server is still healthy and the file still downloads.
      const download = await httpRequest(port, {
        method: 'GET',
        path: `/api/files/download/${kept.id}`,
        headers: { authorization: `Bearer ${user.token}` },
      });
      assert.equal(download.status, 200);
      assert.ok(download.complete);
      assert.ok(download.body.equals(existing));
    });

    it('a multipart POST cut mid-file leaves nothing behind', async (t) => {
      const { app, database, config } = await build(t, dialect);
      const user = await signUp(app);
      const root = await rootFolderId(user);
      const folder = await mkdir(user, 'dest');
      await uploadOk(app, user, folder, 'existing.bin', randomBytes(10_000));
      const port = await listen(app);
      const before = await storageSnapshot(database, config, user, [root, folder]);

      await abortUpload(
        port,
        `POST /api/files/upload/${folder} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${user.token}\r\nContent-Type: multipart/form-data; boundary=${BOUNDARY}\r\nContent-Length: 10000000\r\n\r\n`,
        Buffer.concat([partHead('x.bin'), randomBytes(3_000_000)]),
        async () => {
          const uploading = await database.db.selectFrom('blobs').select('id').where('state', '=', 'uploading').execute();
          assert.equal(uploading.length, 1);
          assert.equal(storedFiles(config).tmp.length, 1);
        },
      );
      await eventually(async () => assert.deepEqual(await storageSnapshot(database, config, user, [root, folder]), before));
      assert.deepEqual(await database.db.selectFrom('files').select('id').where('name', '=', 'x.bin').execute(), []);
    });

    it('a chunked raw PUT cut mid-stream, repeated, leaves nothing and leaks no file handle', async (t) => {
      const { app, database, config } = await build(t, dialect);
      const user = await signUp(app);
      const root = await rootFolderId(user);
      const folder = await mkdir(user, 'dest');
      const port = await listen(app);
      const before = await storageSnapshot(database, config, user, [root, folder]);
      const fdsBefore = openFds();
      for (let i = 0; i < 12; i++) {
        const chunk = randomBytes(1_000_000);
        await abortUpload(
          port,
          `PUT /api/files/upload/${folder}?name=chunked${i}.bin HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${user.token}\r\nTransfer-Encoding: chunked\r\n\r\n`,
          Buffer.concat([
            Buffer.from(`${chunk.length.toString(16)}\r\n`),
            chunk,
            Buffer.from('\r\n'),
            Buffer.from(`${(500_000).toString(16)}\r\n`),
            randomBytes(200_000),
          ]),
          async () => assert.equal(storedFiles(config).tmp.length, 1),
        );
        await eventually(async () => assert.deepEqual(await storageSnapshot(database, config, user, [root, folder]), before));
      }
      await eventually(async () => assert.ok(openFds() - fdsBefore < 8, `open descriptors grew from ${fdsBefore} to ${openFds()}`));
    });

    it('a multipart POST with one whole file and a second one cut keeps nothing of either', async (t) => {
      const { app, database, config } = await build(t, dialect);
      const user = await signUp(app);
      const root = await rootFolderId(user);
      const folder = await mkdir(user, 'dest');
      const port = await listen(app);
      const before = await storageSnapshot(database, config, user, [root, folder]);
      const first = randomBytes(150_000);

      await abortUpload(
        port,
        `POST /api/files/upload/${folder} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${user.token}\r\nContent-Type: multipart/form-data; boundary=${BOUNDARY}\r\nContent-Length: 10000000\r\n\r\n`,
        Buffer.concat([partHead('first.bin'), first, Buffer.from('\r\n'), partHead('second.bin'), randomBytes(3_000_000)]),
        async () => {
          // The first is recorded and the second is being stored.
          const rows = await database.db.selectFrom('files').select('name').execute();
          assert.deepEqual(
            rows.map((r) => r.name),
            ['first.bin'],
          );
          assert.equal(storedFiles(config).tmp.length, 1);
        },
      );
      // One request, one outcome (docs/api.md: a broken upload leaves no file): the complete first
      // part is taken back too. Its bytes are unreferenced and go with the next collection.
      const after = await eventually(async () => {
        const s = await storageSnapshot(database, config, user, [root, folder]);
        assert.deepEqual(s.tmpFiles, []);
        assert.equal(s.files, before.files, `no files row is left (snapshot ${JSON.stringify(s)})`);
        assert.equal(s.versions, before.versions, 'no file_versions row is left');
        // storageSnapshot() reads the totals before the rows, so a snapshot taken while the take-back
        // commits can show the rows gone and the totals not yet: wait for both.
        for (const id of [root, folder]) assert.deepEqual(s.totals[id], before.totals[id]);
        return s;
      });
      assert.equal(after.usedBytes, before.usedBytes);
      const blobs = await database.db.selectFrom('blobs').selectAll().execute();
      assert.ok(
        blobs.every((b) => Number(b.ref_count) === 0),
        'no blob is referenced any more',
      );
      await collectGarbage(database, new FsBlobStore(path.join(config.dataDir, 'blobs')));
      const collected = await storageSnapshot(database, config, user, [root, folder]);
      assert.equal(collected.blobRows.length, before.blobRows.length, 'the collector reclaims the bytes');
      assert.equal(collected.storedBlobs.length, before.storedBlobs.length);
      const list = await user.api.get(`/api/files/list/${folder}`);
      assert.deepEqual(list.body.data.data, []);
    });
  });

  // -------------------------------------------------------------------------------------------
  // 2. 413 PAYLOAD_TOO_LARGE
  // -------------------------------------------------------------------------------------------
  describe(`files robustness: 413 beyond COFFRE_MAX_UPLOAD_BYTES [${dialect}]`, () => {
    it('one byte over is 413 (raw and multipart) and leaves nothing; exactly the limit is 201', async (t) => {
      const { app, database, config } = await build(t, dialect, { config: { maxUploadBytes: 100_000 } });
      const user = await signUp(app);
      const root = await rootFolderId(user);
      const folder = await mkdir(user, 'dest');
      await uploadOk(app, user, folder, 'existing.bin', randomBytes(1_000));
      const before = await storageSnapshot(database, config, user, [root, folder]);

      const raw = await rawUpload(app, user, folder, 'big.bin', randomBytes(100_001));
      assert.equal(raw.statusCode, 413);
      assertErrorEnvelope(raw.json(), 413, 'PAYLOAD_TOO_LARGE');
      const multi = await multipartUpload(app, user, folder, [{ name: 'big.bin', data: randomBytes(100_001) }]);
      assert.equal(multi.statusCode, 413);
      assertErrorEnvelope(multi.json(), 413, 'PAYLOAD_TOO_LARGE');
      // As a new version of an existing file too.
      const version = await rawUpload(app, user, folder, 'existing.bin', randomBytes(100_001));
      assert.equal(version.statusCode, 413);
      assertErrorEnvelope(version.json(), 413, 'PAYLOAD_TOO_LARGE');
      await eventually(async () => assert.deepEqual(await storageSnapshot(database, config, user, [root, folder]), before));

      const exact = randomBytes(100_000);
      const fits = await rawUpload(app, user, folder, 'fits.bin', exact);
      assert.equal(fits.statusCode, 201, fits.body);
      assert.equal(fits.json().data.size, 100_000);
      assert.equal(fits.json().data.checksum, sha256Tag(exact));
      const fitsMulti = await multipartUpload(app, user, folder, [{ name: 'fits2.bin', data: exact }]);
      assert.equal(fitsMulti.statusCode, 201, fitsMulti.body);
      assert.equal(fitsMulti.json().data[0].size, 100_000);
      assert.equal(await usedBytes(database, user.id), before.usedBytes + 200_000);
    });

    it('over real HTTP the client receives the 413 envelope (raw and multipart) and nothing is left', async (t) => {
      const { app, database, config } = await build(t, dialect, { config: { maxUploadBytes: 100_000 } });
      const user = await signUp(app);
      const root = await rootFolderId(user);
      const folder = await mkdir(user, 'dest');
      const port = await listen(app);
      const before = await storageSnapshot(database, config, user, [root, folder]);

      const raw = await httpRequest(port, {
        method: 'PUT',
        path: `/api/files/upload/${folder}?name=big.bin`,
        headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/octet-stream' },
        body: randomBytes(100_001),
      });
      const multi = await httpRequest(port, {
        method: 'POST',
        path: `/api/files/upload/${folder}`,
        headers: { authorization: `Bearer ${user.token}`, 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
        body: multipartBody([{ name: 'big2.bin', data: randomBytes(100_001) }]),
      });
      // A body far over the limit: the server answers while the client is still sending.
      const huge = await httpRequest(port, {
        method: 'PUT',
        path: `/api/files/upload/${folder}?name=huge.bin`,
        headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/octet-stream' },
        body: randomBytes(4_000_000),
      });
      await eventually(async () => assert.deepEqual(await storageSnapshot(database, config, user, [root, folder]), before));
      assert.equal(huge.status, 413, `huge raw: ${huge.error ?? ''}`);
      assertErrorEnvelope(parseJson(huge), 413, 'PAYLOAD_TOO_LARGE');
      assert.equal(multi.status, 413, `multipart: ${multi.error ?? ''}`);
      assertErrorEnvelope(parseJson(multi), 413, 'PAYLOAD_TOO_LARGE');
      assert.equal(raw.status, 413, `raw: connection ended with ${raw.error ?? 'no error'} and no response`);
      assertErrorEnvelope(parseJson(raw), 413, 'PAYLOAD_TOO_LARGE');
    });
  });
  // -------------------------------------------------------------------------------------------
  // 3. 507 QUOTA_EXCEEDED
  // -------------------------------------------------------------------------------------------
  describe(`files robustness: 507 beyond the quota [${dialect}]`, () => {
    it('uploads, versions, copies and version restores are counted; refusals leave nothing; hard delete frees', async (t) => {
      const { app, database, config } = await build(t, dialect, { config: { defaultQuotaBytes: 300_000 } });
      const user = await signUp(app);
      const root = await rootFolderId(user);
      const folder = await mkdir(user, 'dest');
      const a = await uploadOk(app, user, folder, 'a.bin', randomBytes(200_000));
      const b = await uploadOk(app, user, folder, 'b.bin', randomBytes(50_000));
      assert.equal(await usedBytes(database, user.id), 250_000);
      const before = await storageSnapshot(database, config, user, [root, folder]);

      const c = await rawUpload(app, user, folder, 'c.bin', randomBytes(60_000));
      assert.equal(c.statusCode, 507);
      assertErrorEnvelope(c.json(), 507, 'QUOTA_EXCEEDED');
      const cMulti = await multipartUpload(app, user, folder, [{ name: 'c.bin', data: randomBytes(60_000) }]);
      assert.equal(cMulti.statusCode, 507);
      assertErrorEnvelope(cMulti.json(), 507, 'QUOTA_EXCEEDED');
      // A new version of the 200 KB file while 250 KB are used: versions count.
      const version = await rawUpload(app, user, folder, 'a.bin', randomBytes(200_000));
      assert.equal(version.statusCode, 507);
      assertErrorEnvelope(version.json(), 507, 'QUOTA_EXCEEDED');
      const copy = await user.api.post(`/api/files/copy/${a.id}`, { targetFolderId: root });
      assert.equal(copy.status, 507);
      assertErrorEnvelope(copy.body, 507, 'QUOTA_EXCEEDED');
      const folderCopy = await user.api.post(`/api/folders/copy/${folder}`, { targetParentId: root });
      assert.equal(folderCopy.status, 507);
      assertErrorEnvelope(folderCopy.body, 507, 'QUOTA_EXCEEDED');
      await eventually(async () => assert.deepEqual(await storageSnapshot(database, config, user, [root, folder]), before));
      assert.equal((await user.api.get(`/api/files/details/${a.id}`)).body.versionCount, 1);
      assert.equal((await user.api.get('/api/folders/root/subfolders')).body.data.total, 1, 'no folder copy is left');

      // Over real HTTP, with a body well over what is left.
      const port = await listen(app);
      const overHttp = await httpRequest(port, {
        method: 'PUT',
        path: `/api/files/upload/${folder}?name=d.bin`,
        headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/octet-stream' },
        body: randomBytes(2_000_000),
      });
      await eventually(async () => assert.deepEqual(await storageSnapshot(database, config, user, [root, folder]), before));
      assert.equal(overHttp.status, 507, `over HTTP: ${overHttp.error ?? ''}`);
      assertErrorEnvelope(parseJson(overHttp), 507, 'QUOTA_EXCEEDED');

      // What fits exactly is accepted: a 50 KB version of b.bin brings the use to 300 KB.
      const bVersion = await rawUpload(app, user, folder, 'b.bin', randomBytes(50_000));
      assert.equal(bVersion.statusCode, 201, bVersion.body);
      assert.equal(bVersion.json().data.versionCount, 2);
      assert.equal(await usedBytes(database, user.id), 300_000);
      const full = await storageSnapshot(database, config, user, [root, folder]);
      const oneByte = await rawUpload(app, user, folder, 'one.bin', Buffer.from('x'));
      assert.equal(oneByte.statusCode, 507);
      // Restoring an old version is a new version: it needs room too.
      const versions = (await user.api.get(`/api/files/versions/${b.id}`)).body.data as { id: string; isCurrent: boolean }[];
      const old = versions.find((v) => !v.isCurrent)!;
      const restoreOld = await user.api.post(`/api/files/versions/${b.id}/${old.id}/restore`);
      assert.equal(restoreOld.status, 507);
      assertErrorEnvelope(restoreOld.body, 507, 'QUOTA_EXCEEDED');

      // The trash still counts: a soft delete frees nothing.
      assert.equal((await user.api.delete(`/api/files/delete/${a.id}`)).status, 200);
      assert.equal(await usedBytes(database, user.id), 300_000);
      assert.equal((await rawUpload(app, user, folder, 'e.bin', randomBytes(10))).statusCode, 507);
      await eventually(async () => {
        const now = await storageSnapshot(database, config, user, [root, folder]);
        assert.deepEqual({ ...now, totals: undefined }, { ...full, totals: undefined });
      });

      // A hard delete frees the file's bytes, and the next upload fits.
      assert.equal((await user.api.delete(`/api/files/delete/${a.id}?trash=hard`)).status, 200);
      assert.equal(await usedBytes(database, user.id), 100_000);
      await uploadOk(app, user, folder, 'f.bin', randomBytes(200_000));
      assert.equal(await usedBytes(database, user.id), 300_000);
      // Hard-deleting a file frees every one of its versions.
      assert.equal((await user.api.delete(`/api/files/delete/${b.id}`, { trash: 'hard' })).status, 200);
      assert.equal(await usedBytes(database, user.id), 200_000);
      await uploadOk(app, user, folder, 'g.bin', randomBytes(100_000));
      assert.equal(await usedBytes(database, user.id), 300_000);
      assert.equal((await rawUpload(app, user, folder, 'h.bin', Buffer.from('x'))).statusCode, 507);
    });

    it('concurrent uploads, versions and copies never pass the quota', async (t) => {
      const { app, database, config } = await build(t, dialect, { config: { defaultQuotaBytes: 300_000 } });

      // 8 concurrent new files of 100 KB: exactly 3 fit.
      const user = await signUp(app);
      const root = await rootFolderId(user);
      const folder = await mkdir(user, 'dest');
      const results = await Promise.all(
        Array.from({ length: 8 }, (_, i) => rawUpload(app, user, folder, `c${i}.bin`, randomBytes(100_000))),
      );
      const codes = results.map((r) => r.statusCode).sort();
      assert.deepEqual(codes, [201, 201, 201, 507, 507, 507, 507, 507]);
      for (const r of results.filter((r) => r.statusCode === 507)) assertErrorEnvelope(r.json(), 507, 'QUOTA_EXCEEDED');
      assert.equal(await usedBytes(database, user.id), 300_000);
      await eventually(async () => {
        const s = await storageSnapshot(database, config, user, [root, folder]);
        assert.equal(s.files, 3);
        assert.equal(s.versions, 3);
        assert.equal(s.blobRows.length, 3);
        assert.ok(
          s.blobRows.every((r) => r.endsWith(':ready:1')),
          s.blobRows.join(),
        );
        assert.equal(s.storedBlobs.length, 3);
        assert.deepEqual(s.tmpFiles, []);
        assert.deepEqual(s.totals[folder], { totalFiles: 3, totalSizeByte: 300_000, totalSubfolders: 0 });
        assert.deepEqual(s.totals[root], { totalFiles: 3, totalSizeByte: 300_000, totalSubfolders: 1 });
      });

      // 8 concurrent versions of one file (another account): exactly 3 fit.
      const second = await signUp(app);
      const secondRoot = await rootFolderId(second);
      const versions = await Promise.all(
        Array.from({ length: 8 }, () => rawUpload(app, second, secondRoot, 'same.bin', randomBytes(100_000))),
      );
      assert.deepEqual(versions.map((r) => r.statusCode).sort(), [201, 201, 201, 507, 507, 507, 507, 507]);
      assert.equal(await usedBytes(database, second.id), 300_000);
      const sameFiles = await database.db.selectFrom('files').selectAll().where('owner_id', '=', second.id).execute();
      assert.equal(sameFiles.length, 1);
      assert.equal(Number(sameFiles[0].version_count), 3);
      assert.equal(Number(sameFiles[0].versions_bytes), 300_000);
      assert.deepEqual(await folderTotals(second, secondRoot), { totalFiles: 1, totalSizeByte: 100_000, totalSubfolders: 0 });

      // 8 concurrent copies of a 100 KB file (a third account): exactly 2 fit.
      const third = await signUp(app);
      const thirdRoot = await rootFolderId(third);
      const original = await uploadOk(app, third, thirdRoot, 'o.bin', randomBytes(100_000));
      const copies = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          third.api.post(`/api/files/copy/${original.id}`, { targetFolderId: thirdRoot, name: `copy${i}.bin` }),
        ),
      );
      assert.deepEqual(copies.map((r) => r.status).sort(), [201, 201, 507, 507, 507, 507, 507, 507]);
      assert.equal(await usedBytes(database, third.id), 300_000);
      assert.deepEqual(await folderTotals(third, thirdRoot), { totalFiles: 3, totalSizeByte: 300_000, totalSubfolders: 0 });
      const shared = await database.db
        .selectFrom('file_versions')
        .innerJoin('files', 'files.id', 'file_versions.file_id')
        .innerJoin('blobs', 'blobs.id', 'file_versions.blob_id')
        .select(['blobs.id', 'blobs.ref_count'])
        .where('files.owner_id', '=', third.id)
        .execute();
      assert.equal(shared.length, 3);
      assert.equal(new Set(shared.map((r) => r.id)).size, 1, 'copies share the blob');
      assert.equal(Number(shared[0].ref_count), 3);

      // Every blob row of the instance is referenced exactly as many times as versions use it.
      const refs = await database.db.selectFrom('file_versions').select('blob_id').execute();
      const blobs = await database.db.selectFrom('blobs').select(['id', 'ref_count', 'state']).execute();
      const expected = new Map<string, number>();
      for (const r of refs) expected.set(r.blob_id, (expected.get(r.blob_id) ?? 0) + 1);
      assert.deepEqual(
        new Map(blobs.map((b) => [b.id, Number(b.ref_count)])),
        expected,
        'no refused upload or copy left a blob row or a reference behind',
      );
      assert.deepEqual(storedFiles(config).tmp, []);
      assert.deepEqual(
        storedFiles(config)
          .blobs.map((p) => path.basename(p))
          .sort(),
        [...expected.keys()].sort(),
      );
    });
  });
  // -------------------------------------------------------------------------------------------
  // 4. Blob collection
  // -------------------------------------------------------------------------------------------
  describe(`files robustness: blob collection [${dialect}]`, () => {
    // The blob store's bytes, so every file goes there: small files kept in the database are
    // collected in inline-blobs.test.ts.
    const storeOnly = { collectIntervalSeconds: 0, inlineBlobBytes: 0 };
    async function blobsOfFile(database: DatabaseHandle, fileId: string): Promise<string[]> {
      const rows = await database.db.selectFrom('file_versions').select('blob_id').where('file_id', '=', fileId).orderBy('id').execute();
      return rows.map((r) => r.blob_id);
    }

    async function blobRow(database: DatabaseHandle, id: string) {
      return database.db.selectFrom('blobs').selectAll().where('id', '=', id).executeTakeFirst();
    }

    async function assertCollected(database: DatabaseHandle, config: Config, store: FsBlobStore, ids: string[]) {
      for (const id of ids) {
        assert.equal(await store.exists(id), false, `blob ${id} is still in the store`);
        assert.equal(fs.existsSync(blobPath(config, id)), false, `blob ${id} is still on disk`);
        assert.equal(await blobRow(database, id), undefined, `blob ${id} still has a row`);
      }
    }

    async function assertPresent(database: DatabaseHandle, config: Config, store: FsBlobStore, ids: string[]) {
      for (const id of ids) {
        assert.equal(await store.exists(id), true, `blob ${id} is missing from the store`);
        assert.ok(fs.statSync(blobPath(config, id)).size > 0);
        assert.ok(await blobRow(database, id), `blob ${id} has no row`);
      }
    }

    it('hard-deleted files, hard-deleted folders and an emptied trash give their blobs back; live ones stay', async (t) => {
      const { app, database, config } = await build(t, dialect, { config: storeOnly });
      const store = new FsBlobStore(path.join(config.dataDir, 'blobs'));
      const user = await signUp(app);
      const root = await rootFolderId(user);

      const keepData = randomBytes(70_000);
      const keep = await uploadOk(app, user, root, 'keep.bin', keepData);
      const twoVersions = await uploadOk(app, user, root, 'a.bin', randomBytes(5_000));
      await uploadOk(app, user, root, 'a.bin', randomBytes(6_000));
      const x = await mkdir(user, 'X');
      const y = await mkdir(user, 'Y', x);
      const x1 = await uploadOk(app, user, x, 'x1.bin', randomBytes(3_000));
      const y1 = await uploadOk(app, user, y, 'y1.bin', randomBytes(3_000));
      const y2 = await uploadOk(app, user, y, 'y2.bin', randomBytes(0));
      const t1 = await uploadOk(app, user, root, 't1.bin', randomBytes(4_000));
      const tFolder = await mkdir(user, 'T');
      const t2 = await uploadOk(app, user, tFolder, 't2.bin', randomBytes(4_000));

      const keepBlobs = await blobsOfFile(database, keep.id);
      const aBlobs = await blobsOfFile(database, twoVersions.id);
      assert.equal(aBlobs.length, 2);
      const xBlobs = [
        ...(await blobsOfFile(database, x1.id)),
        ...(await blobsOfFile(database, y1.id)),
        ...(await blobsOfFile(database, y2.id)),
      ];
      const trashBlobs = [...(await blobsOfFile(database, t1.id)), ...(await blobsOfFile(database, t2.id))];
      const all = [...keepBlobs, ...aBlobs, ...xBlobs, ...trashBlobs];
      assert.equal(new Set(all).size, 8);
      assert.equal(await collectGarbage(database, store), 0, 'nothing is garbage yet');
      await assertPresent(database, config, store, all);

      // A hard-deleted file: both its versions' blobs go, but only when the collector runs.
      assert.equal((await user.api.delete(`/api/files/delete/${twoVersions.id}?trash=hard`)).status, 200);
      for (const id of aBlobs) assert.equal(Number((await blobRow(database, id))!.ref_count), 0);
      assert.equal(await collectGarbage(database, store), 2);
      await assertCollected(database, config, store, aBlobs);

      // A hard-deleted folder: every blob of its subtree goes.
      assert.equal((await user.api.delete(`/api/folders/delete/${x}?trash=hard`)).status, 200);
      assert.equal(await collectGarbage(database, store), 3);
      await assertCollected(database, config, store, xBlobs);

      // The trash keeps its bytes until it is emptied.
      assert.equal((await user.api.delete(`/api/files/delete/${t1.id}`)).status, 200);
      assert.equal((await user.api.delete(`/api/folders/delete/${tFolder}`)).status, 200);
      assert.equal(await collectGarbage(database, store), 0, 'trashed files keep their blobs');
      await assertPresent(database, config, store, trashBlobs);
      const emptied = await user.api.delete('/api/trash/empty');
      assert.equal(emptied.status, 200);
      assert.equal(emptied.body.data.deleted, 2);
      assert.equal(await collectGarbage(database, store), 2);
      await assertCollected(database, config, store, trashBlobs);

      // Only the live file's blob is left, on disk and in the table, and it still downloads.
      assert.equal(await collectGarbage(database, store), 0);
      assert.deepEqual(
        (await database.db.selectFrom('blobs').select('id').execute()).map((r) => r.id),
        keepBlobs,
      );
      assert.deepEqual(
        storedFiles(config).blobs.map((p) => path.basename(p)),
        keepBlobs,
      );
      assert.deepEqual(storedFiles(config).tmp, []);
      const download = await app.inject({
        method: 'GET',
        url: `/api/files/download/${keep.id}`,
        headers: { authorization: `Bearer ${user.token}` },
      });
      assert.equal(download.statusCode, 200);
      assert.ok(download.rawPayload.equals(keepData));
      assert.equal(await usedBytes(database, user.id), keepData.length);
    });

    it('a blob shared by copies and restored versions stays while any version uses it', async (t) => {
      const { app, database, config } = await build(t, dialect, { config: storeOnly });
      const store = new FsBlobStore(path.join(config.dataDir, 'blobs'));
      const user = await signUp(app);
      const root = await rootFolderId(user);
      const other = await mkdir(user, 'other');
      const download = async (fileId: string, versionId?: string) => {
        const res = await app.inject({
          method: 'GET',
          url: `/api/files/download/${fileId}${versionId ? `?versionId=${versionId}` : ''}`,
          headers: { authorization: `Bearer ${user.token}` },
        });
        assert.equal(res.statusCode, 200);
        return res.rawPayload;
      };

      // A file copy.
      const data = randomBytes(90_000);
      const original = await uploadOk(app, user, root, 'o.bin', data);
      const copyRes = await user.api.post(`/api/files/copy/${original.id}`, { targetFolderId: other });
      assert.equal(copyRes.status, 201);
      const copy = copyRes.body.data;
      const [blob] = await blobsOfFile(database, original.id);
      assert.deepEqual(await blobsOfFile(database, copy.id), [blob]);
      assert.equal(Number((await blobRow(database, blob))!.ref_count), 2);
      assert.equal((await user.api.delete(`/api/files/delete/${original.id}?trash=hard`)).status, 200);
      assert.equal(Number((await blobRow(database, blob))!.ref_count), 1);
      assert.equal(await collectGarbage(database, store), 0, 'the copy still uses the blob');
      await assertPresent(database, config, store, [blob]);
      assert.ok((await download(copy.id)).equals(data));
      assert.equal((await user.api.delete(`/api/files/delete/${copy.id}?trash=hard`)).status, 200);
      assert.equal(await collectGarbage(database, store), 1);
      await assertCollected(database, config, store, [blob]);

      // A folder copy.
      const s = await mkdir(user, 'S');
      const sData = randomBytes(20_000);
      const sFile = await uploadOk(app, user, s, 's.bin', sData);
      const [sBlob] = await blobsOfFile(database, sFile.id);
      const sCopy = await user.api.post(`/api/folders/copy/${s}`, { targetParentId: other });
      assert.equal(sCopy.status, 201);
      const copied = (await user.api.get(`/api/files/list/${sCopy.body.data.id}`)).body.data.data;
      assert.equal(copied.length, 1);
      assert.deepEqual(await blobsOfFile(database, copied[0].id), [sBlob]);
      assert.equal((await user.api.delete(`/api/folders/delete/${s}?trash=hard`)).status, 200);
      assert.equal(await collectGarbage(database, store), 0, 'the folder copy still uses the blob');
      await assertPresent(database, config, store, [sBlob]);
      assert.ok((await download(copied[0].id)).equals(sData));
      assert.equal((await user.api.delete(`/api/folders/delete/${sCopy.body.data.id}?trash=hard`)).status, 200);
      assert.equal(await collectGarbage(database, store), 1);
      await assertCollected(database, config, store, [sBlob]);

      // A restored version shares the blob of the version it restores.
      const v1Data = randomBytes(10_000);
      const v = await uploadOk(app, user, root, 'v.bin', v1Data);
      await uploadOk(app, user, root, 'v.bin', randomBytes(11_000));
      const [v1Blob, v2Blob] = await blobsOfFile(database, v.id);
      const [v2, v1] = (await user.api.get(`/api/files/versions/${v.id}`)).body.data as { id: string }[];
      assert.equal((await user.api.post(`/api/files/versions/${v.id}/${v1.id}/restore`)).status, 200);
      const [, , v3] = await database.db
        .selectFrom('file_versions')
        .select(['id', 'blob_id'])
        .where('file_id', '=', v.id)
        .orderBy('id')
        .execute();
      assert.equal(v3.blob_id, v1Blob);
      assert.equal(Number((await blobRow(database, v1Blob))!.ref_count), 2);
      assert.equal((await user.api.delete(`/api/files/versions/${v.id}/${v1.id}`)).status, 200);
      assert.equal(await collectGarbage(database, store), 0, 'the restored version still uses the blob');
      await assertPresent(database, config, store, [v1Blob, v2Blob]);
      assert.ok((await download(v.id)).equals(v1Data));
      assert.equal((await user.api.delete(`/api/files/versions/${v.id}/${v2.id}`)).status, 200);
      assert.equal(await collectGarbage(database, store), 1);
      await assertCollected(database, config, store, [v2Blob]);
      await assertPresent(database, config, store, [v1Blob]);
      assert.ok((await download(v.id, v3.id)).equals(v1Data));
    });

    it('abandoned uploads and crashed collections are collected once stale, fresh ones are not', async (t) => {
      const { app, database, config } = await build(t, dialect, { config: storeOnly });
      const store = new FsBlobStore(path.join(config.dataDir, 'blobs'));
      const user = await signUp(app);
      const root = await rootFolderId(user);
      const live = await uploadOk(app, user, root, 'live.bin', randomBytes(1_000));
      const [liveBlob] = await blobsOfFile(database, live.id);
      // The live blob looks old: age alone must not make it garbage.
      await database.db
        .updateTable('blobs')
        .set({ updated_at: new Date(Date.now() - 30 * 24 * 3600_000).toISOString() })
        .where('id', '=', liveBlob)
        .execute();

      const insert = async (state: 'uploading' | 'deleting', ageMs: number, withBytes = true) => {
        const id = newBlobKey();
        const at = new Date(Date.now() - ageMs).toISOString();
        await database.db.insertInto('blobs').values({ id, state, ref_count: 0, stored_size: 0, created_at: at, updated_at: at }).execute();
        if (withBytes) await store.put(id, Readable.from([randomBytes(500)]));
        return id;
      };
      const staleUpload = await insert('uploading', 7 * 3600_000);
      const staleUploadNoBytes = await insert('uploading', 7 * 3600_000, false);
      const freshUpload = await insert('uploading', 60_000);
      const staleClaim = await insert('deleting', 7 * 3600_000);
      const freshClaim = await insert('deleting', 60_000);

      assert.equal(await collectGarbage(database, store), 3);
      await assertCollected(database, config, store, [staleUpload, staleUploadNoBytes, staleClaim]);
      await assertPresent(database, config, store, [freshUpload, freshClaim, liveBlob]);
      assert.equal((await blobRow(database, freshUpload))!.state, 'uploading');

      // A shorter staleness limit reaches the younger ones; the live blob still stays.
      assert.equal(await collectGarbage(database, store, { staleAfterMs: 30_000 }), 2);
      await assertCollected(database, config, store, [freshUpload, freshClaim]);
      await assertPresent(database, config, store, [liveBlob]);
      const download = await app.inject({
        method: 'GET',
        url: `/api/files/download/${live.id}`,
        headers: { authorization: `Bearer ${user.token}` },
      });
      assert.equal(download.statusCode, 200);
    });

    it('collectors running at once claim each blob once, in batches', async (t) => {
      const { app, database, config } = await build(t, dialect, { config: storeOnly });
      const store = new FsBlobStore(path.join(config.dataDir, 'blobs'));
      const user = await signUp(app);
      const root = await rootFolderId(user);
      const ids: string[] = [];
      for (let i = 0; i < 12; i++) {
        const f = await uploadOk(app, user, root, `g${i}.bin`, randomBytes(100));
        ids.push(...(await blobsOfFile(database, f.id)));
        assert.equal((await user.api.delete(`/api/files/delete/${f.id}?trash=hard`)).status, 200);
      }
      const counts = await Promise.all([
        collectGarbage(database, store, { batchSize: 3 }),
        collectGarbage(database, store, { batchSize: 3 }),
        collectGarbage(database, store, { batchSize: 5 }),
      ]);
      // No blob is counted twice: what the runs report is exactly what disappeared.
      const left = (await database.db.selectFrom('blobs').select('id').execute()).map((r) => r.id);
      assert.equal(
        counts.reduce((a, b) => a + b, 0),
        12 - left.length,
        `counts ${counts.join(',')}, ${left.length} left`,
      );
      for (const id of ids.filter((id) => !left.includes(id))) assert.equal(await store.exists(id), false);
      // A run that lost races may stop early; the next run takes the rest.
      assert.equal(await collectGarbage(database, store, { batchSize: 3 }), left.length);
      await assertCollected(database, config, store, ids);
      assert.deepEqual(storedFiles(config), { blobs: [], tmp: [] });
    });
  });

  // -------------------------------------------------------------------------------------------
  // 6. Tampered storage
  // -------------------------------------------------------------------------------------------
  describe(`files robustness: tampered storage [${dialect}]`, () => {
    const SEGMENT = 65536;
    const SEALED = SEGMENT + 16;
    const HEADER = 16;

    async function segmentsFixture(t: TestContext, segments: number) {
      const { app, database, config } = await build(t, dialect);
      const user = await signUp(app);
      const root = await rootFolderId(user);
      const data = randomBytes(segments * SEGMENT + 1234);
      const file = await uploadOk(app, user, root, 'd.bin', data);
      const version = await database.db
        .selectFrom('file_versions')
        .select('blob_id')
        .where('file_id', '=', file.id)
        .executeTakeFirstOrThrow();
      const stored = blobPath(config, version.blob_id);
      assert.equal(fs.statSync(stored).size, HEADER + segments * SEALED + 1234 + 16, 'the stored layout is the documented one');
      const port = await listen(app);
      const get = (range?: string) =>
        httpRequest(port, {
          method: 'GET',
          path: `/api/files/download/${file.id}`,
          headers: { authorization: `Bearer ${user.token}`, ...(range ? { range } : {}) },
        });
      return { app, user, file, data, stored, get };
    }

    function damage(file: string, offset: number) {
      const fd = fs.openSync(file, 'r+');
      try {
        const byte = Buffer.alloc(1);
        fs.readSync(fd, byte, 0, 1, offset);
        byte[0] ^= 0x5a;
        fs.writeSync(fd, byte, 0, 1, offset);
      } finally {
        fs.closeSync(fd);
      }
    }

    /**
     * A download of `data` from `start` that must stop before byte `limit`: either an error
     * envelope before any content, or a correct prefix on a response the client sees cut.
     */
    function assertCutBefore(result: HttpResult, data: Buffer, start: number, limit: number) {
      assert.ok(result.status === undefined || [200, 206, 500].includes(result.status), `unexpected status ${result.status}`);
      if (result.status === 200 || result.status === 206) {
        const declared = Number(result.headers!['content-length']);
        assert.ok(!result.complete || result.body.length < declared, 'the client must see the response is cut');
        assert.ok(result.body.length <= limit - start, `${result.body.length} bytes delivered, at most ${limit - start} expected`);
        assert.ok(result.body.equals(data.subarray(start, start + result.body.length)), 'what is delivered is the genuine content');
      } else if (result.status === 500) {
        const body = parseJson(result);
        assertErrorEnvelope(body, 500, 'CONTENT_INTEGRITY');
      } else {
        assert.equal(result.body.length, 0, 'a connection cut before the status line delivers nothing');
      }
    }

    it('damage found before the response starts is a 500 CONTENT_INTEGRITY envelope, not a generic error', async (t) => {
      const { stored, get, user } = await segmentsFixture(t, 2);
      damage(stored, HEADER + SEGMENT / 2);
      for (const range of [undefined, 'bytes=10-20']) {
        const res = await get(range);
        assert.equal(res.status, 500, `range ${range}`);
        const body = JSON.parse(res.body.toString('utf8'));
        assertErrorEnvelope(body, 500, 'CONTENT_INTEGRITY');
      }
      assert.equal((await user.api.get('/api/auth/me')).status, 200, 'the server is fine afterwards');
    });

    it('one damaged byte in a middle segment: the download is cut before it; other segments still serve ranges', async (t) => {
      // 40 segments: the first ones leave before the damage is read, so the response is cut mid-way.
      const { data, stored, get, user } = await segmentsFixture(t, 40);
      const damaged = 30;
      damage(stored, HEADER + damaged * SEALED + SEGMENT / 2);

      // Usually the head has left when the damage is read: 200, then the connection is cut. On
      // a loaded machine the cipher thread can reach the damage before the first bytes are
      // written, and the answer is a 500 envelope instead: both deliver nothing unauthenticated.
      const whole = await get();
      assertCutBefore(whole, data, 0, damaged * SEGMENT);
      if (whole.status === 200) {
        assert.equal(Number(whole.headers!['content-length']), data.length);
        assert.equal(whole.complete, false, 'the connection is cut');
      } else {
        assert.equal(whole.status, 500);
      }

      // Ranges in undamaged segments, before and after the damaged one, are served exactly.
      for (const [start, end] of [
        [SEGMENT, 2 * SEGMENT - 1],
        [100, 200],
        [(damaged + 2) * SEGMENT + 5, (damaged + 4) * SEGMENT],
        [(damaged + 1) * SEGMENT, data.length - 1],
      ]) {
        const part = await get(`bytes=${start}-${end}`);
        assert.equal(part.status, 206, `range ${start}-${end}`);
        assert.ok(part.complete);
        assert.equal(part.headers!['content-range'], `bytes ${start}-${end}/${data.length}`);
        assert.ok(part.body.equals(data.subarray(start, end + 1)), `range ${start}-${end}`);
      }
      // A range that reaches into the damaged segment is cut before it.
      const crossing = await get(`bytes=${(damaged - 2) * SEGMENT}-${(damaged + 1) * SEGMENT}`);
      assertCutBefore(crossing, data, (damaged - 2) * SEGMENT, damaged * SEGMENT);
      // A range inside the damaged segment delivers nothing of it.
      const inside = await get(`bytes=${damaged * SEGMENT + 10}-${damaged * SEGMENT + 20}`);
      assertCutBefore(inside, data, damaged * SEGMENT + 10, damaged * SEGMENT + 10);

      // The server is fine afterwards.
      const me = await user.api.get('/api/auth/me');
      assert.equal(me.status, 200);
    });

    it('a blob missing from storage is a 5xx envelope; downloads cut by the client or by damage leak no file handle', async (t) => {
      const { data, stored, get, user, app } = await segmentsFixture(t, 8);
      const port = (app.server.address() as net.AddressInfo).port;
      const fileId = (await user.api.get(`/api/files/list/${await rootFolderId(user)}`)).body.data.data[0].id;
      // Warm up: pools and lazy state open their descriptors once.
      assert.ok((await get()).body.equals(data));
      const fdsBefore = openFds();

      // Clients that go away after the first bytes.
      for (let i = 0; i < 15; i++) {
        await new Promise<void>((resolve) => {
          const req = http.get(
            {
              host: '127.0.0.1',
              port,
              path: `/api/files/download/${fileId}`,
              headers: { authorization: `Bearer ${user.token}` },
              agent: false,
            },
            (res) => {
              res.once('data', () => {
                req.destroy();
                resolve();
              });
            },
          );
          req.on('error', () => resolve());
        });
      }
      // Downloads that hit damage.
      const pristine = fs.readFileSync(stored);
      damage(stored, HEADER + 5 * SEALED + 7);
      for (let i = 0; i < 10; i++) assertCutBefore(await get(), data, 0, 5 * SEGMENT);
      await eventually(async () => assert.ok(openFds() - fdsBefore < 8, `open descriptors grew from ${fdsBefore} to ${openFds()}`), 3000);

      // The bytes are gone altogether.
      fs.rmSync(stored);
      for (const range of [undefined, 'bytes=0-99']) {
        const missing = await get(range);
        assert.equal(missing.status, 500, `${range ?? 'whole'}: ${missing.body.toString()}`);
        assert.ok(missing.complete);
        const body = parseJson(missing);
        assertErrorEnvelope(body, 500, body?.code);
        assert.doesNotMatch(missing.body.toString(), /ENOENT|blobs\/|at .*\.ts/);
      }
      fs.writeFileSync(stored, pristine);
      assert.ok((await get()).body.equals(data));
    });

    it('a damaged first segment, header or a truncated blob delivers nothing past the damage', async (t) => {
      const { data, stored, get } = await segmentsFixture(t, 5);
      const pristine = fs.readFileSync(stored);

      damage(stored, HEADER + 10);
      assertCutBefore(await get(), data, 0, 0);
      const later = await get(`bytes=${2 * SEGMENT}-${3 * SEGMENT - 1}`);
      assert.equal(later.status, 206, 'segments are sealed independently');
      assert.ok(later.body.equals(data.subarray(2 * SEGMENT, 3 * SEGMENT)));

      // The header is authenticated by every segment.
      fs.writeFileSync(stored, pristine);
      damage(stored, 12);
      assertCutBefore(await get(), data, 0, 0);
      assertCutBefore(await get(`bytes=${2 * SEGMENT}-${3 * SEGMENT - 1}`), data, 2 * SEGMENT, 2 * SEGMENT);

      // Truncated at a segment boundary: the last remaining segment was not sealed as final.
      fs.writeFileSync(stored, pristine.subarray(0, HEADER + 3 * SEALED));
      assertCutBefore(await get(), data, 0, 3 * SEGMENT);
      // Cut inside the last segment.
      fs.writeFileSync(stored, pristine.subarray(0, pristine.length - 100));
      assertCutBefore(await get(), data, 0, 5 * SEGMENT);
      // An extra segment appended.
      fs.writeFileSync(stored, Buffer.concat([pristine, pristine.subarray(HEADER, HEADER + SEALED)]));
      assertCutBefore(await get(), data, 0, 5 * SEGMENT);
      // Restored, it downloads whole again.
      fs.writeFileSync(stored, pristine);
      const whole = await get();
      assert.equal(whole.status, 200);
      assert.ok(whole.complete);
      assert.ok(whole.body.equals(data));
    });
  });
  // -------------------------------------------------------------------------------------------
  // 5. Aggregates: a full recount after every operation of a random sequence
  // -------------------------------------------------------------------------------------------
  describe(`files robustness: aggregates match a full recount [${dialect}]`, () => {
    it('nested trash batches, restores into the root, copies and moves of trees with trashed items', async (t) => {
      const { app, database } = await build(t, dialect, { config: { collectIntervalSeconds: 0 } });
      const user = await signUp(app);
      const root = await rootFolderId(user);
      let step = '';
      const check = async (label: string) => {
        step = label;
        assert.deepEqual(await aggregateProblems(database, user.id), [], `after: ${step}`);
      };
      const ok = async (res: Promise<{ status: number; body: any }>, status: number, label: string) => {
        const r = await res;
        assert.equal(r.status, status, `${label}: ${JSON.stringify(r.body)}`);
        await check(label);
        return r.body;
      };
      const up = async (folder: string, name: string, size: number) => (await uploadOk(app, user, folder, name, randomBytes(size))).id;

      const a = await mkdir(user, 'A');
      const b = await mkdir(user, 'B', a);
      const c = await mkdir(user, 'C', b);
      const fa = await up(a, 'fa.bin', 1000);
      await up(b, 'fb.bin', 2000);
      await up(c, 'fc.bin', 4000);
      const fc2 = await up(c, 'fc2.bin', 8000);
      await up(c, 'fc.bin', 4500); // a second version
      await check('setup');
      assert.deepEqual(await folderTotals(user, a), { totalFiles: 4, totalSizeByte: 1000 + 2000 + 4500 + 8000, totalSubfolders: 2 });

      // A file trashed on its own, then its folder trashed: two batches.
      await ok(user.api.delete(`/api/files/delete/${fc2}`), 200, 'trash fc2 alone');
      await ok(user.api.delete(`/api/folders/delete/${c}`), 200, 'trash C');
      await ok(user.api.delete(`/api/folders/delete/${a}`), 200, 'trash A (B goes with it, C and fc2 keep their batches)');
      assert.deepEqual(await folderTotals(user, root), { totalFiles: 0, totalSizeByte: 0, totalSubfolders: 0 });
      // Restoring B from inside A's batch: A is trashed, so B lands in the root, with fb.
      const restoredB = await ok(user.api.post(`/api/folders/restore/${b}`), 200, 'restore B out of A');
      assert.equal(restoredB.data.parentId, root);
      assert.deepEqual(await folderTotals(user, b), { totalFiles: 1, totalSizeByte: 2000, totalSubfolders: 0 });
      // C was trashed on its own: it comes back under its (now live) parent B, without fc2.
      await ok(user.api.post(`/api/folders/restore/${c}`), 200, 'restore C into B');
      assert.deepEqual(await folderTotals(user, b), { totalFiles: 2, totalSizeByte: 2000 + 4500, totalSubfolders: 1 });
      await ok(user.api.post(`/api/files/restore/${fc2}`), 200, 'restore fc2 into C');
      assert.deepEqual(await folderTotals(user, root), { totalFiles: 3, totalSizeByte: 2000 + 4500 + 8000, totalSubfolders: 2 });
      // A (still trashed) holds fa; a file of a trashed folder restored alone goes to the root.
      await ok(user.api.post(`/api/files/restore/${fa}`), 200, 'restore fa out of trashed A');
      assert.equal((await user.api.get(`/api/files/details/${fa}`)).body.folderId, root);
      await ok(user.api.delete(`/api/folders/delete/${a}?trash=hard`), 200, 'hard delete trashed A');

      // A tree holding trashed items: moved and copied.
      const d = await mkdir(user, 'D', b);
      const fd = await up(d, 'fd.bin', 300);
      const fdTrashed = await up(d, 'fd-trashed.bin', 700);
      const e = await mkdir(user, 'E', d);
      await up(e, 'fe.bin', 50);
      await ok(user.api.delete(`/api/files/delete/${fdTrashed}`), 200, 'trash a file of D');
      await ok(user.api.delete(`/api/folders/delete/${e}`), 200, 'trash E inside D');
      const target = await mkdir(user, 'Target');
      await ok(user.api.post(`/api/folders/move/${d}`, { targetParentId: target }), 200, 'move D (with trashed items) to Target');
      const copy = await ok(user.api.post(`/api/folders/copy/${d}`, { targetParentId: c }), 201, 'copy D into C');
      assert.deepEqual(
        { totalFiles: copy.data.totalFiles, totalSizeByte: copy.data.totalSizeByte, totalSubfolders: copy.data.totalSubfolders },
        { totalFiles: 1, totalSizeByte: 300, totalSubfolders: 0 },
        'the copy holds the live items only',
      );
      // E restored: D is live again (moved), so E goes back under D.
      await ok(user.api.post(`/api/folders/restore/${e}`), 200, 'restore E into moved D');
      assert.deepEqual(await folderTotals(user, target), { totalFiles: 2, totalSizeByte: 350, totalSubfolders: 2 });
      // A file moved out of a deep folder into the root, renamed, then a version restored.
      await ok(user.api.post(`/api/files/move/${fd}`, { targetFolderId: root, name: 'fd-moved.bin' }), 200, 'move fd to the root');
      await up(root, 'fd-moved.bin', 5000);
      const versions = (await user.api.get(`/api/files/versions/${fd}`)).body.data as { id: string; isCurrent: boolean }[];
      await ok(
        user.api.post(`/api/files/versions/${fd}/${versions.find((v) => !v.isCurrent)!.id}/restore`),
        200,
        'restore the 300 B version',
      );
      assert.equal((await user.api.get(`/api/files/details/${fd}`)).body.size, 300);
      // Same names collide on restore: the restored item gets a free name.
      const twin = await mkdir(user, 'Twin');
      await ok(user.api.delete(`/api/folders/delete/${twin}`), 200, 'trash Twin');
      await mkdir(user, 'Twin');
      const back = await ok(user.api.post(`/api/folders/restore/${twin}`), 200, 'restore Twin next to a new Twin');
      assert.notEqual(back.data.name, 'Twin');
      // Everything in the trash goes; then everything else, for good.
      await ok(user.api.delete('/api/trash/empty'), 200, 'empty the trash');
      for (const folder of await database.db
        .selectFrom('folders')
        .select('id')
        .where('owner_id', '=', user.id)
        .where('is_root', '=', 0)
        .where('parent_id', '=', root)
        .execute()) {
        await ok(user.api.delete(`/api/folders/delete/${folder.id}?trash=hard`), 200, 'hard delete a top folder');
      }
      for (const file of await database.db.selectFrom('files').select('id').where('owner_id', '=', user.id).execute()) {
        await ok(user.api.delete(`/api/files/delete/${file.id}?trash=hard`), 200, 'hard delete a file');
      }
      assert.deepEqual(await folderTotals(user, root), { totalFiles: 0, totalSizeByte: 0, totalSubfolders: 0 });
      assert.equal(await usedBytes(database, user.id), 0);
    });

    it('120 random operations on files and folders keep every aggregate, quota and reference exact', async (t) => {
      // Uploads of 0-4000 bytes: up to 2000 kept in the database, the others in the blob store.
      const { app, database, config } = await build(t, dialect, { config: { collectIntervalSeconds: 0, inlineBlobBytes: 2000 } });
      const store = new FsBlobStore(path.join(config.dataDir, 'blobs'));
      const user = await signUp(app);
      const root = await rootFolderId(user);
      assert.deepEqual(await folderTotals(user, root), { totalFiles: 0, totalSizeByte: 0, totalSubfolders: 0 });
      assert.deepEqual(await aggregateProblems(database, user.id), []);
      // COFFRE_ROBUSTNESS_SEED replays another sequence; the failure message lists the last operations.
      const seed = Number(process.env.COFFRE_ROBUSTNESS_SEED ?? (dialect === 'sqlite' ? 0xc0ff3e : 0x5eed17));
      const rng = mulberry32(seed);
      const pick = <T>(items: T[]): T => items[Math.floor(rng() * items.length)];
      const log: string[] = [];
      let counter = 0;
      const fresh = (prefix: string) => `${prefix}${++counter}`;

      const state = async () => {
        const folders = await database.db.selectFrom('folders').selectAll().where('owner_id', '=', user.id).execute();
        const files = await database.db.selectFrom('files').selectAll().where('owner_id', '=', user.id).execute();
        return { folders, files };
      };
      const descendants = (folders: { id: string; parent_id: string | null }[], id: string): Set<string> => {
        const out = new Set<string>([id]);
        let grew = true;
        while (grew) {
          grew = false;
          for (const f of folders)
            if (f.parent_id && out.has(f.parent_id) && !out.has(f.id)) {
              out.add(f.id);
              grew = true;
            }
        }
        return out;
      };

      type Op = { name: string; weight: number; run: () => Promise<string | null> };
      const expectStatus = (res: { status: number; body: any }, allowed: number[], what: string) => {
        assert.ok(allowed.includes(res.status), `${what}: status ${res.status} ${JSON.stringify(res.body)} (allowed ${allowed.join('/')})`);
        return res.status;
      };
      const ops: Op[] = [
        {
          name: 'upload',
          weight: 18,
          run: async () => {
            const { folders } = await state();
            const target = pick(folders.filter((f) => f.trash_batch === ''));
            const size = rng() < 0.1 ? 0 : Math.floor(rng() * 4000);
            const name = fresh('f') + '.bin';
            const res = await rawUpload(app, user, target.id, name, randomBytes(size));
            assert.equal(res.statusCode, 201, res.body);
            assert.equal(res.json().data.size, size);
            return `upload ${name} (${size} B) into ${target.name}`;
          },
        },
        {
          name: 'multipart',
          weight: 4,
          run: async () => {
            const { folders } = await state();
            const target = pick(folders.filter((f) => f.trash_batch === ''));
            const parts = [
              { name: fresh('m') + '.bin', data: randomBytes(Math.floor(rng() * 3000)) },
              { name: fresh('m') + '.bin', data: randomBytes(Math.floor(rng() * 3000)) },
            ];
            const res = await multipartUpload(app, user, target.id, parts);
            assert.equal(res.statusCode, 201, res.body);
            assert.equal(res.json().data.length, 2);
            return `multipart ${parts.map((p) => `${p.name}:${p.data.length}`).join(',')} into ${target.name}`;
          },
        },
        {
          name: 'new version',
          weight: 10,
          run: async () => {
            const { folders, files } = await state();
            const live = files.filter((f) => f.trash_batch === '');
            if (live.length === 0) return null;
            const file = pick(live);
            const size = Math.floor(rng() * 5000);
            const res = await rawUpload(app, user, file.folder_id, file.name, randomBytes(size));
            assert.equal(res.statusCode, 201, res.body);
            assert.equal(res.json().data.id, file.id, 'same name: a new version of the same file');
            assert.equal(res.json().data.versionCount, Number(file.version_count) + 1);
            return `new version of ${file.name} (${size} B) in ${folders.find((f) => f.id === file.folder_id)!.name}`;
          },
        },
        {
          name: 'file move',
          weight: 8,
          run: async () => {
            const { folders, files } = await state();
            const live = files.filter((f) => f.trash_batch === '');
            if (live.length === 0) return null;
            const file = pick(live);
            const target = pick(folders.filter((f) => f.trash_batch === ''));
            const rename = rng() < 0.3 ? fresh('r') + '.bin' : undefined;
            const res = await user.api.post(`/api/files/move/${file.id}`, {
              targetFolderId: target.id,
              ...(rename ? { name: rename } : {}),
            });
            const status = expectStatus(res, rename ? [200] : [200, 409], 'file move');
            return `move file ${file.name} to ${target.name}${rename ? ` as ${rename}` : ''} → ${status}`;
          },
        },
        {
          name: 'file copy',
          weight: 6,
          run: async () => {
            const { folders, files } = await state();
            const live = files.filter((f) => f.trash_batch === '');
            if (live.length === 0) return null;
            const file = pick(live);
            const target = pick(folders.filter((f) => f.trash_batch === ''));
            const res = await user.api.post(`/api/files/copy/${file.id}`, { targetFolderId: target.id });
            expectStatus(res, [201], 'file copy');
            assert.equal(res.body.data.size, Number(file.size));
            return `copy file ${file.name} to ${target.name}`;
          },
        },
        {
          name: 'file soft delete',
          weight: 7,
          run: async () => {
            const { files } = await state();
            const live = files.filter((f) => f.trash_batch === '');
            if (live.length === 0) return null;
            const file = pick(live);
            expectStatus(await user.api.delete(`/api/files/delete/${file.id}`), [200], 'file soft delete');
            return `trash file ${file.name}`;
          },
        },
        {
          name: 'file restore',
          weight: 6,
          run: async () => {
            const { files } = await state();
            const trashed = files.filter((f) => f.trash_batch !== '');
            if (trashed.length === 0) return null;
            const file = pick(trashed);
            expectStatus(await user.api.post(`/api/files/restore/${file.id}`), [200], 'file restore');
            return `restore file ${file.name} (batch ${file.trash_batch === file.id ? 'own' : 'folder'})`;
          },
        },
        {
          name: 'file hard delete',
          weight: 5,
          run: async () => {
            const { files } = await state();
            if (files.length === 0) return null;
            const file = pick(files);
            expectStatus(await user.api.delete(`/api/files/delete/${file.id}?trash=hard`), [200], 'file hard delete');
            return `hard delete file ${file.name} (${file.trash_batch === '' ? 'live' : 'trashed'})`;
          },
        },
        {
          name: 'version restore',
          weight: 5,
          run: async () => {
            const { files } = await state();
            const candidates = files.filter((f) => f.trash_batch === '' && Number(f.version_count) > 1);
            if (candidates.length === 0) return null;
            const file = pick(candidates);
            const versions = (await user.api.get(`/api/files/versions/${file.id}`)).body.data as {
              id: string;
              isCurrent: boolean;
              size: number;
            }[];
            const old = pick(versions.filter((v) => !v.isCurrent));
            const res = await user.api.post(`/api/files/versions/${file.id}/${old.id}/restore`);
            expectStatus(res, [200], 'version restore');
            assert.equal(res.body.data.size, old.size);
            return `restore version of ${file.name} (${old.size} B)`;
          },
        },
        {
          name: 'version delete',
          weight: 2,
          run: async () => {
            const { files } = await state();
            const candidates = files.filter((f) => Number(f.version_count) > 1);
            if (candidates.length === 0) return null;
            const file = pick(candidates);
            const versions = (await user.api.get(`/api/files/versions/${file.id}`)).body.data as {
              id: string;
              isCurrent: boolean;
              size: number;
            }[];
            const old = pick(versions.filter((v) => !v.isCurrent));
            expectStatus(await user.api.delete(`/api/files/versions/${file.id}/${old.id}`), [200], 'version delete');
            return `delete old version of ${file.name} (${old.size} B)`;
          },
        },
        {
          name: 'folder create',
          weight: 9,
          run: async () => {
            const { folders } = await state();
            const parent = pick(folders.filter((f) => f.trash_batch === ''));
            const name = fresh('D');
            await mkdir(user, name, parent.id);
            return `create folder ${name} in ${parent.name}`;
          },
        },
        {
          name: 'folder move',
          weight: 6,
          run: async () => {
            const { folders } = await state();
            const movable = folders.filter((f) => f.trash_batch === '' && !f.is_root);
            if (movable.length === 0) return null;
            const folder = pick(movable);
            const inside = descendants(folders, folder.id);
            const targets = folders.filter((f) => f.trash_batch === '' && !inside.has(f.id));
            const target = pick(targets);
            const res = await user.api.post(`/api/folders/move/${folder.id}`, { targetParentId: target.id });
            const status = expectStatus(res, [200, 409], 'folder move');
            return `move folder ${folder.name} to ${target.name} → ${status}`;
          },
        },
        {
          name: 'folder move into itself',
          weight: 1,
          run: async () => {
            const { folders } = await state();
            const movable = folders.filter((f) => f.trash_batch === '' && !f.is_root);
            if (movable.length === 0) return null;
            const folder = pick(movable);
            const inside = [...descendants(folders, folder.id)]
              .map((id) => folders.find((f) => f.id === id)!)
              .filter((f) => f.trash_batch === '');
            const target = pick(inside);
            const res = await user.api.post(`/api/folders/move/${folder.id}`, { targetParentId: target.id });
            expectStatus(res, [400], 'folder move into its own subtree');
            assert.equal(res.body.code, 'INVALID_MOVE');
            return `refused move of folder ${folder.name} into ${target.name}`;
          },
        },
        {
          name: 'folder copy',
          weight: 4,
          run: async () => {
            const { folders } = await state();
            const copyable = folders.filter((f) => f.trash_batch === '' && !f.is_root);
            if (copyable.length === 0) return null;
            const folder = pick(copyable);
            const inside = descendants(folders, folder.id);
            const target = pick(folders.filter((f) => f.trash_batch === '' && !inside.has(f.id)));
            expectStatus(await user.api.post(`/api/folders/copy/${folder.id}`, { targetParentId: target.id }), [201], 'folder copy');
            return `copy folder ${folder.name} to ${target.name}`;
          },
        },
        {
          name: 'folder soft delete',
          weight: 5,
          run: async () => {
            const { folders } = await state();
            const live = folders.filter((f) => f.trash_batch === '' && !f.is_root);
            if (live.length === 0) return null;
            const folder = pick(live);
            expectStatus(await user.api.delete(`/api/folders/delete/${folder.id}`), [200], 'folder soft delete');
            return `trash folder ${folder.name}`;
          },
        },
        {
          name: 'folder restore',
          weight: 4,
          run: async () => {
            const { folders } = await state();
            const trashed = folders.filter((f) => f.trash_batch !== '');
            if (trashed.length === 0) return null;
            const folder = pick(trashed);
            expectStatus(await user.api.post(`/api/folders/restore/${folder.id}`), [200], 'folder restore');
            return `restore folder ${folder.name} (${folder.trash_batch === folder.id ? 'batch root' : 'inside a batch'})`;
          },
        },
        {
          name: 'folder hard delete',
          weight: 3,
          run: async () => {
            const { folders } = await state();
            const candidates = folders.filter((f) => !f.is_root);
            if (candidates.length === 0) return null;
            const folder = pick(candidates);
            expectStatus(await user.api.delete(`/api/folders/delete/${folder.id}?trash=hard`), [200], 'folder hard delete');
            return `hard delete folder ${folder.name} (${folder.trash_batch === '' ? 'live' : 'trashed'})`;
          },
        },
        {
          name: 'empty trash',
          weight: 1,
          run: async () => {
            expectStatus(await user.api.delete('/api/trash/empty'), [200], 'empty trash');
            return 'empty the trash';
          },
        },
      ];
      const totalWeight = ops.reduce((sum, op) => sum + op.weight, 0);
      const choose = () => {
        let r = rng() * totalWeight;
        for (const op of ops) if ((r -= op.weight) < 0) return op;
        return ops[0];
      };

      const performed = new Map<string, number>();
      let step = 0;
      /** Runs one operation (null: it had nothing to work on) and checks the recount after it. */
      const runOp = async (op: Op): Promise<boolean> => {
        const done = await op.run();
        if (done === null) return false;
        performed.set(op.name, (performed.get(op.name) ?? 0) + 1);
        log.push(`#${step++} ${done}`);
        const problems = await aggregateProblems(database, user.id);
        assert.deepEqual(problems, [], `seed ${seed}, after ${log.slice(-6).join('\n  ')}`);
        return true;
      };
      const byName = (name: string) => ops.find((o) => o.name === name)!;
      for (let i = 0; i < 120; i++) {
        // The first operations build a tree to work on.
        const forced = i < 6 ? (i % 2 === 0 ? 'folder create' : 'upload') : i === 90 ? 'empty trash' : undefined;
        if (!(await runOp(forced ? byName(forced) : choose()))) await runOp(byName('upload'));
      }
      // Whatever the seed, every kind of operation runs at least once: the missing ones now,
      // after what they need (a folder, a file, a second version, something in the trash).
      const needs: Record<string, string[]> = {
        'file restore': ['upload', 'file soft delete'],
        'folder restore': ['folder create', 'folder soft delete'],
        'version restore': ['upload', 'new version'],
        'version delete': ['upload', 'new version'],
      };
      for (const op of ops) {
        if (performed.has(op.name)) continue;
        if (await runOp(op)) continue;
        for (const need of needs[op.name] ?? ['folder create', 'upload']) assert.ok(await runOp(byName(need)), need);
        assert.ok(await runOp(op), `${op.name} found nothing to work on`);
      }
      assert.deepEqual(
        ops.filter((op) => !performed.has(op.name)).map((op) => op.name),
        [],
        `performed: ${JSON.stringify([...performed])}`,
      );
      assert.ok(step >= 120);

      // The folder details answer the recounted totals.
      const rows = await database.db
        .selectFrom('folders')
        .selectAll()
        .where('owner_id', '=', user.id)
        .where('trash_batch', '=', '')
        .execute();
      for (const row of rows) {
        const totals = await folderTotals(user, row.id);
        assert.deepEqual(totals, {
          totalFiles: Number(row.subtree_files),
          totalSizeByte: Number(row.subtree_bytes),
          totalSubfolders: Number(row.subtree_folders),
        });
      }

      // The recount is not blind: a one-off drift in any maintained number is reported.
      const someFolder = rows.find((r) => !r.is_root) ?? rows[0];
      for (const column of ['subtree_files', 'subtree_folders', 'subtree_bytes', 'child_folders', 'child_files'] as const) {
        await database.db
          .updateTable('folders')
          .set({ [column]: Number(someFolder[column]) + 1 })
          .where('id', '=', someFolder.id)
          .execute();
        const drift = await aggregateProblems(database, user.id);
        assert.equal(drift.length, 1, `${column}: ${drift.join('; ')}`);
        assert.match(drift[0], new RegExp(column));
        await database.db
          .updateTable('folders')
          .set({ [column]: someFolder[column] })
          .where('id', '=', someFolder.id)
          .execute();
      }
      await database.db
        .updateTable('users')
        .set({ used_bytes: (await usedBytes(database, user.id)) + 1 })
        .where('id', '=', user.id)
        .execute();
      assert.match((await aggregateProblems(database, user.id)).join(), /used_bytes/);
      await database.db
        .updateTable('users')
        .set({ used_bytes: (await usedBytes(database, user.id)) - 1 })
        .where('id', '=', user.id)
        .execute();
      assert.deepEqual(await aggregateProblems(database, user.id), []);

      // After a collection, the store holds exactly the referenced blobs, and live files download intact.
      await collectGarbage(database, store);
      const referenced = new Set((await database.db.selectFrom('file_versions').select('blob_id').execute()).map((r) => r.blob_id));
      const blobRows = await database.db.selectFrom('blobs').select(['id', 'content']).execute();
      assert.deepEqual(new Set(blobRows.map((r) => r.id)), referenced);
      // Small blobs are kept in their rows (see inline-blobs.test.ts), the others in the store.
      const inStore = new Set(blobRows.filter((r) => r.content === null).map((r) => r.id));
      assert.ok(inStore.size > 0 && inStore.size < referenced.size, `${inStore.size} of ${referenced.size} blobs in the store`);
      assert.deepEqual(new Set(storedFiles(config).blobs.map((p) => path.basename(p))), inStore);
      assert.deepEqual(storedFiles(config).tmp, []);
      const liveFiles = await database.db.selectFrom('files').selectAll().where('owner_id', '=', user.id).execute();
      for (const file of liveFiles.slice(0, 25)) {
        const res = await app.inject({
          method: 'GET',
          url: `/api/files/download/${file.id}`,
          headers: { authorization: `Bearer ${user.token}` },
        });
        assert.equal(res.statusCode, 200, `download ${file.name}`);
        assert.equal(sha256Tag(res.rawPayload), file.checksum, `content of ${file.name}`);
      }
    });
  });
}
