import path from 'node:path';
import type { Config } from '../config.js';
import { openDatabase, type DatabaseHandle, type DatabaseOptions } from './database.js';
import { migrateToLatest } from './migrate.js';
import { seedReferenceData } from './reference-data.js';

/**
 * Opens the configured database, brings its schema up to date and seeds the shipped reference
 * data; also returns the names of the migrations it applied.
 */
export async function prepareDatabaseWithReport(
  config: Config,
  extra: Partial<DatabaseOptions> = {},
): Promise<{ database: DatabaseHandle; applied: string[] }> {
  const database = await openDatabase({
    url: config.databaseUrl,
    sqliteFile: path.join(config.dataDir, 'coffre.db'),
    ...extra,
  });
  try {
    const applied = await migrateToLatest(database.db, database.schema);
    await seedReferenceData(database);
    return { database, applied };
  } catch (error) {
    await database.close();
    throw error;
  }
}

export async function prepareDatabase(config: Config, extra: Partial<DatabaseOptions> = {}): Promise<DatabaseHandle> {
  return (await prepareDatabaseWithReport(config, extra)).database;
}
