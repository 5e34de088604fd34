import { sql } from 'kysely';
import type { DbOrTrx } from '../db/database.js';
import { preparedQuery } from '../db/prepared-query.js';
import type { Write } from '../db/write-batch.js';

/**
 * Bookkeeping of stored blobs. A blob row exists before its bytes are written to the blob store
 * ('uploading'), so bytes left by a crash are always known to the collector; a small blob's bytes
 * are in its row (`content`), inserted with its first version; versions hold references, and a blob
 * whose count falls to zero is deleted from the store by the collector.
 */
export async function insertUploadingBlobs(db: DbOrTrx, ids: string[], now: string): Promise<void> {
  if (ids.length === 1) {
    await uploadingBlob.execute(db, { id: ids[0], now });
    return;
  }
  await db
    .insertInto('blobs')
    .values(ids.map((id) => ({ id, state: 'uploading' as const, ref_count: 0, stored_size: 0, created_at: now, updated_at: now })))
    .execute();
}

// Every upload runs it: built once (see preparedQuery).
const uploadingBlob = preparedQuery((db, p: { id: string; now: string }) =>
  db.insertInto('blobs').values({ id: p.id, state: 'uploading', ref_count: 0, stored_size: 0, created_at: p.now, updated_at: p.now }),
);

/** A blob the first version of a file is about to use: in the store, or small and held in memory (`content`). */
export interface NewBlob {
  id: string;
  storedSize: number;
  /** A small blob's stored bytes, for its row (see migration 010): it has no row yet. */
  content?: Buffer;
}

/**
 * The first versions now use these blobs (one statement for a group of uploads), as writes to run
 * alone or beside others (see write-batch.ts): the rows of blobs in the store, written before
 * their bytes ('uploading'), become 'ready'; small blobs are inserted with their bytes.
 */
export function recordNewBlobsWrites(db: DbOrTrx, blobs: NewBlob[], now: string): Write[] {
  const inStore = blobs.filter((blob) => blob.content === undefined);
  const inline = blobs.filter((blob) => blob.content !== undefined);
  const writes: Write[] = [];
  if (inStore.length > 0) {
    const sizes = sql.join(
      inStore.map((blob) => sql`when ${blob.id} then cast(${blob.storedSize} as bigint)`),
      sql` `,
    );
    writes.push(sql`
      update blobs set state = 'ready', ref_count = 1, stored_size = case id ${sizes} end, updated_at = ${now}
      where id in (${sql.join(inStore.map((blob) => blob.id))})
    `);
  }
  if (inline.length > 0) {
    const rows = inline.map((blob) => ({
      id: blob.id,
      state: 'ready' as const,
      ref_count: 1,
      stored_size: blob.storedSize,
      content: blob.content!,
      created_at: now,
      updated_at: now,
    }));
    writes.push(db.insertInto('blobs').values(rows));
  }
  return writes;
}

/** A small blob's bytes, or null when the blob is in the store (or unknown). */
export async function blobContent(db: DbOrTrx, id: string): Promise<Buffer | null> {
  return (await contentOf.takeFirst(db, { id }))?.content ?? null;
}

// Every download of a small file runs it: built once (see preparedQuery).
const contentOf = preparedQuery((db, p: { id: string }) => db.selectFrom('blobs').select('content').where('id', '=', p.id));

/** Adds `delta` references to each blob in `ids` (one per occurrence: a blob listed twice gets two). */
export async function adjustBlobRefs(db: DbOrTrx, ids: string[], delta: 1 | -1, now: string): Promise<void> {
  const counts = new Map<string, number>();
  for (const id of ids) counts.set(id, (counts.get(id) ?? 0) + 1);
  for (const [id, n] of counts) {
    await sql`update blobs set ref_count = ref_count + ${delta * n}, updated_at = ${now} where id = ${id}`.execute(db);
  }
}

/** Bytes a stored blob takes in the blob store (header and tags included). */
export async function storedSizeOf(db: DbOrTrx, id: string): Promise<number> {
  const row = await db.selectFrom('blobs').select('stored_size').where('id', '=', id).executeTakeFirstOrThrow();
  return Number(row.stored_size);
}

export async function deleteBlobRow(db: DbOrTrx, id: string): Promise<void> {
  await db.deleteFrom('blobs').where('id', '=', id).execute();
}

/** A blob claimed for deletion; a small one has no bytes in the store (see migration 010). */
export interface ClaimedBlob {
  id: string;
  inStore: boolean;
}

/**
 * Claims up to `limit` blobs to delete: unreferenced ready blobs, uploads abandoned before
 * `staleBefore`, and claims by a crashed collector older than `staleBefore`; a claimed blob is
 * `deleting` with `updated_at = now`. Two instances never claim the same blob. With `skipLocked`
 * (PostgreSQL) one statement claims a batch and skips rows another collector is claiming, so
 * collectors on every instance take disjoint batches; otherwise (SQLite, one writer) each
 * candidate is claimed by a conditional update.
 */
export async function claimGarbage(
  db: DbOrTrx,
  now: string,
  staleBefore: string,
  limit: number,
  skipLocked: boolean,
): Promise<ClaimedBlob[]> {
  if (skipLocked) {
    const result = await sql<{ id: string; in_store: boolean }>`
      update blobs set state = 'deleting', updated_at = ${now}
      where id in (
        select id from blobs
        where ref_count <= 0
          and (state = 'ready' or (state in ('uploading', 'deleting') and updated_at < ${staleBefore}))
        limit ${limit}
        for update skip locked
      )
      returning id, content is null as in_store
    `.execute(db);
    return result.rows.map((r) => ({ id: r.id, inStore: Boolean(r.in_store) }));
  }
  const candidates = await db
    .selectFrom('blobs')
    .select((eb) => ['id', 'state', 'updated_at', eb('content', 'is', null).as('in_store')])
    .where('ref_count', '<=', 0)
    .where((eb) =>
      eb.or([eb('state', '=', 'ready'), eb.and([eb('state', 'in', ['uploading', 'deleting']), eb('updated_at', '<', staleBefore)])]),
    )
    .limit(limit)
    .execute();
  const claimed: ClaimedBlob[] = [];
  for (const c of candidates) {
    const result = await db
      .updateTable('blobs')
      .set({ state: 'deleting', updated_at: now })
      .where('id', '=', c.id)
      .where('state', '=', c.state)
      .where('updated_at', '=', c.updated_at)
      .where('ref_count', '<=', 0)
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) === 1) claimed.push({ id: c.id, inStore: Boolean(c.in_store) });
  }
  return claimed;
}
