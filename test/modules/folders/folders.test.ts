// Folder API contract, part 1: every status code the API contract lists for the folder
// operations, the shapes of their answers, and authorization on every folder route.
// Only the HTTP API is used (no repositories), on every dialect of the run.
// Names, uniqueness, moves and paths: tree.test.ts. Totals, copy, trash, restore,
// hard delete and pagination: totals.test.ts. Racing requests: concurrency.test.ts.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { DIALECTS, build, client, signUp, type ApiResponse } from '../../helper.js';
import { assertError } from '../../support/errors.js';
import { createFolder, folderDetails, folderSnapshot } from '../../support/folders.js';
import { rootFolderId } from '../../support/files.js';

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const ID_CHARS = '0123456789abcdefghjkmnpqrstvwxyz';

/** A well-formed id nobody holds: `fld_` + 26 characters of the id alphabet. */
function randomUnknownId(prefix = 'fld'): string {
  return `${prefix}_${Array.from(randomBytes(26), (b) => ID_CHARS[b % 32]).join('')}`;
}

const MALFORMED_IDS = [
  'not-an-id',
  'fld_short',
  `fld_${'0'.repeat(27)}`, // one character too many
  `fld_${'u'.repeat(26)}`, // "u" is not in the id alphabet
  `FLD_${'0'.repeat(26)}`,
  `bkt_${'0'.repeat(26)}`, // well-formed, but not a folder id
];

const DETAIL_FIELDS: Record<string, 'string' | 'integer' | 'boolean' | 'string|null' | 'null'> = {
  id: 'string',
  name: 'string',
  visibility: 'string',
  createdAt: 'string',
  updatedAt: 'string',
  lastAccessAt: 'string|null',
  totalFiles: 'integer',
  totalSubfolders: 'integer',
  totalSizeByte: 'integer',
  sharedUsersCount: 'integer',
  ownerFolder: 'null',
  displayPath: 'string',
  locationLabel: 'string',
  parentId: 'string',
  parentName: 'string',
  isRoot: 'boolean',
  accessUrl: 'string',
  shareUrl: 'string',
};

const LIST_ITEM_FIELDS = ['id', 'bucketId', 'parentId', 'hashUrl', 'name', 'visibility', 'isDelete', 'createdAt', 'updatedAt', 'deletedAt'];

function assertType(value: unknown, type: string, field: string) {
  switch (type) {
    case 'integer':
      assert.equal(typeof value, 'number', `${field} is a number`);
      assert.ok(Number.isInteger(value), `${field} is an integer`);
      break;
    case 'string|null':
      assert.ok(value === null || typeof value === 'string', `${field} is a string or null`);
      break;
    case 'null':
      assert.equal(value, null, `${field} is null`);
      break;
    default:
      assert.equal(typeof value, type, `${field} is a ${type}`);
  }
}

/** Every field of the Folder detail table is there with its JSON type. */
function assertFolderDetail(d: any) {
  assert.equal(typeof d, 'object');
  assert.notEqual(d, null);
  for (const [field, type] of Object.entries(DETAIL_FIELDS)) {
    assert.ok(Object.hasOwn(d, field), `detail has ${field}`);
    assertType(d[field], type, field);
  }
  assert.ok(['private', 'public'].includes(d.visibility), d.visibility);
  assert.match(d.createdAt, ISO_MS);
  assert.match(d.updatedAt, ISO_MS);
  if (d.lastAccessAt !== null) assert.match(d.lastAccessAt, ISO_MS);
  assert.match(d.locationLabel, /^.+ \([a-z]{2}-[a-z]+\)$/);
  assert.equal(d.accessUrl, `/folders/details/${d.id}`);
  assert.equal(d.shareUrl, `/folders/share/${d.id}`);
  for (const field of ['totalFiles', 'totalSubfolders', 'totalSizeByte', 'sharedUsersCount']) assert.ok(d[field] >= 0, field);
}

/** Every field of the Folder list item table is there with its JSON type. */
function assertListItem(item: any) {
  for (const field of LIST_ITEM_FIELDS) assert.ok(Object.hasOwn(item, field), `list item has ${field}`);
  for (const field of ['id', 'bucketId', 'parentId', 'hashUrl', 'name', 'visibility', 'createdAt', 'updatedAt']) {
    assert.equal(typeof item[field], 'string', field);
  }
  assert.equal(typeof item.isDelete, 'boolean');
  assert.ok(item.deletedAt === null || ISO_MS.test(item.deletedAt), `deletedAt ${item.deletedAt}`);
  assert.ok(['private', 'public'].includes(item.visibility));
  assert.match(item.createdAt, ISO_MS);
  assert.match(item.updatedAt, ISO_MS);
  assert.match(item.hashUrl, /^[A-Za-z0-9_-]{22,}$/, 'hashUrl is URL-safe, at least 128 bits');
}

/** A raw request, for tokens and headers the helper client does not send. */
async function raw(
  app: FastifyInstance,
  method: string,
  url: string,
  headers: Record<string, string>,
  body?: unknown,
): Promise<ApiResponse> {
  const res = await app.inject({ method: method as any, url, headers, ...(body !== undefined ? { payload: body as any } : {}) });
  return { status: res.statusCode, body: res.body ? res.json() : undefined, headers: res.headers };
}

for (const dialect of DIALECTS) {
  describe(`folder API: statuses and shapes [${dialect}]`, () => {
    it('create: 201 with the folder detail in the envelope', async (t) => {
      const { app } = await build(t, dialect);
      const user = await signUp(app);
      const root = await rootFolderId(user);
      const res = await user.api.post(`/api/folders/create/${user.defaultBucketId}`, { name: 'Documents' });
      assert.equal(res.status, 201);
      assert.equal(res.body.status, 201);
      assert.equal(typeof res.body.message, 'string');
      const d = res.body.data;
      assertFolderDetail(d);
      assert.match(d.id, /^fld_[0-9a-hjkmnp-tv-z]{26}$/);
      assert.equal(d.name, 'Documents');
      assert.equal(d.visibility, 'private', 'private by default');
      assert.equal(d.parentId, root, 'without parentId: under the root');
      assert.equal(d.displayPath, '/Documents');
      assert.equal(d.isRoot, false);
      assert.equal(d.totalSubfolders, 0);
      assert.equal(d.totalFiles, 0);
      assert.equal(d.totalSizeByte, 0);
      assert.equal(d.lastAccessAt, null, 'never accessed yet');
      const pub = await createFolder(user, 'Public', undefined, { visibility: 'public' });
      assert.equal(pub.visibility, 'public');
      assert.equal((await folderDetails(user, pub.id)).visibility, 'public');
      // Validation of the create body.
      assertError(await user.api.post(`/api/folders/create/${user.defaultBucketId}`, {}), 400, 'VALIDATION_FAILED');
      assertError(
        await user.api.post(`/api/folders/create/${user.defaultBucketId}`, { name: 'x', visibility: 'secret' }),
        400,
        'VALIDATION_FAILED',
      );
      assertError(await user.api.post(`/api/folders/create/${user.defaultBucketId}`, { name: 'x', parentId: 'nope' }), 400, 'INVALID_ID');
      assertError(
        await user.api.post(`/api/folders/create/${user.defaultBucketId}`, { name: 'x', parentId: randomUnknownId() }),
        404,
        'FOLDER_NOT_FOUND',
      );
      assertError(await user.api.post(`/api/folders/create/${randomUnknownId('bkt')}`, { name: 'x' }), 404, 'BUCKET_NOT_FOUND');
      assertError(await user.api.post('/api/folders/create/bkt_nope', { name: 'x' }), 400, 'INVALID_ID');
      const top = await user.api.get('/api/folders/root/subfolders');
      assert.deepEqual(
        top.body.data.data.map((f: any) => f.name),
        ['Documents', 'Public'],
        'the refused creates created nothing',
      );
    });

    it('details: 200, the envelope holds every field of the Folder detail table with its type', async (t) => {
      const { app } = await build(t, dialect);
      const user = await signUp(app);
      const a = await createFolder(user, 'Documents');
      const b = await createFolder(user, '2026', a.id);
      const res = await user.api.get(`/api/folders/details/${b.id}`);
      assert.equal(res.status, 200);
      assert.deepEqual(Object.keys(res.body).sort(), ['data', 'message', 'status']);
      assert.equal(res.body.status, 200);
      assert.equal(typeof res.body.message, 'string');
      const d = res.body.data;
      assertFolderDetail(d);
      assert.equal(d.id, b.id);
      assert.equal(d.name, '2026');
      assert.equal(d.visibility, 'private');
      assert.equal(d.ownerFolder, null, 'own folder');
      assert.equal(d.displayPath, '/Documents/2026');
      assert.equal(d.parentId, a.id);
      assert.equal(d.parentName, 'Documents');
      assert.equal(d.isRoot, false);
      assert.equal(d.locationLabel, 'Paris (fr-par)');
      assert.equal(d.accessUrl, `/folders/details/${b.id}`);
      assert.equal(d.shareUrl, `/folders/share/${b.id}`);
      assert.equal(d.totalFiles, 0);
      assert.equal(d.totalSubfolders, 0);
      assert.equal(d.totalSizeByte, 0);
      assert.equal(d.sharedUsersCount, 0);
      assert.equal(d.createdAt, b.createdAt);
      assert.ok(Date.parse(d.updatedAt) >= Date.parse(d.createdAt));
      // Reading the details is an access: by the next read at the latest, lastAccessAt is set.
      const again = await folderDetails(user, b.id);
      assert.equal(typeof again.lastAccessAt, 'string', 'reading the details is an access');
      assert.match(again.lastAccessAt, ISO_MS);
      assert.ok(Date.parse(again.lastAccessAt) >= Date.parse(d.createdAt));
      assert.ok(Date.parse(again.lastAccessAt) <= Date.now() + 1000);
      const parent = await folderDetails(user, a.id);
      assert.equal(parent.totalSubfolders, 1);
      const root = await folderDetails(user, parent.parentId);
      assert.equal(root.isRoot, true);
      assert.equal(parent.parentName, root.name, "a top-level folder: parentName is the root's name");
      assert.equal(parent.displayPath, '/Documents', "the root's name is not part of paths");
    });

    it('details: the root folder is "/", isRoot, with an empty parentId and parentName', async (t) => {
      const { app } = await build(t, dialect);
      const user = await signUp(app);
      const rootId = await rootFolderId(user);
      const root = await folderDetails(user, rootId);
      assertFolderDetail(root);
      assert.equal(root.isRoot, true);
      assert.equal(root.displayPath, '/');
      assert.equal(root.parentId, '');
      assert.equal(root.parentName, '');
      assert.equal(root.totalSubfolders, 0);
      const a = await createFolder(user, 'A');
      assert.equal(a.isRoot, false);
      assert.equal(a.parentId, rootId);
      assert.equal((await folderDetails(user, rootId)).totalSubfolders, 1);
    });

    it("details: 401 without a token, with a bad token, and for another user's folder; 404 unknown; 400 malformed", async (t) => {
      const { app } = await build(t, dialect);
      const owner = await signUp(app);
      const other = await signUp(app);
      const folder = await createFolder(owner, 'Secret plans');
      const url = `/api/folders/details/${folder.id}`;
      assertError(await client(app).get(url), 401, 'UNAUTHENTICATED');
      assertError(await client(app, 'cof_not-a-token').get(url), 401, 'UNAUTHENTICATED');
      assertError(await raw(app, 'GET', url, { authorization: `Basic ${owner.token}` }), 401, 'UNAUTHENTICATED');
      assertError(await raw(app, 'GET', url, { authorization: 'Bearer' }), 401, 'UNAUTHENTICATED');
      const denied = await other.api.get(url);
      assertError(denied, 401, 'FOLDER_ACCESS_DENIED');
      assert.ok(!JSON.stringify(denied.body).includes('Secret plans'), 'nothing of the folder leaks');
      assertError(await owner.api.get(`/api/folders/details/${randomUnknownId()}`), 404, 'FOLDER_NOT_FOUND');
      assertError(await other.api.get(`/api/folders/details/${randomUnknownId()}`), 404, 'FOLDER_NOT_FOUND');
      for (const bad of MALFORMED_IDS) {
        assertError(await owner.api.get(`/api/folders/details/${bad}`), 400, 'INVALID_ID');
      }
      // A token that was signed out no longer works.
      const leaving = await signUp(app);
      const mine = await createFolder(leaving, 'Mine');
      assert.equal((await leaving.api.post('/api/auth/logout')).status, 200);
      assertError(await leaving.api.get(`/api/folders/details/${mine.id}`), 401, 'UNAUTHENTICATED');
      // The owner still reads it.
      assert.equal((await folderDetails(owner, folder.id)).name, 'Secret plans');
    });

    it('details: a trashed folder stays readable by its owner, with isDelete and deletedAt', async (t) => {
      const { app } = await build(t, dialect);
      const user = await signUp(app);
      const other = await signUp(app);
      const a = await createFolder(user, 'A');
      const b = await createFolder(user, 'B', a.id);
      const live = await folderDetails(user, a.id);
      assert.equal(live.isDelete, false);
      assert.equal(live.deletedAt, null);
      const before = Date.now();
      assert.equal((await user.api.delete(`/api/folders/delete/${a.id}`)).status, 200);
      for (const id of [a.id, b.id]) {
        const d = await folderDetails(user, id);
        assertFolderDetail(d);
        assert.equal(d.isDelete, true, `${id} is in the trash`);
        assert.match(d.deletedAt, ISO_MS);
        assert.ok(Date.parse(d.deletedAt) >= before - 1000);
      }
      assert.equal((await folderDetails(user, b.id)).displayPath, '/A/B');
      assertError(await other.api.get(`/api/folders/details/${a.id}`), 401, 'FOLDER_ACCESS_DENIED');
      // Restoring a live folder is refused.
      const c = await createFolder(user, 'C');
      assertError(await user.api.post(`/api/folders/restore/${c.id}`), 409, 'NOT_IN_TRASH');
      assert.equal((await folderDetails(user, c.id)).isDelete, false);
      assertError(await user.api.post(`/api/folders/restore/${randomUnknownId()}`), 404, 'FOLDER_NOT_FOUND');
      assertError(await user.api.post('/api/folders/restore/garbage'), 400, 'INVALID_ID');
    });

    it("subfolders: 200, the envelope with data, total and parentFolder; root is the default bucket's top level", async (t) => {
      const { app } = await build(t, dialect);
      const owner = await signUp(app);
      const rootId = await rootFolderId(owner);
      const b = await createFolder(owner, 'B');
      const a = await createFolder(owner, 'A', undefined, { visibility: 'public' });
      const child = await createFolder(owner, 'child', a.id);
      const top = await owner.api.get('/api/folders/root/subfolders');
      assert.equal(top.status, 200);
      assert.equal(top.body.status, 200);
      assert.equal(typeof top.body.message, 'string');
      const page = top.body.data;
      assert.ok(Array.isArray(page.data));
      assert.deepEqual(
        page.data.map((f: any) => f.name),
        ['A', 'B'],
        'sorted by name; grandchildren not listed',
      );
      assert.equal(page.total, 2);
      assert.ok(Number.isInteger(page.total));
      assert.deepEqual(Object.keys(page.parentFolder).sort(), ['bucketId', 'id', 'name']);
      for (const field of ['id', 'name', 'bucketId']) assert.equal(typeof page.parentFolder[field], 'string', field);
      assert.equal(page.parentFolder.id, rootId);
      assert.equal(page.parentFolder.bucketId, owner.defaultBucketId);
      for (const item of page.data) {
        assertListItem(item);
        assert.equal(item.bucketId, owner.defaultBucketId);
        assert.equal(item.parentId, rootId);
        assert.equal(item.isDelete, false);
        assert.equal(item.deletedAt, null);
      }
      const [ia, ib] = page.data;
      assert.equal(ia.id, a.id);
      assert.equal(ia.visibility, 'public');
      assert.equal(ia.createdAt, a.createdAt);
      assert.equal(ib.id, b.id);
      assert.equal(ib.visibility, 'private');
      assert.notEqual(ia.hashUrl, ib.hashUrl);

      const sub = await owner.api.get(`/api/folders/${a.id}/subfolders`);
      assert.equal(sub.status, 200);
      assert.deepEqual(
        sub.body.data.data.map((f: any) => f.id),
        [child.id],
      );
      assert.equal(sub.body.data.data[0].parentId, a.id);
      assert.equal(sub.body.data.total, 1);
      assert.deepEqual(sub.body.data.parentFolder, { id: a.id, name: 'A', bucketId: owner.defaultBucketId });
      const leaf = await owner.api.get(`/api/folders/${child.id}/subfolders`);
      assert.deepEqual(leaf.body.data.data, []);
      assert.equal(leaf.body.data.total, 0);

      // The root by id and the root alias list the same; ?bucketId= names the bucket explicitly.
      const byId = await owner.api.get(`/api/folders/${rootId}/subfolders`);
      assert.deepEqual(byId.body.data.data, page.data);
      const byBucket = await owner.api.get(`/api/folders/root/subfolders?bucketId=${owner.defaultBucketId}`);
      assert.equal(byBucket.status, 200);
      assert.deepEqual(
        byBucket.body.data.data.map((f: any) => f.id),
        [a.id, b.id],
      );
    });

    it("subfolders: 401 without or with a bad token, 403 for another user's folder, 404 unknown, 400 malformed", async (t) => {
      const { app } = await build(t, dialect);
      const owner = await signUp(app);
      const other = await signUp(app);
      const a = await createFolder(owner, 'A');
      await createFolder(owner, 'Hidden child', a.id);
      for (const target of [a.id, 'root']) {
        assertError(await client(app).get(`/api/folders/${target}/subfolders`), 401, 'UNAUTHENTICATED');
        assertError(await client(app, 'cof_bad').get(`/api/folders/${target}/subfolders`), 401, 'UNAUTHENTICATED');
      }
      const forbidden = await other.api.get(`/api/folders/${a.id}/subfolders`);
      assertError(forbidden, 403, 'FOLDER_FORBIDDEN');
      assert.ok(!JSON.stringify(forbidden.body).includes('Hidden child'));
      assertError(await other.api.get(`/api/folders/${await rootFolderId(owner)}/subfolders`), 403, 'FOLDER_FORBIDDEN');
      assertError(await owner.api.get(`/api/folders/${randomUnknownId()}/subfolders`), 404, 'FOLDER_NOT_FOUND');
      for (const bad of MALFORMED_IDS) {
        assertError(await owner.api.get(`/api/folders/${bad}/subfolders`), 400, 'INVALID_ID');
      }
      // root of another user's bucket, or of an unknown one: 404, nothing listed.
      const theirs = await other.api.get(`/api/folders/root/subfolders?bucketId=${owner.defaultBucketId}`);
      assertError(theirs, 404, 'BUCKET_NOT_FOUND');
      assertError(await owner.api.get(`/api/folders/root/subfolders?bucketId=${randomUnknownId('bkt')}`), 404, 'BUCKET_NOT_FOUND');
      // The other user's own root is theirs, and empty.
      const own = await other.api.get('/api/folders/root/subfolders');
      assert.equal(own.status, 200);
      assert.equal(own.body.data.total, 0);
      assert.equal(own.body.data.parentFolder.bucketId, other.defaultBucketId);
    });

    // Subfolder pages are written as JSON by the database (json-text.ts); the other listings by listItem.
    it("subfolders: the database-written items equal the other listings' for awkward names, across pages and in the trash", async (t) => {
      const { app } = await build(t, dialect);
      const owner = await signUp(app);
      const parent = await createFolder(owner, 'Parent "quoted"');
      const names = ['He said "hi"', 'back\\slash \\"', 'ünïcødé ✓ 😀 日本', '<script>&amp;<b>', "it's", 'é'.repeat(127)];
      for (const name of names) await createFolder(owner, name, parent.id, name === "it's" ? { visibility: 'public' } : {});
      const pages: any[] = [];
      let cursor: string | null = null;
      do {
        const res = await owner.api.get(`/api/folders/${parent.id}/subfolders?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
        assert.equal(res.status, 200, JSON.stringify(res.body));
        assert.match(res.headers['content-type'] as string, /^application\/json; charset=utf-8$/);
        assert.deepEqual(Object.keys(res.body.data).sort(), ['data', 'nextCursor', 'parentFolder', 'total']);
        assert.equal(res.body.data.total, names.length);
        assert.deepEqual(res.body.data.parentFolder, { id: parent.id, name: 'Parent "quoted"', bucketId: owner.defaultBucketId });
        pages.push(...res.body.data.data);
        cursor = res.body.data.nextCursor;
      } while (cursor);
      assert.deepEqual(
        pages.map((f) => f.name),
        [...names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)),
        'every name once, by name',
      );
      const listed = await owner.api.get(`/api/folders/list/${owner.defaultBucketId}?limit=1000`);
      const fromBucket = new Map(listed.body.data.data.map(({ displayPath: _path, ...item }: any) => [item.id, item]));
      for (const item of pages) {
        assertListItem(item);
        assert.deepEqual(Object.keys(item), LIST_ITEM_FIELDS, 'the fields in the documented order');
        assert.deepEqual(item, fromBucket.get(item.id), item.name);
      }

      // A trashed folder's subfolders list as trashed, with the folder's deletion time.
      assert.equal((await owner.api.delete(`/api/folders/delete/${parent.id}`)).status, 200);
      const trashed = await owner.api.get(`/api/folders/${parent.id}/subfolders`);
      assert.equal(trashed.status, 200, JSON.stringify(trashed.body));
      const deletedAt = (await folderDetails(owner, parent.id)).deletedAt;
      assert.match(deletedAt, ISO_MS);
      assert.deepEqual(
        trashed.body.data.data,
        pages.map((item) => ({ ...item, isDelete: true, deletedAt })),
      );
    });

    // docs/api.md: "A malformed id is 400 (INVALID_ID)", in the query string as in a path or a body.
    it('subfolders: a malformed ?bucketId= is 400 INVALID_ID', async (t) => {
      const { app } = await build(t, dialect);
      const owner = await signUp(app);
      const res = await owner.api.get('/api/folders/root/subfolders?bucketId=nope');
      assertError(res, 400, 'INVALID_ID');
    });

    it('update: 200 with exactly {}; form A (isPrivate) and form B (visibility) both work', async (t) => {
      const { app } = await build(t, dialect);
      const owner = await signUp(app);
      const f = await createFolder(owner, 'Old');
      const created = await folderDetails(owner, f.id);

      // Form A: name required, isPrivate false = public.
      let res = await owner.api.put(`/api/folders/update/${f.id}`, { name: 'New', isPrivate: false });
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, {});
      let d = await folderDetails(owner, f.id);
      assert.equal(d.name, 'New');
      assert.equal(d.visibility, 'public');
      assert.equal(d.displayPath, '/New');
      assert.ok(Date.parse(d.updatedAt) >= Date.parse(created.updatedAt));
      assert.equal(d.createdAt, created.createdAt);

      // Form A with isPrivate true, and isShare kept optional.
      res = await owner.api.put(`/api/folders/update/${f.id}`, { name: 'New', isPrivate: true, isShare: true });
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, {});
      assert.equal((await folderDetails(owner, f.id)).visibility, 'private');

      // Form B: visibility alone keeps the name.
      res = await owner.api.put(`/api/folders/update/${f.id}`, { visibility: 'public' });
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, {});
      d = await folderDetails(owner, f.id);
      assert.equal(d.visibility, 'public');
      assert.equal(d.name, 'New');

      // Form B: name alone keeps the visibility.
      res = await owner.api.put(`/api/folders/update/${f.id}`, { name: 'Newer' });
      assert.deepEqual(res.body, {});
      d = await folderDetails(owner, f.id);
      assert.equal(d.name, 'Newer');
      assert.equal(d.visibility, 'public');

      // Both forms agreeing is fine.
      res = await owner.api.put(`/api/folders/update/${f.id}`, { visibility: 'private', isPrivate: true });
      assert.equal(res.status, 200);
      assert.equal((await folderDetails(owner, f.id)).visibility, 'private');

      // The list item shows the same.
      const top = await owner.api.get('/api/folders/root/subfolders');
      assert.equal(top.body.data.data[0].name, 'Newer');
      assert.equal(top.body.data.data[0].visibility, 'private');

      // The root's visibility may change (only its name may not).
      const rootId = await rootFolderId(owner);
      res = await owner.api.put(`/api/folders/update/${rootId}`, { visibility: 'public' });
      assert.equal(res.status, 200);
      assert.equal((await folderDetails(owner, rootId)).visibility, 'public');
    });

    it('update: 400 for an empty body, bad visibility, conflicting forms, malformed id, invalid name; 404; nothing changes', async (t) => {
      const { app } = await build(t, dialect);
      const owner = await signUp(app);
      const other = await signUp(app);
      const f = await createFolder(owner, 'Keep');
      const before = await folderSnapshot(owner, [f.id]);
      const url = `/api/folders/update/${f.id}`;
      assertError(await owner.api.put(url, {}), 400, 'EMPTY_UPDATE');
      assertError(await owner.api.put(url, { unknownField: 'x' }), 400, 'EMPTY_UPDATE');
      assertError(await owner.api.put(url, { visibility: 'secret' }), 400, 'VALIDATION_FAILED');
      assertError(await owner.api.put(url, { name: 'x', visibility: 'PUBLIC' }), 400, 'VALIDATION_FAILED');
      assertError(await owner.api.put(url, { visibility: 'public', isPrivate: true }), 400, 'VISIBILITY_CONFLICT');
      assertError(await owner.api.put(url, { visibility: 'private', isPrivate: false }), 400, 'VISIBILITY_CONFLICT');
      for (const bad of MALFORMED_IDS) assertError(await owner.api.put(`/api/folders/update/${bad}`, { name: 'x' }), 400, 'INVALID_ID');
      for (const name of ['', '.', '..', 'a/b', 'nul\u0000', 'é'.repeat(128)]) {
        assertError(await owner.api.put(url, { name }), 400, 'INVALID_NAME');
      }
      assertError(await owner.api.put(`/api/folders/update/${randomUnknownId()}`, { name: 'x' }), 404, 'FOLDER_NOT_FOUND');
      assertError(await other.api.put(url, { name: 'Stolen' }), 404, 'FOLDER_NOT_FOUND');
      assertError(await other.api.put(url, { visibility: 'public' }), 404, 'FOLDER_NOT_FOUND');
      assert.deepEqual(await folderSnapshot(owner, [f.id]), before);
      // The root takes its bucket's name: it cannot be renamed.
      const rootId = await rootFolderId(owner);
      const rootName = (await folderDetails(owner, rootId)).name;
      assertError(await owner.api.put(`/api/folders/update/${rootId}`, { name: 'Renamed root' }), 400, 'ROOT_FOLDER_READONLY');
      assert.equal((await folderDetails(owner, rootId)).name, rootName);
      // A trashed folder must be restored before it is changed.
      assert.equal((await owner.api.delete(`/api/folders/delete/${f.id}`)).status, 200);
      assertError(await owner.api.put(url, { name: 'Changed in trash' }), 409, 'FOLDER_IN_TRASH');
      assertError(await owner.api.put(url, { visibility: 'public' }), 409, 'FOLDER_IN_TRASH');
      const trashed = await folderDetails(owner, f.id);
      assert.equal(trashed.name, 'Keep');
      assert.equal(trashed.visibility, 'private');
    });

    it('delete: 200 with exactly {}; soft by default, trash in the query or the JSON body, hard', async (t) => {
      const { app } = await build(t, dialect);
      const owner = await signUp(app);
      const rootId = await rootFolderId(owner);
      const folders: Record<string, any> = {};
      for (const name of ['Default', 'SoftQuery', 'SoftBody', 'HardQuery', 'HardBody']) {
        folders[name] = await createFolder(owner, name);
        folders[`${name}/child`] = await createFolder(owner, 'child', folders[name].id);
      }
      const expectDeleted = async (res: ApiResponse) => {
        assert.equal(res.status, 200, JSON.stringify(res.body));
        assert.deepEqual(res.body, {});
      };
      await expectDeleted(await owner.api.delete(`/api/folders/delete/${folders.Default.id}`));
      await expectDeleted(await owner.api.delete(`/api/folders/delete/${folders.SoftQuery.id}?trash=soft`));
      await expectDeleted(await owner.api.delete(`/api/folders/delete/${folders.SoftBody.id}`, { trash: 'soft' }));
      await expectDeleted(await owner.api.delete(`/api/folders/delete/${folders.HardQuery.id}?trash=hard`));
      await expectDeleted(await owner.api.delete(`/api/folders/delete/${folders.HardBody.id}`, { trash: 'hard' }));

      for (const name of ['Default', 'SoftQuery', 'SoftBody']) {
        for (const id of [folders[name].id, folders[`${name}/child`].id]) {
          const d = await folderDetails(owner, id);
          assert.equal(d.isDelete, true, `${name}: soft delete puts it in the trash`);
          assert.match(d.deletedAt, ISO_MS);
        }
      }
      for (const name of ['HardQuery', 'HardBody']) {
        for (const id of [folders[name].id, folders[`${name}/child`].id]) {
          assertError(await owner.api.get(`/api/folders/details/${id}`), 404, 'FOLDER_NOT_FOUND');
        }
      }
      const top = await owner.api.get('/api/folders/root/subfolders');
      assert.equal(top.body.data.total, 0);
      assert.deepEqual(top.body.data.data, []);
      assert.equal((await folderDetails(owner, rootId)).totalSubfolders, 0);
      // Soft-deleted folders can come back; hard-deleted ones cannot.
      assert.equal((await owner.api.post(`/api/folders/restore/${folders.SoftBody.id}`)).status, 200);
      assertError(await owner.api.post(`/api/folders/restore/${folders.HardBody.id}`), 404, 'FOLDER_NOT_FOUND');
      // Deleting again: a trashed folder is already in the trash (200); a hard-deleted one is gone (404).
      await expectDeleted(await owner.api.delete(`/api/folders/delete/${folders.Default.id}`));
      assertError(await owner.api.delete(`/api/folders/delete/${folders.HardQuery.id}`), 404, 'FOLDER_NOT_FOUND');
      // A trashed folder can then be deleted for good.
      await expectDeleted(await owner.api.delete(`/api/folders/delete/${folders.Default.id}?trash=hard`));
      assertError(await owner.api.get(`/api/folders/details/${folders.Default.id}`), 404, 'FOLDER_NOT_FOUND');
      assertError(await owner.api.get(`/api/folders/details/${folders['Default/child'].id}`), 404, 'FOLDER_NOT_FOUND');
    });

    it("delete: 400 for an invalid trash value (query and body) or a malformed id; 404 unknown or another user's; nothing changes", async (t) => {
      const { app } = await build(t, dialect);
      const owner = await signUp(app);
      const other = await signUp(app);
      const a = await createFolder(owner, 'A');
      const b = await createFolder(owner, 'B', a.id);
      const rootId = await rootFolderId(owner);
      const before = await folderSnapshot(owner, [rootId, a.id, b.id]);
      const url = `/api/folders/delete/${a.id}`;
      for (const value of ['maybe', 'HARD', 'Soft', '', 'hard ']) {
        assertError(await owner.api.delete(`${url}?trash=${encodeURIComponent(value)}`), 400, 'INVALID_TRASH_MODE');
        assertError(await owner.api.delete(url, { trash: value }), 400, 'INVALID_TRASH_MODE');
      }
      for (const value of [1, true, null, ['hard'], { mode: 'hard' }]) {
        assertError(await owner.api.delete(url, { trash: value }), 400, 'INVALID_TRASH_MODE');
      }
      assertError(await owner.api.delete(`${url}?trash=soft`, { trash: 'hard' }), 400, 'INVALID_TRASH_MODE');
      for (const bad of MALFORMED_IDS) assertError(await owner.api.delete(`/api/folders/delete/${bad}`), 400, 'INVALID_ID');
      assertError(await owner.api.delete(`/api/folders/delete/${randomUnknownId()}`), 404, 'FOLDER_NOT_FOUND');
      assertError(await owner.api.delete(`/api/folders/delete/${randomUnknownId()}?trash=hard`), 404, 'FOLDER_NOT_FOUND');
      assertError(await other.api.delete(url), 404, 'FOLDER_NOT_FOUND');
      assertError(await other.api.delete(`${url}?trash=hard`), 404, 'FOLDER_NOT_FOUND');
      assertError(await other.api.delete(url, { trash: 'hard' }), 404, 'FOLDER_NOT_FOUND');
      assertError(await owner.api.delete(`/api/folders/delete/${rootId}`), 400, 'ROOT_FOLDER_READONLY');
      assertError(await owner.api.delete(`/api/folders/delete/${rootId}?trash=hard`), 400, 'ROOT_FOLDER_READONLY');
      assert.deepEqual(await folderSnapshot(owner, [rootId, a.id, b.id]), before, 'the refused deletes changed nothing');
      assert.equal((await folderDetails(owner, a.id)).isDelete, false);
    });

    it('authorizes every folder route: 401 without or with a bad token; another user gets 401/403/404 and changes nothing', async (t) => {
      const { app } = await build(t, dialect);
      const owner = await signUp(app);
      const other = await signUp(app);
      const a = await createFolder(owner, 'A');
      const b = await createFolder(owner, 'B', a.id);
      const trashed = await createFolder(owner, 'Trashed');
      assert.equal((await owner.api.delete(`/api/folders/delete/${trashed.id}`)).status, 200);
      const ownerRoot = await rootFolderId(owner);
      const otherRoot = await rootFolderId(other);
      const otherFolder = await createFolder(other, 'Theirs');
      const ids = [ownerRoot, a.id, b.id, trashed.id];
      const before = await folderSnapshot(owner, ids);
      const otherBefore = await folderSnapshot(other, [otherRoot, otherFolder.id]);

      type Route = { method: string; url: string; body?: unknown; status: number; code: string };
      const routes: Route[] = [
        { method: 'POST', url: `/api/folders/create/${owner.defaultBucketId}`, body: { name: 'x' }, status: 404, code: 'BUCKET_NOT_FOUND' },
        {
          method: 'POST',
          url: `/api/folders/create/${owner.defaultBucketId}`,
          body: { name: 'x', parentId: a.id },
          status: 404,
          code: 'BUCKET_NOT_FOUND',
        },
        {
          method: 'POST',
          url: `/api/folders/create/${other.defaultBucketId}`,
          body: { name: 'x', parentId: a.id },
          status: 404,
          code: 'FOLDER_NOT_FOUND',
        },
        { method: 'PUT', url: `/api/folders/update/${a.id}`, body: { name: 'x' }, status: 404, code: 'FOLDER_NOT_FOUND' },
        { method: 'PUT', url: `/api/folders/update/${a.id}`, body: { isPrivate: false }, status: 404, code: 'FOLDER_NOT_FOUND' },
        { method: 'DELETE', url: `/api/folders/delete/${a.id}`, status: 404, code: 'FOLDER_NOT_FOUND' },
        { method: 'DELETE', url: `/api/folders/delete/${b.id}?trash=hard`, status: 404, code: 'FOLDER_NOT_FOUND' },
        { method: 'DELETE', url: `/api/folders/delete/${trashed.id}`, body: { trash: 'hard' }, status: 404, code: 'FOLDER_NOT_FOUND' },
        { method: 'GET', url: `/api/folders/details/${a.id}`, status: 401, code: 'FOLDER_ACCESS_DENIED' },
        { method: 'GET', url: `/api/folders/details/${trashed.id}`, status: 401, code: 'FOLDER_ACCESS_DENIED' },
        { method: 'GET', url: `/api/folders/${a.id}/subfolders`, status: 403, code: 'FOLDER_FORBIDDEN' },
        { method: 'GET', url: `/api/folders/${ownerRoot}/subfolders`, status: 403, code: 'FOLDER_FORBIDDEN' },
        { method: 'GET', url: `/api/folders/root/subfolders?bucketId=${owner.defaultBucketId}`, status: 404, code: 'BUCKET_NOT_FOUND' },
        { method: 'GET', url: `/api/folders/list/${owner.defaultBucketId}`, status: 404, code: 'BUCKET_NOT_FOUND' },
        // Move or copy the owner's folder into the caller's tree, or the caller's into the owner's.
        { method: 'POST', url: `/api/folders/move/${a.id}`, body: { targetParentId: otherRoot }, status: 404, code: 'FOLDER_NOT_FOUND' },
        { method: 'POST', url: `/api/folders/move/${b.id}`, body: { targetParentId: ownerRoot }, status: 404, code: 'FOLDER_NOT_FOUND' },
        {
          method: 'POST',
          url: `/api/folders/move/${otherFolder.id}`,
          body: { targetParentId: a.id },
          status: 404,
          code: 'FOLDER_NOT_FOUND',
        },
        { method: 'POST', url: `/api/folders/copy/${a.id}`, body: { targetParentId: otherRoot }, status: 404, code: 'FOLDER_NOT_FOUND' },
        {
          method: 'POST',
          url: `/api/folders/copy/${a.id}`,
          body: { targetParentId: otherRoot, name: 'Loot' },
          status: 404,
          code: 'FOLDER_NOT_FOUND',
        },
        {
          method: 'POST',
          url: `/api/folders/copy/${otherFolder.id}`,
          body: { targetParentId: a.id },
          status: 404,
          code: 'FOLDER_NOT_FOUND',
        },
        { method: 'POST', url: `/api/folders/restore/${trashed.id}`, status: 404, code: 'FOLDER_NOT_FOUND' },
      ];
      const covered = new Set(
        routes.map(
          (r) =>
            `${r.method} ${
              r.url
                .replace(/\/(fld|bkt)_[0-9a-z]{26}/g, '/:id')
                .replace(/\/root\//, '/:id/')
                .split('?')[0]
            }`,
        ),
      );
      for (const route of [
        'POST /api/folders/create/:id',
        'PUT /api/folders/update/:id',
        'DELETE /api/folders/delete/:id',
        'GET /api/folders/details/:id',
        'GET /api/folders/:id/subfolders',
        'GET /api/folders/list/:id',
        'POST /api/folders/move/:id',
        'POST /api/folders/copy/:id',
        'POST /api/folders/restore/:id',
      ])
        assert.ok(covered.has(route), `${route} is covered`);

      const headersFor = (token?: string): Record<string, string> => (token !== undefined ? { authorization: `Bearer ${token}` } : {});
      for (const route of routes) {
        const label = `${route.method} ${route.url}`;
        for (const token of [undefined, 'cof_bad-token', `${owner.token}x`, '']) {
          const res = await raw(app, route.method, route.url, headersFor(token), route.body);
          assertError(res, 401, 'UNAUTHENTICATED', `${label} with ${token === undefined ? 'no token' : `token "${token}"`}`);
        }
        const res = await raw(app, route.method, route.url, headersFor(other.token), route.body);
        assertError(res, route.status, route.code, `${label} as another user`);
      }
      // Nothing changed for either user.
      assert.deepEqual(await folderSnapshot(owner, ids), before, "the owner's folders are unchanged");
      assert.deepEqual(await folderSnapshot(other, [otherRoot, otherFolder.id]), otherBefore, "the other user's folders are unchanged");
      assert.equal((await folderDetails(owner, trashed.id)).isDelete, true, 'still in the trash');
      assert.equal((await folderDetails(owner, a.id)).isDelete, false, 'still live');
      // And the owner can still do everything.
      assert.equal((await owner.api.post(`/api/folders/restore/${trashed.id}`)).status, 200);
      assert.equal((await owner.api.post(`/api/folders/copy/${b.id}`, { targetParentId: ownerRoot })).status, 201);
    });
  });
}
