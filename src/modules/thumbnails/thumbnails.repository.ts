import { sql, type Selectable } from 'kysely';
import { adjustBlobRefs } from '../../blobs/blobs.repository.js';
import type { DbOrTrx } from '../../db/database.js';
import { skipLockedClause } from '../../db/leases.js';
import type { Write } from '../../db/write-batch.js';
import type { ThumbnailsTable } from '../../db/schema.js';
import { isThumbnailable } from '../../lib/thumbnail-types.js';

export type ThumbnailRow = Selectable<ThumbnailsTable>;

/**
 * Rows of `thumbnails` (migration 020): one per image version, `pending` from the transaction
 * that records the version, made by the job (thumbnails.job.ts), deleted with the version.
 */

/** A version as far as its thumbnail goes. */
export interface VersionForThumbnail {
  id: string;
  file_id: string;
  content_type: string;
  created_at: string;
}

/** The name of the file a version belongs to (a generic type is judged by the name's extension). */
export type NameOf = (fileId: string) => string;

/**
 * The pending rows of those `versions` that are images (lib/thumbnail-types.ts), as a write beside
 * the versions' insert (or undefined: none is).
 */
export function pendingThumbnailsWrite(db: DbOrTrx, versions: VersionForThumbnail[], nameOf: NameOf): Write | undefined {
  const images = versions.filter((version) => isThumbnailable(version.content_type, nameOf(version.file_id)));
  if (images.length === 0) return undefined;
  return db.insertInto('thumbnails').values(
    images.map((v) => ({
      version_id: v.id,
      file_id: v.file_id,
      state: 'pending' as const,
      created_at: v.created_at,
      updated_at: v.created_at,
    })),
  );
}

export async function insertPendingThumbnails(db: DbOrTrx, versions: VersionForThumbnail[], nameOf: NameOf): Promise<void> {
  const write = pendingThumbnailsWrite(db, versions, nameOf);
  if (write) await sql`${write}`.execute(db);
}

/**
 * Deletes the thumbnails of these versions or files, giving back their blobs' references (the
 * collector then deletes the bytes); in the transaction that deletes the versions.
 */
export async function deleteThumbnails(db: DbOrTrx, of: { versionIds?: string[]; fileIds?: string[] }, now: string): Promise<void> {
  const column = of.versionIds ? 'version_id' : 'file_id';
  const ids = of.versionIds ?? of.fileIds ?? [];
  if (ids.length === 0) return;
  const rows = await db.deleteFrom('thumbnails').where(column, 'in', ids).returning('blob_id').execute();
  const blobIds = rows.flatMap((row) => (row.blob_id ? [row.blob_id] : []));
  if (blobIds.length > 0) await adjustBlobRefs(db, blobIds, -1, now);
}

/** A pending row claimed by a job until `claimedUntil`. */
export interface ClaimedThumbnail {
  versionId: string;
  fileId: string;
  attempts: number;
  claimedUntil: string;
}

/**
 * Claims up to `limit` pending rows nobody holds at `now` (oldest first) until `until`, counting
 * an attempt: on PostgreSQL one statement skipping rows another instance is claiming; on SQLite
 * (one writer) a conditional update per candidate. Two jobs never hold the same row at once.
 */
export async function claimPending(
  db: DbOrTrx,
  now: string,
  until: string,
  limit: number,
  skipLocked: boolean,
): Promise<ClaimedThumbnail[]> {
  const free = sql`state = 'pending' and (claimed_until is null or claimed_until <= ${now})`;
  if (skipLocked) {
    const result = await sql<{ version_id: string; file_id: string; attempts: number }>`
      update thumbnails set claimed_until = ${until}, attempts = attempts + 1, updated_at = ${now}
      where version_id in (
        select version_id from thumbnails where ${free} order by created_at limit ${limit} ${skipLockedClause(true)}
      ) and ${free}
      returning version_id, file_id, attempts
    `.execute(db);
    return result.rows.map((r) => ({ versionId: r.version_id, fileId: r.file_id, attempts: Number(r.attempts), claimedUntil: until }));
  }
  const candidates = await sql<{ version_id: string }>`
    select version_id from thumbnails where ${free} order by created_at limit ${limit}
  `.execute(db);
  const claimed: ClaimedThumbnail[] = [];
  for (const { version_id } of candidates.rows) {
    const result = await sql<{ file_id: string; attempts: number }>`
      update thumbnails set claimed_until = ${until}, attempts = attempts + 1, updated_at = ${now}
      where version_id = ${version_id} and ${free}
      returning file_id, attempts
    `.execute(db);
    const row = result.rows[0];
    if (row) claimed.push({ versionId: version_id, fileId: row.file_id, attempts: Number(row.attempts), claimedUntil: until });
  }
  return claimed;
}

/** What a made thumbnail records. */
export interface MadeThumbnail {
  blobId: string;
  dataKeyWrapped: string;
  size: number;
  width: number;
  height: number;
}

/**
 * Marks a claimed row done (or failed, without `made`) if the claim still holds: false when the
 * row is gone (its version was deleted meanwhile) or another job took it after the lease ran out.
 */
export async function finishClaim(db: DbOrTrx, claim: ClaimedThumbnail, now: string, made?: MadeThumbnail): Promise<boolean> {
  const result = await db
    .updateTable('thumbnails')
    .set(
      made
        ? {
            state: 'done',
            blob_id: made.blobId,
            data_key_wrapped: made.dataKeyWrapped,
            size: made.size,
            width: made.width,
            height: made.height,
            claimed_until: null,
            updated_at: now,
          }
        : { state: 'failed', claimed_until: null, updated_at: now },
    )
    .where('version_id', '=', claim.versionId)
    .where('state', '=', 'pending')
    .where('claimed_until', '=', claim.claimedUntil)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export function findThumbnail(db: DbOrTrx, versionId: string): Promise<ThumbnailRow | undefined> {
  return db.selectFrom('thumbnails').selectAll().where('version_id', '=', versionId).executeTakeFirst();
}
