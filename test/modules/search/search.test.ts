// Search by name (issue 35, item 3): what GET /api/search finds, as whom, and that renames,
// moves, trash, restores, deletes and grants show in the very next search.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { FastifyInstance } from 'fastify';
import { DIALECTS, build, signUp, type TestUser } from '../../helper.js';
import { assertStatus, mkdir } from '../../support/folders.js';
import { putFile, rootFolderId } from '../../support/files.js';

/** The search answer for `q` (and more query), asserted 200. */
async function search(user: TestUser, q: string, more = ''): Promise<any> {
  const res = await user.api.get(`/api/search?q=${encodeURIComponent(q)}${more}`);
  assertStatus(res, 200, `search ${q}`);
  return res.body.data;
}

/** The names found for `q`, sorted (result order is tested on its own). */
const names = async (user: TestUser, q: string, more = '') => (await search(user, q, more)).data.map((r: any) => r.name).sort();

/** A file of this content type, by the raw upload route. */
async function putTyped(app: FastifyInstance, user: TestUser, folderId: string, name: string, contentType: string) {
  const res = await app.inject({
    method: 'PUT',
    url: `/api/files/upload/${folderId}?name=${encodeURIComponent(name)}`,
    headers: { authorization: `Bearer ${user.token}`, 'content-type': contentType },
    payload: 'x',
  });
  assert.equal(res.statusCode, 201, res.body);
  return res.json().data;
}

for (const dialect of DIALECTS) {
  describe(`GET /api/search [${dialect}]`, () => {
    it('finds by prefix and substring, case and accents aside, with the folder path', async (t) => {
      const { app } = await build(t, dialect);
      const alice = await signUp(app, 'Alice');
      const projects = await mkdir(alice, 'Projects');
      const year = await mkdir(alice, '2026', projects);
      await putFile(app, alice, year, 'Cafe menu.txt', 'x');
      await putFile(app, alice, year, 'ÉTÉ plans.md', 'x');
      await putFile(app, alice, projects, 'notes.txt', 'x');

      assert.deepEqual(await names(alice, 'café'), ['Cafe menu.txt'], 'an accent in the query matches none in the name');
      assert.deepEqual(await names(alice, 'CAF'), ['Cafe menu.txt'], 'a prefix, upper case');
      assert.deepEqual(await names(alice, 'ete'), ['ÉTÉ plans.md'], 'accents and case in the name');
      assert.deepEqual(await names(alice, 'menu'), ['Cafe menu.txt'], 'a substring');
      assert.deepEqual(await names(alice, '.txt'), ['Cafe menu.txt', 'notes.txt']);
      assert.deepEqual(await names(alice, 'zzz'), []);

      const [hit] = (await search(alice, 'menu')).data;
      assert.equal(hit.kind, 'file');
      assert.equal(hit.path, '/Projects/2026');
      assert.equal(hit.folderId, year);
      assert.equal(hit.bucketId, alice.defaultBucketId);
      assert.equal(hit.size, 1);
      assert.equal(hit.owner, null);
      const [folder] = (await search(alice, '2026')).data;
      assert.deepEqual(
        { kind: folder.kind, id: folder.id, path: folder.path, size: folder.size },
        { kind: 'folder', id: year, path: '/Projects', size: null },
      );
    });

    it('matches % and _ literally, and refuses short or malformed queries with a 400', async (t) => {
      const { app } = await build(t, dialect);
      const alice = await signUp(app, 'Alice');
      const root = await rootFolderId(alice);
      await putFile(app, alice, root, '100% sure.txt', 'x');
      await putFile(app, alice, root, '1000 sure.txt', 'x');
      await putFile(app, alice, root, 'a_b_c.txt', 'x');
      await putFile(app, alice, root, 'aXbXc.txt', 'x');
      await putFile(app, alice, root, 'say "hi".txt', 'x');
      assert.deepEqual(await names(alice, '0% s'), ['100% sure.txt']);
      assert.deepEqual(await names(alice, 'a_b'), ['a_b_c.txt']);
      assert.deepEqual(await names(alice, '"hi"'), ['say "hi".txt']);

      const refused = async (query: string, code: string) => {
        const res = await alice.api.get(`/api/search?${query}`);
        assert.equal(res.status, 400, query);
        assert.equal(res.body.code, code, query);
      };
      await refused('q=ab', 'SEARCH_QUERY_TOO_SHORT');
      await refused('q=%20%20ab%20', 'SEARCH_QUERY_TOO_SHORT');
      await refused('', 'VALIDATION_FAILED');
      await refused('q=abc&type=spreadsheet', 'VALIDATION_FAILED');
      await refused('q=abc&modifiedAfter=yesterday', 'VALIDATION_FAILED');
      await refused('q=abc&limit=0', 'VALIDATION_FAILED');
      await refused('q=abc&cursor=nonsense', 'INVALID_CURSOR');
      assert.equal((await app.inject({ method: 'GET', url: '/api/search?q=abc' })).statusCode, 401);
    });

    it("searches every bucket of the caller's and never someone else's items", async (t) => {
      const { app } = await build(t, dialect);
      const [alice, eve] = [await signUp(app, 'Alice'), await signUp(app, 'Eve')];
      const bucket = await alice.api.post(`/api/bucket/create/${alice.defaultDatahubId}`, { name: 'second-bucket' });
      assertStatus(bucket, 201, 'bucket');
      await putFile(app, alice, bucket.body.data.rootFolderId, 'report-b.pdf', 'x');
      await putFile(app, alice, await rootFolderId(alice), 'report-a.pdf', 'x');
      await putFile(app, eve, await rootFolderId(eve), 'report-eve.pdf', 'x');
      assert.deepEqual(await names(alice, 'report'), ['report-a.pdf', 'report-b.pdf']);
      assert.deepEqual(await names(eve, 'report'), ['report-eve.pdf']);
      const inSecond = (await search(alice, 'report-b')).data[0];
      assert.deepEqual([inSecond.bucketId, inSecond.path], [bucket.body.data.id, '/']);
    });

    it('renames, moves, trash, restore and hard deletes show in the next search', async (t) => {
      const { app } = await build(t, dialect);
      const alice = await signUp(app, 'Alice');
      const a = await mkdir(alice, 'Alpha');
      const b = await mkdir(alice, 'Beta');
      const file = await putFile(app, alice, a, 'draft.txt', 'x');
      const folder = await mkdir(alice, 'Drafts box', a);

      assertStatus(await alice.api.put(`/api/files/update/${file.id}`, { name: 'final.txt', visibility: 'private' }), 200, 'rename file');
      assertStatus(await alice.api.put(`/api/folders/update/${folder}`, { name: 'Archive box' }), 200, 'rename folder');
      assert.deepEqual(await names(alice, 'draft'), [], 'old names are gone');
      assert.deepEqual(await names(alice, 'final'), ['final.txt']);
      assert.deepEqual(await names(alice, 'archive'), ['Archive box']);

      assertStatus(await alice.api.post(`/api/folders/move/${folder}`, { targetParentId: b }), 200, 'move folder');
      assertStatus(await alice.api.post(`/api/files/move/${file.id}`, { targetFolderId: folder }), 200, 'move file');
      assert.equal((await search(alice, 'final')).data[0].path, '/Beta/Archive box');
      assert.equal((await search(alice, 'archive')).data[0].path, '/Beta');

      assertStatus(await alice.api.delete(`/api/folders/delete/${folder}`), 200, 'trash the folder');
      assert.deepEqual(await names(alice, 'final'), [], 'a file trashed with its folder');
      assert.deepEqual(await names(alice, 'archive'), [], 'the trashed folder');
      assertStatus(await alice.api.post(`/api/folders/restore/${folder}`), 200, 'restore');
      assert.deepEqual(await names(alice, 'final'), ['final.txt']);

      assertStatus(await alice.api.delete(`/api/files/delete/${file.id}`), 200, 'trash the file');
      assert.deepEqual(await names(alice, 'final'), []);
      assertStatus(await alice.api.post(`/api/files/restore/${file.id}`), 200, 'restore the file');
      assert.deepEqual(await names(alice, 'final'), ['final.txt']);
      assertStatus(await alice.api.delete(`/api/files/delete/${file.id}?trash=hard`), 200, 'hard delete');
      assert.deepEqual(await names(alice, 'final'), []);
      assertStatus(await alice.api.delete(`/api/folders/delete/${folder}?trash=hard`), 200, 'hard delete folder');
      assert.deepEqual(await names(alice, 'archive'), []);
    });

    it('finds what is shared with the caller, paths from the shared folder, until revoked or trashed', async (t) => {
      const { app } = await build(t, dialect);
      const [owner, bob] = [await signUp(app, 'Owner'), await signUp(app, 'Bob')];
      const secret = await mkdir(owner, 'Secret');
      const shared = await mkdir(owner, 'Shared', secret);
      const sub = await mkdir(owner, 'Sub', shared);
      await putFile(app, owner, sub, 'plan deep.txt', 'x');
      await putFile(app, owner, secret, 'plan hidden.txt', 'x');
      const alone = await putFile(app, owner, secret, 'plan alone.txt', 'x');
      assert.deepEqual(await names(bob, 'plan'), [], 'nothing shared yet');

      assertStatus(await owner.api.post(`/api/folders/share-users/${shared}`, { users: [{ userId: bob.id }] }), 201, 'share folder');
      assertStatus(await owner.api.put(`/api/files/shared/${alone.id}/${bob.id}`, {}), 201, 'share file');
      const found = (await search(bob, 'plan')).data;
      assert.deepEqual(found.map((r: any) => r.name).sort(), ['plan alone.txt', 'plan deep.txt']);
      const deep = found.find((r: any) => r.name === 'plan deep.txt');
      assert.deepEqual([deep.path, deep.folderId, deep.owner], ['/Shared/Sub', sub, { userId: owner.id, name: 'Owner' }]);
      const lone = found.find((r: any) => r.name === 'plan alone.txt');
      assert.deepEqual([lone.path, lone.folderId], ['/', ''], 'a file shared alone shows no folder');
      assert.deepEqual(await names(bob, 'sub'), ['Sub'], 'folders under a shared folder');
      assert.deepEqual(await names(owner, 'plan'), ['plan alone.txt', 'plan deep.txt', 'plan hidden.txt']);

      assertStatus(await owner.api.delete(`/api/folders/delete/${sub}`), 200, 'owner trashes Sub');
      assert.deepEqual(await names(bob, 'plan'), ['plan alone.txt'], "the owner's trash is never searched");
      assertStatus(await owner.api.delete(`/api/files/share-users/${alone.id}/${bob.id}`), 200, 'revoke file');
      assertStatus(await owner.api.post(`/api/folders/restore/${sub}`), 200, 'restore');
      assert.deepEqual(await names(bob, 'plan'), ['plan deep.txt']);
      assertStatus(await owner.api.delete(`/api/folders/share-users/${shared}/${bob.id}`), 200, 'revoke folder');
      assert.deepEqual(await names(bob, 'plan'), []);
    });

    it('pages with a cursor, folders first then files, each newest first', async (t) => {
      const { app } = await build(t, dialect);
      const alice = await signUp(app, 'Alice');
      const root = await rootFolderId(alice);
      const expected: string[] = [];
      for (let i = 0; i < 3; i++) expected.push(await mkdir(alice, `page folder ${i}`));
      for (let i = 0; i < 6; i++) expected.push((await putFile(app, alice, root, `page file ${i}`, 'x')).id);
      const order = [...expected.slice(0, 3).reverse(), ...expected.slice(3).reverse()];

      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const page: any = await search(alice, 'page', `&limit=4${cursor ? `&cursor=${cursor}` : ''}`);
        seen.push(...page.data.map((r: any) => r.id));
        cursor = page.nextCursor;
        pages++;
      } while (cursor && pages < 10);
      assert.equal(pages, 3);
      assert.deepEqual(seen, order);
    });

    it('filters by type and modification date', async (t) => {
      const { app } = await build(t, dialect);
      const alice = await signUp(app, 'Alice');
      const root = await rootFolderId(alice);
      await mkdir(alice, 'mix folder');
      await putTyped(app, alice, root, 'mix photo.jpg', 'image/jpeg');
      await putTyped(app, alice, root, 'mix doc.pdf', 'application/pdf');
      await putTyped(app, alice, root, 'mix song.mp3', 'audio/mpeg');
      await putTyped(app, alice, root, 'mix readme.txt', 'text/plain');
      assert.deepEqual(await names(alice, 'mix', '&type=folder'), ['mix folder']);
      assert.deepEqual(await names(alice, 'mix', '&type=file'), ['mix doc.pdf', 'mix photo.jpg', 'mix readme.txt', 'mix song.mp3']);
      assert.deepEqual(await names(alice, 'mix', '&type=image'), ['mix photo.jpg']);
      assert.deepEqual(await names(alice, 'mix', '&type=pdf'), ['mix doc.pdf']);
      assert.deepEqual(await names(alice, 'mix', '&type=audio'), ['mix song.mp3']);
      assert.deepEqual(await names(alice, 'mix', '&type=text'), ['mix readme.txt']);
      const future = new Date(Date.now() + 3_600_000).toISOString();
      const past = new Date(Date.now() - 3_600_000).toISOString();
      assert.deepEqual(await names(alice, 'mix', `&modifiedAfter=${future}`), []);
      assert.equal((await names(alice, 'mix', `&modifiedAfter=${past}`)).length, 5);
      assert.deepEqual(await names(alice, 'mix', `&modifiedBefore=${past}`), []);
      assert.equal((await names(alice, 'mix', `&modifiedBefore=${future}`)).length, 5);
    });
  });
}
