// Migration 019 on a server that already has files and folders: their names are indexed by the
// migration (folded as new names are), so the first search after the upgrade finds them.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { migrateTo, migrateToLatest } from '../../src/db/migrate.js';
import { DIALECTS, build, signUp } from '../helper.js';
import { mkdir } from '../support/folders.js';
import { putFile, rootFolderId } from '../support/files.js';

for (const dialect of DIALECTS) {
  describe(`upgrading to search [${dialect}]`, () => {
    it('indexes the names already there', async (t) => {
      const { app, database } = await build(t, dialect);
      const alice = await signUp(app, 'Alice');
      await migrateTo(database.db, '018-link-key-copies', database.schema);
      // Written while the index does not exist: only the migration can index them.
      const folder = await mkdir(alice, 'Été 2025');
      await putFile(app, alice, folder, 'Crème brûlée.txt', 'x');
      await putFile(app, alice, await rootFolderId(alice), 'other.txt', 'x');
      await migrateToLatest(database.db, database.schema);

      const found = async (q: string) => {
        const res = await alice.api.get(`/api/search?q=${encodeURIComponent(q)}`);
        assert.equal(res.status, 200, JSON.stringify(res.body));
        return res.body.data.data.map((r: any) => `${r.path}|${r.name}`);
      };
      assert.deepEqual(await found('ete'), ['/|Été 2025']);
      assert.deepEqual(await found('CREME BRU'), ['/Été 2025|Crème brûlée.txt']);
      assert.deepEqual(await found('other'), ['/|other.txt']);
    });
  });
}
