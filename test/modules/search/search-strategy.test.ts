// How search reads (src/modules/search/search.strategy.ts): through the trigram index when a text
// is rare, row by row over the caller's newest items when it is common, and the index again for
// older items when that window did not fill the page. Every way must give the very same results,
// in the same order, as the index alone: names are folded alike (accents of Latin letters only,
// case), `%` and `_` are literal, and cursors, type, dates and shares apply the same.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { DIALECTS, build, signUp } from '../../helper.js';
import { assertStatus, mkdir } from '../../support/folders.js';
import { putFile, rootFolderId } from '../../support/files.js';
import { matchesOfKind, type SearchTuning } from '../../../src/modules/search/search.strategy.js';
import { countIndexed, type SearchCriteria, type SearchKind } from '../../../src/modules/search/search.repository.js';
import { foldName } from '../../../src/db/sqlite-fold.js';

/** The index alone: no text is ever common enough to read row by row. */
const INDEX_ONLY: SearchTuning = { indexedUpTo: Number.MAX_SAFE_INTEGER, windows: [] };
/** Row by row from the first match on, in windows small enough to need the index after them. */
const TUNINGS: Record<string, SearchTuning> = {
  'window of 3, then the index': { indexedUpTo: 1, windows: [3] },
  'windows of 2 and 5, then the index': { indexedUpTo: 1, windows: [2, 5] },
  'one window over everything': { indexedUpTo: 1, windows: [10_000] },
};

const NAMES = [
  'Café menu.txt',
  'CAFE plan.pdf',
  'café-2.jpg',
  'Crème brûlée.txt',
  'creme.md',
  'Ötzi ÖTZI.png',
  '100% done.txt',
  '100_ done.txt',
  '1000 done.txt',
  'мой файл.txt',
  'мои файлы.txt',
  'Ærø.txt',
  'report 01.pdf',
  'report 02.pdf',
  'Report 03.PDF',
  'photo 1.jpg',
  'photo 2.jpg',
  'other.bin',
];
const TEXTS = ['caf', 'CAFÉ', 'crè', 'creme', 'ötz', '0% ', '0_ ', '00 ', 'мой', 'мои', 'ærø', 'rep', 'port 0', 'pho', '.jp', 'zzz'];

for (const dialect of DIALECTS) {
  describe(`search strategies [${dialect}]`, () => {
    it('row by row, windowed and indexed reads find the same items in the same order', async (t) => {
      const { app, database } = await build(t, dialect);
      const alice = await signUp(app, 'Alice');
      const bob = await signUp(app, 'Bob');
      const root = await rootFolderId(alice);
      const docs = await mkdir(alice, 'Cafés and reports');
      for (const [i, name] of NAMES.entries()) await putFile(app, alice, i % 2 ? docs : root, name, 'x');
      await mkdir(alice, 'Report folder', docs);
      // Bob shares a folder with Alice: its items are hers to find too.
      const bobs = await mkdir(bob, 'Bob café');
      for (const name of ['café de Bob.txt', 'report bob.pdf']) await putFile(app, bob, bobs, name, 'x');
      assertStatus(await bob.api.post(`/api/folders/share-users/${bobs}`, { users: [{ userId: alice.id }] }), 201, 'share');
      const trashed = await putFile(app, alice, root, 'trashed café.txt', 'x');
      assertStatus(await alice.api.delete(`/api/files/delete/${trashed.id}`), 200, 'trash');

      const read = (kind: SearchKind, criteria: SearchCriteria, tuning: SearchTuning) =>
        matchesOfKind(database.db, kind, criteria, tuning).then((hits) => hits.map((h) => `${h.kind}:${h.name}`));
      let compared = 0;
      for (const text of TEXTS) {
        for (const kind of ['file', 'folder'] as const) {
          const base: SearchCriteria = { userId: alice.id, withShared: true, text, limit: 4 };
          const variants: SearchCriteria[] = [base, { ...base, limit: 100 }, { ...base, contentTypes: ['text/'], limit: 100 }];
          const firstPage = await matchesOfKind(database.db, kind, base, INDEX_ONLY);
          if (firstPage.length) variants.push({ ...base, beforeId: firstPage[firstPage.length - 1].id, limit: 100 });
          for (const criteria of variants) {
            const expected = await read(kind, criteria, INDEX_ONLY);
            for (const [label, tuning] of Object.entries(TUNINGS)) {
              assert.deepEqual(await read(kind, criteria, tuning), expected, `${label}: ${kind} "${text}" ${JSON.stringify(criteria)}`);
              compared += expected.length;
            }
          }
        }
      }
      assert.ok(compared > 100, `the readings compared found items (${compared})`);
      assert.deepEqual(await read('file', { userId: alice.id, withShared: true, text: 'CAFÉ', limit: 100 }, INDEX_ONLY), [
        'file:café de Bob.txt',
        'file:café-2.jpg',
        'file:CAFE plan.pdf',
        'file:Café menu.txt',
      ]);
      assert.deepEqual(
        await read('file', { userId: alice.id, withShared: true, text: 'мои', limit: 100 }, INDEX_ONLY),
        ['file:мои файлы.txt'],
        'й is not и',
      );
    });

    it('counts what the index lists, capped, per kind', async (t) => {
      const { app, database } = await build(t, dialect);
      const alice = await signUp(app, 'Alice');
      const root = await rootFolderId(alice);
      for (let i = 0; i < 40; i++) await putFile(app, alice, root, `common ${i}.txt`, 'x');
      await mkdir(alice, 'common folder');
      if (dialect === 'postgres') await sql`analyze files`.execute(database.db);
      assert.equal(await countIndexed(database.db, 'file', 'common', 10), 10, 'counted (or estimated) up to the cap');
      const none = await countIndexed(database.db, 'file', 'zqxw', 10);
      // PostgreSQL's planner never estimates fewer than one row.
      assert.ok(none <= (dialect === 'postgres' ? 1 : 0), `none found: ${none}`);
      if (dialect === 'sqlite') assert.equal(await countIndexed(database.db, 'folder', 'common', 10), 1, 'folders apart from files');
    });
  });
}

describe('foldName', () => {
  it('folds as the FTS5 trigram index does: accents of Latin letters, case', () => {
    assert.equal(foldName('Crème BRÛLÉE'), 'creme brulee');
    assert.equal(foldName('Ærø Ötzi'), 'ærø otzi');
    assert.equal(foldName('мой'), 'мой', 'a Cyrillic letter keeps its mark');
    assert.equal(foldName('Cafe\u0301'), 'cafe', 'decomposed accents too');
  });
});
