// Folder aggregates (subtree_* and child_* columns, docs/architecture.md), a second angle beside
// aggregates.test.ts (statement count at 100,000 descendants, scenarios, random run): a top-down recount independent of the service's upward walk; a
// random sequence with uploads, biased towards restores from inside trashed folders and hard
// deletes of trashed ones, each step also read back through the API; mutations of one tree
// racing on PostgreSQL's pooled connections; and scenarios pinning the expected deltas, files
// included.
import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import type { FastifyInstance } from 'fastify';
import type { Db } from '../../../src/db/database.js';
import { DIALECTS, build, signUp, type ApiResponse, type TestUser } from '../../helper.js';
import { prng } from '../../support/prng.js';

// ---------------------------------------------------------------------------------------------
// The full recount
// ---------------------------------------------------------------------------------------------

interface Aggregates {
  subtree_folders: number;
  subtree_files: number;
  subtree_bytes: number;
  child_folders: number;
  child_files: number;
}

interface Recount {
  /** What every folder's aggregates should be, by id. */
  expected: Map<string, Aggregates>;
  folderCount: number;
}

/**
 * Recomputes every folder's aggregates from `parent_id` / `trash_batch` (and, for files,
 * `folder_id` / `trash_batch` / `size`) alone, top-down: a folder counts the descendants that
 * share its trash batch and are reachable through descendants sharing it; its child counts are
 * its direct children sharing it. Asserts the stored columns equal the recount.
 */
async function recount(db: Db, step = ''): Promise<Recount> {
  const folders = await db
    .selectFrom('folders')
    .select(['id', 'name', 'parent_id', 'trash_batch', 'subtree_folders', 'subtree_files', 'subtree_bytes', 'child_folders', 'child_files'])
    .execute();
  const files = await db.selectFrom('files').select(['folder_id', 'trash_batch', 'size']).execute();
  const children = new Map<string, typeof folders>();
  for (const f of folders) {
    if (f.parent_id === null) continue;
    const list = children.get(f.parent_id) ?? [];
    list.push(f);
    children.set(f.parent_id, list);
  }
  const filesIn = new Map<string, typeof files>();
  for (const file of files) {
    const list = filesIn.get(file.folder_id) ?? [];
    list.push(file);
    filesIn.set(file.folder_id, list);
  }

  const expected = new Map<string, Aggregates>();
  for (const folder of folders) {
    const batch = folder.trash_batch;
    const e: Aggregates = { subtree_folders: 0, subtree_files: 0, subtree_bytes: 0, child_folders: 0, child_files: 0 };
    for (const c of children.get(folder.id) ?? []) if (c.trash_batch === batch) e.child_folders++;
    for (const file of filesIn.get(folder.id) ?? []) if (file.trash_batch === batch) e.child_files++;
    // Depth-first through the descendants in the same batch, with a stack (deep trees are fine).
    const stack = [folder.id];
    const seen = new Set<string>();
    while (stack.length > 0) {
      const id = stack.pop()!;
      assert.ok(!seen.has(id), `${step}: parent links form a cycle through ${id}`);
      seen.add(id);
      for (const file of filesIn.get(id) ?? []) {
        if (file.trash_batch !== batch) continue;
        e.subtree_files++;
        e.subtree_bytes += Number(file.size);
      }
      for (const c of children.get(id) ?? []) {
        if (c.trash_batch !== batch) continue;
        e.subtree_folders++;
        stack.push(c.id);
      }
    }
    expected.set(folder.id, e);
  }

  const mismatches: string[] = [];
  for (const f of folders) {
    const e = expected.get(f.id)!;
    const stored: Aggregates = {
      subtree_folders: Number(f.subtree_folders),
      subtree_files: Number(f.subtree_files),
      subtree_bytes: Number(f.subtree_bytes),
      child_folders: Number(f.child_folders),
      child_files: Number(f.child_files),
    };
    for (const key of Object.keys(e) as (keyof Aggregates)[]) {
      if (stored[key] !== e[key])
        mismatches.push(`${f.name} (${f.id}, batch '${f.trash_batch}') ${key}: stored ${stored[key]}, recount ${e[key]}`);
    }
  }
  assert.deepEqual(mismatches, [], `${step}: aggregates differ from the recount`);
  return { expected, folderCount: folders.length };
}

/**
 * Trash states are consistent: a live folder (or file) has no trashed ancestor; a trashed folder
 * carries the id of a trash root (`trash_batch = id`) that is itself or an ancestor, every folder
 * between them is in the same batch, and they share the root's `deleted_at`.
 */
async function checkTrashState(db: Db, step = ''): Promise<void> {
  const folders = await db
    .selectFrom('folders')
    .select(['id', 'name', 'parent_id', 'trash_batch', 'deleted_at', 'is_root', 'bucket_id'])
    .execute();
  const files = await db.selectFrom('files').select(['id', 'name', 'folder_id', 'trash_batch', 'deleted_at']).execute();
  const byId = new Map(folders.map((f) => [f.id, f]));
  for (const f of folders) {
    assert.equal(f.parent_id === null, f.is_root === 1, `${step}: only a root has no parent (${f.name})`);
    if (f.parent_id !== null) {
      const parent = byId.get(f.parent_id);
      assert.ok(parent, `${step}: ${f.name} has a missing parent`);
      assert.equal(parent.bucket_id, f.bucket_id, `${step}: ${f.name} in another bucket than its parent`);
    }
    if (f.trash_batch === '') {
      assert.equal(f.deleted_at, null, `${step}: live ${f.name} has deleted_at`);
      for (let up = f.parent_id; up !== null; up = byId.get(up)!.parent_id) {
        assert.equal(byId.get(up)!.trash_batch, '', `${step}: live ${f.name} has a trashed ancestor ${byId.get(up)!.name}`);
      }
      continue;
    }
    assert.equal(f.is_root, 0, `${step}: a root folder is in the trash`);
    const batchRoot = byId.get(f.trash_batch);
    assert.ok(batchRoot, `${step}: ${f.name} is in batch ${f.trash_batch} whose folder is gone`);
    assert.equal(batchRoot.trash_batch, batchRoot.id, `${step}: the batch root of ${f.name} is not a trash root`);
    assert.notEqual(f.deleted_at, null, `${step}: trashed ${f.name} has no deleted_at`);
    assert.equal(f.deleted_at, batchRoot.deleted_at, `${step}: ${f.name} and its batch root differ in deleted_at`);
    let cur = f;
    while (cur.id !== batchRoot.id) {
      assert.equal(cur.trash_batch, f.trash_batch, `${step}: ${cur.name} breaks batch ${f.trash_batch} between ${f.name} and its root`);
      assert.ok(cur.parent_id, `${step}: the batch root of ${f.name} is not one of its ancestors`);
      cur = byId.get(cur.parent_id)!;
    }
  }
  for (const file of files) {
    const folder = byId.get(file.folder_id)!;
    if (file.trash_batch === '') {
      assert.equal(folder.trash_batch, '', `${step}: live file ${file.name} in trashed folder ${folder.name}`);
      assert.equal(file.deleted_at, null, `${step}: live file ${file.name} has deleted_at`);
    } else if (file.trash_batch !== file.id) {
      // Trashed with a folder: its folder is in that batch.
      assert.equal(
        folder.trash_batch,
        file.trash_batch,
        `${step}: file ${file.name} in batch ${file.trash_batch}, its folder in '${folder.trash_batch}'`,
      );
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Small API helpers
// ---------------------------------------------------------------------------------------------

function expectBody(res: ApiResponse, status: number, what: string) {
  assert.equal(res.status, status, `${what}: expected ${status}, got ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

function folderApi(user: TestUser) {
  const api = user.api;
  return {
    async root(): Promise<string> {
      return expectBody(await api.get('/api/folders/root/subfolders'), 200, 'root').data.parentFolder.id;
    },
    async mk(name: string, parentId?: string): Promise<string> {
      return expectBody(
        await api.post(`/api/folders/create/${user.defaultBucketId}`, { name, ...(parentId ? { parentId } : {}) }),
        201,
        `create ${name}`,
      ).data.id;
    },
    async details(id: string) {
      return expectBody(await api.get(`/api/folders/details/${id}`), 200, `details ${id}`).data;
    },
    /** totalSubfolders of the detail. */
    async total(id: string): Promise<number> {
      return (await this.details(id)).totalSubfolders;
    },
    /** `total` of the subfolder listing and the names on it. */
    async children(id: string): Promise<{ total: number; names: string[] }> {
      const page = expectBody(await api.get(`/api/folders/${id}/subfolders?limit=1000`), 200, `subfolders ${id}`).data;
      return { total: page.total, names: page.data.map((f: { name: string }) => f.name) };
    },
    async move(id: string, targetParentId: string) {
      return expectBody(await api.post(`/api/folders/move/${id}`, { targetParentId }), 200, `move ${id}`).data;
    },
    async copy(id: string, targetParentId: string, name?: string) {
      return expectBody(await api.post(`/api/folders/copy/${id}`, { targetParentId, ...(name ? { name } : {}) }), 201, `copy ${id}`).data;
    },
    async trash(id: string) {
      expectBody(await api.delete(`/api/folders/delete/${id}`), 200, `trash ${id}`);
    },
    async hardDelete(id: string) {
      expectBody(await api.delete(`/api/folders/delete/${id}?trash=hard`), 200, `hard delete ${id}`);
    },
    async restore(id: string) {
      return expectBody(await api.post(`/api/folders/restore/${id}`), 200, `restore ${id}`).data;
    },
  };
}

/** totalSubfolders of several folders at once, by label. */
async function totalsByLabel(f: ReturnType<typeof folderApi>, ids: Record<string, string>): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const [label, id] of Object.entries(ids)) out[label] = await f.total(id);
  return out;
}

function shifted(before: Record<string, number>, delta: Record<string, number>): Record<string, number> {
  const out = { ...before };
  for (const [label, d] of Object.entries(delta)) out[label] += d;
  return out;
}

async function tryUpload(app: FastifyInstance, user: TestUser, folderId: string, name: string, size: number) {
  const res = await app.inject({
    method: 'PUT',
    url: `/api/files/upload/${folderId}?name=${encodeURIComponent(name)}`,
    headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/octet-stream' },
    payload: Buffer.alloc(size, 7),
  });
  return { status: res.statusCode, body: res.body ? res.json() : undefined };
}

// ---------------------------------------------------------------------------------------------
// The tests
// ---------------------------------------------------------------------------------------------

for (const dialect of DIALECTS) {
  describe(`folder aggregates, recounted [${dialect}]`, () => {
    it('keeps every aggregate equal to a full recount through a random sequence of operations', async (t) => {
      const { app, database } = await build(t, dialect, { config: { collectIntervalSeconds: 0 } });
      const user = await signUp(app);
      const api = user.api;
      const f = folderApi(user);
      const root = await f.root();
      const random = prng(dialect === 'sqlite' ? 20260501 : 20260502);
      const pick = <T>(items: T[]): T | undefined => (items.length === 0 ? undefined : items[Math.floor(random() * items.length)]);
      const names = ['a', 'b', 'c', 'd', 'e'];
      const counts: Record<string, number> = {};
      const bump = (key: string) => (counts[key] = (counts[key] ?? 0) + 1);

      const rows = () => database.db.selectFrom('folders').select(['id', 'parent_id', 'trash_batch', 'subtree_folders']).execute();
      type Outcome = { res: ApiResponse; allowed: string[] } | undefined;
      const operations: Record<string, () => Promise<Outcome>> = {
        async create() {
          const live = (await rows()).filter((r) => r.trash_batch === '');
          const res = await api.post(`/api/folders/create/${user.defaultBucketId}`, { name: pick(names)!, parentId: pick(live)!.id });
          return { res, allowed: ['201', 'NAME_CONFLICT'] };
        },
        async rename() {
          const target = pick((await rows()).filter((r) => r.trash_batch === '' && r.id !== root));
          if (!target) return undefined;
          return { res: await api.put(`/api/folders/update/${target.id}`, { name: pick(names)! }), allowed: ['200', 'NAME_CONFLICT'] };
        },
        async move() {
          const live = (await rows()).filter((r) => r.trash_batch === '');
          const source = pick(live.filter((r) => r.id !== root));
          if (!source) return undefined;
          const res = await api.post(`/api/folders/move/${source.id}`, { targetParentId: pick(live)!.id });
          return { res, allowed: ['200', 'INVALID_MOVE', 'NAME_CONFLICT'] };
        },
        async copy() {
          const live = (await rows()).filter((r) => r.trash_batch === '');
          // Small sources only, so the tree stays a size a recount per step can afford.
          const source = pick(live.filter((r) => r.id !== root && Number(r.subtree_folders) < 25));
          if (!source) return undefined;
          const body = { targetParentId: pick(live)!.id, ...(random() < 0.3 ? { name: pick(names)! } : {}) };
          return { res: await api.post(`/api/folders/copy/${source.id}`, body), allowed: ['201', 'INVALID_MOVE', 'NAME_CONFLICT'] };
        },
        async trash() {
          const target = pick((await rows()).filter((r) => r.trash_batch === '' && r.id !== root));
          if (!target) return undefined;
          return { res: await api.delete(`/api/folders/delete/${target.id}`), allowed: ['200'] };
        },
        async restore() {
          const trashed = (await rows()).filter((r) => r.trash_batch !== '');
          // Half of the time prefer a folder inside a trashed folder (not a trash root itself).
          const nested = trashed.filter((r) => r.trash_batch !== r.id);
          const target = random() < 0.5 && nested.length > 0 ? pick(nested) : pick(trashed);
          if (!target) return undefined;
          if (target.trash_batch !== target.id) bump('restore from inside a trashed folder');
          return { res: await api.post(`/api/folders/restore/${target.id}`), allowed: ['200'] };
        },
        async hardDelete() {
          const all = (await rows()).filter((r) => r.id !== root);
          const target = random() < 0.5 ? pick(all.filter((r) => r.trash_batch !== '')) : pick(all.filter((r) => r.trash_batch === ''));
          if (!target) return undefined;
          if (target.trash_batch !== '') bump('hard delete of a trashed folder');
          return { res: await api.delete(`/api/folders/delete/${target.id}?trash=hard`), allowed: ['200'] };
        },
        async upload() {
          const live = (await rows()).filter((r) => r.trash_batch === '');
          const res = await tryUpload(app, user, pick(live)!.id, `${pick(names)}.bin`, 1 + Math.floor(random() * 3000));
          return { res: { status: res.status, body: res.body, headers: {} }, allowed: ['201', 'NAME_CONFLICT'] };
        },
      };
      const weights: [string, number][] = [
        ['create', 6],
        ['rename', 2],
        ['move', 4],
        ['copy', 2],
        ['trash', 3],
        ['restore', 3],
        ['hardDelete', 2],
        ['upload', 2],
      ];
      const sum = weights.reduce((s, [, w]) => s + w, 0);
      const choose = () => {
        let r = random() * sum;
        for (const [name, w] of weights) if ((r -= w) < 0) return name;
        return weights[weights.length - 1][0];
      };

      const STEPS = 150;
      for (let step = 0; step < STEPS; step++) {
        const name = choose();
        const outcome = await operations[name]();
        const label = `step ${step} (${name})`;
        if (outcome) {
          const { res, allowed } = outcome;
          const result = res.status < 300 ? String(res.status) : res.body?.code;
          assert.ok(allowed.includes(result), `${label}: answered ${res.status} ${JSON.stringify(res.body)}`);
          bump(res.status < 300 ? name : `${name}: ${result}`);
        }
        const { expected } = await recount(database.db, label);
        await checkTrashState(database.db, label);
        // What the API answers is the stored aggregate: read one random folder through it.
        const probe = pick([...expected.keys()])!;
        const detail = await f.details(probe);
        assert.equal(detail.totalSubfolders, expected.get(probe)!.subtree_folders, `${label}: totalSubfolders of ${probe}`);
        assert.equal(detail.totalFiles, expected.get(probe)!.subtree_files, `${label}: totalFiles of ${probe}`);
        assert.equal(detail.totalSizeByte, expected.get(probe)!.subtree_bytes, `${label}: totalSizeByte of ${probe}`);
        const page = await f.children(probe);
        assert.equal(page.total, expected.get(probe)!.child_folders, `${label}: subfolders total of ${probe}`);
        assert.equal(page.names.length, page.total, `${label}: the listing of ${probe} holds as many folders as its total`);
      }
      t.diagnostic(`[${dialect}] outcomes: ${JSON.stringify(counts)}; at the end ${await f.total(root)} live folders under the root`);
      // The sequence really exercised every kind of operation, the tricky restores and deletes included.
      for (const name of [...weights.map(([n]) => n), 'restore from inside a trashed folder', 'hard delete of a trashed folder']) {
        assert.ok((counts[name] ?? 0) >= 2, `only ${counts[name] ?? 0} × ${name}`);
      }
    });

    it('stays exact when mutations of one tree race (moves of a folder while its subtree changes)', async (t) => {
      // On PostgreSQL the requests of one app run on several pooled connections at once (SQLite
      // runs one writer at a time). A move reads the contribution and the ancestor chain of the
      // moved folder, a create or an upload below it adjusts that chain: interleaved, either one
      // adjusts a chain that no longer holds. (No crossed moves here: without the tree lock those
      // make a parent cycle whose recursive walks never end.)
      const { app, database } = await build(t, dialect);
      const user = await signUp(app);
      const f = folderApi(user);
      const root = await f.root();
      const P = await f.mk('P');
      const Q = await f.mk('Q');
      const F = await f.mk('F', P);
      const G = await f.mk('G', F);
      const failures: string[] = [];
      for (let round = 0; round < 12; round++) {
        const results = await Promise.all([
          user.api.post(`/api/folders/move/${F}`, { targetParentId: round % 2 === 0 ? Q : P }),
          user.api.post(`/api/folders/create/${user.defaultBucketId}`, { name: `f${round}`, parentId: F }),
          user.api.post(`/api/folders/create/${user.defaultBucketId}`, { name: `g${round}`, parentId: G }),
          tryUpload(app, user, G, `g${round}.bin`, 100 + round).then((r) => ({ status: r.status, body: r.body, headers: {} })),
          user.api.post(`/api/folders/move/${G}`, { targetParentId: round % 3 === 0 ? root : F }),
        ]);
        for (const r of results) if (r.status >= 300) failures.push(`round ${round}: ${r.status} ${JSON.stringify(r.body)}`);
      }
      await recount(database.db, 'after the races');
      await checkTrashState(database.db, 'after the races');
      assert.deepEqual(failures, [], 'every raced request succeeds');
      assert.equal(await f.total(root), 4 + 24);
      assert.equal((await f.details(root)).totalFiles, 12);
    });

    it('the recount and the trash-state check catch each kind of damage', async (t) => {
      const { app, database } = await build(t, dialect);
      const user = await signUp(app);
      const f = folderApi(user);
      const A = await f.mk('A');
      const B = await f.mk('B', A);
      const C = await f.mk('C', B);
      assert.equal((await tryUpload(app, user, C, 'x.bin', 10)).status, 201);
      await f.trash(B);
      const db = database.db;
      await recount(db, 'intact');
      await checkTrashState(db, 'intact');
      /** Applies a damage, expects `check` to reject it, then undoes it. */
      const expectCaught = async (
        what: string,
        check: () => Promise<unknown>,
        damage: () => Promise<unknown>,
        undo: () => Promise<unknown>,
      ) => {
        await damage();
        await assert.rejects(check, assert.AssertionError, `${what} goes unnoticed`);
        await undo();
        await check();
      };
      const set = (id: string, changes: Record<string, unknown>) => db.updateTable('folders').set(changes).where('id', '=', id).execute();
      const count = () => recount(db);
      await expectCaught(
        'subtree_folders off by one',
        count,
        () => set(B, { subtree_folders: 2 }),
        () => set(B, { subtree_folders: 1 }),
      );
      await expectCaught(
        'child_folders off by one',
        count,
        () => set(B, { child_folders: 0 }),
        () => set(B, { child_folders: 1 }),
      );
      await expectCaught(
        'a live folder counting its trashed child',
        count,
        () => set(A, { subtree_folders: 2 }),
        () => set(A, { subtree_folders: 0 }),
      );
      await expectCaught(
        'subtree_files',
        count,
        () => set(B, { subtree_files: 0 }),
        () => set(B, { subtree_files: 1 }),
      );
      await expectCaught(
        'subtree_bytes',
        count,
        () => set(C, { subtree_bytes: 11 }),
        () => set(C, { subtree_bytes: 10 }),
      );
      await expectCaught(
        'child_files',
        count,
        () => set(C, { child_files: 2 }),
        () => set(C, { child_files: 1 }),
      );
      const trash = () => checkTrashState(db);
      const trashedAt = (await db.selectFrom('folders').select('deleted_at').where('id', '=', B).executeTakeFirstOrThrow()).deleted_at;
      await expectCaught(
        'a trashed folder without deleted_at',
        trash,
        () => set(B, { deleted_at: null }),
        () => set(B, { deleted_at: trashedAt }),
      );
      await expectCaught(
        'a batch member trashed at another time',
        trash,
        () => set(C, { deleted_at: '2000-01-01T00:00:00.000Z' }),
        () => set(C, { deleted_at: trashedAt }),
      );
      await expectCaught(
        'a live folder under a trashed one',
        trash,
        () => set(C, { trash_batch: '', deleted_at: null }),
        () => set(C, { trash_batch: B, deleted_at: trashedAt }),
      );
      await expectCaught(
        'a batch whose root is not a trash root',
        trash,
        () => set(B, { trash_batch: C }),
        () => set(B, { trash_batch: B }),
      );
      const fileTrashedAt = (await db.selectFrom('files').select('deleted_at').executeTakeFirstOrThrow()).deleted_at;
      const setFile = (changes: { trash_batch: string; deleted_at: string | null }) => db.updateTable('files').set(changes).execute();
      await expectCaught(
        'a live file in a trashed folder',
        trash,
        () => setFile({ trash_batch: '', deleted_at: null }),
        () => setFile({ trash_batch: B, deleted_at: fileTrashedAt }),
      );
      await expectCaught(
        'a file in a batch its folder is not in',
        trash,
        () => setFile({ trash_batch: A, deleted_at: fileTrashedAt }),
        () => setFile({ trash_batch: B, deleted_at: fileTrashedAt }),
      );
    });

    describe('scenarios', () => {
      async function recountFixture(t: TestContext) {
        const { app, database } = await build(t, dialect);
        const user = await signUp(app);
        const f = folderApi(user);
        return { app, database, user, f, root: await f.root() };
      }

      it('create nested: every ancestor counts the new folder, a refused create changes nothing', async (t) => {
        const { database, user, f, root } = await recountFixture(t);
        const a = await f.mk('a');
        const b = await f.mk('b', a);
        assert.deepEqual(await totalsByLabel(f, { root, a, b }), { root: 2, a: 1, b: 0 });
        const c = await f.mk('c', b);
        const d = await f.mk('d', c);
        assert.deepEqual(await totalsByLabel(f, { root, a, b, c, d }), { root: 4, a: 3, b: 2, c: 1, d: 0 });
        await f.mk('b2', a);
        assert.deepEqual(await totalsByLabel(f, { root, a, b, c, d }), { root: 5, a: 4, b: 2, c: 1, d: 0 });
        assert.deepEqual(await f.children(a), { total: 2, names: ['b', 'b2'] });
        assert.deepEqual(await f.children(root), { total: 1, names: ['a'] });
        const refused = await user.api.post(`/api/folders/create/${user.defaultBucketId}`, { name: 'c', parentId: b });
        assert.equal(refused.status, 409);
        assert.equal(refused.body.code, 'NAME_CONFLICT');
        assert.deepEqual(await totalsByLabel(f, { root, a, b, c, d }), { root: 5, a: 4, b: 2, c: 1, d: 0 });
        await recount(database.db);
      });

      it('move between branches: the old chain decreases, the new one increases, by the subtree and itself', async (t) => {
        const { database, user, f, root } = await recountFixture(t);
        const L = await f.mk('L');
        const L1 = await f.mk('L1', L);
        const L2 = await f.mk('L2', L1);
        const X = await f.mk('X', L2);
        const X1 = await f.mk('X1', X);
        await f.mk('X11', X1);
        await f.mk('X2', X);
        const R = await f.mk('R');
        const R1 = await f.mk('R1', R);
        const ids = { root, L, L1, L2, X, R, R1 };
        const before = await totalsByLabel(f, ids);
        assert.deepEqual(before, { root: 9, L: 6, L1: 5, L2: 4, X: 3, R: 1, R1: 0 });

        await f.move(X, R1);
        assert.deepEqual(await totalsByLabel(f, ids), shifted(before, { L: -4, L1: -4, L2: -4, R: 4, R1: 4 }));
        assert.equal((await f.children(L2)).total, 0);
        assert.deepEqual(await f.children(R1), { total: 1, names: ['X'] });
        await recount(database.db, 'after the move to R1');

        // Up within the same chain: R keeps its total, R1 loses X.
        await f.move(X, R);
        assert.deepEqual(await totalsByLabel(f, ids), { root: 9, L: 2, L1: 1, L2: 0, X: 3, R: 5, R1: 0 });
        assert.deepEqual(await f.children(R), { total: 2, names: ['R1', 'X'] });
        // Down within the same chain.
        await f.move(X, R1);
        assert.deepEqual(await totalsByLabel(f, ids), { root: 9, L: 2, L1: 1, L2: 0, X: 3, R: 5, R1: 4 });
        assert.equal((await f.children(R)).total, 1);

        // Refused moves change nothing.
        const intoItself = await user.api.post(`/api/folders/move/${X}`, { targetParentId: X1 });
        assert.equal(intoItself.body.code, 'INVALID_MOVE');
        await f.mk('X', L);
        const taken = await user.api.post(`/api/folders/move/${X}`, { targetParentId: L });
        assert.equal(taken.body.code, 'NAME_CONFLICT');
        assert.deepEqual(await totalsByLabel(f, ids), { root: 10, L: 3, L1: 1, L2: 0, X: 3, R: 5, R1: 4 });
        await recount(database.db, 'at the end');
      });

      it('copy: the target chain increases by the copied live subtree, the source is unchanged', async (t) => {
        const { database, user, f, root } = await recountFixture(t);
        const S = await f.mk('S');
        const X = await f.mk('X', S);
        const X1 = await f.mk('X1', X);
        await f.mk('X11', X1);
        const X2 = await f.mk('X2', X);
        const T = await f.mk('T');
        const T1 = await f.mk('T1', T);
        const ids = { root, S, X, T, T1 };
        assert.deepEqual(await totalsByLabel(f, ids), { root: 7, S: 4, X: 3, T: 1, T1: 0 });

        const copy = await f.copy(X, T1);
        assert.equal(copy.totalSubfolders, 3);
        assert.deepEqual(await totalsByLabel(f, ids), { root: 11, S: 4, X: 3, T: 5, T1: 4 });
        assert.deepEqual(await f.children(copy.id), { total: 2, names: ['X1', 'X2'] });
        await recount(database.db, 'after the copy to T1');

        // Into its own parent: a new name, the same chain grows.
        const beside = await f.copy(X, S);
        assert.equal(beside.name, 'X (copy)');
        assert.deepEqual(await totalsByLabel(f, ids), { root: 15, S: 8, X: 3, T: 5, T1: 4 });

        // A trashed part of the source is not copied, nor counted.
        await f.trash(X2);
        assert.equal(await f.total(X), 2);
        const partial = await f.copy(X, T);
        assert.equal(partial.totalSubfolders, 2);
        assert.deepEqual(await totalsByLabel(f, ids), { root: 17, S: 7, X: 2, T: 8, T1: 4 });

        const refused = await user.api.post(`/api/folders/copy/${X}`, { targetParentId: X1 });
        assert.equal(refused.body.code, 'INVALID_MOVE');
        const taken = await user.api.post(`/api/folders/copy/${X}`, { targetParentId: T, name: 'T1' });
        assert.equal(taken.body.code, 'NAME_CONFLICT');
        assert.deepEqual(await totalsByLabel(f, ids), { root: 17, S: 7, X: 2, T: 8, T1: 4 });
        await recount(database.db, 'at the end');
      });

      it('soft delete and restore: ancestors lose the subtree and itself, then get them back', async (t) => {
        const { database, f, root } = await recountFixture(t);
        const A = await f.mk('A');
        const B = await f.mk('B', A);
        const C = await f.mk('C', B);
        const C1 = await f.mk('C1', C);
        await f.mk('C11', C1);
        const C2 = await f.mk('C2', C);
        const ids = { root, A, B, C };
        assert.deepEqual(await totalsByLabel(f, ids), { root: 6, A: 5, B: 4, C: 3 });

        await f.trash(C);
        // The trashed folder keeps the aggregates of what went to the trash with it.
        assert.deepEqual(await totalsByLabel(f, ids), { root: 2, A: 1, B: 0, C: 3 });
        assert.equal((await f.details(C)).isDelete, true);
        assert.equal((await f.children(B)).total, 0);
        assert.deepEqual(await f.children(C), { total: 2, names: ['C1', 'C2'] });
        await recount(database.db, 'after trashing C');
        await f.trash(C1); // already in the trash: nothing changes
        assert.deepEqual(await totalsByLabel(f, ids), { root: 2, A: 1, B: 0, C: 3 });

        const restored = await f.restore(C);
        assert.equal(restored.parentId, B);
        assert.equal(restored.isDelete, false);
        assert.deepEqual(await totalsByLabel(f, ids), { root: 6, A: 5, B: 4, C: 3 });
        assert.equal((await f.children(B)).total, 1);
        await recount(database.db, 'after restoring C');

        // A child trashed on its own first stays in the trash when its parent comes back.
        await f.trash(C2);
        assert.deepEqual(await totalsByLabel(f, ids), { root: 5, A: 4, B: 3, C: 2 });
        await f.trash(C);
        assert.deepEqual(await totalsByLabel(f, ids), { root: 2, A: 1, B: 0, C: 2 });
        assert.equal(await f.total(C2), 0);
        await f.restore(C);
        assert.deepEqual(await totalsByLabel(f, ids), { root: 5, A: 4, B: 3, C: 2 });
        assert.equal((await f.details(C2)).isDelete, true);
        const back = await f.restore(C2);
        assert.equal(back.parentId, C);
        assert.deepEqual(await totalsByLabel(f, ids), { root: 6, A: 5, B: 4, C: 3 });
        await recount(database.db, 'at the end');
        await checkTrashState(database.db);
      });

      it('restoring a folder from inside a trashed folder: to the bucket root with its subtree, the trashed parent shrinks', async (t) => {
        const { database, f, root } = await recountFixture(t);
        const T = await f.mk('T');
        const M = await f.mk('M', T);
        const N = await f.mk('N', M);
        await f.mk('N1', N);
        await f.mk('N'); // takes the name N at the root
        assert.equal(await f.total(root), 5);

        await f.trash(T);
        assert.deepEqual(await totalsByLabel(f, { root, T, M, N }), { root: 1, T: 3, M: 2, N: 1 });

        const restored = await f.restore(N);
        assert.equal(restored.parentId, root);
        assert.equal(restored.name, 'N (restored)');
        assert.equal(restored.isDelete, false);
        assert.deepEqual(await totalsByLabel(f, { root, T, M, N }), { root: 3, T: 1, M: 0, N: 1 });
        assert.equal((await f.children(M)).total, 0);
        assert.deepEqual(await f.children(T), { total: 1, names: ['M'] });
        assert.deepEqual(await f.children(root), { total: 2, names: ['N', 'N (restored)'] });
        await recount(database.db, 'after restoring N');
        await checkTrashState(database.db, 'after restoring N');

        // The rest of the batch comes back without N.
        await f.restore(T);
        assert.deepEqual(await totalsByLabel(f, { root, T, M, N }), { root: 5, T: 1, M: 0, N: 1 });
        await recount(database.db, 'after restoring T');
      });

      it('hard delete of a live folder and of trashed ones', async (t) => {
        const { database, user, f, root } = await recountFixture(t);
        const H = await f.mk('H');
        const H1 = await f.mk('H1', H);
        const H2 = await f.mk('H2', H1);
        const H3 = await f.mk('H3', H2);
        assert.deepEqual(await totalsByLabel(f, { root, H, H1 }), { root: 4, H: 3, H1: 2 });
        await f.hardDelete(H2);
        assert.deepEqual(await totalsByLabel(f, { root, H, H1 }), { root: 2, H: 1, H1: 0 });
        assert.equal((await user.api.get(`/api/folders/details/${H3}`)).status, 404);
        assert.equal((await f.children(H1)).total, 0);
        await recount(database.db, 'after the live hard delete');

        // A trash root: the live tree has already let it go.
        const P = await f.mk('P');
        const Q = await f.mk('Q', P);
        await f.mk('Q1', Q);
        await f.trash(Q);
        assert.deepEqual(await totalsByLabel(f, { root, P }), { root: 3, P: 0 });
        await f.hardDelete(Q);
        assert.deepEqual(await totalsByLabel(f, { root, P }), { root: 3, P: 0 });
        assert.equal((await user.api.get(`/api/folders/details/${Q}`)).status, 404);
        await recount(database.db, 'after hard-deleting a trash root');

        // Inside a trashed folder: the batch's own aggregates shrink.
        const U = await f.mk('U');
        const V = await f.mk('V', U);
        const W = await f.mk('W', V);
        await f.mk('W1', W);
        await f.trash(U);
        assert.deepEqual(await totalsByLabel(f, { root, U, V }), { root: 3, U: 3, V: 2 });
        await f.hardDelete(W);
        assert.deepEqual(await totalsByLabel(f, { root, U, V }), { root: 3, U: 1, V: 0 });
        assert.equal((await f.children(V)).total, 0);
        await recount(database.db, 'after hard-deleting inside a trashed folder');

        // A live folder holding a trashed one: both go, only the live part left the live totals.
        const Z = await f.mk('Z');
        const Z1 = await f.mk('Z1', Z);
        await f.mk('Z2', Z);
        await f.trash(Z1);
        assert.equal(await f.total(root), 5);
        await f.hardDelete(Z);
        assert.equal(await f.total(root), 3);
        assert.equal((await user.api.get(`/api/folders/details/${Z1}`)).status, 404);
        await recount(database.db, 'at the end');
        await checkTrashState(database.db);
      });

      it('files travel with their folders: totalFiles and totalSizeByte follow move, copy, trash, restore and hard delete', async (t) => {
        const { app, database, user, f, root } = await recountFixture(t);
        const A = await f.mk('A');
        const X = await f.mk('X', A);
        const X1 = await f.mk('X1', X);
        const B = await f.mk('B');
        assert.equal((await tryUpload(app, user, X, 'ten.bin', 10)).status, 201);
        assert.equal((await tryUpload(app, user, X1, 'twenty.bin', 20)).status, 201);
        const files = async (id: string) => {
          const d = await f.details(id);
          return [d.totalFiles, d.totalSizeByte];
        };
        assert.deepEqual(await files(A), [2, 30]);
        assert.deepEqual(await files(root), [2, 30]);
        await f.move(X, B);
        assert.deepEqual(
          [await files(A), await files(B), await files(root)],
          [
            [0, 0],
            [2, 30],
            [2, 30],
          ],
        );
        const copy = await f.copy(X, A);
        assert.equal(copy.totalFiles, 2);
        assert.deepEqual(
          [await files(A), await files(B), await files(root)],
          [
            [2, 30],
            [2, 30],
            [4, 60],
          ],
        );
        await f.trash(X1);
        assert.deepEqual(
          [await files(X), await files(B), await files(root)],
          [
            [1, 10],
            [1, 10],
            [3, 40],
          ],
        );
        await f.trash(X);
        assert.deepEqual(
          [await files(X), await files(B), await files(root)],
          [
            [1, 10],
            [0, 0],
            [2, 30],
          ],
        );
        await f.restore(X1); // its old parent is trashed: to the root
        assert.deepEqual(
          [await files(X1), await files(root)],
          [
            [1, 20],
            [3, 50],
          ],
        );
        await f.restore(X);
        assert.deepEqual(
          [await files(B), await files(root)],
          [
            [1, 10],
            [4, 60],
          ],
        );
        await f.hardDelete(copy.id);
        assert.deepEqual(
          [await files(A), await files(root)],
          [
            [0, 0],
            [2, 30],
          ],
        );
        await recount(database.db, 'at the end');
        await checkTrashState(database.db);
      });
    });
  });
}
