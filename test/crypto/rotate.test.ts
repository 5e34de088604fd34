import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import { buildApp } from '../../src/app.js';
import { Keyring } from '../../src/crypto/keyring.js';
import { parseMasterKey } from '../../src/config.js';
import { DIALECTS, build, client, databaseUrlFor, signUp } from '../helper.js';
import { putFile, rootFolderId } from '../support/files.js';

const run = promisify(execFile);
// The CLI from source: bin/coffre.js would prefer a build in dist/, which may be older than the source.
const CLI = new URL('../../src/cli/coffre.ts', import.meta.url).pathname;

async function coffre(args: string[], env: Record<string, string | undefined>) {
  const clean = Object.fromEntries(
    Object.entries({ ...process.env, LOG_LEVEL: 'silent', COFFRE_MASTER_KEY: undefined, DATABASE_URL: undefined, ...env }).filter(
      ([, v]) => v !== undefined,
    ),
  ) as Record<string, string>;
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', CLI, ...args], { env: clean });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

for (const dialect of DIALECTS) {
  describe(`coffre keys rotate [${dialect}]`, () => {
    it('re-wraps the bucket keys only, under a new master key that opens every file', async (t) => {
      const test = await build(t, dialect, { config: { collectIntervalSeconds: 0 } });
      const user = await signUp(test.app, 'Rotator');
      assert.equal((await user.api.post(`/api/bucket/create/${user.defaultDatahubId}`, { name: 'second' })).status, 201);
      const content = Buffer.from('rotate me, but keep me readable');
      const file = await putFile(test.app, user, await rootFolderId(user), 'secret.txt', content);
      const db = test.database.db;
      const snapshot = async () => ({
        buckets: await db.selectFrom('buckets').select(['id', 'key_wrapped']).orderBy('id').execute(),
        folders: await db.selectFrom('folders').select(['id', 'key_wrapped']).orderBy('id').execute(),
        files: await db.selectFrom('files').select(['id', 'key_wrapped']).orderBy('id').execute(),
        versions: await db.selectFrom('file_versions').select(['id', 'data_key_wrapped']).orderBy('id').execute(),
      });
      const before = await snapshot();
      const keyFile = path.join(test.config.dataDir, 'master.key');
      const oldKey = fs.readFileSync(keyFile, 'utf8');
      const env = { COFFRE_DATA_DIR: test.config.dataDir, DATABASE_URL: databaseUrlFor(test.database) };

      const result = await coffre(['keys', 'rotate'], env);
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stdout, new RegExp(`Re-wrapped ${before.buckets.length} bucket key\\(s\\)`));
      const newKey = fs.readFileSync(keyFile, 'utf8');
      assert.notEqual(newKey, oldKey);
      assert.equal(fs.statSync(keyFile).mode & 0o777, 0o600);
      assert.equal(fs.existsSync(`${keyFile}.new`), false);

      const after = await snapshot();
      assert.deepEqual({ ...after, buckets: [] }, { ...before, buckets: [] }, 'only bucket rows change');
      for (let i = 0; i < before.buckets.length; i++) assert.notEqual(after.buckets[i].key_wrapped, before.buckets[i].key_wrapped);

      // An instance restarted with the new key reads the file as before.
      const restarted = await buildApp({
        config: test.config,
        database: test.database,
        logStream: false,
        keyring: new Keyring(parseMasterKey(newKey.trim())),
      });
      t.after(() => restarted.close());
      const download = await restarted.inject({
        method: 'GET',
        url: `/api/files/download/${file.id}`,
        headers: { authorization: `Bearer ${user.token}` },
      });
      assert.equal(download.statusCode, 200);
      assert.deepEqual(download.rawPayload, content);
      // …and one still on the old key can no longer open the bucket.
      const stale = await client(test.app, user.token).get(`/api/files/download/${file.id}`);
      assert.notEqual(stale.status, 200);

      // With COFFRE_MASTER_KEY, the new key goes to a file of the operator's, never over an existing one.
      const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'coffre-rotate-')), 'next.key');
      t.after(() => fs.rmSync(path.dirname(out), { recursive: true, force: true }));
      const refused = await coffre(['keys', 'rotate'], { ...env, COFFRE_MASTER_KEY: newKey.trim() });
      assert.equal(refused.code, 2);
      assert.match(refused.stderr, /--out FILE/);
      const second = await coffre(['keys', 'rotate', '--out', out], { ...env, COFFRE_MASTER_KEY: newKey.trim() });
      assert.equal(second.code, 0, second.stderr);
      const third = parseMasterKey(fs.readFileSync(out, 'utf8').trim());
      assert.equal(fs.readFileSync(keyFile, 'utf8'), newKey, 'the data folder key is not touched');
      const again = await buildApp({ config: test.config, database: test.database, logStream: false, keyring: new Keyring(third) });
      t.after(() => again.close());
      const res = await again.inject({
        method: 'GET',
        url: `/api/files/download/${file.id}`,
        headers: { authorization: `Bearer ${user.token}` },
      });
      assert.deepEqual(res.rawPayload, content);
      assert.equal(
        (await coffre(['keys', 'rotate', '--out', out], { ...env, COFFRE_MASTER_KEY: third.toString('hex') })).code,
        1,
        'an existing --out file is never overwritten',
      );
      // A key that does not open the buckets rotates nothing.
      const wrong = await coffre(['keys', 'rotate', '--out', `${out}.2`], { ...env, COFFRE_MASTER_KEY: 'cd'.repeat(32) });
      assert.equal(wrong.code, 2);
      assert.match(wrong.stderr, /does not open the bucket keys/);
      assert.equal(fs.existsSync(`${out}.2`), false);
    });
  });
}
