import type { DatabaseHandle } from '../db/database.js';
import { isoPlus, nowIso } from '../lib/time.js';
import type { BlobStore } from './blob-store.js';
import { claimGarbage, deleteBlobRow } from './blobs.repository.js';

export interface CollectOptions {
  /** Uploads (and interrupted collections) older than this are abandoned. */
  staleAfterMs?: number;
  batchSize?: number;
}

/**
 * Deletes blobs that no version references any more, and bytes left by uploads that never
 * finished. Every instance may run it at once: each blob is claimed (`FOR UPDATE SKIP LOCKED` on
 * PostgreSQL, a conditional update on SQLite) before its bytes are deleted, and the row goes only
 * after the bytes are gone.
 */
export async function collectGarbage(database: DatabaseHandle, blobs: BlobStore, options: CollectOptions = {}): Promise<number> {
  const { db } = database;
  const staleAfterMs = options.staleAfterMs ?? 6 * 60 * 60 * 1000;
  let collected = 0;
  for (;;) {
    const now = nowIso();
    const claimed = await claimGarbage(db, now, isoPlus(now, -staleAfterMs), options.batchSize ?? 100, database.capabilities.skipLocked);
    for (const { id, inStore } of claimed) {
      if (inStore) await blobs.delete(id);
      await deleteBlobRow(db, id);
      collected++;
    }
    if (claimed.length < (options.batchSize ?? 100)) return collected;
  }
}
