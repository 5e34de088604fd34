import { Migrator, type Migration, type MigrationProvider } from 'kysely';
import type { Db } from './database.js';
import * as m001 from './migrations/001-foundation.js';
import * as m002 from './migrations/002-files.js';
import * as m003 from './migrations/003-share-links.js';
import * as m004 from './migrations/004-permissions.js';
import * as m005 from './migrations/005-scale-out.js';
import * as m006 from './migrations/006-token-revocations.js';
import * as m007 from './migrations/007-listing-versions.js';
import * as m008 from './migrations/008-trash-indexes.js';
import * as m009 from './migrations/009-deleted-indexes.js';
import * as m010 from './migrations/010-inline-blobs.js';
import * as m011 from './migrations/011-session-details.js';
import * as m012 from './migrations/012-upload-holds.js';
import * as m013 from './migrations/013-link-passes.js';
import * as m014 from './migrations/014-dav.js';
import * as m015 from './migrations/015-resumable-uploads.js';
import * as m016 from './migrations/016-version-crc32.js';
import * as m017 from './migrations/017-administrators.js';
import * as m018 from './migrations/018-link-key-copies.js';
import * as m019 from './migrations/019-search.js';
import * as m020 from './migrations/020-thumbnails.js';
import * as m021 from './migrations/021-thumbnail-backfill.js';
import * as m022 from './migrations/022-search-by-kind.js';

/** Versioned migrations, in order. Add a file and a line here; never edit a released one. */
const MIGRATIONS: Record<string, Migration> = {
  '001-foundation': m001,
  '002-files': m002,
  '003-share-links': m003,
  '004-permissions': m004,
  '005-scale-out': m005,
  '006-token-revocations': m006,
  '007-listing-versions': m007,
  '008-trash-indexes': m008,
  '009-deleted-indexes': m009,
  '010-inline-blobs': m010,
  '011-session-details': m011,
  '012-upload-holds': m012,
  '013-link-passes': m013,
  '014-dav': m014,
  '015-resumable-uploads': m015,
  '016-version-crc32': m016,
  '017-administrators': m017,
  '018-link-key-copies': m018,
  '019-search': m019,
  '020-thumbnails': m020,
  '021-thumbnail-backfill': m021,
  '022-search-by-kind': m022,
};

const provider: MigrationProvider = { getMigrations: async () => MIGRATIONS };

/** Every migration's name, in order: what a migrated database has applied. */
export const MIGRATION_NAMES: readonly string[] = Object.keys(MIGRATIONS);

/** Kysely's migrator over Coffre's migrations and tables. */
function migrator(db: Db, schema?: string): Migrator {
  return new Migrator({
    db,
    provider,
    migrationTableName: 'coffre_migrations',
    migrationLockTableName: 'coffre_migrations_lock',
    // Explicit, so other schemas of the same PostgreSQL database never confuse the migrator.
    ...(schema ? { migrationTableSchema: schema } : {}),
  });
}

/** Brings the schema to the latest version; returns the names of the migrations it applied. */
export async function migrateToLatest(db: Db, schema?: string): Promise<string[]> {
  const { error, results } = await migrator(db, schema).migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/** Brings the schema to the version of migration `name` (upgrade tests start from an older version). */
export async function migrateTo(db: Db, name: string, schema?: string): Promise<void> {
  const { error } = await migrator(db, schema).migrateTo(name);
  if (error) throw error instanceof Error ? error : new Error(String(error));
}
