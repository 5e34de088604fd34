import { sql } from 'kysely';
import type { AppContext, Principal } from '../../context.js';
import { releaseLease, skipLockedClause, takeLeases } from '../../db/leases.js';
import { AppError } from '../../errors.js';
import { DAY_MS, isoPlus } from '../../lib/time.js';
import { fileService } from '../files/files.service.js';
import { folderService } from '../folders/folders.service.js';

const TRASH_PURGE_JOB = 'trash-purge';
/** How long an instance holds a trash item it purges; also how soon a retained item is tried again. */
const LEASE_MS = 60 * 60 * 1000;

interface TrashRoot {
  kind: 'folder' | 'file';
  id: string;
  owner_id: string;
}

/**
 * Deletes for good what was trashed more than COFFRE_TRASH_RETENTION_DAYS ago, as its owner would
 * with a hard delete; files under retention (and folders holding one) stay. Every instance may run
 * it at once: each trashed item is claimed first, picked with `FOR UPDATE SKIP LOCKED` where the
 * dialect has it and leased in `job_leases`, so no two instances purge the same item.
 */
export async function purgeExpiredTrash(ctx: AppContext, now: string, batchSize = 50): Promise<{ purged: number; kept: number }> {
  const days = ctx.config.trashRetentionDays;
  let purged = 0;
  let kept = 0;
  if (days <= 0) return { purged, kept };
  const cutoff = isoPlus(now, -days * DAY_MS);
  const folders = folderService(ctx);
  const files = fileService(ctx);
  for (;;) {
    const claimed = await claimTrashRoots(ctx, cutoff, now, batchSize);
    for (const root of claimed) {
      // The owner may always hard-delete their own items; the purge acts in their name.
      const owner: Principal = { userId: root.owner_id, tokenId: TRASH_PURGE_JOB, email: '', name: '' };
      try {
        if (root.kind === 'folder') await folders.remove(owner, root.id, 'hard');
        else await files.remove(owner, root.id, 'hard');
        purged++;
      } catch (error) {
        if (error instanceof AppError && error.code === 'RETENTION_ACTIVE') {
          // Keeps its lease: tried again once the lease runs out.
          kept++;
          continue;
        }
        // A file trashed on its own inside a folder purged earlier went with that folder.
        if (!(error instanceof AppError && (error.code === 'FILE_NOT_FOUND' || error.code === 'FOLDER_NOT_FOUND'))) throw error;
      }
      await releaseLease(ctx.db, TRASH_PURGE_JOB, root.id);
    }
    if (claimed.length < batchSize) return { purged, kept };
  }
}

/** Claims up to `limit` trash roots (folders first, then files) trashed before `cutoff`. */
async function claimTrashRoots(ctx: AppContext, cutoff: string, now: string, limit: number): Promise<TrashRoot[]> {
  const lock = skipLockedClause(ctx.database.capabilities.skipLocked);
  const until = isoPlus(now, LEASE_MS);
  return ctx.db.transaction().execute(async (trx) => {
    const roots: TrashRoot[] = [];
    for (const kind of ['folder', 'file'] as const) {
      const table = sql.table(kind === 'folder' ? 'folders' : 'files');
      const rows = await sql<{ id: string; owner_id: string }>`
        select t.id, t.owner_id from ${table} t
        where t.trash_batch = t.id and t.deleted_at < ${cutoff}
          and not exists (select 1 from job_leases l where l.job = ${TRASH_PURGE_JOB} and l.item_id = t.id and l.lease_until > ${now})
        order by t.deleted_at, t.id
        limit ${limit - roots.length}
        ${lock}
      `.execute(trx);
      const taken = await takeLeases(
        trx,
        TRASH_PURGE_JOB,
        rows.rows.map((r) => r.id),
        now,
        until,
      );
      roots.push(...rows.rows.filter((r) => taken.has(r.id)).map((r) => ({ kind, ...r })));
      if (roots.length >= limit) break;
    }
    return roots;
  });
}
