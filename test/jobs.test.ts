import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { FsBlobStore } from '../src/blobs/fs/fs-blob-store.js';
import type { AppContext } from '../src/context.js';
import { maintenanceRound } from '../src/jobs.js';
import { DIALECTS, build, client, signUp } from './helper.js';

for (const dialect of DIALECTS) {
  describe(`upkeep round [${dialect}]`, () => {
    it('deletes expired tokens and day-old throttle counters, and keeps live ones', async (t) => {
      const test = await build(t, dialect);
      const user = await signUp(test.app, 'Upkeep');
      const db = test.database.db;
      const second = await client(test.app).post('/api/auth/login', { email: user.email, password: 'correct horse battery' });
      assert.equal(second.status, 200);
      // One of the two sessions expired a minute ago.
      const tokens = await db.selectFrom('tokens').select('id').where('user_id', '=', user.id).orderBy('created_at').execute();
      assert.equal(tokens.length, 2);
      await db.updateTable('tokens').set({ expires_at: new Date(Date.now() - 60_000).toISOString() }).where('id', '=', tokens[1].id).execute();
      const now = Date.now();
      await db.insertInto('throttles').values([
        { key: 'test:old', count: 3, window_start_ms: now - 2 * 24 * 3600 * 1000 },
        { key: 'test:fresh', count: 3, window_start_ms: now - 60_000 },
      ]).execute();

      const blobDir = fs.mkdtempSync(path.join(os.tmpdir(), 'coffre-upkeep-'));
      t.after(() => fs.rmSync(blobDir, { recursive: true, force: true }));
      const ctx = { config: test.config, database: test.database, db, blobs: new FsBlobStore(blobDir) } as unknown as AppContext;
      await maintenanceRound(ctx);

      const left = await db.selectFrom('tokens').select('id').where('user_id', '=', user.id).execute();
      assert.deepEqual(left.map((r) => r.id), [tokens[0].id]);
      const keys = (await db.selectFrom('throttles').select('key').where('key', 'like', 'test:%').execute()).map((r) => r.key);
      assert.deepEqual(keys, ['test:fresh']);
      assert.equal((await user.api.get('/api/auth/me')).status, 200, 'the live session still works');
    });
  });
}
