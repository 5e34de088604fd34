import type { DbOrTrx } from '../../db/database.js';
import type { LocationRow, RegionRow } from '../../db/schema.js';
import data from './regions.data.json' with { type: 'json' };

/** Upserts the regions and locations shipped with the project; run at every start, so edits to the data file apply. */
export async function seedRegions(db: DbOrTrx): Promise<void> {
  for (const region of data.regions) {
    const row = { id: region.id, slug: region.slug, name_en: region.name.en, name_fr: region.name.fr, is_active: region.isActive ? 1 : 0 };
    await db
      .insertInto('regions')
      .values(row)
      .onConflict((oc) => oc.column('id').doUpdateSet({ slug: row.slug, name_en: row.name_en, name_fr: row.name_fr, is_active: row.is_active }))
      .execute();
  }
  for (const location of data.locations) {
    const row = {
      id: location.id,
      region_id: location.regionId,
      region_code: location.regionCode,
      country_code: location.countryCode,
      name_en: location.name.en,
      name_fr: location.name.fr,
      is_active: location.isActive ? 1 : 0,
    };
    const { id, ...rest } = row;
    await db.insertInto('locations').values(row).onConflict((oc) => oc.column('id').doUpdateSet(rest)).execute();
  }
}

/** The first active location (lowest id): where a new account's default datahub lives. */
export async function findFirstActiveLocation(db: DbOrTrx): Promise<LocationRow | undefined> {
  return db
    .selectFrom('locations')
    .innerJoin('regions', 'regions.id', 'locations.region_id')
    .selectAll('locations')
    .where('locations.is_active', '=', 1)
    .where('regions.is_active', '=', 1)
    .orderBy('locations.id')
    .limit(1)
    .executeTakeFirst();
}

/** `Paris (fr-par)`: the label the interface document shows for a folder's location. */
export function locationLabel(location: Pick<LocationRow, 'name_en' | 'region_code'>): string {
  return `${location.name_en} (${location.region_code})`;
}

/** Every region, active or not, by id. */
export function listRegions(db: DbOrTrx): Promise<RegionRow[]> {
  return db.selectFrom('regions').selectAll().orderBy('id').execute();
}

export function findRegion(db: DbOrTrx, regionId: number): Promise<RegionRow | undefined> {
  return db.selectFrom('regions').selectAll().where('id', '=', regionId).executeTakeFirst();
}

/** The locations of one region, active or not, by id. */
export function listLocationsOfRegion(db: DbOrTrx, regionId: number): Promise<LocationRow[]> {
  return db.selectFrom('locations').selectAll().where('region_id', '=', regionId).orderBy('id').execute();
}

/** A location with the activity of its region: a datahub may be created only where both are active. */
export function findLocationWithRegion(db: DbOrTrx, locationId: number) {
  return db
    .selectFrom('locations')
    .innerJoin('regions', 'regions.id', 'locations.region_id')
    .selectAll('locations')
    .select('regions.is_active as region_is_active')
    .where('locations.id', '=', locationId)
    .executeTakeFirst();
}
