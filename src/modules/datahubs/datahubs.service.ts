import { loadDatahubFor } from '../../access/access.js';
import { bindContext } from '../../lib/bind.js';
import type { AppContext, Principal } from '../../context.js';
import { mutation } from '../../db/transaction.js';
import { AppError } from '../../errors.js';
import { DEFAULT_PAGE_SIZE, decodeCursor, encodeCursor } from '../../lib/cursor.js';
import { assertName } from '../../lib/names.js';
import { formatSize } from '../../lib/size-format.js';
import { nowIso } from '../../lib/time.js';
import { findUserById, lockUser } from '../accounts/accounts.repository.js';
import { DEFAULT_BUCKET_NAME } from '../accounts/accounts.service.js';
import { bucketNamesLike, bucketsOfDatahubs } from '../buckets/buckets.repository.js';
import { assertBucketName, firstFreeBucketName } from '../buckets/buckets.names.js';
import type { Bucket } from '../buckets/buckets.schemas.js';
import { bucketView } from '../buckets/buckets.service.js';
import { findLocationWithRegion, locationLabel } from '../regions/regions.repository.js';
import * as repo from './datahubs.repository.js';

/** A datahub as the API shows it (docs/api.md), with its buckets. */
export interface DatahubView {
  id: string;
  name: string;
  locationId: number;
  locationLabel: string;
  isDefault: boolean;
  createdAt: string;
  updatedAt: string;
  buckets: Bucket[];
}

/** The `data` of `GET /datahub/size/{datahubId}`: the API contract's strings, then the exact byte counts. */
export interface DatahubSize {
  currentObjectsSize: string;
  versionsObjectsSize: string;
  totalSize: string;
  currentObjectsBytes: number;
  versionsObjectsBytes: number;
  totalBytes: number;
}

/** Datahubs: create (with a first bucket), list, and their sizes; the functions below bound to a context. */
export function datahubService(ctx: AppContext) {
  return bindContext(ctx, { create, list, size });
}

async function defaultsOf({ db }: AppContext, principal: Principal) {
  const user = await findUserById(db, principal.userId);
  return { datahubId: user?.default_datahub_id ?? null, bucketId: user?.default_bucket_id ?? null };
}

async function views(ctx: AppContext, principal: Principal, rows: repo.DatahubWithLocation[]): Promise<DatahubView[]> {
  const defaults = await defaultsOf(ctx, principal);
  const buckets = await bucketsOfDatahubs(
    ctx.db,
    rows.map((r) => r.id),
  );
  return rows.map((row) => ({
    id: row.id,
    name: row.name,
    locationId: row.location_id,
    locationLabel: locationLabel({ name_en: row.location_name, region_code: row.location_code }),
    isDefault: row.id === defaults.datahubId,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    buckets: buckets.filter((b) => b.datahub_id === row.id).map((b) => bucketView(b, defaults.bucketId)),
  }));
}

/**
 * A new datahub in an active location, with a first bucket (`bucketName`, or the first free of
 * `default`, `default-2`, …) and its root folder, in one transaction, as sign-up makes them.
 */
async function create(
  ctx: AppContext,
  principal: Principal,
  input: { name: string; locationId: number; bucketName?: string },
): Promise<DatahubView> {
  const name = assertName(input.name);
  const requestedBucket = input.bucketName === undefined ? undefined : assertBucketName(input.bucketName, 'bucketName');
  const location = await findLocationWithRegion(ctx.db, input.locationId);
  if (!location) throw new AppError('LOCATION_NOT_FOUND');
  if (location.is_active !== 1 || location.region_is_active !== 1) throw new AppError('LOCATION_INACTIVE');
  const datahubId = await insertWithFirstBucket(ctx, principal, { name, locationId: location.id, requestedBucket });
  const row = await repo.findDatahubWithLocation(ctx.db, datahubId);
  return (await views(ctx, principal, [row!]))[0];
}

/** Inserts the datahub, its first bucket and root folder; the new datahub's id. */
async function insertWithFirstBucket(
  { db, keyring, database }: AppContext,
  principal: Principal,
  input: { name: string; locationId: number; requestedBucket?: string },
): Promise<string> {
  const { name, locationId, requestedBucket } = input;
  return mutation(db, async (trx) => {
    // Picking a free bucket name and taking it must not interleave with another creation.
    await lockUser(trx, database.capabilities.rowLocks, principal.userId);
    const taken = await bucketNamesLike(trx, principal.userId, requestedBucket ?? DEFAULT_BUCKET_NAME);
    if (requestedBucket !== undefined && taken.has(requestedBucket)) {
      throw new AppError('NAME_CONFLICT', `You already have a bucket named "${requestedBucket}"`, [
        { field: 'bucketName', problem: 'is taken by another of your buckets' },
      ]);
    }
    const bucketName = requestedBucket ?? firstFreeBucketName(DEFAULT_BUCKET_NAME, taken);
    const created = await repo.insertDatahubWithBucket(trx, keyring, {
      ownerId: principal.userId,
      name,
      locationId,
      bucketName,
      now: nowIso(),
    });
    return created.datahub.id;
  });
}

async function list(ctx: AppContext, principal: Principal, query: { limit?: number; cursor?: string }) {
  const afterId = query.cursor ? String(decodeCursor(query.cursor, 1)[0]) : undefined;
  const page = await repo.listDatahubsPage(ctx.db, principal.userId, { limit: query.limit ?? DEFAULT_PAGE_SIZE, afterId });
  const last = page.rows[page.rows.length - 1];
  return {
    data: await views(ctx, principal, page.rows),
    total: page.total,
    nextCursor: page.hasMore && last ? encodeCursor([last.id]) : null,
  };
}

/** Sizes of a datahub: current versions of every file not hard-deleted (trash included), and all other versions. */
async function size({ db }: AppContext, principal: Principal, datahubId: string): Promise<DatahubSize> {
  const datahub = await loadDatahubFor(db, principal, datahubId);
  const bytes = await repo.datahubBytes(db, datahub.id);
  const total = bytes.current + bytes.versions;
  return {
    currentObjectsSize: formatSize(bytes.current),
    versionsObjectsSize: formatSize(bytes.versions),
    totalSize: formatSize(total),
    currentObjectsBytes: bytes.current,
    versionsObjectsBytes: bytes.versions,
    totalBytes: total,
  };
}
