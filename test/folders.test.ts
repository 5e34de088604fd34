import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS, build, client, signUp, type TestUser } from './helper.js';

const UNKNOWN_FOLDER = 'fld_00000000000000000000000000';
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

async function mkdir(user: TestUser, name: string, parentId?: string) {
  const res = await user.api.post(`/api/folders/create/${user.defaultBucketId}`, { name, ...(parentId ? { parentId } : {}) });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body.data as { id: string; parentId: string; displayPath: string };
}

async function details(user: TestUser, id: string) {
  const res = await user.api.get(`/api/folders/details/${id}`);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.data;
}

function assertErrorEnvelope(res: { status: number; body: any }, status: number, code: string) {
  assert.equal(res.status, status, JSON.stringify(res.body));
  assert.equal(res.body.status, status);
  assert.equal(res.body.code, code);
  assert.equal(res.body.data, null);
  assert.equal(typeof res.body.message, 'string');
}

for (const dialect of DIALECTS) {
  describe(`folders [${dialect}]`, () => {
    it('details: 200 with every field of the interface document, typed', async (t) => {
      const { app } = await build(t, dialect);
      const user = await signUp(app);
      const a = await mkdir(user, 'Documents');
      const b = await mkdir(user, '2026', a.id);
      const res = await user.api.get(`/api/folders/details/${b.id}`);
      assert.equal(res.status, 200);
      assert.equal(res.body.status, 200);
      assert.equal(typeof res.body.message, 'string');
      const d = res.body.data;
      const types: Record<string, string> = {
        id: 'string', name: 'string', visibility: 'string', createdAt: 'string', updatedAt: 'string',
        totalFiles: 'number', totalSubfolders: 'number', totalSizeByte: 'number', sharedUsersCount: 'number',
        displayPath: 'string', locationLabel: 'string', parentId: 'string', parentName: 'string', isRoot: 'boolean',
        accessUrl: 'string', shareUrl: 'string',
      };
      for (const [field, type] of Object.entries(types)) assert.equal(typeof d[field], type, field);
      for (const field of ['totalFiles', 'totalSubfolders', 'totalSizeByte', 'sharedUsersCount']) assert.ok(Number.isInteger(d[field]), field);
      assert.ok('lastAccessAt' in d && (d.lastAccessAt === null || ISO_MS.test(d.lastAccessAt)));
      assert.ok('ownerFolder' in d);
      assert.equal(d.ownerFolder, null);
      assert.match(d.createdAt, ISO_MS);
      assert.match(d.updatedAt, ISO_MS);
      assert.equal(d.name, '2026');
      assert.equal(d.visibility, 'private');
      assert.equal(d.displayPath, '/Documents/2026');
      assert.equal(d.parentId, a.id);
      assert.equal(d.parentName, 'Documents');
      assert.equal(d.isRoot, false);
      assert.match(d.locationLabel, /^.+ \([a-z]{2}-[a-z]+\)$/);
      assert.equal(d.locationLabel, 'Paris (fr-par)');
      assert.equal(d.accessUrl, `/folders/details/${b.id}`);
      assert.equal(d.shareUrl, `/folders/share/${b.id}`);
      assert.match(d.lastAccessAt, ISO_MS, 'reading the details records an access');
    });

    it('details: the root folder', async (t) => {
      const { app } = await build(t, dialect);
      const user = await signUp(app);
      const list = await user.api.get('/api/folders/root/subfolders');
      const root = await details(user, list.body.data.parentFolder.id);
      assert.equal(root.isRoot, true);
      assert.equal(root.displayPath, '/');
      assert.equal(root.parentId, '');
      assert.equal(root.parentName, '');
    });

    it('details: 401 without or with a bad token, 401 for another user, 404 unknown, 400 malformed', async (t) => {
      const { app } = await build(t, dialect);
      const owner = await signUp(app);
      const other = await signUp(app);
      const folder = await mkdir(owner, 'Private');
      assertErrorEnvelope(await client(app).get(`/api/folders/details/${folder.id}`), 401, 'UNAUTHENTICATED');
      assertErrorEnvelope(await client(app, 'cof_not-a-token').get(`/api/folders/details/${folder.id}`), 401, 'UNAUTHENTICATED');
      assertErrorEnvelope(await other.api.get(`/api/folders/details/${folder.id}`), 401, 'FOLDER_ACCESS_DENIED');
      assertErrorEnvelope(await owner.api.get(`/api/folders/details/${UNKNOWN_FOLDER}`), 404, 'FOLDER_NOT_FOUND');
      assertErrorEnvelope(await owner.api.get('/api/folders/details/not-an-id'), 400, 'INVALID_ID');
    });

    it('subfolders: 200 shape, root alias, 401, 403, 404', async (t) => {
      const { app } = await build(t, dialect);
      const owner = await signUp(app);
      const other = await signUp(app);
      const a = await mkdir(owner, 'A');
      await mkdir(owner, 'B');
      const child = await mkdir(owner, 'child', a.id);
      const top = await owner.api.get('/api/folders/root/subfolders');
      assert.equal(top.status, 200);
      assert.equal(top.body.status, 200);
      assert.equal(typeof top.body.message, 'string');
      assert.deepEqual(top.body.data.data.map((f: any) => f.name), ['A', 'B']);
      assert.equal(top.body.data.total, 2);
      assert.deepEqual(Object.keys(top.body.data.parentFolder).sort(), ['bucketId', 'id', 'name']);
      assert.equal(top.body.data.parentFolder.bucketId, owner.defaultBucketId);
      const item = top.body.data.data[0];
      for (const field of ['id', 'bucketId', 'parentId', 'hashUrl', 'name', 'visibility', 'createdAt', 'updatedAt']) assert.equal(typeof item[field], 'string', field);
      assert.equal(item.isDelete, false);
      assert.equal(item.deletedAt, null);
      assert.match(item.hashUrl, /^[A-Za-z0-9_-]{22,}$/);
      const sub = await owner.api.get(`/api/folders/${a.id}/subfolders`);
      assert.deepEqual(sub.body.data.data.map((f: any) => f.id), [child.id]);
      assertErrorEnvelope(await client(app).get(`/api/folders/${a.id}/subfolders`), 401, 'UNAUTHENTICATED');
      assertErrorEnvelope(await client(app, 'cof_bad').get('/api/folders/root/subfolders'), 401, 'UNAUTHENTICATED');
      assertErrorEnvelope(await other.api.get(`/api/folders/${a.id}/subfolders`), 403, 'FOLDER_FORBIDDEN');
      assertErrorEnvelope(await owner.api.get(`/api/folders/${UNKNOWN_FOLDER}/subfolders`), 404, 'FOLDER_NOT_FOUND');
      assertErrorEnvelope(await other.api.get(`/api/folders/root/subfolders?bucketId=${owner.defaultBucketId}`), 404, 'BUCKET_NOT_FOUND');
    });

    it('update: both body forms, {} response, 400s and 404s', async (t) => {
      const { app } = await build(t, dialect);
      const owner = await signUp(app);
      const other = await signUp(app);
      const f = await mkdir(owner, 'Old');
      let res = await owner.api.put(`/api/folders/update/${f.id}`, { name: 'New', isPrivate: false });
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, {});
      let d = await details(owner, f.id);
      assert.equal(d.name, 'New');
      assert.equal(d.visibility, 'public');
      res = await owner.api.put(`/api/folders/update/${f.id}`, { visibility: 'private' });
      assert.deepEqual(res.body, {});
      d = await details(owner, f.id);
      assert.equal(d.visibility, 'private');
      assert.equal(d.name, 'New', 'omitted fields keep their value');
      assertErrorEnvelope(await owner.api.put(`/api/folders/update/${f.id}`, {}), 400, 'EMPTY_UPDATE');
      assertErrorEnvelope(await owner.api.put(`/api/folders/update/${f.id}`, { visibility: 'secret' }), 400, 'VALIDATION_FAILED');
      assertErrorEnvelope(await owner.api.put(`/api/folders/update/${f.id}`, { visibility: 'public', isPrivate: true }), 400, 'VISIBILITY_CONFLICT');
      assertErrorEnvelope(await owner.api.put('/api/folders/update/fld_bad', { name: 'x' }), 400, 'INVALID_ID');
      assertErrorEnvelope(await owner.api.put(`/api/folders/update/${f.id}`, { name: 'a/b' }), 400, 'INVALID_NAME');
      assertErrorEnvelope(await owner.api.put(`/api/folders/update/${UNKNOWN_FOLDER}`, { name: 'x' }), 404, 'FOLDER_NOT_FOUND');
      assertErrorEnvelope(await other.api.put(`/api/folders/update/${f.id}`, { name: 'Stolen' }), 404, 'FOLDER_NOT_FOUND');
      assert.equal((await details(owner, f.id)).name, 'New');
    });

    it('delete: soft by default, trash in query or body, hard, 400 for other values, 404', async (t) => {
      const { app } = await build(t, dialect);
      const owner = await signUp(app);
      const other = await signUp(app);
      const a = await mkdir(owner, 'A');
      const b = await mkdir(owner, 'B');
      const c = await mkdir(owner, 'C');
      assertErrorEnvelope(await owner.api.delete(`/api/folders/delete/${a.id}?trash=maybe`), 400, 'INVALID_TRASH_MODE');
      assertErrorEnvelope(await owner.api.delete(`/api/folders/delete/${a.id}`, { trash: 'purge' }), 400, 'INVALID_TRASH_MODE');
      assertErrorEnvelope(await owner.api.delete(`/api/folders/delete/${UNKNOWN_FOLDER}`), 404, 'FOLDER_NOT_FOUND');
      assertErrorEnvelope(await other.api.delete(`/api/folders/delete/${a.id}?trash=hard`), 404, 'FOLDER_NOT_FOUND');
      assertErrorEnvelope(await owner.api.delete('/api/folders/delete/nope'), 400, 'INVALID_ID');

      let res = await owner.api.delete(`/api/folders/delete/${a.id}`);
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, {});
      const trashed = await details(owner, a.id);
      assert.equal(trashed.isDelete, true);
      assert.match(trashed.deletedAt, ISO_MS);

      res = await owner.api.delete(`/api/folders/delete/${b.id}`, { trash: 'hard' });
      assert.deepEqual(res.body, {});
      assertErrorEnvelope(await owner.api.get(`/api/folders/details/${b.id}`), 404, 'FOLDER_NOT_FOUND');

      res = await owner.api.delete(`/api/folders/delete/${c.id}?trash=hard`);
      assert.equal(res.status, 200);
      assertErrorEnvelope(await owner.api.get(`/api/folders/details/${c.id}`), 404, 'FOLDER_NOT_FOUND');
      const top = await owner.api.get('/api/folders/root/subfolders');
      assert.equal(top.body.data.total, 0);
    });

    it('authorizes every folder route: no token, bad token, another user', async (t) => {
      const { app } = await build(t, dialect);
      const owner = await signUp(app);
      const other = await signUp(app);
      const a = await mkdir(owner, 'A');
      const b = await mkdir(owner, 'B');
      const otherRoot = (await other.api.get('/api/folders/root/subfolders')).body.data.parentFolder.id;
      const routes: [string, string, unknown, number][] = [
        ['POST', `/api/folders/create/${owner.defaultBucketId}`, { name: 'x' }, 404],
        ['PUT', `/api/folders/update/${a.id}`, { name: 'x' }, 404],
        ['DELETE', `/api/folders/delete/${a.id}?trash=hard`, undefined, 404],
        ['GET', `/api/folders/details/${a.id}`, undefined, 401],
        ['GET', `/api/folders/${a.id}/subfolders`, undefined, 403],
        ['GET', `/api/folders/list/${owner.defaultBucketId}`, undefined, 404],
        ['POST', `/api/folders/move/${a.id}`, { targetParentId: otherRoot }, 404],
        ['POST', `/api/folders/copy/${a.id}`, { targetParentId: otherRoot }, 404],
        ['POST', `/api/folders/restore/${a.id}`, undefined, 404],
      ];
      for (const [method, url, body, otherStatus] of routes) {
        for (const token of [undefined, 'cof_bad-token']) {
          const res = await app.inject({ method: method as any, url, headers: token ? { authorization: `Bearer ${token}` } : {}, ...(body ? { payload: body as any } : {}) });
          assert.equal(res.statusCode, 401, `${method} ${url} with ${token ?? 'no token'}`);
          assert.equal(res.json().code, 'UNAUTHENTICATED');
        }
        const res = await app.inject({ method: method as any, url, headers: { authorization: `Bearer ${other.token}` }, ...(body ? { payload: body as any } : {}) });
        assert.equal(res.statusCode, otherStatus, `${method} ${url} as another user`);
      }
      // Nothing changed for the owner.
      const top = await owner.api.get('/api/folders/root/subfolders');
      assert.deepEqual(top.body.data.data.map((f: any) => f.name), ['A', 'B']);
      assert.equal((await details(owner, a.id)).isDelete, false);
      assert.equal((await details(owner, b.id)).name, 'B');
      assert.equal((await other.api.get('/api/folders/root/subfolders')).body.data.total, 0);
    });

    it('rejects bad names and accepts 255 bytes', async (t) => {
      const { app } = await build(t, dialect);
      const user = await signUp(app);
      const target = await mkdir(user, 'Target');
      for (const name of ['..', '.', 'a/b', 'nul\u0000byte', 'line\nbreak', 'é'.repeat(128), '']) {
        assertErrorEnvelope(await user.api.post(`/api/folders/create/${user.defaultBucketId}`, { name }), 400, 'INVALID_NAME');
        assertErrorEnvelope(await user.api.put(`/api/folders/update/${target.id}`, { name }), 400, 'INVALID_NAME');
        assertErrorEnvelope(await user.api.post(`/api/folders/copy/${target.id}`, { targetParentId: target.parentId, name }), 400, 'INVALID_NAME');
      }
      const long = `${'é'.repeat(127)}x`; // 255 bytes
      assert.equal(Buffer.byteLength(long), 255);
      assert.equal((await mkdir(user, long)).displayPath, `/${long}`);
      const odd = `Quote "it" — ünïcødé 'ok'`;
      assert.equal((await details(user, (await mkdir(user, odd)).id)).name, odd);
    });

    it('keeps sibling names unique among live folders', async (t) => {
      const { app } = await build(t, dialect);
      const user = await signUp(app);
      const a = await mkdir(user, 'A');
      const b = await mkdir(user, 'B');
      const inner = await mkdir(user, 'A', b.id);
      assertErrorEnvelope(await user.api.post(`/api/folders/create/${user.defaultBucketId}`, { name: 'A' }), 409, 'NAME_CONFLICT');
      assertErrorEnvelope(await user.api.put(`/api/folders/update/${b.id}`, { name: 'A' }), 409, 'NAME_CONFLICT');
      assertErrorEnvelope(await user.api.post(`/api/folders/move/${inner.id}`, { targetParentId: a.parentId }), 409, 'NAME_CONFLICT');
      await user.api.delete(`/api/folders/delete/${a.id}`);
      const again = await mkdir(user, 'A');
      const restored = await user.api.post(`/api/folders/restore/${a.id}`);
      assert.equal(restored.status, 200);
      assert.equal(restored.body.data.name, 'A (restored)');
      assert.notEqual(again.id, a.id);
    });

    it('moves: paths follow, no move into itself or a descendant, not the root, not into the trash', async (t) => {
      const { app } = await build(t, dialect);
      const user = await signUp(app);
      const a = await mkdir(user, 'A');
      const b = await mkdir(user, 'B', a.id);
      const c = await mkdir(user, 'C', b.id);
      const x = await mkdir(user, 'X');
      assert.equal((await details(user, c.id)).displayPath, '/A/B/C');
      assertErrorEnvelope(await user.api.post(`/api/folders/move/${a.id}`, { targetParentId: a.id }), 400, 'INVALID_MOVE');
      assertErrorEnvelope(await user.api.post(`/api/folders/move/${a.id}`, { targetParentId: c.id }), 400, 'INVALID_MOVE');
      assertErrorEnvelope(await user.api.post(`/api/folders/move/${a.parentId}`, { targetParentId: x.id }), 400, 'ROOT_FOLDER_READONLY');
      assertErrorEnvelope(await user.api.post(`/api/folders/move/${a.id}`, { targetParentId: 'garbage' }), 400, 'INVALID_ID');
      const moved = await user.api.post(`/api/folders/move/${b.id}`, { targetParentId: x.id });
      assert.equal(moved.status, 200);
      assert.equal(moved.body.data.displayPath, '/X/B');
      assert.equal(moved.body.data.parentName, 'X');
      assert.equal((await details(user, c.id)).displayPath, '/X/B/C');
      await user.api.put(`/api/folders/update/${x.id}`, { name: 'Y' });
      assert.equal((await details(user, c.id)).displayPath, '/Y/B/C');
      await user.api.delete(`/api/folders/delete/${a.id}`);
      assertErrorEnvelope(await user.api.post(`/api/folders/move/${c.id}`, { targetParentId: a.id }), 409, 'FOLDER_IN_TRASH');
    });

    it('keeps recursive totals through create, move, copy, trash, restore and hard delete', async (t) => {
      const { app } = await build(t, dialect);
      const user = await signUp(app);
      const root = (await user.api.get('/api/folders/root/subfolders')).body.data.parentFolder.id;
      const total = async (id: string) => (await details(user, id)).totalSubfolders;
      const a = await mkdir(user, 'A');
      const b = await mkdir(user, 'B', a.id);
      await mkdir(user, 'C', b.id);
      await mkdir(user, 'D', b.id);
      const x = await mkdir(user, 'X');
      assert.equal(await total(root), 5);
      assert.equal(await total(a.id), 3);
      assert.equal(await total(b.id), 2);

      await user.api.post(`/api/folders/move/${b.id}`, { targetParentId: x.id });
      assert.equal(await total(a.id), 0);
      assert.equal(await total(x.id), 3);
      assert.equal(await total(root), 5);

      const copy = await user.api.post(`/api/folders/copy/${b.id}`, { targetParentId: a.id });
      assert.equal(copy.status, 201);
      assert.notEqual(copy.body.data.id, b.id);
      assert.equal(copy.body.data.totalSubfolders, 2);
      assert.equal(await total(a.id), 3);
      assert.equal(await total(root), 8);
      const sameNameCopy = await user.api.post(`/api/folders/copy/${b.id}`, { targetParentId: x.id });
      assert.equal(sameNameCopy.body.data.name, 'B (copy)');
      assert.equal(await total(root), 11);

      await user.api.delete(`/api/folders/delete/${x.id}`);
      assert.equal(await total(root), 4);
      const listing = await user.api.get('/api/folders/root/subfolders');
      assert.deepEqual(listing.body.data.data.map((f: any) => f.name), ['A']);

      const restored = await user.api.post(`/api/folders/restore/${x.id}`);
      assert.equal(restored.status, 200);
      assert.equal(await total(root), 11);

      // A folder restored from inside a trashed folder goes to the bucket root.
      await user.api.delete(`/api/folders/delete/${x.id}`);
      const fromInside = await user.api.post(`/api/folders/restore/${b.id}`);
      assert.equal(fromInside.status, 200);
      assert.equal(fromInside.body.data.parentId, root);
      assert.equal(fromInside.body.data.displayPath, '/B');
      assert.equal(await total(root), 4 + 3);

      await user.api.delete(`/api/folders/delete/${a.id}?trash=hard`);
      assert.equal(await total(root), 3);
      assertErrorEnvelope(await user.api.get(`/api/folders/details/${copy.body.data.id}`), 404, 'FOLDER_NOT_FOUND');
      assertErrorEnvelope(await user.api.post(`/api/folders/restore/${b.id}`), 409, 'NOT_IN_TRASH');
    });

    it('paginates subfolders and the bucket list with cursors', async (t) => {
      const { app } = await build(t, dialect);
      const user = await signUp(app);
      const parent = await mkdir(user, 'P');
      const names = ['g', 'c', 'a', 'f', 'b', 'e', 'd'];
      for (const name of names) await mkdir(user, name, parent.id);
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const res: any = await user.api.get(`/api/folders/${parent.id}/subfolders?limit=3${cursor ? `&cursor=${cursor}` : ''}`);
        assert.equal(res.status, 200);
        assert.equal(res.body.data.total, 7);
        seen.push(...res.body.data.data.map((f: any) => f.name));
        cursor = res.body.data.nextCursor;
        pages++;
      } while (cursor);
      assert.equal(pages, 3);
      assert.deepEqual(seen, [...names].sort());
      assertErrorEnvelope(await user.api.get(`/api/folders/${parent.id}/subfolders?cursor=%%%`), 400, 'INVALID_CURSOR');
      assertErrorEnvelope(await user.api.get(`/api/folders/${parent.id}/subfolders?limit=0`), 400, 'VALIDATION_FAILED');
      assertErrorEnvelope(await user.api.get(`/api/folders/${parent.id}/subfolders?limit=1001`), 400, 'VALIDATION_FAILED');

      const all: any[] = [];
      cursor = null;
      do {
        const res: any = await user.api.get(`/api/folders/list/${user.defaultBucketId}?limit=5${cursor ? `&cursor=${cursor}` : ''}`);
        assert.equal(res.body.data.total, 8);
        all.push(...res.body.data.data);
        cursor = res.body.data.nextCursor;
      } while (cursor);
      assert.equal(new Set(all.map((f) => f.id)).size, 8);
      assert.deepEqual(all.map((f) => f.displayPath).sort(), ['/P', ...names.map((n) => `/P/${n}`)].sort());
    });
  });
}
