import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { loadConfig } from '../../src/config.js';
import data from '../../src/db/regions.data.json' with { type: 'json' };
import pg from 'pg';
import { MIGRATION_NAMES } from '../../src/db/migrate.js';
import { prepareDatabase, prepareDatabaseWithReport } from '../../src/db/prepare.js';
import { seedReferenceData } from '../../src/db/reference-data.js';
import { DIALECTS, PG_URL, newSchemaName } from '../helper.js';

// Instances of one deployment start together on a new PostgreSQL database: each brings the schema
// up to date and seeds the reference data (src/db/prepare.ts), and none may fail for the others.
if (DIALECTS.includes('postgres')) {
  describe('preparing one database from several instances at once [postgres]', () => {
    it('every instance starts: migrations and reference data taken in turns, the data seeded once', async (t) => {
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'coffre-prepare-'));
      t.after(() => fs.rmSync(dataDir, { recursive: true, force: true }));
      const config = loadConfig({ COFFRE_DATA_DIR: dataDir, DATABASE_URL: PG_URL, LOG_LEVEL: 'silent' });
      const pgSchema = newSchemaName();
      const starts = await Promise.allSettled(Array.from({ length: 6 }, () => prepareDatabase(config, { pgSchema, poolSize: 2 })));
      const databases = starts.flatMap((start) => (start.status === 'fulfilled' ? [start.value] : []));
      t.after(() => Promise.all(databases.map((database) => database.close())));
      assert.deepEqual(
        starts.map((start) => (start.status === 'fulfilled' ? 'started' : String(start.reason))),
        starts.map(() => 'started'),
      );
      const { db } = databases[0];
      const regions = await db.selectFrom('regions').select(['id', 'slug']).orderBy('id').execute();
      assert.deepEqual(
        regions.map((r) => r.slug),
        [...data.regions].sort((a, b) => (a.id < b.id ? -1 : 1)).map((r) => r.slug),
      );
      assert.equal((await db.selectFrom('locations').select('id').execute()).length, data.locations.length);
    });

    it('reads its own schema alone: a coffre_migrations table of another schema is not taken for its own', async (t) => {
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'coffre-prepare-'));
      t.after(() => fs.rmSync(dataDir, { recursive: true, force: true }));
      const config = loadConfig({ COFFRE_DATA_DIR: dataDir, DATABASE_URL: PG_URL, LOG_LEVEL: 'silent' });
      const neighbour = await prepareDatabase(config, { pgSchema: newSchemaName(), poolSize: 1 });
      t.after(() => neighbour.close());
      // An operator who names the schema in DATABASE_URL's search path, beside an installed Coffre.
      const own = newSchemaName();
      const admin = new pg.Client({ connectionString: PG_URL });
      await admin.connect();
      await admin.query(`create schema ${own}`).finally(() => admin.end());
      const url = new URL(PG_URL);
      url.searchParams.set('options', `-c search_path=${own}`);
      const ownConfig = loadConfig({ COFFRE_DATA_DIR: dataDir, DATABASE_URL: url.toString(), LOG_LEVEL: 'silent' });
      const { database, applied } = await prepareDatabaseWithReport(ownConfig, { poolSize: 1 });
      t.after(() => database.close());
      assert.equal(database.schema, own);
      assert.deepEqual(applied, MIGRATION_NAMES);
      const tables = await database.db.introspection.getTables({ withInternalKyselyTables: true });
      assert.deepEqual([...new Set(tables.map((table) => table.schema))], [own]);
      assert.ok(tables.some((table) => table.name === 'coffre_migrations'));
      const email = tables.find((table) => table.name === 'users')?.columns.find((column) => column.name === 'email');
      assert.deepEqual([email?.dataType, email?.isNullable], ['text', false]);
    });

    it('reference data new to the database is seeded by instances at once without a collision', async (t) => {
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'coffre-prepare-'));
      t.after(() => fs.rmSync(dataDir, { recursive: true, force: true }));
      const config = loadConfig({ COFFRE_DATA_DIR: dataDir, DATABASE_URL: PG_URL, LOG_LEVEL: 'silent' });
      const pgSchema = newSchemaName();
      const databases = [await prepareDatabase(config, { pgSchema, poolSize: 2 })];
      for (let i = 0; i < 5; i++) databases.push(await prepareDatabase(config, { pgSchema, poolSize: 2 }));
      t.after(() => Promise.all(databases.map((database) => database.close())));
      // As after an upgrade that ships new regions: none of them is in the database yet.
      for (let round = 0; round < 5; round++) {
        await databases[0].db.deleteFrom('locations').execute();
        await databases[0].db.deleteFrom('regions').execute();
        const seeds = await Promise.allSettled(databases.map((database) => seedReferenceData(database)));
        assert.deepEqual(
          seeds.map((seed) => (seed.status === 'fulfilled' ? 'seeded' : String(seed.reason))),
          seeds.map(() => 'seeded'),
        );
        assert.equal((await databases[0].db.selectFrom('regions').select('id').execute()).length, data.regions.length);
      }
    });
  });
}
