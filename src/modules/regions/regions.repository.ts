import type { DbOrTrx } from '../../db/database.js';
import type { LocationRow, RegionRow } from '../../db/schema.js';

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

/** `Paris (fr-par)`: the label the API contract shows for a folder's location. */
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
