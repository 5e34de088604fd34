import { sql } from 'kysely';
import type { DatabaseHandle, DbOrTrx } from '../../db/database.js';
import type { BucketRow } from '../../db/schema.js';
import { newChildKey, type Keyring } from '../../crypto/keyring.js';
import { newId, randomToken } from '../../lib/ids.js';

/** A bucket with its root folder, in the caller's transaction. */
export async function insertBucketWithRoot(
  db: DbOrTrx,
  keyring: Keyring,
  input: { ownerId: string; datahubId: string; name: string; now: string },
): Promise<BucketRow> {
  const id = newId('bkt');
  const bucketKey = keyring.newBucketKey(id);
  const bucket: BucketRow = {
    id,
    datahub_id: input.datahubId,
    owner_id: input.ownerId,
    name: input.name,
    root_folder_id: null,
    key_wrapped: bucketKey.wrapped,
    created_at: input.now,
    updated_at: input.now,
  };
  await db.insertInto('buckets').values(bucket).execute();
  const rootId = newId('fld');
  await db
    .insertInto('folders')
    .values({
      id: rootId,
      bucket_id: bucket.id,
      owner_id: input.ownerId,
      parent_id: null,
      name: input.name,
      visibility: 'private',
      is_share: 1,
      hash_url: randomToken(),
      key_wrapped: newChildKey(bucketKey.key, rootId).wrapped,
      is_root: 1,
      deleted_at: null,
      last_access_at: null,
      created_at: input.now,
      updated_at: input.now,
    })
    .execute();
  await db.updateTable('buckets').set({ root_folder_id: rootId }).where('id', '=', bucket.id).execute();
  return { ...bucket, root_folder_id: rootId };
}

export function findBucket(db: DbOrTrx, bucketId: string): Promise<BucketRow | undefined> {
  return db.selectFrom('buckets').selectAll().where('id', '=', bucketId).executeTakeFirst();
}

/** The buckets of several datahubs, oldest first (a page of datahubs shows them all). */
export function bucketsOfDatahubs(db: DbOrTrx, datahubIds: string[]): Promise<BucketRow[]> {
  if (datahubIds.length === 0) return Promise.resolve([]);
  return db.selectFrom('buckets').selectAll().where('datahub_id', 'in', datahubIds).orderBy('id').execute();
}

/** One page of an owner's buckets (of one datahub, or all), in creation order, and their count. */
export async function listBucketsPage(
  db: DbOrTrx,
  ownerId: string,
  page: { datahubId?: string; limit: number; afterId?: string },
): Promise<{ rows: BucketRow[]; hasMore: boolean; total: number }> {
  let query = db.selectFrom('buckets').where('owner_id', '=', ownerId);
  if (page.datahubId) query = query.where('datahub_id', '=', page.datahubId);
  const counted = await query.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  let rows = query.selectAll();
  if (page.afterId) rows = rows.where('id', '>', page.afterId);
  const found = await rows
    .orderBy('id')
    .limit(page.limit + 1)
    .execute();
  return { rows: found.slice(0, page.limit), hasMore: found.length > page.limit, total: Number(counted.n) };
}

/** The owner's bucket names starting with `prefix` (to pick a free default name). */
export async function bucketNamesLike(db: DbOrTrx, ownerId: string, prefix: string): Promise<Set<string>> {
  const rows = await db.selectFrom('buckets').select('name').where('owner_id', '=', ownerId).where('name', 'like', `${prefix}%`).execute();
  return new Set(rows.map((r) => r.name));
}

export async function bucketNameTaken(db: DbOrTrx, ownerId: string, name: string): Promise<boolean> {
  const row = await db.selectFrom('buckets').select('id').where('owner_id', '=', ownerId).where('name', '=', name).executeTakeFirst();
  return row !== undefined;
}

/** Renames a bucket and its root folder, which carries the bucket's name. */
export async function renameBucket(
  db: DbOrTrx,
  bucket: Pick<BucketRow, 'id' | 'root_folder_id'>,
  name: string,
  now: string,
): Promise<void> {
  await db.updateTable('buckets').set({ name, updated_at: now }).where('id', '=', bucket.id).execute();
  if (bucket.root_folder_id)
    await db.updateTable('folders').set({ name, updated_at: now }).where('id', '=', bucket.root_folder_id).execute();
}

/**
 * Whether a bucket holds anything besides its root folder: any other folder or any file, live or
 * in the trash (trashed items can still be restored, and still cost storage).
 */
export async function bucketHasContent(db: DbOrTrx, bucketId: string): Promise<boolean> {
  const result = await sql<{ id: string }>`
    select id from folders where bucket_id = ${bucketId} and is_root = 0
    union all
    select id from files where bucket_id = ${bucketId}
    limit 1
  `.execute(db);
  return result.rows.length > 0;
}

/** Deletes an empty bucket with its root folder. */
export async function deleteEmptyBucket(db: DbOrTrx, bucketId: string): Promise<void> {
  await db.deleteFrom('folders').where('bucket_id', '=', bucketId).execute();
  await db.deleteFrom('buckets').where('id', '=', bucketId).execute();
}

/**
 * Re-wraps every bucket key with `rewrap` (null: leave that key as it is), in one transaction;
 * returns how many changed. `coffre keys rotate` runs it with crypto/rotate.ts's rewrapUnder.
 */
export async function rewrapBucketKeys(
  database: DatabaseHandle,
  rewrap: (bucketId: string, wrapped: string) => string | null,
): Promise<number> {
  return database.db.transaction().execute(async (trx) => {
    // PostgreSQL: no bucket is created or changed by a running instance while the keys turn over.
    if (database.capabilities.rowLocks) await sql`lock table buckets in exclusive mode`.execute(trx);
    let rewrapped = 0;
    // SQLite takes its write lock at the first update: the second pass catches a bucket created
    // by another process between the first read and that lock.
    for (let pass = 0; pass < 2; pass++) {
      const rows = await trx.selectFrom('buckets').select(['id', 'key_wrapped']).execute();
      for (const row of rows) {
        const wrapped = rewrap(row.id, row.key_wrapped);
        if (wrapped === null) continue;
        await trx.updateTable('buckets').set({ key_wrapped: wrapped }).where('id', '=', row.id).execute();
        rewrapped++;
      }
    }
    return rewrapped;
  });
}

/** The oldest bucket's id and wrapped key (any one tells whether a master key opens them), or undefined when there is none. */
export function oldestBucketKey(db: DbOrTrx): Promise<Pick<BucketRow, 'id' | 'key_wrapped'> | undefined> {
  return db.selectFrom('buckets').select(['id', 'key_wrapped']).orderBy('created_at').limit(1).executeTakeFirst();
}
