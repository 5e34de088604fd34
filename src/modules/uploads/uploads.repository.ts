import type { Db, DbOrTrx } from '../../db/database.js';
import type { ResumableUploadRow, ResumableUploadsTable } from '../../db/schema.js';
import type { Insertable } from 'kysely';

/** An upload row as the use cases read it: lengths as numbers. */
export type UploadRow = Omit<ResumableUploadRow, 'length' | 'received'> & { length: number | null; received: number };

function toUpload(row: ResumableUploadRow): UploadRow {
  return { ...row, length: row.length === null ? null : Number(row.length), received: Number(row.received) };
}

export async function insertUpload(db: DbOrTrx, row: Insertable<ResumableUploadsTable>): Promise<void> {
  await db.insertInto('resumable_uploads').values(row).execute();
}

/** The caller's upload, whatever its state; undefined for anyone else's (404 alike). */
export async function findUpload(db: DbOrTrx, userId: string, id: string): Promise<UploadRow | undefined> {
  const row = await db.selectFrom('resumable_uploads').selectAll().where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
  return row && toUpload(row);
}

/**
 * The caller's unfinished uploads that may still be continued, newest first: one past its expiry
 * answers 410 until the upkeep removes it, so it is not offered.
 */
export async function listOpenUploads(db: Db, userId: string, now: string): Promise<UploadRow[]> {
  const rows = await db
    .selectFrom('resumable_uploads')
    .selectAll()
    .where('user_id', '=', userId)
    .where('state', '=', 'open')
    .where('expires_at', '>=', now)
    .orderBy('created_at', 'desc')
    .execute();
  return rows.map(toUpload);
}

/**
 * Takes the upload's write lease unless another request holds one that has not run out: true
 * when taken. One conditional update, so two instances never both take it.
 */
export async function takeLease(db: Db, id: string, token: string, now: string, until: string): Promise<boolean> {
  const result = await db
    .updateTable('resumable_uploads')
    .set({ lock_token: token, locked_until: until })
    .where('id', '=', id)
    .where((eb) => eb.or([eb('locked_until', '=', ''), eb('locked_until', '<', now)]))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function renewLease(db: Db, id: string, token: string, until: string): Promise<void> {
  await db.updateTable('resumable_uploads').set({ locked_until: until }).where('id', '=', id).where('lock_token', '=', token).execute();
}

export async function releaseLease(db: Db, id: string, token: string): Promise<void> {
  await db
    .updateTable('resumable_uploads')
    .set({ lock_token: '', locked_until: '' })
    .where('id', '=', id)
    .where('lock_token', '=', token)
    .execute();
}

/** Records what a request appended, only while it holds the lease. */
export async function saveProgress(
  db: DbOrTrx,
  id: string,
  token: string,
  progress: Pick<ResumableUploadsTable, 'received' | 'tail' | 'staging' | 'length' | 'updated_at' | 'expires_at'>,
): Promise<boolean> {
  const result = await db
    .updateTable('resumable_uploads')
    .set(progress)
    .where('id', '=', id)
    .where('lock_token', '=', token)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function markDone(db: DbOrTrx, id: string, fileId: string, now: string): Promise<void> {
  await db
    .updateTable('resumable_uploads')
    .set({ state: 'done', file_id: fileId, tail: '', staging: '', updated_at: now })
    .where('id', '=', id)
    .execute();
}

export async function deleteUpload(db: DbOrTrx, id: string): Promise<void> {
  await db.deleteFrom('resumable_uploads').where('id', '=', id).execute();
}

/** Uploads past their expiry, whose lease (if any) ran out too: the upkeep's to remove. */
export async function expiredUploads(db: Db, now: string, limit: number): Promise<UploadRow[]> {
  const rows = await db
    .selectFrom('resumable_uploads')
    .selectAll()
    .where('expires_at', '<', now)
    .where((eb) => eb.or([eb('locked_until', '=', ''), eb('locked_until', '<', now)]))
    .limit(limit)
    .execute();
  return rows.map(toUpload);
}

/** Blob keys of open uploads, whose staged writes the blob store must keep. */
export async function openUploadBlobIds(db: Db): Promise<Set<string>> {
  const rows = await db.selectFrom('resumable_uploads').select('blob_id').where('state', '=', 'open').execute();
  return new Set(rows.map((row) => row.blob_id));
}
