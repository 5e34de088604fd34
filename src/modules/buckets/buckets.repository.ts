import type { DbOrTrx } from '../../db/database.js';
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
