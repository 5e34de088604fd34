import { sql } from 'kysely';
import type { DatabaseHandle, DbOrTrx } from './database.js';
import data from './regions.data.json' with { type: 'json' };

// Any fixed 64-bit number, unique among the advisory locks of the service.
const REFERENCE_DATA_LOCK = 0x636f6666_7266;

/**
 * Upserts the regions and locations shipped with the project (regions.data.json); run at every
 * start by prepareDatabase, so edits to the data file apply. The regions module only reads them.
 * Instances starting together take turns (a PostgreSQL advisory lock; SQLite has one writer): two
 * upserts of the same new region at once would collide on its unique slug, which the upsert on
 * `id` does not cover, and fail one instance's start.
 */
export async function seedReferenceData(database: Pick<DatabaseHandle, 'db' | 'capabilities'>): Promise<void> {
  await database.db.transaction().execute(async (trx) => {
    if (database.capabilities.rowLocks) await sql`select pg_advisory_xact_lock(${REFERENCE_DATA_LOCK})`.execute(trx);
    await upsertReferenceData(trx);
  });
}

async function upsertReferenceData(db: DbOrTrx): Promise<void> {
  for (const region of data.regions) {
    const row = { id: region.id, slug: region.slug, name_en: region.name.en, name_fr: region.name.fr, is_active: region.isActive ? 1 : 0 };
    await db
      .insertInto('regions')
      .values(row)
      .onConflict((oc) =>
        oc.column('id').doUpdateSet({ slug: row.slug, name_en: row.name_en, name_fr: row.name_fr, is_active: row.is_active }),
      )
      .execute();
  }
  for (const location of data.locations) {
    const columns = {
      region_id: location.regionId,
      region_code: location.regionCode,
      country_code: location.countryCode,
      name_en: location.name.en,
      name_fr: location.name.fr,
      is_active: location.isActive ? 1 : 0,
    };
    await db
      .insertInto('locations')
      .values({ id: location.id, ...columns })
      .onConflict((oc) => oc.column('id').doUpdateSet(columns))
      .execute();
  }
}
