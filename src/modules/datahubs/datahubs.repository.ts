import { sql } from 'kysely';
import type { Keyring } from '../../crypto/keyring.js';
import type { DbOrTrx } from '../../db/database.js';
import type { BucketRow, DatahubRow } from '../../db/schema.js';
import { newId } from '../../lib/ids.js';
import { insertBucketWithRoot } from '../buckets/buckets.repository.js';

/**
 * A datahub with its first bucket and that bucket's root folder, in the caller's transaction: what
 * sign-up gives a new account and what `PUT /datahub/create` makes.
 */
export async function insertDatahubWithBucket(
  db: DbOrTrx,
  keyring: Keyring,
  input: { ownerId: string; name: string; locationId: number; bucketName: string; now: string },
): Promise<{ datahub: DatahubRow; bucket: BucketRow }> {
  const datahub: DatahubRow = {
    id: newId('dhb'),
    owner_id: input.ownerId,
    name: input.name,
    location_id: input.locationId,
    created_at: input.now,
    updated_at: input.now,
  };
  await db.insertInto('datahubs').values(datahub).execute();
  const bucket = await insertBucketWithRoot(db, keyring, {
    ownerId: input.ownerId,
    datahubId: datahub.id,
    name: input.bucketName,
    now: input.now,
  });
  return { datahub, bucket };
}

const withLocation = (db: DbOrTrx) =>
  db
    .selectFrom('datahubs')
    .innerJoin('locations', 'locations.id', 'datahubs.location_id')
    .selectAll('datahubs')
    .select(['locations.name_en as location_name', 'locations.region_code as location_code']);

export type DatahubWithLocation = DatahubRow & { location_name: string; location_code: string };

export function findDatahubWithLocation(db: DbOrTrx, datahubId: string): Promise<DatahubWithLocation | undefined> {
  return withLocation(db).where('datahubs.id', '=', datahubId).executeTakeFirst();
}

/** One page of an owner's datahubs in creation order, with their locations, and their count. */
export async function listDatahubsPage(
  db: DbOrTrx,
  ownerId: string,
  page: { limit: number; afterId?: string },
): Promise<{ rows: DatahubWithLocation[]; hasMore: boolean; total: number }> {
  const counted = await db
    .selectFrom('datahubs')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('owner_id', '=', ownerId)
    .executeTakeFirstOrThrow();
  let query = withLocation(db).where('datahubs.owner_id', '=', ownerId);
  if (page.afterId) query = query.where('datahubs.id', '>', page.afterId);
  const rows = await query
    .orderBy('datahubs.id')
    .limit(page.limit + 1)
    .execute();
  return { rows: rows.slice(0, page.limit), hasMore: rows.length > page.limit, total: Number(counted.n) };
}

/**
 * Bytes stored in a datahub, in one aggregate statement over its files (trashed ones included;
 * hard-deleted files have no row any more): `current` sums each file's current version, `versions`
 * every other version (`versions_bytes` holds all of them, current included).
 */
export async function datahubBytes(db: DbOrTrx, datahubId: string): Promise<{ current: number; versions: number }> {
  const result = await sql<{ current: number | string | null; versions: number | string | null }>`
    select sum(f.size) as current, sum(f.versions_bytes - f.size) as versions
    from files f join buckets b on b.id = f.bucket_id
    where b.datahub_id = ${datahubId}
  `.execute(db);
  // PostgreSQL sums bigints as numeric (a string); no rows sum to null.
  const row = result.rows[0];
  return { current: Number(row?.current ?? 0), versions: Number(row?.versions ?? 0) };
}
