// Per-user permissions (docs/api.md): the 201/200 rules of granting, all-or-nothing grants,
// inheritance down a folder's subtree, revocation, /shared-with-me, sharedUsersCount, and where an
// editor's uploads are counted. Which route needs which permission: matrix.test.ts.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS, build, client, signUp, type TestUser } from '../../helper.js';
import { putFile, rootFolderId, unknownId } from '../../support/files.js';
import { assertError } from '../../support/errors.js';
import { createFolder, assertStatus } from '../../support/folders.js';

const flagsOf = (p: { canView: boolean; canDownload: boolean; canEdit: boolean }) => ({
  canView: p.canView,
  canDownload: p.canDownload,
  canEdit: p.canEdit,
});

for (const dialect of DIALECTS) {
  describe(`per-user permissions [${dialect}]`, () => {
    it('PUT /files/shared: 201 when any permission is created, 200 when all are updated, createOrUpdate:false only updates', async (t) => {
      const { app } = await build(t, dialect);
      const [owner, bob, carol, dave] = [
        await signUp(app, 'Owner'),
        await signUp(app, 'Bob'),
        await signUp(app, 'Carol'),
        await signUp(app, 'Dave'),
      ];
      const file = await putFile(app, owner, await rootFolderId(owner), 'report.txt', 'hello');

      const created = await owner.api.put(`/api/files/shared/${file.id}/${bob.id}`, {});
      assertStatus(created, 201, 'first grant');
      assert.equal(created.body.status, 201);
      assert.equal(created.body.data.length, 1);
      assert.equal(created.body.data[0].userId, bob.id);
      assert.deepEqual(flagsOf(created.body.data[0]), { canView: true, canDownload: true, canEdit: false }, 'the defaults');

      const updated = await owner.api.put(`/api/files/shared/${file.id}/${bob.id}`, { canEdit: true });
      assertStatus(updated, 200, 'same user again');
      assert.deepEqual(flagsOf(updated.body.data[0]), { canView: true, canDownload: true, canEdit: true });
      assert.equal(updated.body.data[0].createdAt, created.body.data[0].createdAt, 'an update keeps the creation time');

      const mixed = await owner.api.put(`/api/files/shared/${file.id}/${bob.id},${carol.id}`, { canDownload: false });
      assertStatus(mixed, 201, 'one of two is new');
      assert.deepEqual(
        mixed.body.data.map((p: any) => [p.userId, p.canDownload]),
        [
          [bob.id, false],
          [carol.id, false],
        ],
      );

      // createOrUpdate:false on a user without a permission: 404, and the other user's stays as it was.
      assertError(
        await owner.api.put(`/api/files/shared/${file.id}/${bob.id},${dave.id}`, { canDownload: true, createOrUpdate: false }),
        404,
        'PERMISSION_NOT_FOUND',
      );
      const onlyUpdate = await owner.api.put(`/api/files/shared/${file.id}/${bob.id},${carol.id}`, {
        canView: true,
        canDownload: true,
        canEdit: false,
        createOrUpdate: false,
      });
      assertStatus(onlyUpdate, 200, 'createOrUpdate:false on existing permissions');

      const users = await owner.api.get(`/api/files/share-users/${file.id}`);
      assertStatus(users, 200);
      assert.deepEqual(
        users.body.data.map((u: any) => ({ userId: u.userId, email: u.email, name: u.name, ...flagsOf(u) })),
        [
          { userId: bob.id, email: bob.email, name: 'Bob', canView: true, canDownload: true, canEdit: false },
          { userId: carol.id, email: carol.email, name: 'Carol', canView: true, canDownload: true, canEdit: false },
        ],
        'dave got nothing; bob and carol hold the last update',
      );
      assert.match(users.body.data[0].createdAt, /^\d{4}-\d{2}-\d{2}T/);

      // Every body field has a default: a PUT without any body grants the defaults.
      const bare = await app.inject({
        method: 'PUT',
        url: `/api/files/shared/${file.id}/${dave.id}`,
        headers: { authorization: `Bearer ${owner.token}` },
      });
      assert.equal(bare.statusCode, 201, bare.body);
      assert.deepEqual(flagsOf(bare.json().data[0]), { canView: true, canDownload: true, canEdit: false });
    });

    it('an unknown user is 404 USER_NOT_FOUND and changes nothing; self, malformed ids, roots and non-owners are refused', async (t) => {
      const { app } = await build(t, dialect);
      const [owner, bob, carol] = [await signUp(app, 'Owner'), await signUp(app, 'Bob'), await signUp(app, 'Carol')];
      const folder = await createFolder(owner, 'Shared');
      const file = await putFile(app, owner, folder.id, 'a.txt', 'a');
      assertStatus(await owner.api.put(`/api/files/shared/${file.id}/${bob.id}`, { canEdit: false }), 201);
      assertStatus(await owner.api.post(`/api/folders/share-users/${folder.id}`, { users: [{ userId: bob.id, canEdit: false }] }), 201);
      const before = [
        (await owner.api.get(`/api/files/share-users/${file.id}`)).body.data,
        (await owner.api.get(`/api/folders/share-users/${folder.id}`)).body.data,
      ];

      const ghost = unknownId('usr');
      assertError(
        await owner.api.put(`/api/files/shared/${file.id}/${carol.id},${bob.id},${ghost}`, { canEdit: true }),
        404,
        'USER_NOT_FOUND',
      );
      assertError(
        await owner.api.post(`/api/folders/share-users/${folder.id}`, {
          users: [{ userId: carol.id }, { userId: bob.id, canEdit: true }, { userId: ghost }],
        }),
        404,
        'USER_NOT_FOUND',
      );
      const after = [
        (await owner.api.get(`/api/files/share-users/${file.id}`)).body.data,
        (await owner.api.get(`/api/folders/share-users/${folder.id}`)).body.data,
      ];
      assert.deepEqual(after, before, 'neither carol was added nor bob changed');
      assertError(await carol.api.get(`/api/files/details/${file.id}`), 404, 'FILE_NOT_FOUND');

      assertError(await owner.api.put(`/api/files/shared/${file.id}/${owner.id}`, {}), 400, 'SHARE_WITH_SELF');
      assertError(await owner.api.post(`/api/folders/share-users/${folder.id}`, { users: [{ userId: owner.id }] }), 400, 'SHARE_WITH_SELF');
      assertError(await owner.api.put(`/api/files/shared/${file.id}/${bob.id},not-a-user`, {}), 400, 'INVALID_ID');
      assertError(await owner.api.put(`/api/files/shared/${unknownId('fil')}/${bob.id}`, {}), 404, 'FILE_NOT_FOUND');
      assertError(
        await owner.api.post(`/api/folders/share-users/${await rootFolderId(owner)}`, { users: [{ userId: bob.id }] }),
        400,
        'ROOT_FOLDER_READONLY',
      );
      assertError(await owner.api.delete(`/api/folders/share-users/${folder.id}/${carol.id}`), 404, 'PERMISSION_NOT_FOUND');

      // Bob holds a permission, even canEdit, but managing permissions stays with the owner.
      assertStatus(await owner.api.put(`/api/files/shared/${file.id}/${bob.id}`, { canEdit: true }), 200);
      assertError(await bob.api.put(`/api/files/shared/${file.id}/${carol.id}`, {}), 404, 'FILE_NOT_FOUND');
      assertError(await bob.api.get(`/api/files/share-users/${file.id}`), 404, 'FILE_NOT_FOUND');
      assertError(await bob.api.delete(`/api/folders/share-users/${folder.id}/${bob.id}`), 404, 'FOLDER_NOT_FOUND');
      assertError(await bob.api.delete(`/api/files/delete/${file.id}?trash=hard`), 404, 'FILE_NOT_FOUND');
      assertStatus(await bob.api.get(`/api/files/details/${file.id}`), 200, 'bob still sees the file');
    });

    it('a permission on a folder covers its subtree; permissions add up; revoking takes effect at once', async (t) => {
      const { app } = await build(t, dialect);
      const [owner, bob] = [await signUp(app, 'Owner'), await signUp(app, 'Bob')];
      const a = await createFolder(owner, 'A');
      const b = await createFolder(owner, 'B', a.id);
      const c = await createFolder(owner, 'C', b.id);
      const outside = await createFolder(owner, 'Outside');
      const deep = await putFile(app, owner, c.id, 'deep.txt', 'deep content');
      const other = await putFile(app, owner, outside.id, 'other.txt', 'other');

      assertStatus(
        await owner.api.post(`/api/folders/share-users/${a.id}`, { users: [{ userId: bob.id, canView: true, canDownload: false }] }),
        201,
      );
      const seen = await bob.api.get(`/api/folders/details/${c.id}`);
      assertStatus(seen, 200, 'details three levels down');
      assert.deepEqual(seen.body.data.ownerFolder, { userId: owner.id, name: 'Owner' });
      assertStatus(await bob.api.get(`/api/files/details/${deep.id}`), 200, 'a file deep down');
      const listed = await bob.api.get(`/api/files/list/${c.id}`);
      assertStatus(listed, 200);
      assert.deepEqual(
        listed.body.data.data.map((f: any) => f.name),
        ['deep.txt'],
      );
      assert.deepEqual(
        (await bob.api.get(`/api/folders/${a.id}/subfolders`)).body.data.data.map((f: any) => f.name),
        ['B'],
      );
      assertError(await bob.api.get(`/api/files/download/${deep.id}`), 404, 'FILE_NOT_FOUND');
      assertError(await bob.api.get(`/api/folders/details/${outside.id}`), 401, 'FOLDER_ACCESS_DENIED');
      assertError(await bob.api.get(`/api/files/details/${other.id}`), 404, 'FILE_NOT_FOUND');

      // canDownload on B adds to canView on A: the union of the grants on the chain.
      assertStatus(
        await owner.api.post(`/api/folders/share-users/${b.id}`, { users: [{ userId: bob.id, canView: false, canDownload: true }] }),
        201,
      );
      const download = await bob.api.get(`/api/files/download/${deep.id}`);
      assertStatus(download, 200);
      assert.equal(download.body, 'deep content');

      // Revoking B takes the download away with the next request; A still lets bob see.
      assertStatus(await owner.api.delete(`/api/folders/share-users/${b.id}/${bob.id}`), 200);
      assertError(await bob.api.get(`/api/files/download/${deep.id}`), 404, 'FILE_NOT_FOUND');
      assertStatus(await bob.api.get(`/api/files/details/${deep.id}`), 200);
      assertStatus(await owner.api.delete(`/api/folders/share-users/${a.id}/${bob.id}`), 200);
      assertError(await bob.api.get(`/api/folders/details/${c.id}`), 401, 'FOLDER_ACCESS_DENIED');
      assertError(await bob.api.get(`/api/folders/${a.id}/subfolders`), 403, 'FOLDER_FORBIDDEN');
      assertError(await bob.api.get(`/api/files/details/${deep.id}`), 404, 'FILE_NOT_FOUND');
      assertError(await owner.api.delete(`/api/folders/share-users/${a.id}/${bob.id}`), 404, 'PERMISSION_NOT_FOUND');

      // A folder moved out of the shared tree leaves the permission behind.
      assertStatus(await owner.api.post(`/api/folders/share-users/${b.id}`, { users: [{ userId: bob.id }] }), 201);
      assertStatus(await bob.api.get(`/api/folders/details/${c.id}`), 200);
      assertStatus(await owner.api.post(`/api/folders/move/${c.id}`, { targetParentId: outside.id }), 200);
      assertError(await bob.api.get(`/api/folders/details/${c.id}`), 401, 'FOLDER_ACCESS_DENIED');
    });

    it('flags are separate: canEdit without canDownload renames but does not read, not even by making the file public', async (t) => {
      const { app } = await build(t, dialect);
      const [owner, bob] = [await signUp(app, 'Owner'), await signUp(app, 'Bob')];
      const file = await putFile(app, owner, await rootFolderId(owner), 'draft.txt', 'secret');
      assertStatus(
        await owner.api.put(`/api/files/shared/${file.id}/${bob.id}`, { canView: true, canDownload: false, canEdit: true }),
        201,
      );
      assertStatus(await bob.api.put(`/api/files/update/${file.id}`, { name: 'final.txt', visibility: 'private' }), 200);
      assert.equal((await owner.api.get(`/api/files/details/${file.id}`)).body.name, 'final.txt');
      assertError(await bob.api.get(`/api/files/download/${file.id}`), 404, 'FILE_NOT_FOUND');
      // Nor can an editor read it by making it public: visibility and retention are the owner's.
      assertError(await bob.api.put(`/api/files/update/${file.id}`, { name: 'final.txt', visibility: 'public' }), 404, 'FILE_NOT_FOUND');
      assertError(
        await bob.api.put(`/api/files/update/${file.id}`, { name: 'final.txt', visibility: 'private', retentionPeriod: '5Y' }),
        404,
        'FILE_NOT_FOUND',
      );
      const after = (await owner.api.get(`/api/files/details/${file.id}`)).body;
      assert.equal(after.visibility, 'private');
      assert.equal(after.retainUntil, null);
      assert.equal((await client(app).get(`/api/files/public/${after.hashName}`)).status, 404);
      assertStatus(await bob.api.delete(`/api/files/delete/${file.id}`), 200, 'soft delete is an edit');
      assert.equal((await owner.api.get(`/api/files/details/${file.id}`)).body.isDelete, true);
    });

    it("an editor uploads into the owner's tree and quota, and cannot carry items out of it", async (t) => {
      const { app } = await build(t, dialect);
      const [owner, bob] = [await signUp(app, 'Owner'), await signUp(app, 'Bob')];
      const shared = await createFolder(owner, 'Shared');
      assertStatus(await owner.api.post(`/api/folders/share-users/${shared.id}`, { users: [{ userId: bob.id, canEdit: true }] }), 201);
      const used = async (user: TestUser) => (await user.api.get('/api/storage/status')).body.data.used_bytes as number;
      const [ownerBefore, bobBefore] = [await used(owner), await used(bob)];

      const uploaded = await putFile(app, bob, shared.id, 'from-bob.bin', Buffer.alloc(3000, 7));
      assert.equal(await used(owner), ownerBefore + 3000, 'the owner pays');
      assert.equal(await used(bob), bobBefore, 'the editor does not');
      const details = await owner.api.get(`/api/folders/details/${shared.id}`);
      assert.equal(details.body.data.totalFiles, 1);
      assert.equal(details.body.data.totalSizeByte, 3000);
      const sub = await bob.api.post(`/api/folders/create/${owner.defaultBucketId}`, { name: 'By Bob', parentId: shared.id });
      assertStatus(sub, 201, 'an editor creates subfolders');
      assert.deepEqual(sub.body.data.ownerFolder, { userId: owner.id, name: 'Owner' });
      assertStatus(
        await bob.api.post(`/api/files/move/${uploaded.id}`, { targetFolderId: sub.body.data.id }),
        200,
        'a move within the shared tree',
      );

      const bobRoot = await rootFolderId(bob);
      assertError(await bob.api.post(`/api/files/move/${uploaded.id}`, { targetFolderId: bobRoot }), 400, 'INVALID_MOVE');
      assertError(await bob.api.post(`/api/folders/move/${sub.body.data.id}`, { targetParentId: bobRoot }), 400, 'INVALID_MOVE');
      const mine = await createFolder(bob, 'Mine');
      assertError(await bob.api.post(`/api/folders/move/${mine.id}`, { targetParentId: shared.id }), 400, 'INVALID_MOVE');
      // A copy is new content of the target's owner: bob copies into his own tree, and pays for it.
      const copy = await bob.api.post(`/api/files/copy/${uploaded.id}`, { targetFolderId: bobRoot });
      assertStatus(copy, 201);
      assert.equal(await used(bob), bobBefore + 3000);
    });

    it('GET /shared-with-me lists what others shared, with the permission and the owner, paginated', async (t) => {
      const { app } = await build(t, dialect);
      const [owner, bob, carol] = [await signUp(app, 'Owner'), await signUp(app, 'Bob'), await signUp(app, 'Carol')];
      const folder = await createFolder(owner, 'Projects');
      const file = await putFile(app, owner, await rootFolderId(owner), 'notes.txt', 'n');
      const carolFile = await putFile(app, carol, await rootFolderId(carol), 'carol.txt', 'c');
      assertStatus(await owner.api.post(`/api/folders/share-users/${folder.id}`, { users: [{ userId: bob.id, canEdit: true }] }), 201);
      assertStatus(await owner.api.put(`/api/files/shared/${file.id}/${bob.id}`, { canDownload: false }), 201);
      assertStatus(await carol.api.put(`/api/files/shared/${carolFile.id}/${owner.id}`, {}), 201, 'shared with someone else');

      const all = await bob.api.get('/api/shared-with-me');
      assertStatus(all, 200);
      assert.equal(all.body.data.total, 2);
      assert.equal(all.body.data.nextCursor, null);
      const [first, second] = all.body.data.data;
      assert.equal(first.itemType, 'file', 'newest first');
      assert.equal(first.itemId, file.id);
      assert.equal(first.name, 'notes.txt');
      assert.equal(first.file.id, file.id);
      assert.equal(first.folder, null);
      assert.deepEqual(first.permission, { canView: true, canDownload: false, canEdit: false });
      assert.deepEqual(first.owner, { userId: owner.id, name: 'Owner', email: owner.email });
      assert.equal(second.itemType, 'folder');
      assert.equal(second.folder.id, folder.id);
      assert.deepEqual(second.permission, { canView: true, canDownload: true, canEdit: true });

      const page1 = await bob.api.get('/api/shared-with-me?limit=1');
      assert.deepEqual(
        page1.body.data.data.map((i: any) => i.itemId),
        [file.id],
      );
      assert.equal(page1.body.data.total, 2);
      assert.ok(page1.body.data.nextCursor);
      const page2 = await bob.api.get(`/api/shared-with-me?limit=1&cursor=${encodeURIComponent(page1.body.data.nextCursor)}`);
      assert.deepEqual(
        page2.body.data.data.map((i: any) => i.itemId),
        [folder.id],
      );
      assert.equal(page2.body.data.nextCursor, null);

      assert.deepEqual((await carol.api.get('/api/shared-with-me')).body.data.data, [], 'carol received nothing');
      assert.deepEqual(
        (await owner.api.get('/api/shared-with-me')).body.data.data.map((i: any) => i.itemId),
        [carolFile.id],
      );

      // Trashed items leave the list; items deleted for good take their permissions with them.
      assertStatus(await owner.api.delete(`/api/files/delete/${file.id}`), 200);
      assert.deepEqual(
        (await bob.api.get('/api/shared-with-me')).body.data.data.map((i: any) => i.itemId),
        [folder.id],
      );
      assertStatus(await owner.api.delete(`/api/folders/delete/${folder.id}?trash=hard`), 200);
      assertStatus(await owner.api.post(`/api/files/restore/${file.id}`), 200);
      assertStatus(await owner.api.delete(`/api/files/delete/${file.id}?trash=hard`), 200);
      const empty = await bob.api.get('/api/shared-with-me');
      assert.deepEqual(empty.body.data, { data: [], total: 0, nextCursor: null });
    });

    it('folder details count the users holding a permission on the folder', async (t) => {
      const { app } = await build(t, dialect);
      const [owner, bob, carol] = [await signUp(app, 'Owner'), await signUp(app, 'Bob'), await signUp(app, 'Carol')];
      const folder = await createFolder(owner, 'Team');
      const child = await createFolder(owner, 'Child', folder.id);
      const count = async (id: string) => (await owner.api.get(`/api/folders/details/${id}`)).body.data.sharedUsersCount;
      assert.equal(await count(folder.id), 0);
      assertStatus(
        await owner.api.post(`/api/folders/share-users/${folder.id}`, { users: [{ userId: bob.id }, { userId: carol.id }] }),
        201,
      );
      assert.equal(await count(folder.id), 2);
      assert.equal(await count(child.id), 0, 'inherited access is not a permission on the child');
      const asBob = await bob.api.get(`/api/folders/details/${folder.id}`);
      assert.equal(asBob.body.data.sharedUsersCount, 2);
      assert.deepEqual(asBob.body.data.ownerFolder, { userId: owner.id, name: 'Owner' });
      assert.equal((await owner.api.get(`/api/folders/details/${folder.id}`)).body.data.ownerFolder, null, 'null for your own folder');
      assertStatus(await owner.api.delete(`/api/folders/share-users/${folder.id}/${carol.id}`), 200);
      assert.equal(await count(folder.id), 1);
    });
  });
}
