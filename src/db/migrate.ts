import { Migrator, type Migration, type MigrationProvider } from 'kysely';
import type { Db } from './database.js';
import * as m001 from './migrations/001-foundation.js';
import * as m002 from './migrations/002-files.js';

/** Versioned migrations, in order. Add a file and a line here; never edit a released one. */
const MIGRATIONS: Record<string, Migration> = {
  '001-foundation': m001,
  '002-files': m002,
};

const provider: MigrationProvider = { getMigrations: async () => MIGRATIONS };

/** Brings the schema to the latest version; returns the names of the migrations it applied. */
export async function migrateToLatest(db: Db, schema?: string): Promise<string[]> {
  const migrator = new Migrator({
    db,
    provider,
    migrationTableName: 'coffre_migrations',
    migrationLockTableName: 'coffre_migrations_lock',
    // Explicit, so other schemas of the same PostgreSQL database never confuse the migrator.
    ...(schema ? { migrationTableSchema: schema } : {}),
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
