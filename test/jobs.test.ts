import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { FsBlobStore } from '../src/blobs/fs/fs-blob-store.js';
import type { AppContext } from '../src/context.js';
import { maintenanceRound } from '../src/jobs.js';
import { DIALECTS, build, client, signUp } from './helper.js';
import { putFile, rootFolderId } from './support/files.js';

const DAY = 24 * 3600 * 1000;

for (const dialect of DIALECTS) {
  describe(`upkeep round [${dialect}]`, () => {
    it('deletes expired tokens, day-old throttle counters and expired WebDAV locks, and keeps live ones', async (t) => {
      const test = await build(t, dialect);
      const user = await signUp(test.app, 'Upkeep');
      const db = test.database.db;
      const second = await client(test.app).post('/api/auth/login', { email: user.email, password: 'correct horse battery' });
      assert.equal(second.status, 200);
      // One of the two sessions expired a minute ago.
      const tokens = await db.selectFrom('tokens').select('id').where('user_id', '=', user.id).orderBy('created_at').execute();
      assert.equal(tokens.length, 2);
      await db
        .updateTable('tokens')
        .set({ expires_at: new Date(Date.now() - 60_000).toISOString() })
        .where('id', '=', tokens[1].id)
        .execute();
      const now = Date.now();
      await db
        .insertInto('throttles')
        .values([
          { key: 'test:old', count: 3, window_start_ms: now - 2 * 24 * 3600 * 1000 },
          { key: 'test:fresh', count: 3, window_start_ms: now - 60_000 },
        ])
        .execute();
      const lock = (token: string, expiresAt: number) => ({
        token,
        user_id: user.id,
        item_id: user.defaultBucketId,
        depth: '0' as const,
        scope: 'shared' as const,
        owner_xml: null,
        timeout_seconds: 60,
        expires_at: new Date(expiresAt).toISOString(),
        created_at: new Date(now - 120_000).toISOString(),
      });
      await db
        .insertInto('dav_locks')
        .values([lock('urn:uuid:expired', now - 1000), lock('urn:uuid:live', now + 60_000)])
        .execute();

      const blobDir = fs.mkdtempSync(path.join(os.tmpdir(), 'coffre-upkeep-'));
      t.after(() => fs.rmSync(blobDir, { recursive: true, force: true }));
      const ctx = { config: test.config, database: test.database, db, blobs: new FsBlobStore(blobDir) } as unknown as AppContext;
      await maintenanceRound(ctx);
      const locks = await db.selectFrom('dav_locks').select('token').execute();
      assert.deepEqual(
        locks.map((r) => r.token),
        ['urn:uuid:live'],
      );

      const left = await db.selectFrom('tokens').select('id').where('user_id', '=', user.id).execute();
      assert.deepEqual(
        left.map((r) => r.id),
        [tokens[0].id],
      );
      const keys = (await db.selectFrom('throttles').select('key').where('key', 'like', 'test:%').execute()).map((r) => r.key);
      assert.deepEqual(keys, ['test:fresh']);
      assert.equal((await user.api.get('/api/auth/me')).status, 200, 'the live session still works');
    });

    it('purges the trash past COFFRE_TRASH_RETENTION_DAYS, keeps retained and recent items, and two instances purge each item once', async (t) => {
      const test = await build(t, dialect, { config: { collectIntervalSeconds: 0, trashRetentionDays: 30 } });
      const user = await signUp(test.app, 'Purge');
      const db = test.database.db;
      const root = await rootFolderId(user);
      const live = await putFile(test.app, user, root, 'live.txt', 'live');
      const old = await putFile(test.app, user, root, 'old.txt', 'old bytes');
      const retained = await putFile(test.app, user, root, 'retained.txt', 'kept by law');
      assert.equal(
        (await user.api.put(`/api/files/update/${retained.id}`, { name: 'retained.txt', visibility: 'private', retentionPeriod: '90d' }))
          .status,
        200,
      );
      const recent = await putFile(test.app, user, root, 'recent.txt', 'trashed yesterday');
      const folder = (await user.api.post(`/api/folders/create/${user.defaultBucketId}`, { name: 'Old folder', parentId: root })).body.data;
      const inside = await putFile(test.app, user, folder.id, 'inside.txt', 'in an old folder');
      for (const f of [old, retained, recent]) assert.equal((await user.api.delete(`/api/files/delete/${f.id}?trash=soft`)).status, 200);
      assert.equal((await user.api.delete(`/api/folders/delete/${folder.id}?trash=soft`)).status, 200);
      const longAgo = new Date(Date.now() - 31 * DAY).toISOString();
      await db.updateTable('files').set({ deleted_at: longAgo }).where('id', 'in', [old.id, retained.id, inside.id]).execute();
      await db.updateTable('folders').set({ deleted_at: longAgo }).where('id', '=', folder.id).execute();
      await db
        .updateTable('files')
        .set({ deleted_at: new Date(Date.now() - DAY).toISOString() })
        .where('id', '=', recent.id)
        .execute();
      const usedBefore = Number(
        (await db.selectFrom('users').select('used_bytes').where('id', '=', user.id).executeTakeFirstOrThrow()).used_bytes,
      );

      const blobDir = fs.mkdtempSync(path.join(os.tmpdir(), 'coffre-purge-'));
      t.after(() => fs.rmSync(blobDir, { recursive: true, force: true }));
      const ctx = { config: test.config, database: test.database, db, blobs: new FsBlobStore(blobDir) } as unknown as AppContext;
      // Two instances' rounds at once: each old item is purged by one of them.
      const reports = await Promise.all([maintenanceRound(ctx), maintenanceRound(ctx)]);
      assert.equal(reports[0].purged + reports[1].purged, 2, `purged ${reports.map((r) => r.purged)}`);
      assert.equal(reports[0].keptUnderRetention + reports[1].keptUnderRetention, 1);

      const files = (await db.selectFrom('files').select('id').where('owner_id', '=', user.id).execute()).map((r) => r.id).sort();
      assert.deepEqual(files, [live.id, retained.id, recent.id].sort());
      assert.equal(await db.selectFrom('folders').select('id').where('id', '=', folder.id).executeTakeFirst(), undefined);
      const usedAfter = Number(
        (await db.selectFrom('users').select('used_bytes').where('id', '=', user.id).executeTakeFirstOrThrow()).used_bytes,
      );
      assert.equal(usedBefore - usedAfter, old.size + inside.size);
      // The retained file keeps its lease: the next round does not try it again for an hour.
      assert.deepEqual((await maintenanceRound(ctx)).keptUnderRetention, 0);
      // With the purge off, nothing more goes.
      const off = { ...ctx, config: { ...test.config, trashRetentionDays: 0 } } as AppContext;
      await db.deleteFrom('job_leases').execute();
      assert.equal((await maintenanceRound(off)).purged, 0);
      assert.equal((await user.api.get(`/api/files/details/${recent.id}`)).status, 200);
    });

    it('deletes share links 30 days after they expired or were revoked, and keeps the others', async (t) => {
      const test = await build(t, dialect, { config: { collectIntervalSeconds: 0 } });
      const user = await signUp(test.app, 'Links');
      const db = test.database.db;
      const file = await putFile(test.app, user, await rootFolderId(user), 'shared.txt', 'shared');
      const hashes: string[] = [];
      for (let i = 0; i < 4; i++)
        hashes.push((await user.api.post(`/api/files/share/${file.id}`, { expirationDays: 1 })).body.data.sharedHash);
      const ago = (days: number) => new Date(Date.now() - days * DAY).toISOString();
      await db
        .updateTable('share_links')
        .set({ expires_at: ago(31) })
        .where('shared_hash', '=', hashes[0])
        .execute();
      await db
        .updateTable('share_links')
        .set({ expires_at: ago(2) })
        .where('shared_hash', '=', hashes[1])
        .execute();
      await db
        .updateTable('share_links')
        .set({ revoked_at: ago(31), expires_at: null })
        .where('shared_hash', '=', hashes[2])
        .execute();
      const ctx = { config: test.config, database: test.database, db, blobs: { removeStaleUploads: undefined } } as unknown as AppContext;
      const report = await maintenanceRound({ ...ctx, blobs: new FsBlobStore(fs.mkdtempSync(path.join(os.tmpdir(), 'coffre-links-'))) });
      assert.equal(report.linksDeleted, 2);
      const left = (await db.selectFrom('share_links').select('shared_hash').execute()).map((r) => r.shared_hash).sort();
      assert.deepEqual(left, [hashes[1], hashes[3]].sort());
      // Recently expired: still 410; long gone: 404.
      assert.equal((await client(test.app).post(`/api/files/shared/${hashes[1]}`, {})).status, 410);
      assert.equal((await client(test.app).post(`/api/files/shared/${hashes[0]}`, {})).status, 404);
    });

    it('deletes invitations 30 days after they were used or expired, and keeps the others', async (t) => {
      const test = await build(t, dialect, { config: { collectIntervalSeconds: 0 } });
      const admin = await signUp(test.app, 'Admin');
      const db = test.database.db;
      const invitations: { id: string; token: string }[] = [];
      for (const email of ['used@example.com', 'expired@example.com', 'lately@example.com', 'pending@example.com']) {
        const res = await admin.api.post('/api/admin/invitations', { email });
        assert.equal(res.status, 201, JSON.stringify(res.body));
        invitations.push({ id: res.body.data.id, token: res.body.data.invitationLink.split('/invite/')[1] });
      }
      const [used, expired, lately, pending] = invitations;
      const ago = (days: number) => new Date(Date.now() - days * DAY).toISOString();
      await db
        .updateTable('invitations')
        .set({ used_at: ago(31) })
        .where('id', '=', used.id)
        .execute();
      await db
        .updateTable('invitations')
        .set({ expires_at: ago(31) })
        .where('id', '=', expired.id)
        .execute();
      await db
        .updateTable('invitations')
        .set({ expires_at: ago(2) })
        .where('id', '=', lately.id)
        .execute();
      const blobDir = fs.mkdtempSync(path.join(os.tmpdir(), 'coffre-invitations-'));
      t.after(() => fs.rmSync(blobDir, { recursive: true, force: true }));
      const blobs = new FsBlobStore(blobDir);
      await maintenanceRound({ config: test.config, database: test.database, db, blobs } as unknown as AppContext);
      const left = (await db.selectFrom('invitations').select('id').execute()).map((r) => r.id).sort();
      assert.deepEqual(left, [lately.id, pending.id].sort());
      // Recently expired: still 410; long gone: 404; pending: still opens.
      const open = (token: string) => client(test.app).get(`/api/invitations/${token}`);
      assert.equal((await open(lately.token)).status, 410);
      assert.equal((await open(expired.token)).status, 404);
      assert.equal((await open(used.token)).status, 404);
      assert.equal((await open(pending.token)).status, 200);
    });

    it('runs every upkeep step even when one fails, then reports the failure', async (t) => {
      const test = await build(t, dialect, { config: { collectIntervalSeconds: 0 } });
      const db = test.database.db;
      await db
        .insertInto('throttles')
        .values({ key: 'test:stale', count: 1, window_start_ms: Date.now() - 2 * DAY })
        .execute();
      const broken = {
        kind: 'broken',
        removeStaleUploads: async () => {
          throw new Error('store unreachable');
        },
        delete: async () => {},
      };
      const ctx = { config: test.config, database: test.database, db, blobs: broken } as unknown as AppContext;
      await assert.rejects(maintenanceRound(ctx), /store unreachable/);
      assert.equal(
        await db.selectFrom('throttles').select('key').where('key', '=', 'test:stale').executeTakeFirst(),
        undefined,
        'later steps still ran',
      );
    });
  });
}
