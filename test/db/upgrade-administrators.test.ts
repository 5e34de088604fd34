// Migration 017 on a server that already has accounts: the oldest becomes its administrator, the
// others do not, and nobody is disabled.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { migrateTo, migrateToLatest } from '../../src/db/migrate.js';
import { DIALECTS, build } from '../helper.js';

for (const dialect of DIALECTS) {
  describe(`upgrading to administrators [${dialect}]`, () => {
    it('makes the oldest account the administrator', async (t) => {
      const { database } = await build(t, dialect);
      const { db } = database;
      await migrateTo(db, '016-version-crc32', database.schema);
      const account = (id: string, createdAt: string) => ({
        id,
        email: `${id}@example.com`,
        name: id,
        password_hash: 'x',
        quota_bytes: null,
        default_datahub_id: null,
        default_bucket_id: null,
        created_at: createdAt,
        updated_at: createdAt,
      });
      // Inserted out of order: age decides, not the order of the rows.
      await (db as any)
        .insertInto('users')
        .values([
          account('usr_b', '2026-02-01T00:00:00.000Z'),
          account('usr_a', '2026-01-01T00:00:00.000Z'),
          account('usr_c', '2026-03-01T00:00:00.000Z'),
        ])
        .execute();
      await migrateToLatest(db, database.schema);
      const users = await db.selectFrom('users').select(['id', 'is_admin', 'disabled_at']).orderBy('id').execute();
      assert.deepEqual(
        users.map((u) => [u.id, Number(u.is_admin), u.disabled_at]),
        [
          ['usr_a', 1, null],
          ['usr_b', 0, null],
          ['usr_c', 0, null],
        ],
      );
    });
  });
}
