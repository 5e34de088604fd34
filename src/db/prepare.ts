import path from 'node:path';
import type { Config } from '../config.js';
import { seedRegions } from '../modules/regions/regions.repository.js';
import { openDatabase, type DatabaseHandle, type DatabaseOptions } from './database.js';
import { migrateToLatest } from './migrate.js';

/** Opens the configured database, brings its schema up to date and seeds the shipped reference data. */
export async function prepareDatabase(config: Config, extra: Partial<DatabaseOptions> = {}): Promise<DatabaseHandle> {
  const database = await openDatabase({
    url: config.databaseUrl,
    sqliteFile: path.join(config.dataDir, 'coffre.db'),
    ...extra,
  });
  try {
    await migrateToLatest(database.db, database.schema);
    await seedRegions(database.db);
  } catch (error) {
    await database.close();
    throw error;
  }
  return database;
}
