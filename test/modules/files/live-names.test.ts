import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import { DIALECTS, build, signUp } from '../../helper.js';
import { findFolderWithNamesTaken, folderWithNamesTakenQuery } from '../../../src/modules/files/files.repository.js';
import { putFile, rootFolderId } from '../../support/files.js';

// The names check of grouped uploads (upload-recorder.ts recordNewFiles): files.repository.ts liveNamesTaken.
for (const dialect of DIALECTS) {
  describe(`names taken in a folder [${dialect}]`, () => {
    it('reads the folder and which names its live files and subfolders hold, not trashed files nor the names of another folder', async (t) => {
      const { app, database } = await build(t, dialect, { config: { collectIntervalSeconds: 0 } });
      const user = await signUp(app);
      const root = await rootFolderId(user);
      const docs = await user.api.post(`/api/folders/create/${user.defaultBucketId}`, { name: 'docs', parentId: root });
      assert.equal(docs.status, 201, JSON.stringify(docs.body));
      await putFile(app, user, root, 'a.txt', 'a');
      await putFile(app, user, root, 'b "quoted".txt', 'b');
      const trashed = await putFile(app, user, root, 'c.txt', 'c');
      assert.equal((await user.api.delete(`/api/files/delete/${trashed.id}`)).status, 200);
      await putFile(app, user, docs.body.data.id, 'd.txt', 'd');

      const taken = async (folderId: string, names: string[]) => {
        const found = await findFolderWithNamesTaken(database.db, folderId, names);
        assert.equal(found?.folder.id, folderId);
        return [...found!.taken].sort();
      };
      assert.deepEqual(await taken(root, ['a.txt', 'docs', 'c.txt', 'd.txt', 'b "quoted".txt', 'A.TXT', 'none']), [
        'a.txt',
        'b "quoted".txt',
        'docs',
      ]);
      assert.deepEqual(await taken(docs.body.data.id, ['d.txt', 'a.txt']), ['d.txt']);
      assert.deepEqual(await taken(root, ['none']), []);
      const found = await findFolderWithNamesTaken(database.db, docs.body.data.id, ['x']);
      assert.equal(found!.folder.name, 'docs');
      assert.equal(found!.folder.parent_id, root);
      assert.ok(!('taken_name' in found!.folder));
      assert.equal(await findFolderWithNamesTaken(database.db, 'fld_0000000000000000000000000z', ['a.txt']), undefined);
    });

    it("the trash indexes hold trashed rows only, so a live lookup cannot read through them, and so do the purge's deleted_at indexes (migrations 008, 009)", async (t) => {
      const { database } = await build(t, dialect);
      const definitions =
        dialect === 'postgres'
          ? (
              await sql<{
                name: string;
                definition: string;
              }>`select indexname as name, indexdef as definition from pg_indexes where tablename in ('files', 'folders') and schemaname = current_schema()`.execute(
                database.db,
              )
            ).rows
          : (
              await sql<{
                name: string;
                definition: string;
              }>`select name, sql as definition from sqlite_master where type = 'index' and tbl_name in ('files', 'folders') and sql is not null`.execute(
                database.db,
              )
            ).rows;
      const trash = definitions.filter((index) => /trash/.test(index.name));
      assert.deepEqual(trash.map((index) => index.name).sort(), ['files_trashed_idx', 'folders_trashed_idx']);
      for (const index of trash) assert.match(index.definition, /trash_batch"?\)? <> ''/, index.definition);
      // No index over every row starts with the trash state, which nearly every row shares.
      for (const index of definitions) assert.doesNotMatch(index.definition, /\(\s*"?trash_batch"?\s*[,)]/, index.definition);
      // The purge's indexes on deleted_at hold trashed rows only (migration 009): a live row has none.
      const deleted = definitions.filter((index) => /_deleted_idx$/.test(index.name));
      assert.deepEqual(deleted.map((index) => index.name).sort(), ['files_deleted_idx', 'folders_deleted_idx']);
      for (const index of deleted) assert.match(index.definition, /deleted_at"?\)? is not null/i, index.definition);
    });

    if (dialect === 'postgres') {
      it('looks each name up in the live-name indexes on folder and name, not by scanning the folder (PostgreSQL plan, statistics never gathered)', async (t) => {
        const { app, database } = await build(t, dialect, { config: { collectIntervalSeconds: 0 } });
        const user = await signUp(app);
        const root = await rootFolderId(user);
        for (let i = 0; i < 40; i++) await putFile(app, user, root, `file-${i}.bin`, 'x');
        const names = ['file-3.bin', 'file-30.bin', 'missing.bin'];
        const explained = await sql<{
          'QUERY PLAN': any;
        }>`explain (analyze, format json) ${folderWithNamesTakenQuery(root, names)}`.execute(database.db);
        const scans: any[] = [];
        const walk = (node: any) => {
          if (node['Relation Name'] === 'files' || node['Relation Name'] === 'folders') scans.push(node);
          for (const child of node.Plans ?? []) walk(child);
        };
        const plan = explained.rows[0]['QUERY PLAN'];
        walk((typeof plan === 'string' ? JSON.parse(plan) : plan)[0].Plan);
        const text = JSON.stringify(scans, null, 1);
        for (const scan of scans) assert.ok(!scan['Rows Removed by Filter'], text);
        // The names: one search of folder and name each, in files and in folders.
        const byName = scans.filter((scan) => /name/.test(scan['Index Cond'] ?? ''));
        assert.deepEqual(byName.map((scan) => scan['Relation Name']).sort(), ['files', 'folders'], text);
        for (const scan of byName) assert.match(scan['Index Cond'], /folder_id|parent_id/, text);
        // Three names, one lookup each in files: never the folder's 40 rows.
        const files = scans.filter((scan) => scan['Relation Name'] === 'files');
        assert.equal(files.length, 1, text);
        assert.ok(files[0]['Actual Rows'] * files[0]['Actual Loops'] <= names.length, text);
      });
    }
  });
}
