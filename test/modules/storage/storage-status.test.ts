// Storage status (API contract: Storage status; docs/api.md): capacity from the quota, use
// with versions and the trash, the low-space warning and the readable sizes, on every dialect.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { AppContext } from '../../../src/context.js';
import { accountService } from '../../../src/modules/accounts/accounts.service.js';
import { DIALECTS, build, client, signUp, type TestApp } from '../../helper.js';
import { putFile, rootFolderId, storeMixedContent } from '../../support/files.js';
import { assertEnvelope, assertFields, type FieldType } from '../../support/shape.js';
import { assertError } from '../../support/errors.js';

const STATUS_FIELDS: Record<string, FieldType> = {
  capacity_bytes: 'number',
  used_bytes: 'number',
  remaining_bytes: 'number',
  in_progress_bytes: 'number',
  'warning.is_low': 'boolean',
  'readable.capacity': 'string',
  'readable.used': 'string',
  'readable.remaining': 'string',
  'readable.in_progress': 'string',
};
const GiB = 1024 ** 3;

/** What `coffre user quota --email --bytes` runs, on the test's database. */
function setQuota(test: TestApp, email: string, bytes: number | null) {
  const ctx = { config: test.config, database: test.database, db: test.database.db } as AppContext;
  return accountService(ctx).setQuota(email, bytes);
}

for (const dialect of DIALECTS) {
  describe(`storage status [${dialect}]`, () => {
    it('has every field of the Storage status table; a new account has the default quota and uses nothing', async (t) => {
      const { app } = await build(t, dialect);
      const user = await signUp(app);
      const res = await user.api.get('/api/storage/status');
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assertEnvelope(res.body, 200);
      assertFields(res.body.data, STATUS_FIELDS, 'status');
      assert.deepEqual(res.body.data, {
        capacity_bytes: 10 * GiB,
        used_bytes: 0,
        remaining_bytes: 10 * GiB,
        in_progress_bytes: 0,
        warning: { is_low: false },
        readable: { capacity: '10 GB', used: '0 B', remaining: '10 GB', in_progress: '0 B' },
      });
    });

    it('counts every version and the trash, not what was deleted for good; agrees with the datahub sizes', async (t) => {
      const { app } = await build(t, dialect, { config: { defaultQuotaBytes: 1024 * 1024 } });
      const user = await signUp(app);
      const other = await signUp(app);
      const expected = await storeMixedContent(app, user, await rootFolderId(user));
      // A second datahub counts as well; another account's files do not.
      const hub = (await user.api.put('/api/datahub/create', { name: 'More', locationId: 1 })).body.data;
      const more = await storeMixedContent(app, user, hub.buckets[0].rootFolderId, 'more-');
      await putFile(app, other, await rootFolderId(other), 'theirs.bin', Buffer.alloc(5000));
      const used = expected.current + expected.versions + more.current + more.versions;

      const status = (await user.api.get('/api/storage/status')).body.data;
      assertFields(status, STATUS_FIELDS, 'status');
      assert.equal(status.used_bytes, used);
      assert.equal(status.used_bytes, 6144);
      assert.equal(status.capacity_bytes, 1024 * 1024);
      assert.equal(status.remaining_bytes, 1024 * 1024 - 6144);
      assert.deepEqual(status.readable, { capacity: '1 MB', used: '6 KB', remaining: '1018 KB', in_progress: '0 B' });
      assert.equal(status.warning.is_low, false);

      let datahubTotal = 0;
      for (const id of [user.defaultDatahubId, hub.id])
        datahubTotal += (await user.api.get(`/api/datahub/size/${id}`)).body.data.totalBytes;
      assert.equal(status.used_bytes, datahubTotal);
      assert.equal((await other.api.get('/api/storage/status')).body.data.used_bytes, 5000);
    });

    it('warning.is_low is set once less than 10 % of the capacity remains', async (t) => {
      const { app } = await build(t, dialect, { config: { defaultQuotaBytes: 10_000 } });
      const user = await signUp(app);
      const root = await rootFolderId(user);
      await putFile(app, user, root, 'big.bin', Buffer.alloc(9000));
      let status = (await user.api.get('/api/storage/status')).body.data;
      assert.equal(status.remaining_bytes, 1000);
      assert.equal(status.warning.is_low, false, 'exactly 10 % left is not under 10 %');
      await putFile(app, user, root, 'one.bin', Buffer.alloc(1));
      status = (await user.api.get('/api/storage/status')).body.data;
      assert.equal(status.remaining_bytes, 999);
      assert.equal(status.warning.is_low, true);
      assert.deepEqual(status.readable, { capacity: '9.77 KB', used: '8.79 KB', remaining: '999 B', in_progress: '0 B' });
    });

    it('capacity follows the per-account quota of `coffre user quota`; remaining never goes below 0', async (t) => {
      const test = await build(t, dialect);
      const user = await signUp(test.app);
      await putFile(test.app, user, await rootFolderId(user), 'a.bin', Buffer.alloc(3000));

      await setQuota(test, user.email, 2 * GiB);
      let status = (await user.api.get('/api/storage/status')).body.data;
      assert.equal(status.capacity_bytes, 2 * GiB);
      assert.equal(status.readable.capacity, '2 GB');
      assert.equal(status.remaining_bytes, 2 * GiB - 3000);

      // A quota lowered under what is already stored.
      await setQuota(test, user.email, 1000);
      status = (await user.api.get('/api/storage/status')).body.data;
      assert.deepEqual(
        [status.capacity_bytes, status.used_bytes, status.remaining_bytes, status.warning.is_low, status.readable.remaining],
        [1000, 3000, 0, true, '0 B'],
      );

      // A zero quota: nothing left is low.
      await setQuota(test, user.email, 0);
      status = (await user.api.get('/api/storage/status')).body.data;
      assert.equal(status.remaining_bytes, 0);
      assert.equal(status.warning.is_low, true);

      // Back to the server default.
      await setQuota(test, user.email, null);
      status = (await user.api.get('/api/storage/status')).body.data;
      assert.equal(status.capacity_bytes, test.config.defaultQuotaBytes);
    });

    it('is 401 without a valid token', async (t) => {
      const { app } = await build(t, dialect);
      assertError(await client(app).get('/api/storage/status'), 401, 'UNAUTHENTICATED');
      assertError(await client(app, 'cof_not-a-token').get('/api/storage/status'), 401, 'UNAUTHENTICATED');
    });
  });
}
