// Folder API contract, part 2: names, sibling-name uniqueness, moves and display paths.
// Only the HTTP API is used (no repositories), on every dialect of the run.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { DIALECTS, build, signUp, type TestUser } from '../../helper.js';
import { assertError } from '../../support/errors.js';
import { createFolder, folderDetails, childNames, folderSnapshot } from '../../support/folders.js';
import { rootFolderId, putFile } from '../../support/files.js';

const ID_CHARS = '0123456789abcdefghjkmnpqrstvwxyz';
const unknownId = (prefix = 'fld') => `${prefix}_${Array.from(randomBytes(26), (b) => ID_CHARS[b % 32]).join('')}`;

/** id → displayPath of every live folder of the user's default bucket. */
async function paths(user: TestUser): Promise<Map<string, string>> {
  const res = await user.api.get(`/api/folders/list/${user.defaultBucketId}?limit=1000`);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return new Map(res.body.data.data.map((f: any) => [f.id, f.displayPath]));
}

// [name, what, 256 bytes long]
const INVALID_NAMES: [string, string, boolean?][] = [
  ['..', 'dot-dot'],
  ['.', 'dot'],
  ['a/b', 'a slash'],
  ['/', 'a lone slash'],
  ['nul\u0000byte', 'a NUL'],
  ['\u0000', 'only a NUL'],
  ['line\nbreak', 'a line feed'],
  ['tab\there', 'a tab'],
  ['del\u007f', 'DEL'],
  ['é'.repeat(128), '256 bytes (2-byte characters)', true],
  ['a'.repeat(256), '256 bytes (ASCII)', true],
  ['😀'.repeat(64), '256 bytes (4-byte characters)', true],
  ['', 'empty'],
  ['   ', 'only spaces'],
];

for (const dialect of DIALECTS) {
  describe(`folder API: names, uniqueness, moves, paths [${dialect}]`, () => {
    it('names: ".", "..", "/", NUL, control characters, over 255 bytes, empty are 400 INVALID_NAME on create, update and copy', async (t) => {
      const { app } = await build(t, dialect);
      const user = await signUp(app);
      const rootId = await rootFolderId(user);
      const target = await createFolder(user, 'Target');
      const inner = await createFolder(user, 'Inner', target.id);
      const before = await folderSnapshot(user, [rootId, target.id, inner.id]);
      for (const [name, what, long] of INVALID_NAMES) {
        if (long) assert.equal(Buffer.byteLength(name), 256, what);
        assertError(await user.api.post(`/api/folders/create/${user.defaultBucketId}`, { name }), 400, 'INVALID_NAME');
        assertError(await user.api.post(`/api/folders/create/${user.defaultBucketId}`, { name, parentId: target.id }), 400, 'INVALID_NAME');
        assertError(await user.api.put(`/api/folders/update/${inner.id}`, { name }), 400, 'INVALID_NAME');
        assertError(await user.api.put(`/api/folders/update/${inner.id}`, { name, visibility: 'public' }), 400, 'INVALID_NAME');
        assertError(await user.api.post(`/api/folders/copy/${inner.id}`, { targetParentId: rootId, name }), 400, 'INVALID_NAME');
      }
      assert.deepEqual(await folderSnapshot(user, [rootId, target.id, inner.id]), before, 'nothing was created, renamed or copied');
    });

    it('names: 255 bytes are accepted on create, update and copy', async (t) => {
      const { app } = await build(t, dialect);
      const user = await signUp(app);
      const rootId = await rootFolderId(user);
      const names = [`${'é'.repeat(127)}x`, 'b'.repeat(255), `${'😀'.repeat(63)}xyz`, `${'€'.repeat(85)}`];
      for (const name of names) assert.equal(Buffer.byteLength(name), 255);
      const created = await createFolder(user, names[0]);
      assert.equal(created.name, names[0]);
      assert.equal(created.displayPath, `/${names[0]}`);
      const other = await createFolder(user, 'short');
      let res = await user.api.put(`/api/folders/update/${other.id}`, { name: names[1] });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal((await folderDetails(user, other.id)).name, names[1]);
      res = await user.api.post(`/api/folders/copy/${other.id}`, { targetParentId: rootId, name: names[2] });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      assert.equal(res.body.data.name, names[2]);
      const nested = await createFolder(user, names[3], created.id);
      assert.equal((await folderDetails(user, nested.id)).displayPath, `/${names[0]}/${names[3]}`);
      assert.deepEqual(await childNames(user, rootId), [names[0], names[1], names[2]].sort());
    });

    it('names: unicode, quotes, spaces and markup are kept exactly as given', async (t) => {
      const { app } = await build(t, dialect);
      const user = await signUp(app);
      const rootId = await rootFolderId(user);
      const odd = [
        `Quote "it" — 'ok'`,
        'ünïcødé ☃ 日本語 😀',
        'e\u0301 (NFD)',
        '\u00e9 (NFC)',
        ' padded ',
        'back\\slash',
        '<b>&amp;<i>',
        "Robert'); DROP TABLE folders;--",
        '%2F not a slash',
        '...',
        '.hidden',
      ];
      const ids: string[] = [];
      for (const name of odd) {
        const f = await createFolder(user, name);
        assert.equal(f.name, name);
        const d = await folderDetails(user, f.id);
        assert.equal(d.name, name, JSON.stringify(name));
        assert.equal(d.displayPath, `/${name}`);
        ids.push(f.id);
      }
      const listed = await user.api.get(`/api/folders/root/subfolders?limit=1000`);
      assert.deepEqual(new Set(listed.body.data.data.map((f: any) => f.name)), new Set(odd));
      // A rename and a named copy keep the name as given too.
      const renamed = 'Ça « marche » — \u2019quoted\u2019';
      assert.equal((await user.api.put(`/api/folders/update/${ids[0]}`, { name: renamed })).status, 200);
      assert.equal((await folderDetails(user, ids[0])).name, renamed);
      const copyName = 'copie "spéciale" 🗂';
      const copy = await user.api.post(`/api/folders/copy/${ids[1]}`, { targetParentId: rootId, name: copyName });
      assert.equal(copy.status, 201);
      assert.equal((await folderDetails(user, copy.body.data.id)).name, copyName);
      const child = await createFolder(user, 'child', ids[4]);
      assert.equal((await folderDetails(user, child.id)).displayPath, '/ padded /child');
      assert.equal((await folderDetails(user, child.id)).parentName, ' padded ');
    });

    it('sibling names are unique among live folders: 409 NAME_CONFLICT on create, rename, move and named copy', async (t) => {
      const { app } = await build(t, dialect);
      const user = await signUp(app);
      const rootId = await rootFolderId(user);
      const a = await createFolder(user, 'A');
      const b = await createFolder(user, 'B');
      const innerA = await createFolder(user, 'A', b.id); // the same name under another parent is fine
      const innerB = await createFolder(user, 'B', b.id);
      const before = await folderSnapshot(user, [rootId, a.id, b.id, innerA.id, innerB.id]);
      assertError(await user.api.post(`/api/folders/create/${user.defaultBucketId}`, { name: 'A' }), 409, 'NAME_CONFLICT');
      assertError(await user.api.post(`/api/folders/create/${user.defaultBucketId}`, { name: 'A', parentId: b.id }), 409, 'NAME_CONFLICT');
      assertError(await user.api.put(`/api/folders/update/${b.id}`, { name: 'A' }), 409, 'NAME_CONFLICT');
      assertError(await user.api.put(`/api/folders/update/${innerB.id}`, { name: 'A', isPrivate: false }), 409, 'NAME_CONFLICT');
      assertError(await user.api.post(`/api/folders/move/${innerA.id}`, { targetParentId: rootId }), 409, 'NAME_CONFLICT');
      assertError(await user.api.post(`/api/folders/move/${a.id}`, { targetParentId: b.id }), 409, 'NAME_CONFLICT');
      assertError(await user.api.post(`/api/folders/copy/${innerB.id}`, { targetParentId: rootId, name: 'A' }), 409, 'NAME_CONFLICT');
      assertError(await user.api.post(`/api/folders/copy/${a.id}`, { targetParentId: b.id, name: 'B' }), 409, 'NAME_CONFLICT');
      assert.deepEqual(await folderSnapshot(user, [rootId, a.id, b.id, innerA.id, innerB.id]), before, 'the conflicts changed nothing');
      // Renaming a folder to its own name is not a conflict.
      assert.equal((await user.api.put(`/api/folders/update/${a.id}`, { name: 'A' })).status, 200);
      assert.deepEqual(await childNames(user, rootId), ['A', 'B']);
    });

    it('a name is free again once its folder is in the trash; restoring into a taken name gives "name (restored)"', async (t) => {
      const { app } = await build(t, dialect);
      const user = await signUp(app);
      const rootId = await rootFolderId(user);
      const a1 = await createFolder(user, 'A');
      const kid = await createFolder(user, 'kid', a1.id);
      assert.equal((await user.api.delete(`/api/folders/delete/${a1.id}`)).status, 200);
      // create
      const a2 = await createFolder(user, 'A');
      assert.notEqual(a2.id, a1.id);
      assert.equal((await user.api.delete(`/api/folders/delete/${a2.id}`)).status, 200);
      // rename
      const b = await createFolder(user, 'B');
      assert.equal((await user.api.put(`/api/folders/update/${b.id}`, { name: 'A' })).status, 200);
      assert.equal((await user.api.delete(`/api/folders/delete/${b.id}`)).status, 200);
      // move
      const holder = await createFolder(user, 'Holder');
      const a4 = await createFolder(user, 'A', holder.id);
      const moved = await user.api.post(`/api/folders/move/${a4.id}`, { targetParentId: rootId });
      assert.equal(moved.status, 200, JSON.stringify(moved.body));
      assert.deepEqual(await childNames(user, rootId), ['A', 'Holder']);

      // Restores into the root where "A" is taken: each gets the next free variant.
      let res = await user.api.post(`/api/folders/restore/${a1.id}`);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.status, 200);
      assert.equal(res.body.data.name, 'A (restored)');
      assert.equal(res.body.data.displayPath, '/A (restored)');
      assert.equal(res.body.data.isDelete, false);
      assert.equal(res.body.data.deletedAt, null);
      assert.equal((await folderDetails(user, kid.id)).displayPath, '/A (restored)/kid', 'the subtree came back with it');
      res = await user.api.post(`/api/folders/restore/${a2.id}`);
      assert.equal(res.body.data.name, 'A (restored 2)');
      res = await user.api.post(`/api/folders/restore/${b.id}`);
      assert.equal(res.body.data.name, 'A (restored 3)');
      assert.deepEqual(await childNames(user, rootId), ['A', 'A (restored 2)', 'A (restored 3)', 'A (restored)', 'Holder']);
      // A restore into a free name keeps it.
      const c = await createFolder(user, 'C');
      await user.api.delete(`/api/folders/delete/${c.id}`);
      res = await user.api.post(`/api/folders/restore/${c.id}`);
      assert.equal(res.body.data.name, 'C');
    });

    it('a folder name may not repeat the name of a live file beside it', async (t) => {
      const { app } = await build(t, dialect);
      const user = await signUp(app);
      const rootId = await rootFolderId(user);
      await putFile(app, user, rootId, 'report', randomBytes(10));
      assertError(await user.api.post(`/api/folders/create/${user.defaultBucketId}`, { name: 'report' }), 409, 'NAME_CONFLICT');
      const f = await createFolder(user, 'other');
      assertError(await user.api.put(`/api/folders/update/${f.id}`, { name: 'report' }), 409, 'NAME_CONFLICT');
      const holder = await createFolder(user, 'holder');
      const inner = await createFolder(user, 'report', holder.id);
      assertError(await user.api.post(`/api/folders/move/${inner.id}`, { targetParentId: rootId }), 409, 'NAME_CONFLICT');
      const copy = await user.api.post(`/api/folders/copy/${inner.id}`, { targetParentId: rootId });
      assert.equal(copy.status, 201);
      assert.equal(copy.body.data.name, 'report (copy)');
    });

    it('concurrent creates of one name: exactly one succeeds, the others are 409', async (t) => {
      const { app } = await build(t, dialect);
      const user = await signUp(app);
      const parent = await createFolder(user, 'P');
      const results = await Promise.all(
        Array.from({ length: 12 }, () =>
          user.api.post(`/api/folders/create/${user.defaultBucketId}`, { name: 'Same', parentId: parent.id }),
        ),
      );
      const statuses = results.map((r) => r.status).sort();
      assert.deepEqual(
        statuses,
        [201, ...Array(11).fill(409)],
        JSON.stringify(results.filter((r) => r.status !== 201 && r.status !== 409).map((r) => r.body)),
      );
      for (const r of results.filter((x) => x.status === 409)) assert.equal(r.body.code, 'NAME_CONFLICT');
      assert.deepEqual(await childNames(user, parent.id), ['Same']);
      assert.equal((await folderDetails(user, parent.id)).totalSubfolders, 1);
    });

    it('moves: not into itself or a descendant (400 INVALID_MOVE), not the root (400), not into the trash (409); nothing changes', async (t) => {
      const { app } = await build(t, dialect);
      const user = await signUp(app);
      const rootId = await rootFolderId(user);
      const a = await createFolder(user, 'A');
      const b = await createFolder(user, 'B', a.id);
      const c = await createFolder(user, 'C', b.id);
      const x = await createFolder(user, 'X');
      const trash = await createFolder(user, 'Trash');
      const trashKid = await createFolder(user, 'TrashKid', trash.id);
      assert.equal((await user.api.delete(`/api/folders/delete/${trash.id}`)).status, 200);
      const ids = [rootId, a.id, b.id, c.id, x.id];
      const before = await folderSnapshot(user, ids);

      for (const target of [a.id, b.id, c.id]) {
        assertError(await user.api.post(`/api/folders/move/${a.id}`, { targetParentId: target }), 400, 'INVALID_MOVE');
        assertError(await user.api.post(`/api/folders/copy/${a.id}`, { targetParentId: target }), 400, 'INVALID_MOVE');
      }
      assertError(await user.api.post(`/api/folders/move/${b.id}`, { targetParentId: b.id }), 400, 'INVALID_MOVE');
      assertError(await user.api.post(`/api/folders/move/${b.id}`, { targetParentId: c.id }), 400, 'INVALID_MOVE');
      assertError(await user.api.post(`/api/folders/move/${rootId}`, { targetParentId: x.id }), 400, 'ROOT_FOLDER_READONLY');
      assertError(await user.api.post(`/api/folders/move/${rootId}`, { targetParentId: rootId }), 400, 'ROOT_FOLDER_READONLY');
      assertError(await user.api.post(`/api/folders/copy/${rootId}`, { targetParentId: x.id }), 400, 'ROOT_FOLDER_READONLY');
      for (const target of [trash.id, trashKid.id]) {
        assertError(await user.api.post(`/api/folders/move/${x.id}`, { targetParentId: target }), 409, 'FOLDER_IN_TRASH');
        assertError(await user.api.post(`/api/folders/copy/${x.id}`, { targetParentId: target }), 409, 'FOLDER_IN_TRASH');
        assertError(
          await user.api.post(`/api/folders/create/${user.defaultBucketId}`, { name: 'new', parentId: target }),
          409,
          'FOLDER_IN_TRASH',
        );
      }
      // A trashed folder itself can be neither moved nor copied.
      assertError(await user.api.post(`/api/folders/move/${trash.id}`, { targetParentId: x.id }), 409, 'FOLDER_IN_TRASH');
      assertError(await user.api.post(`/api/folders/move/${trashKid.id}`, { targetParentId: x.id }), 409, 'FOLDER_IN_TRASH');
      assertError(await user.api.post(`/api/folders/copy/${trash.id}`, { targetParentId: x.id }), 409, 'FOLDER_IN_TRASH');
      // Bad or unknown targets.
      assertError(await user.api.post(`/api/folders/move/${a.id}`, { targetParentId: 'garbage' }), 400, 'INVALID_ID');
      assertError(await user.api.post(`/api/folders/copy/${a.id}`, { targetParentId: 'garbage' }), 400, 'INVALID_ID');
      assertError(await user.api.post(`/api/folders/move/${a.id}`, {}), 400, 'VALIDATION_FAILED');
      assertError(await user.api.post(`/api/folders/copy/${a.id}`, {}), 400, 'VALIDATION_FAILED');
      assertError(await user.api.post(`/api/folders/move/${a.id}`, { targetParentId: unknownId() }), 404, 'FOLDER_NOT_FOUND');
      assertError(await user.api.post(`/api/folders/copy/${a.id}`, { targetParentId: unknownId() }), 404, 'FOLDER_NOT_FOUND');
      assertError(await user.api.post(`/api/folders/move/${unknownId()}`, { targetParentId: x.id }), 404, 'FOLDER_NOT_FOUND');
      assertError(await user.api.post('/api/folders/move/nope', { targetParentId: x.id }), 400, 'INVALID_ID');
      assertError(await user.api.post('/api/folders/copy/nope', { targetParentId: x.id }), 400, 'INVALID_ID');

      assert.deepEqual(await folderSnapshot(user, ids), before, 'the refused moves and copies changed nothing');
      assert.equal((await folderDetails(user, trash.id)).totalSubfolders, 1, 'the trashed folder is untouched');
      assert.deepEqual(await childNames(user, x.id), []);
    });

    it('display paths: "/" for the root, "/A/B/C" nested; they follow moves and renames, with the right parentName', async (t) => {
      const { app } = await build(t, dialect);
      const user = await signUp(app);
      const rootId = await rootFolderId(user);
      const root = await folderDetails(user, rootId);
      assert.equal(root.displayPath, '/');
      assert.equal(root.isRoot, true);
      assert.equal(root.parentId, '');
      assert.equal(root.parentName, '');
      const a = await createFolder(user, 'A');
      const b = await createFolder(user, 'B', a.id);
      const c = await createFolder(user, 'C', b.id);
      const x = await createFolder(user, 'X');
      assert.equal(a.displayPath, '/A');
      assert.equal(b.displayPath, '/A/B');
      assert.equal(c.displayPath, '/A/B/C');
      let dc = await folderDetails(user, c.id);
      assert.equal(dc.displayPath, '/A/B/C');
      assert.equal(dc.parentId, b.id);
      assert.equal(dc.parentName, 'B');
      assert.equal((await folderDetails(user, b.id)).parentName, 'A');
      assert.equal((await folderDetails(user, a.id)).parentName, root.name);

      const moved = await user.api.post(`/api/folders/move/${b.id}`, { targetParentId: x.id });
      assert.equal(moved.status, 200);
      assert.equal(moved.body.status, 200);
      assert.equal(moved.body.data.id, b.id);
      assert.equal(moved.body.data.displayPath, '/X/B');
      assert.equal(moved.body.data.parentId, x.id);
      assert.equal(moved.body.data.parentName, 'X');
      dc = await folderDetails(user, c.id);
      assert.equal(dc.displayPath, '/X/B/C');
      assert.equal(dc.parentName, 'B');
      assert.deepEqual(await childNames(user, a.id), []);
      assert.deepEqual(await childNames(user, x.id), ['B']);
      let all = await paths(user);
      assert.equal(all.get(c.id), '/X/B/C');
      assert.equal(all.get(b.id), '/X/B');

      // Rename an ancestor: every path below follows.
      assert.equal((await user.api.put(`/api/folders/update/${x.id}`, { name: 'Y' })).status, 200);
      assert.equal((await folderDetails(user, c.id)).displayPath, '/Y/B/C');
      assert.equal((await folderDetails(user, b.id)).parentName, 'Y');
      const sub = await user.api.get(`/api/folders/${x.id}/subfolders`);
      assert.equal(sub.body.data.parentFolder.name, 'Y');
      all = await paths(user);
      assert.equal(all.get(c.id), '/Y/B/C');
      assert.equal(all.get(x.id), '/Y');

      // Rename the folder itself, then move it back to the root.
      assert.equal((await user.api.put(`/api/folders/update/${b.id}`, { name: 'B2' })).status, 200);
      assert.equal((await folderDetails(user, c.id)).parentName, 'B2');
      const back = await user.api.post(`/api/folders/move/${b.id}`, { targetParentId: rootId });
      assert.equal(back.body.data.displayPath, '/B2');
      assert.equal(back.body.data.parentId, rootId);
      assert.equal(back.body.data.parentName, root.name);
      assert.equal((await folderDetails(user, c.id)).displayPath, '/B2/C');
      // A move to the current parent is a no-op.
      const same = await user.api.post(`/api/folders/move/${c.id}`, { targetParentId: b.id });
      assert.equal(same.status, 200);
      assert.equal(same.body.data.displayPath, '/B2/C');
      assert.deepEqual(await childNames(user, rootId), ['A', 'B2', 'Y']);

      // A deep chain.
      let parent = a.id;
      const names: string[] = ['A'];
      for (let i = 0; i < 12; i++) {
        const f = await createFolder(user, `L${i}`, parent);
        names.push(`L${i}`);
        parent = f.id;
      }
      assert.equal((await folderDetails(user, parent)).displayPath, `/${names.join('/')}`);
      assert.equal((await paths(user)).get(parent), `/${names.join('/')}`);
    });
  });
}
