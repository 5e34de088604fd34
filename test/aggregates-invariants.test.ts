import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Keyring } from '../src/crypto/keyring.js';
import { loadMasterKey } from '../src/crypto/master-key.js';
import type { Db } from '../src/db/database.js';
import { folderKey } from '../src/modules/folders/folders.keys.js';
import { DIALECTS, build, signUp, type TestUser } from './helper.js';

/** A small deterministic PRNG (mulberry32), so a failure replays. */
function prng(seed: number) {
  let a = seed;
  return () => {
    a |= 0;
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Recomputes every folder's aggregates from parent links and trash states alone and compares them
 * with the stored columns; also checks keys, liveness of ancestors and the owners' used bytes.
 */
async function checkInvariants(db: Db, keyring: Keyring, step: string) {
  const folders = await db.selectFrom('folders').selectAll().execute();
  const files = await db.selectFrom('files').selectAll().execute();
  const versions = await db.selectFrom('file_versions').select(['file_id', 'size']).execute();
  const byId = new Map(folders.map((f) => [f.id, f]));
  const expected = new Map(folders.map((f) => [f.id, { subtree_folders: 0, subtree_files: 0, subtree_bytes: 0, child_folders: 0, child_files: 0 }]));
  // Walk up from each item while the trash state stays the item's own.
  const credit = (parentId: string | null, batch: string, kind: 'folder' | 'file', bytes: number) => {
    let id = parentId;
    let direct = true;
    while (id) {
      const folder = byId.get(id)!;
      if (folder.trash_batch !== batch) break;
      const e = expected.get(id)!;
      if (kind === 'folder') e.subtree_folders++;
      else {
        e.subtree_files++;
        e.subtree_bytes += bytes;
      }
      if (direct) kind === 'folder' ? e.child_folders++ : e.child_files++;
      direct = false;
      id = folder.parent_id;
    }
  };
  for (const f of folders) credit(f.parent_id, f.trash_batch, 'folder', 0);
  for (const f of files) credit(f.folder_id, f.trash_batch, 'file', Number(f.size));
  for (const f of folders) {
    const e = expected.get(f.id)!;
    const actual = {
      subtree_folders: Number(f.subtree_folders),
      subtree_files: Number(f.subtree_files),
      subtree_bytes: Number(f.subtree_bytes),
      child_folders: Number(f.child_folders),
      child_files: Number(f.child_files),
    };
    assert.deepEqual(actual, e, `${step}: aggregates of ${f.name} (${f.id})`);
    if (f.trash_batch === '' && f.parent_id) assert.equal(byId.get(f.parent_id)!.trash_batch, '', `${step}: live ${f.name} under a trashed parent`);
    await folderKey(db, keyring, f.id); // throws if any wrap along the chain is wrong
    let top = f;
    while (top.parent_id) top = byId.get(top.parent_id)!;
    assert.equal(f.bucket_id, top.bucket_id, `${step}: bucket of ${f.name}`);
  }
  for (const file of files) {
    assert.equal(file.bucket_id, byId.get(file.folder_id)!.bucket_id, `${step}: bucket of file ${file.name}`);
    if (file.trash_batch === '') assert.equal(byId.get(file.folder_id)!.trash_batch, '', `${step}: live file ${file.name} in a trashed folder`);
  }
  const used = new Map<string, number>();
  const owners = new Map(files.map((f) => [f.id, f.owner_id]));
  for (const v of versions) used.set(owners.get(v.file_id)!, (used.get(owners.get(v.file_id)!) ?? 0) + Number(v.size));
  for (const user of await db.selectFrom('users').select(['id', 'used_bytes']).execute()) {
    assert.equal(Number(user.used_bytes), used.get(user.id) ?? 0, `${step}: used bytes of ${user.id}`);
  }
}

async function upload(user: TestUser, app: any, folderId: string, name: string, size: number) {
  return app.inject({
    method: 'PUT',
    url: `/api/files/upload/${folderId}?name=${encodeURIComponent(name)}`,
    headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/octet-stream' },
    payload: Buffer.alloc(size, name.length),
  });
}

for (const dialect of DIALECTS) {
  describe(`aggregates stay exact [${dialect}]`, () => {
    it('through a random mix of folder and file operations, checked against a full recount', async (t) => {
      const { app, database, config } = await build(t, dialect, { config: { collectIntervalSeconds: 0 } });
      const keyring = new Keyring(loadMasterKey(config.masterKey, config.dataDir));
      const user = await signUp(app);
      const api = user.api;
      const root = (await api.get('/api/folders/root/subfolders')).body.data.parentFolder.id as string;
      const random = prng(dialect === 'sqlite' ? 7 : 11);
      const pick = <T>(items: T[]): T | undefined => items[Math.floor(random() * items.length)];
      const names = ['a', 'b', 'c', 'd'];

      const liveFolders = async () =>
        (await database.db.selectFrom('folders').select(['id', 'is_root']).where('trash_batch', '=', '').execute()).map((f) => f.id);
      const trashedFolders = async () => (await database.db.selectFrom('folders').select('id').where('trash_batch', '!=', '').execute()).map((f) => f.id);
      const liveFiles = async () => (await database.db.selectFrom('files').select('id').where('trash_batch', '=', '').execute()).map((f) => f.id);
      const trashedFiles = async () => (await database.db.selectFrom('files').select('id').where('trash_batch', '!=', '').execute()).map((f) => f.id);
      const nonRoot = async () => (await liveFolders()).filter((id) => id !== root);

      const operations: [string, () => Promise<{ status: number } | undefined>][] = [
        ['create folder', async () => api.post(`/api/folders/create/${user.defaultBucketId}`, { name: pick(names)!, parentId: pick(await liveFolders()) })],
        ['upload', async () => upload(user, app, pick(await liveFolders())!, `${pick(names)}.bin`, 1 + Math.floor(random() * 5000)).then((r: any) => ({ status: r.statusCode }))],
        ['move folder', async () => {
          const id = pick(await nonRoot());
          return id ? api.post(`/api/folders/move/${id}`, { targetParentId: pick(await liveFolders()) }) : undefined;
        }],
        ['copy folder', async () => {
          const id = pick(await nonRoot());
          return id ? api.post(`/api/folders/copy/${id}`, { targetParentId: pick(await liveFolders()) }) : undefined;
        }],
        ['trash folder', async () => {
          const id = pick(await nonRoot());
          return id ? api.delete(`/api/folders/delete/${id}`) : undefined;
        }],
        ['restore folder', async () => {
          const id = pick(await trashedFolders());
          return id ? api.post(`/api/folders/restore/${id}`) : undefined;
        }],
        ['hard delete folder', async () => {
          const id = pick([...(await nonRoot()), ...(await trashedFolders())]);
          return id && random() < 0.5 ? api.delete(`/api/folders/delete/${id}?trash=hard`) : undefined;
        }],
        ['move file', async () => {
          const id = pick(await liveFiles());
          return id ? api.post(`/api/files/move/${id}`, { targetFolderId: pick(await liveFolders()) }) : undefined;
        }],
        ['copy file', async () => {
          const id = pick(await liveFiles());
          return id ? api.post(`/api/files/copy/${id}`, { targetFolderId: pick(await liveFolders()) }) : undefined;
        }],
        ['trash file', async () => {
          const id = pick(await liveFiles());
          return id ? api.delete(`/api/files/delete/${id}`) : undefined;
        }],
        ['restore file', async () => {
          const id = pick(await trashedFiles());
          return id ? api.post(`/api/files/restore/${id}`) : undefined;
        }],
        ['hard delete file', async () => {
          const id = pick([...(await liveFiles()), ...(await trashedFiles())]);
          return id ? api.delete(`/api/files/delete/${id}?trash=hard`) : undefined;
        }],
        ['restore version', async () => {
          const id = pick(await liveFiles());
          if (!id) return undefined;
          const versions = (await api.get(`/api/files/versions/${id}`)).body.data;
          return api.post(`/api/files/versions/${id}/${versions[versions.length - 1].id}/restore`);
        }],
      ];

      // Creation is weighted up so the tree grows while everything else churns it.
      const weighted = [...operations, operations[0], operations[0], operations[1], operations[1], operations[1]];
      let succeeded = 0;
      for (let step = 0; step < 150; step++) {
        const [name, run] = pick(weighted)!;
        const res = await run();
        if (res) assert.ok(res.status < 500, `step ${step} ${name} answered ${res.status}`);
        if (res && res.status < 300) succeeded++;
        await checkInvariants(database.db, keyring, `step ${step} (${name})`);
      }
      const totals = await api.get(`/api/folders/details/${root}`);
      assert.ok(succeeded > 80, `only ${succeeded} operations succeeded`);
      t.diagnostic(`${succeeded} successful operations; at the end: ${totals.body.data.totalSubfolders} folders, ${totals.body.data.totalFiles} files, ${totals.body.data.totalSizeByte} bytes`);
    });
  });
}
