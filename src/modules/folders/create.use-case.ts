import { loadFolderFor } from '../../access/access.js';
import type { AppContext, Principal } from '../../context.js';
import { newChildKey } from '../../crypto/keyring.js';
import type { DbOrTrx } from '../../db/database.js';
import type { BucketRow, FolderRow, NewFolder } from '../../db/schema.js';
import { AppError } from '../../errors.js';
import { assertId, newId, randomToken } from '../../lib/ids.js';
import { assertName } from '../../lib/names.js';
import { nowIso } from '../../lib/time.js';
import { findBucket } from '../buckets/buckets.repository.js';
import { detailAfterChange } from './details.use-case.js';
import { folderKey } from './folders.keys.js';
import { assertNameFree } from './folders.names.js';
import * as repo from './folders.repository.js';
import type { CreateFolderBody, FolderDetail } from './folders.schemas.js';
import { mutateTrees, requireLive } from './folders.tree.js';

/** Creates a folder in a bucket: under `parentId`, or under the bucket's root. */
export async function create(ctx: AppContext, principal: Principal, bucketId: string, input: CreateFolderBody): Promise<FolderDetail> {
  const bucket = await findBucket(ctx.db, bucketId);
  if (!bucket) throw new AppError('BUCKET_NOT_FOUND');
  // Another user's bucket is reachable only through a folder of it shared with the caller for
  // editing; anything else about it answers as an unknown bucket.
  const own = bucket.owner_id === principal.userId;
  if (!own && !input.parentId) throw new AppError('BUCKET_NOT_FOUND');
  const name = assertName(input.name);
  const parentId = input.parentId ? assertId('fld', input.parentId, 'parentId') : bucket.root_folder_id!;
  const id = newId('fld');
  await mutateTrees(ctx, { folders: [parentId] }, async (trx) => {
    const parent = await loadParent(trx, principal, parentId, bucket, own);
    await assertNameFree(trx, parent.id, name);
    const now = nowIso();
    const row: NewFolder = {
      id,
      bucket_id: bucket.id,
      owner_id: parent.owner_id,
      parent_id: parent.id,
      name,
      visibility: input.visibility ?? 'private',
      is_share: 1,
      hash_url: randomToken(),
      key_wrapped: newChildKey(await folderKey(trx, ctx.keyring, parent.id), id).wrapped,
      is_root: 0,
      deleted_at: null,
      last_access_at: null,
      created_at: now,
      updated_at: now,
    };
    await repo.insertFolders(trx, [row]);
    await repo.adjustChain(trx, parent.id, '', 1, { folders: 1, files: 0, bytes: 0 }, { folders: 1, files: 0 });
  });
  return detailAfterChange(ctx, principal, id);
}

/** The live parent of a new folder, in `bucket`, which the principal may edit; outside one's own bucket, any refusal is an unknown bucket. */
async function loadParent(trx: DbOrTrx, principal: Principal, parentId: string, bucket: BucketRow, own: boolean): Promise<FolderRow> {
  const parent = await loadFolderFor(trx, principal, parentId, 'edit', own ? 'FOLDER_NOT_FOUND' : 'BUCKET_NOT_FOUND');
  if (parent.bucket_id !== bucket.id) {
    throw own ? new AppError('FOLDER_NOT_FOUND', 'The parent folder is not in this bucket') : new AppError('BUCKET_NOT_FOUND');
  }
  requireLive(parent);
  return parent;
}
