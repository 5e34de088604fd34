// The folder listing item is written twice: by the database as JSON text for pages of subfolders
// (listing.repository.ts listItemJson, json_object / json_build_object), and by listItem for the
// other lists. Both must be the FolderListItem of folders.schemas.ts: same keys, in the same
// order, and values of the schema's types (a timestamp the database formats its own way, a
// boolean written as 0/1, would pass unnoticed through the byte-level listing path).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Value } from 'typebox/value';
import { DIALECTS, build, signUp } from '../../helper.js';
import { findFolder } from '../../../src/modules/folders/folders.repository.js';
import { listChildren } from '../../../src/modules/folders/listing.repository.js';
import { FolderListItem } from '../../../src/modules/folders/folders.schemas.js';
import { listItem } from '../../../src/modules/folders/folders.views.js';
import { rootFolderId } from '../../support/files.js';
import { assertStatus, mkdir } from '../../support/folders.js';

const schemaKeys = Object.keys(FolderListItem.properties);

/** Checks one item as the database wrote it against the schema, and against listItem of its row. */
async function assertMatchesSchema(db: Parameters<typeof findFolder>[0], text: string): Promise<Record<string, unknown>> {
  const item = JSON.parse(text) as Record<string, unknown>;
  assert.deepEqual(Object.keys(item), schemaKeys, 'the keys of FolderListItem, in its order');
  assert.ok(
    Value.Check(FolderListItem, item),
    `${text}: ${[...Value.Errors(FolderListItem, item)].map((e) => JSON.stringify(e)).join('; ')}`,
  );
  const row = await findFolder(db, item.id as string);
  assert.ok(row, 'the item is a folder');
  // The same object as listItem makes of the row (PostgreSQL spaces its JSON text its own way).
  assert.deepEqual(item, listItem(row));
  return item;
}

for (const dialect of DIALECTS) {
  describe(`folder listing items written by the database [${dialect}]`, () => {
    it('live and trashed children have the keys and types of FolderListItem, as listItem writes them', async (t) => {
      const { app, database } = await build(t, dialect);
      const user = await signUp(app);
      const root = await rootFolderId(user);
      const parent = await mkdir(user, 'Parent', root);
      await mkdir(user, 'Private child', parent);
      const shared = await mkdir(user, 'Public child', parent);
      assertStatus(await user.api.put(`/api/folders/update/${shared}`, { visibility: 'public' }), 200);

      const live = await listChildren(database.db, parent, '', { limit: 10 });
      assert.equal(live.items.length, 2);
      const liveItems = [];
      for (const text of live.items) liveItems.push(await assertMatchesSchema(database.db, text));
      assert.deepEqual(
        liveItems.map((item) => [item.name, item.visibility, item.isDelete, item.deletedAt, item.parentId]),
        [
          ['Private child', 'private', false, null, parent],
          ['Public child', 'public', false, null, parent],
        ],
      );

      // Trashed with their parent: listed under the parent's trash batch, with isDelete and deletedAt set.
      assertStatus(await user.api.delete(`/api/folders/delete/${parent}`), 200);
      const trashBatch = (await findFolder(database.db, parent))!.trash_batch;
      assert.notEqual(trashBatch, '');
      const trashed = await listChildren(database.db, parent, trashBatch, { limit: 10 });
      assert.equal(trashed.items.length, 2);
      for (const text of trashed.items) {
        const item = await assertMatchesSchema(database.db, text);
        assert.equal(item.isDelete, true);
        assert.equal(typeof item.deletedAt, 'string');
      }

      // A root folder's parentId is "" (its parent_id is null).
      const top = await listChildren(database.db, root, '', { limit: 10 });
      assert.equal(top.items.length, 0, 'the parent is in the trash');
      const rootRow = (await findFolder(database.db, root))!;
      assert.ok(Value.Check(FolderListItem, listItem(rootRow)));
      assert.equal(listItem(rootRow).parentId, '');
    });
  });
}
