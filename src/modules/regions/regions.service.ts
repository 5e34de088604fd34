import type { AppContext } from '../../context.js';
import type { LocationRow, RegionRow } from '../../db/schema.js';
import { AppError } from '../../errors.js';
import * as repo from './regions.repository.js';

/** A region of the API contract's Region table. */
export interface RegionView {
  id: number;
  slug: string;
  name: { en: string; fr: string };
  isActive: boolean;
}

/** A location of the API contract's Region location table. */
export interface LocationView {
  id: number;
  regionId: number;
  regionCode: string;
  countryCode: string;
  name: { en: string; fr: string };
  isActive: boolean;
}

function regionView(row: RegionRow): RegionView {
  return { id: row.id, slug: row.slug, name: { en: row.name_en, fr: row.name_fr }, isActive: row.is_active === 1 };
}

function locationView(row: LocationRow): LocationView {
  return {
    id: row.id,
    regionId: row.region_id,
    regionCode: row.region_code,
    countryCode: row.country_code,
    name: { en: row.name_en, fr: row.name_fr },
    isActive: row.is_active === 1,
  };
}

/**
 * Regions and their locations, as seeded from `src/db/regions.data.json` at every start. Inactive ones
 * are listed too (with `isActive: false`): existing datahubs may still live there.
 */
export function regionService(ctx: AppContext) {
  const { db } = ctx;

  async function list(): Promise<RegionView[]> {
    return (await repo.listRegions(db)).map(regionView);
  }

  async function locations(regionId: number): Promise<LocationView[]> {
    if (!(await repo.findRegion(db, regionId))) throw new AppError('REGION_NOT_FOUND');
    return (await repo.listLocationsOfRegion(db, regionId)).map(locationView);
  }

  return { list, locations };
}
