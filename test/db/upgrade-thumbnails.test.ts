// Migration 020 on a server that already has files: the thumbnails table starts empty (images
// stored before it get no thumbnail: the web app shows them the generic icon), and new image
// versions get their pending row.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { migrateTo, migrateToLatest } from '../../src/db/migrate.js';
import { DIALECTS, build, signUp } from '../helper.js';
import { rootFolderId } from '../support/files.js';
import { photo, putTyped } from '../support/thumbnails.js';

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
  });
}
