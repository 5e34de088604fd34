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

    it('keeps names indexed before the index was split by kind (migration 022), and their renames', async (t) => {
      const { app, database } = await build(t, dialect);
      const alice = await signUp(app, 'Alice');
      await migrateTo(database.db, '020-thumbnails', database.schema);
      // Indexed by migration 019's single table: only migration 022 can carry them over.
      const folder = await mkdir(alice, 'Crème folder');
      const file = await putFile(app, alice, folder, 'Crème file.txt', 'x');
      await migrateToLatest(database.db, database.schema);

      const found = async (q: string) => {
        const res = await alice.api.get(`/api/search?q=${encodeURIComponent(q)}`);
        assert.equal(res.status, 200, JSON.stringify(res.body));
        return res.body.data.data.map((r: any) => `${r.kind}|${r.name}`);
      };
      assert.deepEqual(await found('creme'), ['folder|Crème folder', 'file|Crème file.txt']);
      const renamed = await alice.api.put(`/api/files/update/${file.id}`, { name: 'Brûlée.txt', visibility: 'private' });
      assert.equal(renamed.status, 200, JSON.stringify(renamed.body));
      assert.deepEqual(await found('creme'), ['folder|Crème folder'], 'the old name left the index');
      assert.deepEqual(await found('brulee'), ['file|Brûlée.txt']);
    });
  });
}
