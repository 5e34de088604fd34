// The file pages an archive is planned from (archives.repository.ts): every live file once, each
// folder's files by name, pages no larger than asked, all of them read in one snapshot.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DIALECTS, build, signUp } from '../../helper.js';
import { inReadSnapshot } from '../../../src/db/transaction.js';
import { liveFilePages, type ArchiveFileRow } from '../../../src/modules/archives/archives.repository.js';
import { putFile } from '../../support/files.js';
import { assertStatus, mkdir } from '../../support/folders.js';

async function collect(pages: AsyncIterable<ArchiveFileRow[]>): Promise<ArchiveFileRow[][]> {
  const all: ArchiveFileRow[][] = [];
  for await (const page of pages) all.push(page);
  return all;
}

for (const dialect of DIALECTS) {
  describe(`archive file pages [${dialect}]`, () => {
    it('reads every live file of the folders once, by folder and name, in pages of at most the size asked', async (t) => {
      const { app, database } = await build(t, dialect);
      const owner = await signUp(app);
      const parent = await mkdir(owner, 'Parent');
      const counts = { many: 7, none: 0, two: 2, five: 5 };
      const folders: Record<string, string> = {};
      const expected = new Map<string, string[]>();
      for (const [name, count] of Object.entries(counts)) {
        folders[name] = await mkdir(owner, name, parent);
        // Uploaded out of name order: the pages order them.
        const names = Array.from({ length: count }, (_, i) => `${name} ${String.fromCharCode(122 - i)}.txt`);
        for (const fileName of names) await putFile(app, owner, folders[name], fileName, fileName);
        expected.set(folders[name], [...names].sort());
      }
      const trashed = await putFile(app, owner, folders.many, 'trashed.txt', 'gone');
      assertStatus(await owner.api.delete(`/api/files/delete/${trashed.id}?trash=soft`), 200);

      for (const pageSize of [1, 2, 3, 7, 1000]) {
        const pages = await collect(liveFilePages(database.db, { folderIds: Object.values(folders) }, pageSize));
        assert.ok(
          pages.every((page) => page.length > 0 && page.length <= pageSize),
          `pages of ${pageSize}: ${pages.map((p) => p.length)}`,
        );
        const files = pages.flat();
        assert.equal(new Set(files.map((f) => f.id)).size, files.length, `pages of ${pageSize}: no file twice`);
        for (const [folderId, names] of expected) {
          const inFolder = files.filter((f) => f.folder_id === folderId);
          assert.deepEqual(
            inFolder.map((f) => f.name),
            names,
            `pages of ${pageSize}: the folder's files, by name`,
          );
          const first = files.findIndex((f) => f.folder_id === folderId);
          assert.ok(
            inFolder.every((f, i) => files[first + i] === f),
            `pages of ${pageSize}: a folder's files follow each other`,
          );
        }
        assert.equal(files.length, 14, `pages of ${pageSize}: the trashed file is left out`);
      }
    });

    it('reads chosen files by name, then the folders’ files', async (t) => {
      const { app, database } = await build(t, dialect);
      const owner = await signUp(app);
      const parent = await mkdir(owner, 'Parent');
      const sub = await mkdir(owner, 'Sub', parent);
      const b = await putFile(app, owner, parent, 'b.txt', 'b');
      const a = await putFile(app, owner, parent, 'a.txt', 'a');
      await putFile(app, owner, parent, 'not chosen.txt', 'c');
      await putFile(app, owner, sub, 'inside.txt', 'i');
      const files = (await collect(liveFilePages(database.db, { fileIds: [b.id, a.id], folderIds: [sub] }, 2))).flat();
      assert.deepEqual(
        files.map((f) => f.name),
        ['a.txt', 'b.txt', 'inside.txt'],
      );
    });

    if (dialect === 'postgres')
      it('sees, in one snapshot, a file renamed between two pages once, under the name it had', async (t) => {
        const { app, database } = await build(t, dialect);
        const owner = await signUp(app);
        const folder = await mkdir(owner, 'Folder');
        for (const name of ['b.txt', 'c.txt', 'd.txt']) await putFile(app, owner, folder, name, name);
        const last = await putFile(app, owner, folder, 'e.txt', 'e');
        const files = await inReadSnapshot(database.db, async (trx) => {
          const pages = liveFilePages(trx, { folderIds: [folder] }, 2)[Symbol.asyncIterator]();
          const seen = [...(await pages.next()).value!];
          // Renamed by another connection to a name the first page already passed.
          await database.db.updateTable('files').set({ name: 'a.txt' }).where('id', '=', last.id).execute();
          for (let page = await pages.next(); !page.done; page = await pages.next()) seen.push(...page.value);
          return seen;
        });
        assert.deepEqual(
          files.map((f) => f.name),
          ['b.txt', 'c.txt', 'd.txt', 'e.txt'],
        );
      });
  });
}
