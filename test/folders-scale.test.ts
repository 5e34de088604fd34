import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Keyring, newChildKey } from '../src/crypto/keyring.js';
import { loadMasterKey } from '../src/crypto/master-key.js';
import type { NewFolder } from '../src/db/schema.js';
import { newId, randomToken } from '../src/lib/ids.js';
import { folderKey } from '../src/modules/folders/folders.keys.js';
import { adjustChain, insertFolders } from '../src/modules/folders/folders.repository.js';
import { DIALECTS, build, signUp } from './helper.js';

const CHILDREN = 100;
const GRANDCHILDREN = 999; // 100 + 100 × 999 = 100,000 descendants

for (const dialect of DIALECTS) {
  describe(`folder aggregates at scale [${dialect}]`, () => {
    it('details and the first subfolder page cost the same statements for 100,000 descendants as for none', async (t) => {
      let statements = 0;
      const { app, database, config } = await build(t, dialect, { onQuery: () => statements++ });
      const user = await signUp(app);
      const create = async (name: string) =>
        (await user.api.post(`/api/folders/create/${user.defaultBucketId}`, { name })).body.data as { id: string; bucketId: string };
      const empty = await create('Empty');
      const big = await create('Big');

      // Seed in bulk through the repository, keys and aggregates included, as the API would leave them.
      const keyring = new Keyring(loadMasterKey(config.masterKey, config.dataDir));
      const now = new Date().toISOString();
      const row = (id: string, parentId: string, name: string, parentKey: Buffer, childCount: number): NewFolder & { key: Buffer } => {
        const key = newChildKey(parentKey, id);
        return {
          id,
          key: key.key,
          key_wrapped: key.wrapped,
          bucket_id: big.bucketId,
          owner_id: user.id,
          parent_id: parentId,
          name,
          visibility: 'private',
          is_share: 1,
          hash_url: randomToken(),
          is_root: 0,
          deleted_at: null,
          last_access_at: null,
          subtree_folders: childCount,
          child_folders: childCount,
          created_at: now,
          updated_at: now,
        };
      };
      const started = Date.now();
      await database.db.transaction().execute(async (trx) => {
        const bigKey = await folderKey(trx, keyring, big.id);
        for (let c = 0; c < CHILDREN; c++) {
          const child = row(newId('fld'), big.id, `child-${String(c).padStart(3, '0')}`, bigKey, GRANDCHILDREN);
          const grandchildren = Array.from({ length: GRANDCHILDREN }, (_, g) => row(newId('fld'), child.id, `g-${g}`, child.key, 0));
          await insertFolders(trx, [child, ...grandchildren].map(({ key: _key, ...folder }) => folder));
        }
        await adjustChain(trx, big.id, '', 1, { folders: CHILDREN * (GRANDCHILDREN + 1), files: 0, bytes: 0 }, { folders: CHILDREN, files: 0 });
      });
      t.diagnostic(`seeded 100,000 folders in ${Date.now() - started} ms`);

      const countStatements = async (url: string) => {
        await user.api.get(url); // first read may record lastAccessAt (at most once a minute)
        statements = 0;
        const res = await user.api.get(url);
        assert.equal(res.status, 200);
        return { statements, body: res.body };
      };

      const emptyDetails = await countStatements(`/api/folders/details/${empty.id}`);
      const bigDetails = await countStatements(`/api/folders/details/${big.id}`);
      assert.equal(bigDetails.body.data.totalSubfolders, 100_000);
      assert.equal(emptyDetails.body.data.totalSubfolders, 0);
      assert.equal(bigDetails.statements, emptyDetails.statements, 'details cost the same statements');
      assert.ok(bigDetails.statements <= 4, `details used ${bigDetails.statements} statements`);

      const emptyPage = await countStatements(`/api/folders/${empty.id}/subfolders?limit=100`);
      const bigPage = await countStatements(`/api/folders/${big.id}/subfolders?limit=100`);
      assert.equal(bigPage.body.data.data.length, 100);
      assert.equal(bigPage.body.data.total, CHILDREN);
      assert.equal(bigPage.body.data.nextCursor, null);
      assert.equal(bigPage.statements, emptyPage.statements, 'a subfolder page costs the same statements');

      const root = (await user.api.get('/api/folders/root/subfolders')).body.data.parentFolder.id;
      const rootDetails = await user.api.get(`/api/folders/details/${root}`);
      assert.equal(rootDetails.body.data.totalSubfolders, 100_002);
    });
  });
}
