import { loadBucketFor, loadDatahubFor } from '../../access/access.js';
import type { AppContext, Principal } from '../../context.js';
import { mutation } from '../../db/transaction.js';
import type { BucketRow } from '../../db/schema.js';
import { AppError } from '../../errors.js';
import { DEFAULT_PAGE_SIZE, decodeCursor, encodeCursor } from '../../lib/cursor.js';
import { assertId } from '../../lib/ids.js';
import { nowIso } from '../../lib/time.js';
import { findUserById, lockUser } from '../accounts/accounts.repository.js';
import * as repo from './buckets.repository.js';
import { assertBucketName } from './buckets.names.js';
import type { Bucket } from './buckets.schemas.js';

/** A bucket as the API shows it (Bucket in buckets.schemas.ts). */
export function bucketView(row: BucketRow, defaultBucketId: string | null): Bucket {
  return {
    id: row.id,
    name: row.name,
    datahubId: row.datahub_id,
    rootFolderId: row.root_folder_id ?? '',
    isDefault: row.id === defaultBucketId,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export function bucketService(ctx: AppContext) {
  const { db, keyring } = ctx;
  const rowLocks = ctx.database.capabilities.rowLocks;

  async function defaultBucketOf(principal: Principal): Promise<string | null> {
    return (await findUserById(db, principal.userId))?.default_bucket_id ?? null;
  }

  async function view(principal: Principal, bucketId: string): Promise<Bucket> {
    return bucketView(await loadBucketFor(db, principal, bucketId), await defaultBucketOf(principal));
  }

  /** A new bucket with its root folder and its own key (wrapped by the master key) in one of the caller's datahubs. */
  async function create(principal: Principal, datahubId: string, input: { name: string }): Promise<Bucket> {
    const name = assertBucketName(input.name);
    const bucket = await mutation(db, async (trx) => {
      await lockUser(trx, rowLocks, principal.userId);
      await loadDatahubFor(trx, principal, datahubId);
      if (await repo.bucketNameTaken(trx, principal.userId, name)) throw bucketNameConflict(name);
      return repo.insertBucketWithRoot(trx, keyring, { ownerId: principal.userId, datahubId, name, now: nowIso() });
    });
    return bucketView(bucket, await defaultBucketOf(principal));
  }

  async function list(principal: Principal, query: { datahubId?: string; limit?: number; cursor?: string }) {
    if (query.datahubId) await loadDatahubFor(db, principal, assertId('dhb', query.datahubId, 'datahubId'));
    const afterId = query.cursor ? String(decodeCursor(query.cursor, 1)[0]) : undefined;
    const page = await repo.listBucketsPage(db, principal.userId, {
      datahubId: query.datahubId,
      limit: query.limit ?? DEFAULT_PAGE_SIZE,
      afterId,
    });
    const defaultId = await defaultBucketOf(principal);
    const last = page.rows[page.rows.length - 1];
    return {
      data: page.rows.map((row) => bucketView(row, defaultId)),
      total: page.total,
      nextCursor: page.hasMore && last ? encodeCursor([last.id]) : null,
    };
  }

  /** Renames a bucket (its root folder carries the same name). */
  async function update(principal: Principal, bucketId: string, input: { name?: string }): Promise<Bucket> {
    if (input.name === undefined)
      throw new AppError('EMPTY_UPDATE', 'Give the new name of the bucket', [{ field: 'name', problem: 'is required' }]);
    const name = assertBucketName(input.name);
    await mutation(db, async (trx) => {
      await lockUser(trx, rowLocks, principal.userId);
      const bucket = await loadBucketFor(trx, principal, bucketId);
      if (bucket.name === name) return;
      if (await repo.bucketNameTaken(trx, principal.userId, name)) throw bucketNameConflict(name);
      await repo.renameBucket(trx, bucket, name, nowIso());
    });
    return view(principal, bucketId);
  }

  /**
   * Deletes an empty bucket. Empty means: nothing but its root folder, no other folder and no
   * file, live or in the trash (trashed items may still be restored and still use storage). The
   * account's default bucket stays.
   */
  async function remove(principal: Principal, bucketId: string): Promise<void> {
    await mutation(db, async (trx) => {
      // The owner's lock makes uploads, creations and moves into this bucket wait, so the bucket
      // is still empty when it is deleted.
      await lockUser(trx, rowLocks, principal.userId);
      const bucket = await loadBucketFor(trx, principal, bucketId);
      const user = await findUserById(trx, principal.userId);
      if (user?.default_bucket_id === bucket.id) throw new AppError('DEFAULT_BUCKET');
      if (await repo.bucketHasContent(trx, bucket.id)) throw new AppError('BUCKET_NOT_EMPTY');
      await repo.deleteEmptyBucket(trx, bucket.id);
    });
  }

  return { create, list, update, remove, view };
}

function bucketNameConflict(name: string): AppError {
  return new AppError('NAME_CONFLICT', `You already have a bucket named "${name}"`, [
    { field: 'name', problem: 'is taken by another of your buckets' },
  ]);
}
