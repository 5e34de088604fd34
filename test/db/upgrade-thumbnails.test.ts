// Migrations 020 and 021 on a server that already has files: 020 adds the thumbnails table, 021
// gives the current version of each image stored before it a pending row (the type, or the name's
// extension when the type is generic), which the job then makes like an upload's; new image
// versions get their pending row as before.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { migrateTo, migrateToLatest } from '../../src/db/migrate.js';
import { makeThumbnails } from '../../src/modules/thumbnails/thumbnails.job.js';
import { DIALECTS, build, signUp } from '../helper.js';
import { putFile, rootFolderId } from '../support/files.js';
import { contextOf, photo, putTyped } from '../support/thumbnails.js';

for (const dialect of DIALECTS) {
  describe(`upgrading to thumbnails [${dialect}]`, () => {
    it('adds an empty thumbnails table; images uploaded after it wait for theirs', async (t) => {
      const test = await build(t, dialect, { config: { thumbnailIntervalSeconds: 0 } });
      const { database } = test;
      const user = await signUp(test.app);
      const root = await rootFolderId(user);
      await migrateTo(database.db, '018-link-key-copies', database.schema);
      await assert.rejects(database.db.selectFrom('thumbnails').selectAll().execute(), 'no table before 020');
      await migrateToLatest(database.db, database.schema);
      assert.deepEqual(await database.db.selectFrom('thumbnails').selectAll().execute(), []);
      const file = await putTyped(test.app, user, root, 'p.jpg', 'image/jpeg', await photo(40, 30));
      const rows = await database.db.selectFrom('thumbnails').select(['version_id', 'state']).execute();
      assert.deepEqual(rows, [{ version_id: file.currentVersionId, state: 'pending' }]);
    });

    it('gives the images stored before 020 a pending thumbnail of their current version, made by the job', async (t) => {
      const test = await build(t, dialect, { config: { thumbnailIntervalSeconds: 0 } });
      const { database } = test;
      const user = await signUp(test.app);
      const root = await rootFolderId(user);
      await putTyped(test.app, user, root, 'p.jpg', 'image/jpeg', await photo(40, 30));
      const photoFile = await putTyped(test.app, user, root, 'p.jpg', 'image/jpeg', await photo(30, 40));
      const untyped = await putTyped(test.app, user, root, 'raw.png', 'application/octet-stream', await photo(50, 50));
      await putFile(test.app, user, root, 'notes.txt', 'plain words');
      await putTyped(test.app, user, root, 'data.bin', 'application/octet-stream', await photo(20, 20));
      // As a server that ran before 020 left them: files and versions, no thumbnails table.
      await migrateTo(database.db, '019-search', database.schema);
      await migrateToLatest(database.db, database.schema);
      const pending = async () =>
        (await database.db.selectFrom('thumbnails').select(['version_id', 'file_id', 'state']).orderBy('file_id').execute()).map((row) => [
          row.file_id,
          row.version_id,
          row.state,
        ]);
      const expected = [
        [photoFile.id, photoFile.currentVersionId, 'pending'],
        [untyped.id, untyped.currentVersionId, 'pending'],
      ].sort((a, b) => a[0].localeCompare(b[0]));
      assert.deepEqual(await pending(), expected, 'the current versions of the two images, not the older version nor the others');
      // Run again over rows that exist (021 undone by hand and redone): nothing twice.
      await migrateTo(database.db, '020-thumbnails', database.schema);
      await migrateToLatest(database.db, database.schema);
      assert.deepEqual(await pending(), expected);

      assert.deepEqual(await makeThumbnails(await contextOf(test)), { made: 2, failed: 0 });
      for (const file of [photoFile, untyped]) {
        const res = await test.app.inject({
          url: `/api/files/thumbnail/${file.id}?v=${file.currentVersionId}`,
          headers: { authorization: `Bearer ${user.token}` },
        });
        assert.equal(res.statusCode, 200);
      }
    });
  });
}
