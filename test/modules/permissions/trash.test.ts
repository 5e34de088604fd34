// Trashed items belong to their owner alone (issue 29, item 3): a grantee gets, for anything the
// owner (or anyone) put in the trash, the very answer of an unknown id, and only the owner restores.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS, build, signUp, type ApiResponse } from '../../helper.js';
import { assertStatus, mkdir } from '../../support/folders.js';
import { putFile, rootFolderId, unknownId } from '../../support/files.js';

/** The status and code of an answer, to compare with the answer to an unknown id. */
const answer = (res: ApiResponse) => ({ status: res.status, code: res.body?.code });

for (const dialect of DIALECTS) {
  describe(`trashed items and grantees [${dialect}]`, () => {
    it('a file the owner trashed is unknown to its grantee until the owner restores it', async (t) => {
      const { app } = await build(t, dialect);
      const [owner, bob] = [await signUp(app, 'Owner'), await signUp(app, 'Bob')];
      const file = await putFile(app, owner, await rootFolderId(owner), 'shared.txt', 'shared content');
      assertStatus(await owner.api.put(`/api/files/shared/${file.id}/${bob.id}`, { canDownload: true, canEdit: true }), 201);
      assertStatus(await bob.api.get(`/api/files/download/${file.id}`), 200, 'before the trash');

      assertStatus(await owner.api.delete(`/api/files/delete/${file.id}`), 200, 'owner trashes');
      const ghost = unknownId('fil');
      const calls: [string, (id: string) => Promise<ApiResponse>][] = [
        ['download', (id) => bob.api.get(`/api/files/download/${id}`)],
        ['details', (id) => bob.api.get(`/api/files/details/${id}`)],
        ['versions', (id) => bob.api.get(`/api/files/versions/${id}`)],
        ['restore', (id) => bob.api.post(`/api/files/restore/${id}`)],
        ['soft delete', (id) => bob.api.delete(`/api/files/delete/${id}`)],
      ];
      for (const [what, call] of calls) {
        const unknown = answer(await call(ghost));
        assert.equal(unknown.status, 404, `${what} of an unknown id`);
        assert.deepEqual(answer(await call(file.id)), unknown, `${what} of the trashed file answers as an unknown id`);
      }
      assert.equal((await owner.api.get(`/api/files/details/${file.id}`)).body.isDelete, true, 'bob restored nothing');

      assertStatus(await owner.api.post(`/api/files/restore/${file.id}`), 200, 'the owner restores');
      const back = await bob.api.get(`/api/files/download/${file.id}`);
      assertStatus(back, 200, 'after the restore');
      assert.equal(back.body, 'shared content');
    });

    it('a folder the owner trashed, and all it holds, is unknown to its editor, who cannot restore it', async (t) => {
      const { app } = await build(t, dialect);
      const [owner, bob] = [await signUp(app, 'Owner'), await signUp(app, 'Bob')];
      const shared = await mkdir(owner, 'Shared');
      const sub = await mkdir(owner, 'Sub', shared);
      const inside = await putFile(app, owner, sub, 'inside.txt', 'inside');
      assertStatus(
        await owner.api.post(`/api/folders/share-users/${shared}`, { users: [{ userId: bob.id, canDownload: true, canEdit: true }] }),
        201,
      );
      assertStatus(await bob.api.get(`/api/files/download/${inside.id}`), 200, 'before the trash');

      assertStatus(await owner.api.delete(`/api/folders/delete/${sub}`), 200, 'owner trashes Sub');
      const ghostFolder = unknownId('fld');
      const folderCalls: [string, (id: string) => Promise<ApiResponse>][] = [
        ['details', (id) => bob.api.get(`/api/folders/details/${id}`)],
        ['subfolders', (id) => bob.api.get(`/api/folders/${id}/subfolders`)],
        ['file list', (id) => bob.api.get(`/api/files/list/${id}`)],
        ['restore', (id) => bob.api.post(`/api/folders/restore/${id}`)],
        ['rename', (id) => bob.api.put(`/api/folders/update/${id}`, { name: 'Renamed' })],
        ['upload', (id) => bob.api.put(`/api/files/upload/${id}?name=x.txt`, 'x', { 'content-type': 'application/octet-stream' })],
        ['new subfolder', (id) => bob.api.post(`/api/folders/create/${owner.defaultBucketId}`, { name: 'New', parentId: id })],
      ];
      for (const [what, call] of folderCalls) {
        const unknown = answer(await call(ghostFolder));
        assert.equal(unknown.status, 404, `${what} of an unknown id`);
        assert.deepEqual(answer(await call(sub)), unknown, `${what} of the trashed folder answers as an unknown id`);
      }
      const ghostFile = unknownId('fil');
      for (const [what, call] of [
        ['download', (id: string) => bob.api.get(`/api/files/download/${id}`)],
        ['details', (id: string) => bob.api.get(`/api/files/details/${id}`)],
      ] as const) {
        assert.deepEqual(answer(await call(inside.id)), answer(await call(ghostFile)), `${what} of a file in the trashed folder`);
      }
      const afterwards = await owner.api.get(`/api/folders/details/${sub}`);
      assert.equal(afterwards.body.data.isDelete, true, 'bob restored nothing');
      assert.equal(afterwards.body.data.name, 'Sub', 'nor renamed it');

      assertStatus(await owner.api.post(`/api/folders/restore/${sub}`), 200, 'the owner restores');
      assertStatus(await bob.api.get(`/api/files/download/${inside.id}`), 200, 'after the restore');
    });

    it('a user holding no grant gets for a trashed folder what they get for a live one: the trash is not revealed', async (t) => {
      const { app } = await build(t, dialect);
      const [owner, stranger] = [await signUp(app, 'Owner'), await signUp(app, 'Stranger')];
      const [live, trashed] = [await mkdir(owner, 'Live'), await mkdir(owner, 'Trashed')];
      const [liveFile, trashedFile] = [await putFile(app, owner, live, 'l.txt', 'l'), await putFile(app, owner, trashed, 't.txt', 't')];
      assertStatus(await owner.api.delete(`/api/folders/delete/${trashed}`), 200);
      const folderCalls: [string, (id: string) => Promise<ApiResponse>][] = [
        ['details', (id) => stranger.api.get(`/api/folders/details/${id}`)],
        ['subfolders', (id) => stranger.api.get(`/api/folders/${id}/subfolders`)],
        ['file list', (id) => stranger.api.get(`/api/files/list/${id}`)],
        ['restore', (id) => stranger.api.post(`/api/folders/restore/${id}`)],
      ];
      for (const [what, call] of folderCalls) assert.deepEqual(answer(await call(trashed)), answer(await call(live)), what);
      assert.deepEqual(
        answer(await stranger.api.get(`/api/files/details/${trashedFile.id}`)),
        answer(await stranger.api.get(`/api/files/details/${liveFile.id}`)),
      );
    });

    it('what an editor trashes leaves their sight too: only the owner brings it back', async (t) => {
      const { app } = await build(t, dialect);
      const [owner, bob] = [await signUp(app, 'Owner'), await signUp(app, 'Bob')];
      const shared = await mkdir(owner, 'Shared');
      const sub = await mkdir(owner, 'Sub', shared);
      assertStatus(await owner.api.post(`/api/folders/share-users/${shared}`, { users: [{ userId: bob.id, canEdit: true }] }), 201);
      assertStatus(await bob.api.delete(`/api/folders/delete/${sub}`), 200, 'soft delete is an edit');
      assert.deepEqual(answer(await bob.api.post(`/api/folders/restore/${sub}`)), { status: 404, code: 'FOLDER_NOT_FOUND' });
      assertStatus(await owner.api.post(`/api/folders/restore/${sub}`), 200, 'the owner restores');
      assertStatus(await bob.api.get(`/api/folders/details/${sub}`), 200, 'back in sight');
    });
  });
}
