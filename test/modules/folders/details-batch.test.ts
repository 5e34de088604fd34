// Folders and folder details read together (folders.repository.ts findFolderDetails, folders.reads.ts
// folderReads): one statement walks several folders' ancestor chains and keeps them
// apart; the details and folders wanted at the same moment share statements, and a read never
// joins one that started before the request came (a rename is seen by the next details request).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DIALECTS, build, signUp } from '../../helper.js';
import { findFolderDetails, findFolders } from '../../../src/modules/folders/folders.repository.js';
import { rootFolderId, unknownId } from '../../support/files.js';
import { mkdir } from '../../support/folders.js';

for (const dialect of DIALECTS) {
  describe(`folder details read together [${dialect}]`, () => {
    it('one statement gives each folder its own row and ancestors, nearest first; unknown ids are absent', async (t) => {
      const { app, database } = await build(t, dialect);
      const user = await signUp(app);
      const root = await rootFolderId(user);
      const a = await mkdir(user, 'A', root);
      const b = await mkdir(user, 'B', a);
      const c = await mkdir(user, 'C', b);
      const d = await mkdir(user, 'D', root);
      const missing = unknownId('fld');

      const found = await findFolderDetails(database.db, [c, d, missing, c, root]);
      assert.deepEqual([...found.keys()].sort(), [c, d, root].sort());
      assert.equal(found.get(c)!.folder.name, 'C');
      assert.deepEqual(
        found.get(c)!.ancestors.map((x) => [x.id, x.depth]),
        [
          [b, 1],
          [a, 2],
          [root, 3],
        ],
      );
      assert.equal(found.get(d)!.folder.name, 'D');
      assert.deepEqual(
        found.get(d)!.ancestors.map((x) => x.id),
        [root],
      );
      assert.deepEqual(found.get(root)!.ancestors, []);
      assert.equal((await findFolderDetails(database.db, [])).size, 0);
    });

    it('details asked for at the same moment each answer their own folder and share statements', async (t) => {
      let detailStatements = 0;
      const { app } = await build(t, dialect, {
        onQuery: (event) => {
          if (/chain_start/.test(event.query.sql)) detailStatements++;
        },
      });
      const user = await signUp(app);
      const root = await rootFolderId(user);
      const a = await mkdir(user, 'A', root);
      const ids = [a];
      for (let i = 0; i < 9; i++) ids.push(await mkdir(user, `Sub ${i}`, a));

      detailStatements = 0;
      const answers = await Promise.all(ids.map((id) => user.api.get(`/api/folders/details/${id}`)));
      answers.forEach((res, i) => {
        assert.equal(res.status, 200, JSON.stringify(res.body));
        assert.equal(res.body.data.id, ids[i]);
        assert.equal(res.body.data.displayPath, i === 0 ? '/A' : `/A/Sub ${i - 1}`);
        assert.equal(res.body.data.parentId, i === 0 ? root : a);
      });
      assert.ok(detailStatements >= 1 && detailStatements < ids.length, `${detailStatements} statements for ${ids.length} requests`);

      const unknown = await user.api.get(`/api/folders/details/${unknownId('fld')}`);
      assert.equal(unknown.status, 404);
      assert.equal(unknown.body.code, 'FOLDER_NOT_FOUND');
    });

    it('subfolder pages asked for at the same moment list their own parent, the parents read together', async (t) => {
      let folderStatements = 0;
      const { app, database } = await build(t, dialect, {
        onQuery: (event) => {
          if (/^select \* from "folders" where id in/.test(event.query.sql)) folderStatements++;
        },
      });
      const user = await signUp(app);
      const root = await rootFolderId(user);
      const parents: string[] = [];
      for (let i = 0; i < 8; i++) {
        parents.push(await mkdir(user, `Parent ${i}`, root));
        await mkdir(user, `Child of ${i}`, parents[i]);
      }
      const rows = await findFolders(database.db, [parents[0], unknownId('fld'), parents[1], parents[0]]);
      assert.deepEqual([...rows.keys()].sort(), [parents[0], parents[1]].sort());
      assert.equal(rows.get(parents[1])!.name, 'Parent 1');

      folderStatements = 0;
      const pages = await Promise.all(parents.map((id) => user.api.get(`/api/folders/${id}/subfolders`)));
      pages.forEach((res, i) => {
        assert.equal(res.status, 200, JSON.stringify(res.body));
        assert.equal(res.body.data.parentFolder.id, parents[i]);
        assert.deepEqual(
          res.body.data.data.map((item: { name: string }) => item.name),
          [`Child of ${i}`],
        );
      });
      assert.ok(
        folderStatements >= 1 && folderStatements < parents.length,
        `${folderStatements} statements for ${parents.length} requests`,
      );
      const unknown = await user.api.get(`/api/folders/${unknownId('fld')}/subfolders`);
      assert.equal(unknown.status, 404);
    });

    it('a rename is seen by the details asked for right after it, also while other details are being read', async (t) => {
      const { app } = await build(t, dialect);
      const user = await signUp(app);
      const root = await rootFolderId(user);
      const a = await mkdir(user, 'Before', root);
      const b = await mkdir(user, 'Inside', a);
      for (let round = 0; round < 5; round++) {
        const busy = Array.from({ length: 5 }, () => user.api.get(`/api/folders/details/${b}`));
        const renamed = await user.api.put(`/api/folders/update/${a}`, { name: `After ${round}` });
        assert.equal(renamed.status, 200, JSON.stringify(renamed.body));
        const after = await user.api.get(`/api/folders/details/${b}`);
        assert.equal(after.body.data.displayPath, `/After ${round}/Inside`);
        assert.equal(after.body.data.parentName, `After ${round}`);
        for (const res of await Promise.all(busy)) assert.equal(res.status, 200);
      }
    });
  });
}
