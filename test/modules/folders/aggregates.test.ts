import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Config } from '../../../src/config.js';
import { Keyring, newChildKey, openChildKey } from '../../../src/crypto/keyring.js';
import { loadMasterKey } from '../../../src/crypto/master-key.js';
import type { Db } from '../../../src/db/database.js';
import type { FolderRow, NewFolder } from '../../../src/db/schema.js';
import { newId, randomToken } from '../../../src/lib/ids.js';
import { insertBucketWithRoot } from '../../../src/modules/buckets/buckets.repository.js';
import { folderKey } from '../../../src/modules/folders/folders.keys.js';
import { adjustChain, insertFolders } from '../../../src/modules/folders/folders.repository.js';
import { DIALECTS, build, signUp, type TestUser } from '../../helper.js';
import { prng } from '../../support/prng.js';
import { createFolder, folderDetails } from '../../support/folders.js';

/** The app's keyring, rebuilt from the same master key (the app wrote it into its data folder). */
function keyringOf(config: Config): Keyring {
  return new Keyring(loadMasterKey(config.masterKey, config.dataDir));
}

interface Expected {
  subtree_folders: number;
  subtree_files: number;
  subtree_bytes: number;
  child_folders: number;
  child_files: number;
}

/**
 * Recounts every folder's aggregates from the parent links and trash states alone. A folder's
 * subtree aggregates cover the descendants in its own trash batch reached through descendants of
 * that batch; its child counts, the direct children of that batch.
 */
function expectedAggregates(
  folders: FolderRow[],
  files: { folder_id: string; trash_batch: string; size: number }[] = [],
): Map<string, Expected> {
  const children = new Map<string, FolderRow[]>();
  for (const f of folders) {
    if (!f.parent_id) continue;
    const list = children.get(f.parent_id) ?? [];
    list.push(f);
    children.set(f.parent_id, list);
  }
  const filesOf = new Map<string, { trash_batch: string; size: number }[]>();
  for (const file of files) {
    const list = filesOf.get(file.folder_id) ?? [];
    list.push(file);
    filesOf.set(file.folder_id, list);
  }
  const memo = new Map<string, Expected>();
  const visit = (folder: FolderRow, depth: number): Expected => {
    const known = memo.get(folder.id);
    if (known) return known;
    // A cycle in parent links would recurse for ever; no tree is this deep in these tests.
    assert.ok(depth < 10_000, `parent links of ${folder.id} form a cycle`);
    const e: Expected = { subtree_folders: 0, subtree_files: 0, subtree_bytes: 0, child_folders: 0, child_files: 0 };
    for (const file of filesOf.get(folder.id) ?? []) {
      if (file.trash_batch !== folder.trash_batch) continue;
      e.child_files++;
      e.subtree_files++;
      e.subtree_bytes += Number(file.size);
    }
    for (const child of children.get(folder.id) ?? []) {
      if (child.trash_batch !== folder.trash_batch) continue;
      const c = visit(child, depth + 1);
      e.child_folders++;
      e.subtree_folders += 1 + c.subtree_folders;
      e.subtree_files += c.subtree_files;
      e.subtree_bytes += c.subtree_bytes;
    }
    memo.set(folder.id, e);
    return e;
  };
  for (const f of folders) visit(f, 0);
  return memo;
}

function storedAggregates(f: FolderRow): Expected {
  return {
    subtree_folders: Number(f.subtree_folders),
    subtree_files: Number(f.subtree_files),
    subtree_bytes: Number(f.subtree_bytes),
    child_folders: Number(f.child_folders),
    child_files: Number(f.child_files),
  };
}

interface Snapshot {
  folders: FolderRow[];
  byId: Map<string, FolderRow>;
  expected: Map<string, Expected>;
}

/**
 * Loads every folder and checks, against a full recount:
 * - the stored aggregates of every folder (files ones are 0 here: these tests upload none);
 * - every folder's key unwraps down the chain master → bucket → root → … → folder;
 * - no live folder under a trashed one; trashed non-batch-root folders sit under their batch;
 * - `deleted_at` set exactly on trashed folders;
 * - every folder in its root's bucket, one root per bucket, the bucket pointing at it.
 * `keys: 'folderKey'` unwraps each key with the service's own folderKey (one query per folder);
 * `'walk'` unwraps them all in memory from the rows (for large trees).
 */
async function checkInvariants(db: Db, keyring: Keyring, step = '', keys: 'folderKey' | 'walk' = 'folderKey'): Promise<Snapshot> {
  const folders = await db.selectFrom('folders').selectAll().orderBy('id').execute();
  const files = await db.selectFrom('files').select(['folder_id', 'trash_batch', 'size']).execute();
  const buckets = await db.selectFrom('buckets').selectAll().execute();
  const byId = new Map(folders.map((f) => [f.id, f]));
  const expected = expectedAggregates(folders, files);
  const at = (f: FolderRow) => `${step}: folder "${f.name}" (${f.id}, batch "${f.trash_batch}")`;

  for (const f of folders) {
    assert.deepEqual(storedAggregates(f), expected.get(f.id), `${at(f)} aggregates differ from the recount`);
  }
  if (files.length === 0) {
    for (const f of folders) {
      assert.equal(Number(f.subtree_files) + Number(f.subtree_bytes) + Number(f.child_files), 0, `${at(f)} counts files, there are none`);
    }
  }

  const rootOf = (f: FolderRow): FolderRow => {
    let current = f;
    for (let hops = 0; current.parent_id; hops++) {
      assert.ok(hops < folders.length, `${at(f)} parent links form a cycle`);
      const parent = byId.get(current.parent_id);
      assert.ok(parent, `${at(current)} has a missing parent ${current.parent_id}`);
      current = parent;
    }
    return current;
  };
  for (const f of folders) {
    assert.equal(f.is_root === 1, f.parent_id === null, `${at(f)} is_root and parent_id disagree`);
    const root = rootOf(f);
    assert.equal(f.bucket_id, root.bucket_id, `${at(f)} is not in its root's bucket`);
    if (f.trash_batch === '') {
      assert.equal(f.deleted_at, null, `${at(f)} is live with deleted_at set`);
      if (f.parent_id) assert.equal(byId.get(f.parent_id)!.trash_batch, '', `${at(f)} is live under a trashed parent`);
    } else {
      assert.notEqual(f.deleted_at, null, `${at(f)} is trashed without deleted_at`);
      assert.notEqual(f.is_root, 1, `${at(f)} a root is in the trash`);
      if (f.trash_batch !== f.id) {
        assert.equal(byId.get(f.parent_id!)!.trash_batch, f.trash_batch, `${at(f)} is in a batch its parent is not in`);
      }
      assert.ok(byId.get(f.trash_batch), `${at(f)} batch root is gone`);
    }
  }
  for (const bucket of buckets) {
    const roots = folders.filter((f) => f.bucket_id === bucket.id && f.is_root === 1);
    assert.deepEqual(
      roots.map((r) => r.id),
      [bucket.root_folder_id],
      `${step}: bucket ${bucket.id} has not exactly its one root`,
    );
  }

  if (keys === 'folderKey') {
    for (const f of folders) {
      const key = await folderKey(db, keyring, f.id).catch((error: Error) => assert.fail(`${at(f)} key does not unwrap: ${error.message}`));
      assert.equal(key.length, 32, `${at(f)} key length`);
    }
  } else {
    const bucketsById = new Map(buckets.map((b) => [b.id, b]));
    const keyOf = new Map<string, Buffer>();
    const unwrap = (f: FolderRow): Buffer => {
      const known = keyOf.get(f.id);
      if (known) return known;
      const parentKey = f.parent_id
        ? unwrap(byId.get(f.parent_id)!)
        : keyring.bucketKey(f.bucket_id, bucketsById.get(f.bucket_id)!.key_wrapped);
      let key: Buffer;
      try {
        key = openChildKey(parentKey, f.key_wrapped, f.id);
      } catch (error) {
        assert.fail(`${at(f)} key does not unwrap: ${(error as Error).message}`);
      }
      keyOf.set(f.id, key);
      return key;
    };
    for (const f of folders) unwrap(f);
  }
  return { folders, byId, expected };
}

async function subfolderTotal(user: TestUser, id: string): Promise<number> {
  const res = await user.api.get(`/api/folders/${id}/subfolders?limit=1000`);
  assert.equal(res.status, 200, `subfolders ${id}: ${JSON.stringify(res.body)}`);
  return res.body.data.total;
}

for (const dialect of DIALECTS) {
  describe(`folder aggregates: statement count at 100,000 descendants [${dialect}]`, () => {
    it('details and the first subfolder page issue the same statements for 100,000 descendants as for an empty folder', async (t) => {
      let counting = false;
      let statements: string[] = [];
      const { app, database, config } = await build(t, dialect, {
        // No background jobs: a blob collection or a thumbnail round on its timer would add
        // statements to a measured request.
        config: { collectIntervalSeconds: 0, thumbnailIntervalSeconds: 0 },
        onQuery: (event) => {
          if (counting) statements.push(event.query.sql);
        },
      });
      const db = database.db;
      const keyring = keyringOf(config);
      const user = await signUp(app);
      const a = await createFolder(user, 'A (empty)');
      const b = await createFolder(user, 'B (huge)');

      const CHILDREN = 100;
      const GRANDCHILDREN = 999; // 100 + 100 × 999 = 100,000 descendants
      const started = performance.now();
      const bKey = await folderKey(db, keyring, b.id);
      const now = new Date().toISOString();
      const row = (id: string, parentId: string, name: string, wrapped: string, childCount: number): NewFolder => ({
        id,
        bucket_id: b.bucketId,
        owner_id: user.id,
        parent_id: parentId,
        name,
        visibility: 'private',
        is_share: 1,
        hash_url: randomToken(),
        key_wrapped: wrapped,
        is_root: 0,
        deleted_at: null,
        last_access_at: null,
        subtree_folders: childCount,
        child_folders: childCount,
        created_at: now,
        updated_at: now,
      });
      // Rows first (a key of its own for each folder, wrapped by its parent's), then the inserts.
      const batches: NewFolder[][] = [];
      for (let c = 0; c < CHILDREN; c++) {
        const childId = newId('fld');
        const childKey = newChildKey(bKey, childId);
        const rows = [row(childId, b.id, `child ${String(c).padStart(3, '0')}`, childKey.wrapped, GRANDCHILDREN)];
        for (let g = 0; g < GRANDCHILDREN; g++) {
          const id = newId('fld');
          rows.push(row(id, childId, `grandchild ${g}`, newChildKey(childKey.key, id).wrapped, 0));
        }
        batches.push(rows);
      }
      const rowsMs = performance.now() - started;
      await db.transaction().execute(async (trx) => {
        for (const rows of batches) await insertFolders(trx, rows);
        await adjustChain(
          trx,
          b.id,
          '',
          1,
          { folders: CHILDREN * (1 + GRANDCHILDREN), files: 0, bytes: 0 },
          { folders: CHILDREN, files: 0 },
        );
      });
      const seedMs = performance.now() - started;
      t.diagnostic(
        `[${dialect}] seeded 100,000 folders in ${seedMs.toFixed(0)} ms (rows and keys ${rowsMs.toFixed(0)} ms, inserts ${(seedMs - rowsMs).toFixed(0)} ms)`,
      );

      // The seeded data is what the API itself would have left: aggregates and keys recount clean.
      const recountStarted = performance.now();
      const snapshot = await checkInvariants(db, keyring, 'after seeding', 'walk');
      t.diagnostic(
        `[${dialect}] full recount of ${snapshot.folders.length} folders in ${(performance.now() - recountStarted).toFixed(0)} ms`,
      );
      assert.equal(snapshot.folders.length, 100_000 + 3); // + root, A, B
      const root = snapshot.folders.find((f) => f.is_root === 1 && f.bucket_id === user.defaultBucketId)!;
      assert.equal(Number(root.subtree_folders), 100_002);
      assert.equal(Number(snapshot.byId.get(b.id)!.subtree_folders), 100_000);

      // `warmUrl` differs from `url` where the answer would otherwise come from memory (a page of
      // subfolders, listing.cache.ts): the measured request must run its queries.
      async function measure(url: string, warmUrl = url) {
        const first = await user.api.get(warmUrl); // may write lastAccessAt (at most once a minute)
        assert.equal(first.status, 200, `${warmUrl}: ${JSON.stringify(first.body)}`);
        statements = [];
        counting = true;
        const res = await user.api.get(url);
        counting = false;
        assert.equal(res.status, 200, `${url}: ${JSON.stringify(res.body)}`);
        // The token lookup is skipped once PostgreSQL's revocations are heard (tokens.cache.ts), whenever that happens.
        return { statements: statements.filter((s) => !/from "tokens"/.test(s)), body: res.body };
      }

      const detailsA = await measure(`/api/folders/details/${a.id}`);
      const detailsB = await measure(`/api/folders/details/${b.id}`);
      assert.equal(detailsA.body.data.totalSubfolders, 0);
      assert.equal(detailsB.body.data.totalSubfolders, 100_000);
      assert.ok(detailsA.statements.length > 0, 'the counter sees the statements of a request');
      // The statements themselves are compared, so that a failure shows the odd one.
      assert.deepEqual(detailsB.statements, detailsA.statements, 'details: the very same statements for 100,000 descendants as for none');

      const pageA = await measure(`/api/folders/${a.id}/subfolders?limit=100`, `/api/folders/${a.id}/subfolders?limit=99`);
      const pageB = await measure(`/api/folders/${b.id}/subfolders?limit=100`, `/api/folders/${b.id}/subfolders?limit=99`);
      assert.ok(
        pageB.statements.some((s) => /order by "name", "id"/.test(s)),
        'the measured request read its page',
      );
      assert.equal(pageA.body.data.data.length, 0);
      assert.equal(pageA.body.data.total, 0);
      assert.equal(pageB.body.data.data.length, 100);
      assert.equal(pageB.body.data.total, Number(snapshot.byId.get(b.id)!.child_folders));
      assert.equal(pageB.body.data.total, CHILDREN);
      assert.ok(pageA.statements.length > 0);
      assert.equal(pageB.statements.length, pageA.statements.length, 'subfolders: as many statements for 100,000 descendants as for none');
      assert.deepEqual(pageB.statements, pageA.statements, 'subfolders: the very same statements');
      assert.deepEqual(
        pageB.body.data.data.map((f: { name: string }) => f.name),
        Array.from({ length: CHILDREN }, (_, c) => `child ${String(c).padStart(3, '0')}`),
        'the page is in name order',
      );
      assert.equal(pageB.body.data.nextCursor, null);

      // One level down: 999 children, a first page of 100 and a cursor, still the same statements.
      const child = pageB.body.data.data[0].id as string;
      const pageChild = await measure(`/api/folders/${child}/subfolders?limit=100`, `/api/folders/${child}/subfolders?limit=99`);
      assert.equal(pageChild.body.data.data.length, 100);
      assert.equal(pageChild.body.data.total, GRANDCHILDREN);
      assert.notEqual(pageChild.body.data.nextCursor, null);
      assert.deepEqual(pageChild.statements, pageA.statements, 'subfolders of a folder with 999 children: the same statements');
      const detailsChild = await measure(`/api/folders/details/${child}`);
      assert.equal(detailsChild.body.data.totalSubfolders, GRANDCHILDREN);
      assert.deepEqual(detailsChild.statements, detailsA.statements, 'details of a folder with 999 children: the same statements');
      t.diagnostic(`[${dialect}] details: ${detailsB.statements.length} statements; subfolder page: ${pageB.statements.length} statements`);
    });
  });
}

/** One app, one user, their default bucket's root, and a way to name folders by path. */
async function aggregatesFixture(t: import('node:test').TestContext, dialect: (typeof DIALECTS)[number]) {
  const { app, database, config } = await build(t, dialect);
  const user = await signUp(app);
  const keyring = keyringOf(config);
  const rootPage = await user.api.get('/api/folders/root/subfolders');
  assert.equal(rootPage.status, 200);
  const ids: Record<string, string> = { '/': rootPage.body.data.parentFolder.id };
  /** Creates folders by path ("A", "A/B", …; parents first) in the default bucket. */
  async function mkdirs(...paths: string[]) {
    for (const path of paths) {
      const slash = path.lastIndexOf('/');
      const parent = slash < 0 ? undefined : ids[path.slice(0, slash)];
      const name = path.slice(slash + 1);
      ids[path] = (await createFolder(user, name, parent, {}, user.defaultBucketId)).id;
    }
  }
  /** totalSubfolders of each folder (by path), as the details route answers it. */
  async function expectTotals(step: string, expected: Record<string, number>) {
    const actual: Record<string, number> = {};
    for (const path of Object.keys(expected)) actual[path] = (await folderDetails(user, ids[path])).totalSubfolders;
    assert.deepEqual(actual, expected, `${step}: totalSubfolders`);
  }
  /** The `total` of each folder's subfolder listing, which must also be the number of items listed. */
  async function expectChildren(step: string, expected: Record<string, number>) {
    const actual: Record<string, number> = {};
    for (const path of Object.keys(expected)) {
      const res = await user.api.get(`/api/folders/${ids[path]}/subfolders?limit=1000`);
      assert.equal(res.status, 200);
      assert.equal(res.body.data.total, res.body.data.data.length, `${step}: total of ${path} is not what is listed`);
      actual[path] = res.body.data.total;
    }
    assert.deepEqual(actual, expected, `${step}: subfolder totals`);
  }
  const check = (step: string) => checkInvariants(database.db, keyring, step);
  return { app, database, db: database.db, config, user, keyring, ids, mkdirs, expectTotals, expectChildren, check };
}

async function secondBucket(db: Db, keyring: Keyring, user: TestUser, name = 'Second bucket') {
  return db
    .transaction()
    .execute((trx) =>
      insertBucketWithRoot(trx, keyring, { ownerId: user.id, datahubId: user.defaultDatahubId, name, now: new Date().toISOString() }),
    );
}

async function folderExists(db: Db, id: string): Promise<boolean> {
  return (await db.selectFrom('folders').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;
}

for (const dialect of DIALECTS) {
  describe(`folder aggregates: scenarios [${dialect}]`, () => {
    it('a nested create counts in every ancestor', async (t) => {
      const s = await aggregatesFixture(t, dialect);
      await s.expectTotals('empty bucket', { '/': 0 });
      await s.mkdirs('A');
      await s.expectTotals('A', { '/': 1, A: 0 });
      await s.mkdirs('A/B');
      await s.expectTotals('A/B', { '/': 2, A: 1, 'A/B': 0 });
      await s.mkdirs('A/B/C', 'A/B/C/D');
      await s.expectTotals('A/B/C/D', { '/': 4, A: 3, 'A/B': 2, 'A/B/C': 1, 'A/B/C/D': 0 });
      await s.mkdirs('A/E', 'X');
      await s.expectTotals('A/E and X', { '/': 6, A: 4, 'A/B': 2, 'A/E': 0, X: 0 });
      await s.expectChildren('A/E and X', { '/': 2, A: 2, 'A/B': 1, 'A/B/C': 1, 'A/B/C/D': 0 });
      await s.check('after creates');
    });

    it('a move subtracts along the old chain and adds along the new one, also across buckets', async (t) => {
      const s = await aggregatesFixture(t, dialect);
      await s.mkdirs('A', 'A/B', 'A/B/C', 'A/B/C/D', 'X', 'X/Y');
      await s.expectTotals('before', { '/': 6, A: 3, 'A/B': 2, 'A/B/C': 1, X: 1, 'X/Y': 0 });

      const moved = await s.user.api.post(`/api/folders/move/${s.ids['A/B/C']}`, { targetParentId: s.ids['X/Y'] });
      assert.equal(moved.status, 200, JSON.stringify(moved.body));
      assert.equal(moved.body.data.parentId, s.ids['X/Y']);
      assert.equal(moved.body.data.totalSubfolders, 1);
      await s.expectTotals('C under Y', { '/': 6, A: 1, 'A/B': 0, 'A/B/C': 1, X: 3, 'X/Y': 2 });
      await s.expectChildren('C under Y', { '/': 2, A: 1, 'A/B': 0, X: 1, 'X/Y': 1 });
      await s.check('after a move between branches');

      // A refused move changes nothing.
      const intoOwnChild = await s.user.api.post(`/api/folders/move/${s.ids.X}`, { targetParentId: s.ids['A/B/C'] });
      assert.equal(intoOwnChild.status, 400);
      assert.equal(intoOwnChild.body.code, 'INVALID_MOVE');
      await s.expectTotals('after a refused move', { '/': 6, A: 1, X: 3, 'X/Y': 2 });

      // Across buckets: the subtree leaves one root's count and joins the other's; keys still unwrap.
      const other = await secondBucket(s.db, s.keyring, s.user);
      s.ids['//'] = other.root_folder_id!;
      const across = await s.user.api.post(`/api/folders/move/${s.ids.X}`, { targetParentId: other.root_folder_id });
      assert.equal(across.status, 200, JSON.stringify(across.body));
      assert.equal(across.body.data.bucketId, other.id);
      assert.equal((await folderDetails(s.user, s.ids['A/B/C/D'])).bucketId, other.id, 'the subtree moved to the other bucket');
      await s.expectTotals('X in the other bucket', { '/': 2, '//': 4, X: 3, 'X/Y': 2, A: 1 });
      await s.check('after a move across buckets');

      // And back under A/B.
      const back = await s.user.api.post(`/api/folders/move/${s.ids['X/Y']}`, { targetParentId: s.ids['A/B'] });
      assert.equal(back.status, 200, JSON.stringify(back.body));
      await s.expectTotals('Y back under A/B', { '/': 5, '//': 1, X: 0, A: 4, 'A/B': 3, 'X/Y': 2 });
      await s.check('after a move back across buckets');
    });

    it('a copy adds the copied subtree to the target chain, and only its live part', async (t) => {
      const s = await aggregatesFixture(t, dialect);
      await s.mkdirs('A', 'A/B', 'A/B/C', 'X', 'X/Y');
      await s.expectTotals('before', { '/': 5, A: 2, X: 1, 'X/Y': 0 });

      const copied = await s.user.api.post(`/api/folders/copy/${s.ids.A}`, { targetParentId: s.ids['X/Y'] });
      assert.equal(copied.status, 201, JSON.stringify(copied.body));
      assert.equal(copied.body.data.totalSubfolders, 2);
      s.ids['X/Y/A'] = copied.body.data.id;
      await s.expectTotals('A copied under Y', { '/': 8, A: 2, X: 4, 'X/Y': 3, 'X/Y/A': 2 });
      await s.expectChildren('A copied under Y', { '/': 2, 'X/Y': 1, 'X/Y/A': 1 });
      await s.check('after a copy');

      // Beside itself: a new name, the root grows by the subtree size + 1.
      const beside = await s.user.api.post(`/api/folders/copy/${s.ids.A}`, { targetParentId: s.ids['/'] });
      assert.equal(beside.status, 201, JSON.stringify(beside.body));
      assert.equal(beside.body.data.name, 'A (copy)');
      await s.expectTotals('A copied beside itself', { '/': 11, A: 2 });

      // Into itself: refused, nothing changes.
      const intoItself = await s.user.api.post(`/api/folders/copy/${s.ids.A}`, { targetParentId: s.ids['A/B/C'] });
      assert.equal(intoItself.status, 400);
      await s.expectTotals('after a refused copy', { '/': 11, A: 2, 'A/B/C': 0 });

      // Trashed descendants are not copied, nor counted.
      assert.equal((await s.user.api.delete(`/api/folders/delete/${s.ids['A/B/C']}`)).status, 200);
      await s.expectTotals('C trashed', { '/': 10, A: 1 });
      const live = await s.user.api.post(`/api/folders/copy/${s.ids.A}`, { targetParentId: s.ids.X, name: 'A live part' });
      assert.equal(live.status, 201, JSON.stringify(live.body));
      assert.equal(live.body.data.totalSubfolders, 1);
      await s.expectTotals('live part of A copied under X', { '/': 12, X: 6 });

      // To another bucket.
      const other = await secondBucket(s.db, s.keyring, s.user);
      s.ids['//'] = other.root_folder_id!;
      const across = await s.user.api.post(`/api/folders/copy/${s.ids.X}`, { targetParentId: other.root_folder_id });
      assert.equal(across.status, 201, JSON.stringify(across.body));
      assert.equal(across.body.data.bucketId, other.id);
      await s.expectTotals('X copied to the other bucket', { '/': 12, '//': 7, X: 6 });
      await s.check('after copies');
    });

    it('a soft delete takes the subtree size + 1 off the ancestors; a restore gives it back', async (t) => {
      const s = await aggregatesFixture(t, dialect);
      await s.mkdirs('A', 'A/B', 'A/B/C', 'A/B/C/D', 'A/E');
      await s.expectTotals('before', { '/': 5, A: 4, 'A/B': 2 });

      assert.equal((await s.user.api.delete(`/api/folders/delete/${s.ids['A/B']}`)).status, 200);
      await s.expectTotals('B trashed', { '/': 2, A: 1, 'A/B': 2, 'A/B/C': 1 });
      await s.expectChildren('B trashed', { '/': 1, A: 1, 'A/B': 1 });
      assert.equal((await folderDetails(s.user, s.ids['A/B'])).isDelete, true);
      await s.check('after a soft delete');

      const restored = await s.user.api.post(`/api/folders/restore/${s.ids['A/B']}`);
      assert.equal(restored.status, 200, JSON.stringify(restored.body));
      assert.equal(restored.body.data.parentId, s.ids.A, 'back under its live parent');
      assert.equal(restored.body.data.isDelete, false);
      await s.expectTotals('B restored', { '/': 5, A: 4, 'A/B': 2, 'A/B/C': 1 });
      await s.expectChildren('B restored', { A: 2, 'A/B': 1 });
      await s.check('after a restore');

      // Batches inside batches: C first, then A; C comes back to the root since B is in the trash.
      assert.equal((await s.user.api.delete(`/api/folders/delete/${s.ids['A/B/C']}`)).status, 200);
      await s.expectTotals('C trashed', { '/': 3, A: 2, 'A/B': 0, 'A/B/C': 1 });
      assert.equal((await s.user.api.delete(`/api/folders/delete/${s.ids.A}`)).status, 200);
      await s.expectTotals('A trashed after C', { '/': 0, A: 2, 'A/B': 0, 'A/B/C': 1 });
      await s.check('after nested soft deletes');
      const c = await s.user.api.post(`/api/folders/restore/${s.ids['A/B/C']}`);
      assert.equal(c.status, 200, JSON.stringify(c.body));
      assert.equal(c.body.data.parentId, s.ids['/']);
      await s.expectTotals('C restored to the root', { '/': 2, A: 2, 'A/B': 0, 'A/B/C': 1 });
      const a = await s.user.api.post(`/api/folders/restore/${s.ids.A}`);
      assert.equal(a.status, 200, JSON.stringify(a.body));
      await s.expectTotals('A restored', { '/': 5, A: 2, 'A/B': 0, 'A/B/C': 1 });
      await s.expectChildren('A restored', { '/': 2, A: 2 });
      await s.check('after restores');
    });

    it('restoring a folder from inside a trashed folder brings its subtree to the bucket root and takes it off the trashed parent', async (t) => {
      const s = await aggregatesFixture(t, dialect);
      await s.mkdirs('A', 'A/B', 'A/B/C', 'A/B/C/D', 'A/E');
      assert.equal((await s.user.api.delete(`/api/folders/delete/${s.ids.A}`)).status, 200);
      await s.expectTotals('A trashed', { '/': 0, A: 4, 'A/B': 2, 'A/B/C': 1 });
      await s.mkdirs('C'); // takes the name at the root
      await s.expectTotals('C at the root', { '/': 1 });

      const restored = await s.user.api.post(`/api/folders/restore/${s.ids['A/B/C']}`);
      assert.equal(restored.status, 200, JSON.stringify(restored.body));
      assert.equal(restored.body.data.parentId, s.ids['/'], 'to the bucket root: its parent is in the trash');
      assert.equal(restored.body.data.name, 'C (restored)');
      assert.equal(restored.body.data.isDelete, false);
      assert.equal(restored.body.data.totalSubfolders, 1, 'its subtree came back with it');
      assert.equal((await folderDetails(s.user, s.ids['A/B/C/D'])).isDelete, false);
      await s.expectTotals('C restored out of A', { '/': 3, A: 2, 'A/B': 0, 'A/B/C': 1 });
      await s.expectChildren('C restored out of A', { '/': 2, A: 2, 'A/B': 0, 'A/B/C': 1 });
      await s.check('after a restore from inside a trashed folder');

      const a = await s.user.api.post(`/api/folders/restore/${s.ids.A}`);
      assert.equal(a.status, 200, JSON.stringify(a.body));
      await s.expectTotals('A restored', { '/': 6, A: 2, 'A/B': 0, 'A/B/C': 1 });
      await s.check('after restoring the rest');
    });

    it('a hard delete takes a live subtree off its ancestors, and a trashed one off its batch only', async (t) => {
      const s = await aggregatesFixture(t, dialect);
      await s.mkdirs('A', 'A/B', 'A/B/C', 'A/B/C/D', 'A/E', 'X', 'X/G', 'X/G/H', 'X/G/H/I');
      await s.expectTotals('before', { '/': 9, A: 4, X: 3 });

      // A live folder: it and its subtree are gone, the ancestors lose subtree size + 1.
      assert.equal((await s.user.api.delete(`/api/folders/delete/${s.ids['A/B']}?trash=hard`)).status, 200);
      for (const path of ['A/B', 'A/B/C', 'A/B/C/D']) assert.equal(await folderExists(s.db, s.ids[path]), false, `${path} is gone`);
      await s.expectTotals('B deleted for good', { '/': 6, A: 1, X: 3 });
      await s.expectChildren('B deleted for good', { '/': 2, A: 1 });
      await s.check('after a hard delete of a live folder');

      // A trashed batch root: the live tree does not change.
      assert.equal((await s.user.api.delete(`/api/folders/delete/${s.ids['A/E']}`)).status, 200);
      await s.expectTotals('E trashed', { '/': 5, A: 0 });
      assert.equal((await s.user.api.delete(`/api/folders/delete/${s.ids['A/E']}`, { trash: 'hard' })).status, 200);
      assert.equal(await folderExists(s.db, s.ids['A/E']), false);
      await s.expectTotals('E deleted for good from the trash', { '/': 5, A: 0 });
      await s.check('after a hard delete of a trashed folder');

      // A folder inside a trashed batch: its batch loses it, the live tree does not change.
      assert.equal((await s.user.api.delete(`/api/folders/delete/${s.ids['X/G']}`)).status, 200);
      await s.expectTotals('G trashed', { '/': 2, X: 0, 'X/G': 2, 'X/G/H': 1 });
      assert.equal((await s.user.api.delete(`/api/folders/delete/${s.ids['X/G/H']}?trash=hard`)).status, 200);
      assert.equal(await folderExists(s.db, s.ids['X/G/H/I']), false);
      await s.expectTotals('H deleted for good from inside G', { '/': 2, X: 0, 'X/G': 0 });
      await s.expectChildren('H deleted for good from inside G', { 'X/G': 0 });
      await s.check('after a hard delete inside a trashed folder');

      // A live folder holding an earlier trash batch: everything goes, only the live part is subtracted.
      await s.mkdirs('A/J', 'A/J/K', 'A/J/K/L');
      assert.equal((await s.user.api.delete(`/api/folders/delete/${s.ids['A/J/K']}`)).status, 200);
      await s.expectTotals('K trashed', { '/': 3, A: 1 });
      assert.equal((await s.user.api.delete(`/api/folders/delete/${s.ids.A}?trash=hard`)).status, 200);
      for (const path of ['A', 'A/J', 'A/J/K', 'A/J/K/L']) assert.equal(await folderExists(s.db, s.ids[path]), false, `${path} is gone`);
      await s.expectTotals('A deleted for good', { '/': 1 });

      const root = await s.user.api.delete(`/api/folders/delete/${s.ids['/']}?trash=hard`);
      assert.equal(root.status, 400);
      await s.expectTotals('the root stays', { '/': 1 });
      await s.check('after hard deletes');
    });
  });
}

/** Ids of a folder and of all its descendants, whatever their trash state. */
function subtreeIds(snapshot: Snapshot, id: string): Set<string> {
  const ids = new Set([id]);
  let grew = true;
  while (grew) {
    grew = false;
    for (const f of snapshot.folders) {
      if (f.parent_id && ids.has(f.parent_id) && !ids.has(f.id)) {
        ids.add(f.id);
        grew = true;
      }
    }
  }
  return ids;
}

/** Rows without the columns a refused request may still touch (reads record lastAccessAt). */
function comparable(snapshot: Snapshot) {
  return snapshot.folders.map(({ last_access_at: _a, ...row }) => ({ ...row, ...storedAggregates(row as FolderRow) }));
}

// COFFRE_AGGREGATES_SEED and COFFRE_AGGREGATES_OPERATIONS replay or lengthen a sequence by hand.
const OPERATIONS = Number(process.env.COFFRE_AGGREGATES_OPERATIONS) || 150;
const SEEDS: Record<string, number> = { sqlite: 0x5eed_0001, postgres: 0x5eed_0002 };

for (const dialect of DIALECTS) {
  describe(`folder aggregates: random operations against a full recount [${dialect}]`, () => {
    it(`${OPERATIONS} seeded create/rename/move/copy/trash/restore/delete calls keep aggregates, keys and trash states exact`, async (t) => {
      const s = await aggregatesFixture(t, dialect);
      const other = await secondBucket(s.db, s.keyring, s.user);
      const seed = Number(process.env.COFFRE_AGGREGATES_SEED) || (SEEDS[dialect] ?? 0x5eed_0000);
      const random = prng(seed);
      const pick = <T>(items: T[]): T => items[Math.floor(random() * items.length)];
      const names = ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta'];
      const counts: Record<string, Record<number, number>> = {};
      const trace: string[] = [];
      const tags: Record<string, number> = {};
      const started = performance.now();

      let snapshot = await s.check('start');
      // A few folders in each bucket to start from.
      for (const bucket of [s.user.defaultBucketId, other.id]) {
        for (const name of ['one', 'two']) await createFolder(s.user, name, undefined, {}, bucket);
      }
      snapshot = await s.check('seeded');

      // Ids carry random bits, so picks go by a key made of names and states: the sequence replays.
      const sortKey = (snap: Snapshot, f: FolderRow): string => {
        const parts: string[] = [];
        for (let p: FolderRow | undefined = f; p; p = p.parent_id ? snap.byId.get(p.parent_id) : undefined) {
          parts.unshift(
            p.is_root ? (p.bucket_id === other.id ? '2' : '1') : `${p.name}\u0001${p.trash_batch ? 't' : 'l'}${p.deleted_at ?? ''}`,
          );
        }
        return parts.join('\u0000');
      };
      const inOrder = (snap: Snapshot): FolderRow[] => {
        const keys = new Map(snap.folders.map((f) => [f.id, sortKey(snap, f)]));
        return [...snap.folders].sort((x, y) => (keys.get(x.id)! < keys.get(y.id)! ? -1 : keys.get(x.id)! > keys.get(y.id)! ? 1 : 0));
      };
      for (let step = 0; step < OPERATIONS; step++) {
        const ordered = inOrder(snapshot);
        const live = ordered.filter((f) => f.trash_batch === '');
        const liveNonRoot = live.filter((f) => f.is_root === 0);
        const trashed = ordered.filter((f) => f.trash_batch !== '');
        const before = snapshot;
        const weights: [string, number][] = [
          ['create', 34],
          ['rename', 8],
          ['move', 20],
          ['copy', snapshot.folders.length < 250 ? 8 : 0],
          ['soft', liveNonRoot.length > 0 ? 12 : 0],
          ['restore', trashed.length > 0 ? 14 : 0],
          ['hard', 6],
        ];
        let r = random() * weights.reduce((sum, [, w]) => sum + w, 0);
        const op = weights.find(([, w]) => (r -= w) < 0)![0];
        const label = (f: FolderRow) => `${f.name}(${f.id.slice(-6)}${f.trash_batch ? ', trashed' : ''}${f.is_root ? ', root' : ''})`;
        let description = '';
        let res: Awaited<ReturnType<TestUser['api']['get']>>;
        let check: (() => void) | undefined;
        const expectRefusal = (status: number, code: string) => {
          assert.equal(res.status, status, `seed ${seed}, step ${step}: ${description}: ${JSON.stringify(res.body)}`);
          assert.equal(res.body.code, code, `seed ${seed}, step ${step}: ${description}`);
        };
        const expectSuccess = (status: number) =>
          assert.equal(res.status, status, `seed ${seed}, step ${step}: ${description}: ${JSON.stringify(res.body)}`);
        /** Whether a live folder of that name sits directly in `parentId` (there are no files here). */
        const taken = (parentId: string, name: string, except?: string) =>
          before.folders.some((f) => f.parent_id === parentId && f.trash_batch === '' && f.name === name && f.id !== except);

        if (op === 'create') {
          const parent = trashed.length > 0 && random() < 0.08 ? pick(trashed) : pick(live);
          const name = pick(names);
          description = `create "${name}" in ${label(parent)}`;
          res = await s.user.api.post(`/api/folders/create/${parent.bucket_id}`, { name, parentId: parent.id });
          if (parent.trash_batch !== '') expectRefusal(409, 'FOLDER_IN_TRASH');
          else if (taken(parent.id, name)) expectRefusal(409, 'NAME_CONFLICT');
          else expectSuccess(201);
          check = () => {
            const row = snapshot.byId.get(res.body.data.id);
            assert.ok(row && row.parent_id === parent.id && row.trash_batch === '', 'the new folder is live under its parent');
          };
        } else if (op === 'rename') {
          const folder = random() < 0.1 ? pick(live.filter((f) => f.is_root === 1)) : pick(liveNonRoot.length ? liveNonRoot : live);
          const name = pick(names);
          description = `rename ${label(folder)} to "${name}"`;
          res = await s.user.api.put(`/api/folders/update/${folder.id}`, { name });
          if (folder.is_root) expectRefusal(400, 'ROOT_FOLDER_READONLY');
          else if (taken(folder.parent_id!, name, folder.id)) expectRefusal(409, 'NAME_CONFLICT');
          else expectSuccess(200);
          check = () => assert.equal(snapshot.byId.get(folder.id)!.name, name);
        } else if (op === 'move') {
          const folder = random() < 0.05 ? pick(live) : pick(liveNonRoot.length ? liveNonRoot : live);
          // A quarter of the time a target inside the folder itself, which must be refused; now and then a trashed one.
          const inside = live.filter((f) => subtreeIds(before, folder.id).has(f.id));
          const r = random();
          const target = r < 0.25 ? pick(inside) : trashed.length > 0 && r < 0.32 ? pick(trashed) : pick(live);
          description = `move ${label(folder)} under ${label(target)}`;
          res = await s.user.api.post(`/api/folders/move/${folder.id}`, { targetParentId: target.id });
          if (folder.is_root) expectRefusal(400, 'ROOT_FOLDER_READONLY');
          else if (target.trash_batch !== '') expectRefusal(409, 'FOLDER_IN_TRASH');
          else if (subtreeIds(before, folder.id).has(target.id)) expectRefusal(400, 'INVALID_MOVE');
          else if (target.id !== folder.parent_id && taken(target.id, folder.name)) expectRefusal(409, 'NAME_CONFLICT');
          else expectSuccess(200);
          if (res.status === 200 && target.bucket_id !== folder.bucket_id) tags.crossBucket = (tags.crossBucket ?? 0) + 1;
          check = () => {
            const row = snapshot.byId.get(folder.id)!;
            assert.equal(row.parent_id, target.id);
            assert.equal(row.bucket_id, target.bucket_id);
            assert.equal(res.body.data.totalSubfolders, before.expected.get(folder.id)!.subtree_folders, 'a move keeps the subtree');
          };
        } else if (op === 'copy') {
          const candidates = liveNonRoot.filter((f) => before.expected.get(f.id)!.subtree_folders <= 25);
          const folder = pick(candidates.length ? candidates : live);
          const target = random() < 0.15 ? pick(live.filter((f) => subtreeIds(before, folder.id).has(f.id))) : pick(live);
          const named = random() < 0.3 ? pick(names) : undefined;
          description = `copy ${label(folder)} under ${label(target)}${named ? ` as "${named}"` : ''}`;
          res = await s.user.api.post(`/api/folders/copy/${folder.id}`, { targetParentId: target.id, ...(named ? { name: named } : {}) });
          if (folder.is_root) expectRefusal(400, 'ROOT_FOLDER_READONLY');
          else if (subtreeIds(before, folder.id).has(target.id)) expectRefusal(400, 'INVALID_MOVE');
          else if (named && taken(target.id, named)) expectRefusal(409, 'NAME_CONFLICT');
          else expectSuccess(201);
          if (res.status === 201 && target.bucket_id !== folder.bucket_id) tags.crossBucket = (tags.crossBucket ?? 0) + 1;
          check = () => {
            const copy = snapshot.byId.get(res.body.data.id)!;
            assert.equal(copy.parent_id, target.id);
            assert.equal(copy.bucket_id, target.bucket_id);
            const size = before.expected.get(folder.id)!.subtree_folders;
            assert.equal(snapshot.expected.get(copy.id)!.subtree_folders, size, 'the copy holds the live subtree of the source');
            assert.equal(snapshot.folders.length, before.folders.length + size + 1);
          };
        } else if (op === 'soft') {
          // Now and then a folder already in the trash, which stays as it is.
          const folder = trashed.length > 0 && random() < 0.1 ? pick(trashed) : pick(liveNonRoot);
          description = `soft delete ${label(folder)}`;
          res = await s.user.api.delete(`/api/folders/delete/${folder.id}`);
          expectSuccess(200);
          check = () => {
            if (folder.trash_batch !== '') {
              assert.deepEqual(comparable(snapshot), comparable(before), 'trashing a trashed folder changes nothing');
              return;
            }
            const went = [...subtreeIds(before, folder.id)].filter((id) => before.byId.get(id)!.trash_batch === '');
            for (const id of went) assert.equal(snapshot.byId.get(id)!.trash_batch, folder.id, `${id} went to the trash with ${folder.id}`);
            assert.equal(went.length, before.expected.get(folder.id)!.subtree_folders + 1);
          };
        } else if (op === 'restore') {
          const folder = pick(trashed);
          const oldParent = before.byId.get(folder.parent_id!)!;
          const root = before.folders.find((f) => f.is_root === 1 && f.bucket_id === folder.bucket_id)!;
          const expectedParent = oldParent.trash_batch === '' ? oldParent.id : root.id;
          description = `restore ${label(folder)} (batch ${folder.trash_batch.slice(-6)}, parent ${label(oldParent)})`;
          res = await s.user.api.post(`/api/folders/restore/${folder.id}`);
          expectSuccess(200);
          if (res.status === 200) {
            if (folder.trash_batch !== folder.id) tags.restoreFromInside = (tags.restoreFromInside ?? 0) + 1;
            if (expectedParent === root.id && oldParent.id !== root.id) tags.restoreToRoot = (tags.restoreToRoot ?? 0) + 1;
          }
          check = () => {
            const row = snapshot.byId.get(folder.id)!;
            assert.equal(row.trash_batch, '');
            assert.equal(row.parent_id, expectedParent, 'restored to its old parent if live, else to the bucket root');
            const back = [...subtreeIds(before, folder.id)].filter((id) => before.byId.get(id)!.trash_batch === folder.trash_batch);
            for (const id of back) assert.equal(snapshot.byId.get(id)!.trash_batch, '', `${id} came back with ${folder.id}`);
            assert.equal(res.body.data.totalSubfolders, back.length - 1);
          };
        } else {
          const roots = live.filter((f) => f.is_root === 1);
          const r = random();
          const folder =
            trashed.length > 0 && r < 0.4 ? pick(trashed) : liveNonRoot.length === 0 || r > 0.95 ? pick(roots) : pick(liveNonRoot);
          description = `hard delete ${label(folder)}`;
          res = await s.user.api.delete(`/api/folders/delete/${folder.id}?trash=hard`);
          if (folder.is_root) expectRefusal(400, 'ROOT_FOLDER_READONLY');
          else expectSuccess(200);
          if (res.status === 200) {
            const tag = folder.trash_batch === '' ? 'hardLive' : 'hardTrashed';
            tags[tag] = (tags[tag] ?? 0) + 1;
          }
          check = () => {
            const gone = subtreeIds(before, folder.id);
            for (const id of gone) assert.equal(snapshot.byId.has(id), false, `${id} is gone`);
            assert.equal(snapshot.folders.length, before.folders.length - gone.size);
          };
        }

        trace.push(`#${step} ${description} → ${res.status} ${res.body?.code ?? ''}`);
        const where = `seed ${seed}, step ${step}: ${description}\n  ${trace.slice(-8).join('\n  ')}`;
        counts[op] ??= {};
        counts[op][res.status] = (counts[op][res.status] ?? 0) + 1;
        assert.ok(res.status < 500, `${where}: ${res.status} ${JSON.stringify(res.body)}`);
        snapshot = await checkInvariants(s.db, s.keyring, where, step % 10 === 9 ? 'folderKey' : 'walk');
        if (res.status >= 400) {
          assert.deepEqual(comparable(snapshot), comparable(before), `${where}: a refused request changed rows`);
        } else {
          try {
            check?.();
          } catch (error) {
            (error as Error).message = `${where}: ${(error as Error).message}`;
            throw error;
          }
        }

        // What the API answers is what the recount says, for a random folder.
        const probe = pick(inOrder(snapshot));
        const probed = await folderDetails(s.user, probe.id);
        assert.equal(probed.totalSubfolders, snapshot.expected.get(probe.id)!.subtree_folders, `${where}: details of ${probe.id}`);
        assert.equal(
          await subfolderTotal(s.user, probe.id),
          snapshot.expected.get(probe.id)!.child_folders,
          `${where}: listing total of ${probe.id}`,
        );
      }
      await checkInvariants(s.db, s.keyring, 'end', 'folderKey');

      const final = {
        folders: snapshot.folders.length,
        trashed: snapshot.folders.filter((f) => f.trash_batch !== '').length,
        inOtherBucket: snapshot.folders.filter((f) => f.bucket_id === other.id).length,
        deepest: Math.max(
          ...snapshot.folders.map((f) => {
            let depth = 0;
            for (let p = f.parent_id; p; p = snapshot.byId.get(p)!.parent_id) depth++;
            return depth;
          }),
        ),
      };
      t.diagnostic(
        `[${dialect}] seed ${seed}: ${JSON.stringify(counts)}; ${JSON.stringify(tags)}; at the end ${JSON.stringify(final)}; ${(performance.now() - started).toFixed(0)} ms`,
      );
      // The mix really exercised every operation, successes included.
      for (const op of ['create', 'rename', 'move', 'copy', 'soft', 'restore', 'hard']) {
        assert.ok(
          Object.keys(counts[op] ?? {}).some((status) => Number(status) < 300),
          `no successful ${op} in the sequence`,
        );
      }
      assert.ok(counts.move[400] > 0, 'some moves into their own subtree were refused');
      for (const tag of ['crossBucket', 'restoreFromInside', 'restoreToRoot', 'hardLive', 'hardTrashed']) {
        assert.ok((tags[tag] ?? 0) > 0, `the sequence covered no ${tag}`);
      }
      assert.ok(final.inOtherBucket > 1, 'the second bucket holds folders');
    });
  });
}

for (const dialect of DIALECTS) {
  describe(`folder aggregates: the recount itself [${dialect}]`, () => {
    it('checkInvariants catches each kind of damage', async (t) => {
      const s = await aggregatesFixture(t, dialect);
      await s.mkdirs('A', 'A/B', 'A/B/C', 'A/B/C/D', 'X');
      assert.equal((await s.user.api.delete(`/api/folders/delete/${s.ids['A/B/C']}`)).status, 200);
      await s.check('intact');
      const other = await secondBucket(s.db, s.keyring, s.user);

      /** Applies a damage, expects the check to fail with `pattern`, and undoes it. */
      async function expectCaught(what: string, damage: (db: Db) => Promise<unknown>, undo: (db: Db) => Promise<unknown>, pattern: RegExp) {
        await damage(s.db);
        await assert.rejects(checkInvariants(s.db, s.keyring, what, 'walk'), pattern, `walk: ${what}`);
        await assert.rejects(checkInvariants(s.db, s.keyring, what, 'folderKey'), pattern, `folderKey: ${what}`);
        await undo(s.db);
        await s.check(`undone: ${what}`);
      }
      const set = (id: string, changes: Partial<FolderRow>) => (db: Db) =>
        db.updateTable('folders').set(changes).where('id', '=', id).execute();
      const row = (id: string) => s.db.selectFrom('folders').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
      const a = await row(s.ids.A);
      const b = await row(s.ids['A/B']);
      const c = await row(s.ids['A/B/C']);
      const d = await row(s.ids['A/B/C/D']);
      const x = await row(s.ids.X);
      assert.equal(d.trash_batch, c.id);

      await expectCaught(
        'subtree_folders off by one',
        set(a.id, { subtree_folders: 2 }),
        set(a.id, { subtree_folders: 1 }),
        /aggregates differ/,
      );
      await expectCaught(
        'child_folders off by one',
        set(s.ids['/'], { child_folders: 3 }),
        set(s.ids['/'], { child_folders: 2 }),
        /aggregates differ/,
      );
      await expectCaught(
        'a trashed folder counted live',
        set(b.id, { subtree_folders: 1, child_folders: 1 }),
        set(b.id, { subtree_folders: 0, child_folders: 0 }),
        /aggregates differ/,
      );
      await expectCaught(
        'files counted without files',
        set(x.id, { subtree_files: 1, child_files: 1 }),
        set(x.id, { subtree_files: 0, child_files: 0 }),
        /aggregates differ/,
      );
      await expectCaught(
        'a key wrapped for another folder',
        set(b.id, { key_wrapped: x.key_wrapped }),
        set(b.id, { key_wrapped: b.key_wrapped }),
        /does not unwrap/,
      );
      // A move that forgot to re-wrap: B's key wrapped by X's key while B stays under A.
      const wrongParent = newChildKey(await folderKey(s.db, s.keyring, x.id), b.id).wrapped;
      await expectCaught(
        'a key wrapped by the wrong parent',
        set(b.id, { key_wrapped: wrongParent }),
        set(b.id, { key_wrapped: b.key_wrapped }),
        /does not unwrap/,
      );
      await expectCaught(
        'a folder in another bucket than its root',
        set(x.id, { bucket_id: other.id }),
        set(x.id, { bucket_id: x.bucket_id }),
        /not in its root's bucket/,
      );
      // D live under trashed C, with C's aggregates matching, so only the liveness rule can catch it.
      await expectCaught(
        'a live folder under a trashed one',
        async (db) => {
          await set(d.id, { trash_batch: '', deleted_at: null })(db);
          await set(c.id, { subtree_folders: 0, child_folders: 0 })(db);
        },
        async (db) => {
          await set(d.id, { trash_batch: d.trash_batch, deleted_at: d.deleted_at })(db);
          await set(c.id, { subtree_folders: 1, child_folders: 1 })(db);
        },
        /live under a trashed parent/,
      );
      await expectCaught(
        "a trashed folder outside its parent's batch",
        async (db) => {
          await set(d.id, { trash_batch: x.id })(db);
          await set(c.id, { subtree_folders: 0, child_folders: 0 })(db);
        },
        async (db) => {
          await set(d.id, { trash_batch: d.trash_batch })(db);
          await set(c.id, { subtree_folders: 1, child_folders: 1 })(db);
        },
        /in a batch its parent is not in/,
      );
      await expectCaught(
        'a trashed folder without deleted_at',
        set(c.id, { deleted_at: null }),
        set(c.id, { deleted_at: c.deleted_at }),
        /without deleted_at/,
      );
    });
  });
}
