import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { DIALECTS, build, client, signUp, type TestUser } from '../helper.js';

const sha = (data: Buffer) => `sha256:${createHash('sha256').update(data).digest('hex')}`;

function multipart(files: { name: string; data: Buffer; type?: string }[]) {
  const boundary = `b${randomBytes(8).toString('hex')}`;
  const body = Buffer.concat([
    ...files.flatMap((f) => [
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${f.name}"\r\nContent-Type: ${f.type ?? 'application/octet-stream'}\r\n\r\n`),
      f.data,
      Buffer.from('\r\n'),
    ]),
    Buffer.from(`--${boundary}--\r\n`),
  ]);
  return { body, contentType: `multipart/form-data; boundary=${boundary}` };
}

function fileApi(app: FastifyInstance, user: TestUser) {
  const auth = { authorization: `Bearer ${user.token}` };
  return {
    async upload(folderId: string, files: { name: string; data: Buffer; type?: string }[], query = '') {
      const { body, contentType } = multipart(files);
      return app.inject({ method: 'POST', url: `/api/files/upload/${folderId}${query}`, headers: { ...auth, 'content-type': contentType }, payload: body });
    },
    async put(folderId: string, name: string, data: Buffer, type = 'application/octet-stream') {
      const res = await app.inject({ method: 'PUT', url: `/api/files/upload/${folderId}?name=${encodeURIComponent(name)}`, headers: { ...auth, 'content-type': type }, payload: data });
      assert.equal(res.statusCode, 201, res.body);
      return res.json().data;
    },
    download(fileId: string, headers: Record<string, string> = {}, query = '') {
      return app.inject({ method: 'GET', url: `/api/files/download/${fileId}${query}`, headers: { ...auth, ...headers } });
    },
  };
}

async function rootOf(user: TestUser): Promise<string> {
  return (await user.api.get('/api/folders/root/subfolders')).body.data.parentFolder.id;
}

for (const dialect of DIALECTS) {
  describe(`files [${dialect}]`, () => {
    it('uploads several files by multipart and one raw, with every detail field', async (t) => {
      const { app } = await build(t, dialect);
      const user = await signUp(app);
      const files = fileApi(app, user);
      const root = await rootOf(user);
      const a = randomBytes(70_000);
      const b = Buffer.from('hello');
      const res = await files.upload(root, [{ name: 'a.bin', data: a }, { name: 'b.txt', data: b, type: 'text/plain' }]);
      assert.equal(res.statusCode, 201);
      const [fa, fb] = res.json().data;
      assert.equal(fa.name, 'a.bin');
      assert.equal(fa.size, a.length);
      assert.equal(fa.checksum, sha(a));
      assert.equal(fb.contentType, 'text/plain');
      assert.match(fa.id, /^fil_/);
      for (const field of ['id', 'name', 'createdAt', 'updatedAt', 'folderId', 'bucketId', 'contentType', 'visibility', 'hashName', 'checksum']) assert.equal(typeof fa[field], 'string', field);
      assert.equal(fa.versionCount, 1);
      assert.equal(fa.retentionPeriod, null);
      assert.equal(fa.isDelete, false);
      const raw = await files.put(root, 'c.json', Buffer.from('{"x":1}'), 'application/json');
      assert.equal(raw.contentType, 'application/json');
      const detail = await user.api.get(`/api/files/details/${raw.id}`);
      assert.equal(detail.status, 200);
      assert.equal(detail.body.id, raw.id, 'details is the bare file object');
      assert.equal(detail.body.size, 7);
      assert.equal((await user.api.get('/api/files/details/nope')).body.code, 'INVALID_ID');
      assert.equal((await user.api.get('/api/files/details/fil_00000000000000000000000000')).status, 404);
      const folder = await user.api.get(`/api/folders/details/${root}`);
      assert.equal(folder.body.data.totalFiles, 3);
      assert.equal(folder.body.data.totalSizeByte, a.length + b.length + 7);
      const none = await files.upload(root, []);
      assert.equal(none.statusCode, 400);
      assert.equal(none.json().code, 'NO_FILE_IN_UPLOAD');
      const notMultipart = await user.api.post(`/api/files/upload/${root}`, { file: 'x' });
      assert.equal(notMultipart.status, 415);
    });

    it('adds versions, renames or fails on an existing name', async (t) => {
      const { app } = await build(t, dialect);
      const user = await signUp(app);
      const files = fileApi(app, user);
      const root = await rootOf(user);
      const v1 = await files.put(root, 'report.pdf', Buffer.from('one'));
      const v2 = await files.put(root, 'report.pdf', Buffer.from('two!'));
      assert.equal(v2.id, v1.id);
      assert.equal(v2.versionCount, 2);
      assert.equal(v2.size, 4);
      const versions = (await user.api.get(`/api/files/versions/${v1.id}`)).body.data;
      assert.deepEqual(versions.map((v: any) => [v.size, v.isCurrent]), [[4, true], [3, false]]);
      const old = await files.download(v1.id, {}, `?versionId=${versions[1].id}`);
      assert.equal(old.body, 'one');
      const renamed = (await files.upload(root, [{ name: 'report.pdf', data: Buffer.from('three') }], '?onConflict=rename')).json().data[0];
      assert.equal(renamed.name, 'report (1).pdf');
      const failed = await files.upload(root, [{ name: 'report.pdf', data: Buffer.from('x') }], '?onConflict=fail');
      assert.equal(failed.statusCode, 409);
      assert.equal(failed.json().code, 'NAME_CONFLICT');
      await user.api.post(`/api/folders/create/${user.defaultBucketId}`, { name: 'Docs' });
      const clash = await app.inject({ method: 'PUT', url: `/api/files/upload/${root}?name=Docs`, headers: { authorization: `Bearer ${user.token}` }, payload: 'x' });
      assert.equal(clash.statusCode, 409, 'a file may not take a folder name');
      const restored = await user.api.post(`/api/files/versions/${v1.id}/${versions[1].id}/restore`);
      assert.equal(restored.status, 200);
      assert.equal(restored.body.data.versionCount, 3);
      assert.equal((await files.download(v1.id)).body, 'one');
    });

    it('downloads with safe headers, ETag, ranges across segments and 416', async (t) => {
      const { app } = await build(t, dialect);
      const user = await signUp(app);
      const files = fileApi(app, user);
      const root = await rootOf(user);
      const data = randomBytes(300_000);
      const name = 'Quarterly "report" – été.html';
      const file = await files.put(root, name, data, 'text/html');
      const full = await files.download(file.id);
      assert.equal(full.statusCode, 200);
      assert.deepEqual(full.rawPayload, data);
      assert.equal(full.headers['content-length'], String(data.length));
      assert.equal(full.headers['x-content-type-options'], 'nosniff');
      assert.match(String(full.headers['content-security-policy']), /sandbox/);
      const disposition = String(full.headers['content-disposition']);
      assert.match(disposition, /^attachment; /);
      assert.ok(disposition.includes(`filename*=UTF-8''${encodeURIComponent(name).replace(/'/g, '%27')}`), disposition);
      assert.doesNotMatch(disposition.split(';')[1], /[^\x20-\x7e]/);
      const etag = String(full.headers.etag);
      assert.equal((await files.download(file.id, { 'if-none-match': etag })).statusCode, 304);

      const cases: [string, number, number][] = [
        ['bytes=0-0', 0, 0],
        ['bytes=65535-65536', 65535, 65536],
        ['bytes=-10', data.length - 10, data.length - 1],
        ['bytes=100-', 100, data.length - 1],
        ['bytes=1000-250000', 1000, 250000],
      ];
      for (const [range, start, end] of cases) {
        const res = await files.download(file.id, { range });
        assert.equal(res.statusCode, 206, range);
        assert.equal(res.headers['content-range'], `bytes ${start}-${end}/${data.length}`);
        assert.deepEqual(res.rawPayload, data.subarray(start, end + 1), range);
      }
      const unsatisfiable = await files.download(file.id, { range: 'bytes=999999999-' });
      assert.equal(unsatisfiable.statusCode, 416);
      assert.equal(unsatisfiable.headers['content-range'], `bytes */${data.length}`);
      const multi = await files.download(file.id, { range: 'bytes=0-1,5-6' });
      assert.equal(multi.statusCode, 200);
      assert.equal(multi.rawPayload.length, data.length);
      const staleIfRange = await files.download(file.id, { range: 'bytes=0-9', 'if-range': '"old"' });
      assert.equal(staleIfRange.statusCode, 200);
    });

    it('updates name, visibility and retention; retention extends only and blocks hard deletes', async (t) => {
      const { app } = await build(t, dialect);
      const user = await signUp(app);
      const files = fileApi(app, user);
      const root = await rootOf(user);
      const folder = (await user.api.post(`/api/folders/create/${user.defaultBucketId}`, { name: 'Kept' })).body.data;
      const file = await files.put(folder.id, 'contract.pdf', Buffer.from('v1'));
      await files.put(folder.id, 'contract.pdf', Buffer.from('v2'));
      assert.equal((await user.api.put(`/api/files/update/${file.id}`, { name: 'x.pdf' })).status, 400);
      assert.equal((await user.api.put(`/api/files/update/${file.id}`, { name: 'x.pdf', visibility: 'hidden' })).status, 400);
      for (const bad of ['7d', '1y', '10Y', '']) {
        assert.equal((await user.api.put(`/api/files/update/${file.id}`, { name: 'x.pdf', visibility: 'private', retentionPeriod: bad })).status, 400, bad);
      }
      const ok = await user.api.put(`/api/files/update/${file.id}`, { name: 'Contract.pdf', visibility: 'private', retentionPeriod: '1Y' });
      assert.equal(ok.status, 200);
      assert.deepEqual(ok.body, {});
      const detail = (await user.api.get(`/api/files/details/${file.id}`)).body;
      assert.equal(detail.name, 'Contract.pdf');
      assert.equal(detail.retentionPeriod, '1Y');
      assert.ok(Math.abs(Date.parse(detail.retainUntil) - (Date.now() + 365 * 86_400_000)) < 60_000);
      const shorter = await user.api.put(`/api/files/update/${file.id}`, { name: 'Contract.pdf', visibility: 'private', retentionPeriod: '30d' });
      assert.equal(shorter.status, 409);
      assert.equal(shorter.body.code, 'RETENTION_SHORTENING');
      assert.equal((await user.api.put(`/api/files/update/${file.id}`, { name: 'Contract.pdf', visibility: 'private', retentionPeriod: '2Y' })).status, 200);

      const hard = await user.api.delete(`/api/files/delete/${file.id}?trash=hard`);
      assert.equal(hard.status, 409);
      assert.equal(hard.body.code, 'RETENTION_ACTIVE');
      const versions = (await user.api.get(`/api/files/versions/${file.id}`)).body.data;
      assert.equal((await user.api.delete(`/api/files/versions/${file.id}/${versions[1].id}`)).body.code, 'RETENTION_ACTIVE');
      assert.equal((await user.api.delete(`/api/folders/delete/${folder.id}?trash=hard`)).body.code, 'RETENTION_ACTIVE');
      assert.equal((await files.download(file.id)).body, 'v2');
      // Soft delete, new versions, renames and moves stay allowed.
      assert.equal((await user.api.post(`/api/files/move/${file.id}`, { targetFolderId: root })).status, 200);
      assert.equal((await user.api.delete(`/api/files/delete/${file.id}`)).status, 200);
      const emptied = await user.api.delete('/api/trash/empty');
      assert.deepEqual(emptied.body.data, { deleted: 0, keptUnderRetention: 1 });
      assert.equal((await user.api.post(`/api/files/restore/${file.id}`)).status, 200);
      assert.equal((await files.download(file.id)).body, 'v2');
    });

    it('lists with sorting and cursors', async (t) => {
      const { app } = await build(t, dialect);
      const user = await signUp(app);
      const files = fileApi(app, user);
      const root = await rootOf(user);
      const sizes: Record<string, number> = { 'c.txt': 30, 'a.txt': 10, 'e.txt': 50, 'b.txt': 20, 'd.txt': 40 };
      for (const [name, size] of Object.entries(sizes)) await files.put(root, name, Buffer.alloc(size));
      const names = async (query: string) => {
        const out: string[] = [];
        let cursor: string | null = null;
        do {
          const res: any = await user.api.get(`/api/files/list/${root}?limit=2${query}${cursor ? `&cursor=${cursor}` : ''}`);
          assert.equal(res.body.data.total, 5);
          out.push(...res.body.data.data.map((f: any) => f.name));
          cursor = res.body.data.nextCursor;
        } while (cursor);
        return out;
      };
      assert.deepEqual(await names(''), ['a.txt', 'b.txt', 'c.txt', 'd.txt', 'e.txt']);
      assert.deepEqual(await names('&sort=size&order=desc'), ['e.txt', 'd.txt', 'c.txt', 'b.txt', 'a.txt']);
      assert.deepEqual(await names('&sort=createdAt'), Object.keys(sizes));
      assert.equal((await user.api.get(`/api/files/list/${root}?sort=color`)).status, 400);
    });

    it('moves, copies, trashes and restores files, which stay readable', async (t) => {
      const { app } = await build(t, dialect);
      const user = await signUp(app);
      const files = fileApi(app, user);
      const root = await rootOf(user);
      const dir = (await user.api.post(`/api/folders/create/${user.defaultBucketId}`, { name: 'Dir' })).body.data;
      const data = randomBytes(100_000);
      const file = await files.put(root, 'photo.jpg', data);
      const moved = await user.api.post(`/api/files/move/${file.id}`, { targetFolderId: dir.id, name: 'renamed.jpg' });
      assert.equal(moved.status, 200);
      assert.equal(moved.body.data.folderId, dir.id);
      assert.deepEqual((await files.download(file.id)).rawPayload, data, 'the key was re-wrapped for the new folder');
      const copy = await user.api.post(`/api/files/copy/${file.id}`, { targetFolderId: dir.id });
      assert.equal(copy.status, 201);
      assert.equal(copy.body.data.name, 'renamed (copy).jpg');
      await files.put(dir.id, 'other.jpg', Buffer.from('x'));
      assert.equal((await user.api.post(`/api/files/move/${copy.body.data.id}`, { targetFolderId: dir.id, name: 'other.jpg' })).status, 409);
      assert.equal((await user.api.delete(`/api/files/delete/${file.id}?trash=hard`)).status, 200);
      assert.equal((await user.api.get(`/api/files/details/${file.id}`)).status, 404);
      assert.deepEqual((await files.download(copy.body.data.id)).rawPayload, data, 'the copy outlives the original');

      // Trashing the folder trashes its files; restoring a file whose folder is in the trash puts it at the root.
      await user.api.delete(`/api/folders/delete/${dir.id}`);
      assert.equal((await user.api.get(`/api/folders/details/${root}`)).body.data.totalFiles, 0);
      const restored = await user.api.post(`/api/files/restore/${copy.body.data.id}`);
      assert.equal(restored.status, 200);
      assert.equal(restored.body.data.folderId, root);
      assert.deepEqual((await files.download(copy.body.data.id)).rawPayload, data);
      const restoredDir = await user.api.post(`/api/folders/restore/${dir.id}`);
      assert.equal(restoredDir.status, 200);
      assert.equal(restoredDir.body.data.totalFiles, 1, 'other.jpg came back with its folder');
      const trash = await user.api.get('/api/trash/list');
      assert.deepEqual(trash.body.data, { folders: [], files: [] });

      // A copied folder carries readable copies of its files.
      const folderCopy = await user.api.post(`/api/folders/copy/${dir.id}`, { targetParentId: root, name: 'Dir 2' });
      assert.equal(folderCopy.body.data.totalFiles, 1);
      const copied = (await user.api.get(`/api/files/list/${folderCopy.body.data.id}`)).body.data.data[0];
      assert.equal((await files.download(copied.id)).body, 'x');
      await user.api.delete(`/api/folders/delete/${folderCopy.body.data.id}?trash=hard`);
      assert.equal((await user.api.get(`/api/files/details/${copied.id}`)).status, 404);
    });

    it('serves public files without a token, and only while public and live', async (t) => {
      const { app } = await build(t, dialect);
      const user = await signUp(app);
      const files = fileApi(app, user);
      const file = await files.put(await rootOf(user), 'poster.png', Buffer.from('PNG'));
      const anonymous = client(app);
      assert.equal((await anonymous.get(`/api/files/public/${file.hashName}`)).status, 404);
      await user.api.put(`/api/files/update/${file.id}`, { name: 'poster.png', visibility: 'public' });
      const open = await app.inject({ method: 'GET', url: `/api/files/public/${file.hashName}` });
      assert.equal(open.statusCode, 200);
      assert.equal(open.body, 'PNG');
      await user.api.delete(`/api/files/delete/${file.id}`);
      assert.equal((await anonymous.get(`/api/files/public/${file.hashName}`)).status, 404);
    });

    it('keeps other users out of every file route', async (t) => {
      const { app } = await build(t, dialect);
      const owner = await signUp(app);
      const other = await signUp(app);
      const file = await fileApi(app, owner).put(await rootOf(owner), 'secret.txt', Buffer.from('secret'));
      const otherRoot = await rootOf(other);
      const versionId = (await owner.api.get(`/api/files/versions/${file.id}`)).body.data[0].id;
      const routes: [string, string, unknown?][] = [
        ['GET', `/api/files/details/${file.id}`],
        ['GET', `/api/files/download/${file.id}`],
        ['PUT', `/api/files/update/${file.id}`, { name: 'mine.txt', visibility: 'public' }],
        ['POST', `/api/files/move/${file.id}`, { targetFolderId: otherRoot }],
        ['POST', `/api/files/copy/${file.id}`, { targetFolderId: otherRoot }],
        ['DELETE', `/api/files/delete/${file.id}?trash=hard`],
        ['POST', `/api/files/restore/${file.id}`],
        ['GET', `/api/files/versions/${file.id}`],
        ['POST', `/api/files/versions/${file.id}/${versionId}/restore`],
        ['DELETE', `/api/files/versions/${file.id}/${versionId}`],
        ['GET', `/api/files/list/${file.folderId}`],
        ['PUT', `/api/files/upload/${file.folderId}?name=intruder.txt`, 'x'],
      ];
      for (const [method, url, body] of routes) {
        const as = (token?: string) =>
          app.inject({ method: method as any, url, headers: token ? { authorization: `Bearer ${token}` } : {}, ...(body !== undefined ? { payload: body as any } : {}) });
        assert.equal((await as()).statusCode, 401, `${method} ${url} without a token`);
        const res = await as(other.token);
        assert.ok([403, 404].includes(res.statusCode), `${method} ${url} as another user: ${res.statusCode}`);
      }
      assert.equal((await fileApi(app, owner).download(file.id)).body, 'secret');
    });

    it('keeps names as names: they never reach a filesystem path', async (t) => {
      const { app, config } = await build(t, dialect);
      const user = await signUp(app);
      const files = fileApi(app, user);
      const root = await rootOf(user);
      const names = [`it's "quoted"`, 'ünïcødé ✓.txt', `${'é'.repeat(126)}abc`, '..hidden', 'CON'];
      for (const name of names) assert.equal((await files.put(root, name, Buffer.from(name))).name, name);
      for (const bad of ['../x', 'a/b', 'line\nbreak', '..', `${'é'.repeat(128)}`]) {
        const res = await app.inject({ method: 'PUT', url: `/api/files/upload/${root}?name=${encodeURIComponent(bad)}`, headers: { authorization: `Bearer ${user.token}` }, payload: 'x' });
        assert.equal(res.statusCode, 400, JSON.stringify(bad));
      }
      const stored = (function list(dir: string): string[] {
        return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? [e.name, ...list(path.join(dir, e.name))] : [e.name]));
      })(path.join(config.dataDir, 'blobs'));
      for (const entry of stored) assert.match(entry, /^[A-Za-z0-9_-]+$/, `unexpected stored name ${entry}`);
    });
  });
}
