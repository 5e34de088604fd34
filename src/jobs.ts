import type { FastifyInstance } from 'fastify';
import { forgetOldAttempts } from './access/throttle.js';
import { collectGarbage } from './blobs/blob-collector.js';
import type { AppContext } from './context.js';
import { forgetOldLeases } from './db/leases.js';
import { DAY_MS, isoPlus, nowIso } from './lib/time.js';
import { deleteExpiredTokens } from './modules/accounts/accounts.repository.js';
import { deleteEndedInvitations } from './modules/admin/admin.repository.js';
import { clearStaleHolds } from './modules/accounts/upload-holds.js';
import { deleteExpiredLocks } from './modules/dav/dav-locks.repository.js';
import { deleteOldPasses } from './modules/links/links.passes.js';
import { deleteClosedLinks } from './modules/links/links.repository.js';
import { thumbnailWorker } from './modules/thumbnails/thumbnails.job.js';
import { purgeExpiredTrash } from './modules/trash/trash.purge.js';
import { removeExpiredUploads } from './modules/uploads/manage-uploads.use-case.js';
import { openUploadBlobIds } from './modules/uploads/uploads.repository.js';

const STALE_UPLOAD_MS = 6 * 60 * 60 * 1000;
// Throttle windows last minutes; a day-old counter can no longer refuse anything.
const OLD_ATTEMPTS_MS = 24 * 60 * 60 * 1000;
/**
 * A share link that expired or was revoked, or an invitation used or expired, answers 410 for this
 * long (its address still says why it stopped working), then it is deleted (and answers 404).
 */
const ENDED_KEPT_MS = 30 * DAY_MS;

export interface RoundReport {
  /** Blobs deleted from the store. */
  collected: number;
  /** Trash items deleted for good, and those kept under retention. */
  purged: number;
  keptUnderRetention: number;
  /** Share links deleted 30 days after they expired or were revoked. */
  linksDeleted: number;
}

/**
 * One round of upkeep: the trash purge (after COFFRE_TRASH_RETENTION_DAYS), partial writes left
 * by a crash, blobs no version references any more, long-closed share links and invitations,
 * expired sign-in tokens, expired WebDAV locks, link resume passes, stale throttle counters, job leases and quota holds. Rounds run on every instance at once: work on
 * items is claimed first (`FOR UPDATE SKIP LOCKED` on PostgreSQL), the rest are single
 * conditional statements.
 */
export async function maintenanceRound(ctx: AppContext): Promise<RoundReport> {
  const now = nowIso();
  const report: RoundReport = { collected: 0, purged: 0, keptUnderRetention: 0, linksDeleted: 0 };
  // Each step runs even when an earlier one failed (a purge error must not stop blob collection).
  const errors: unknown[] = [];
  const step = async (work: () => Promise<unknown>) => {
    try {
      await work();
    } catch (error) {
      errors.push(error);
    }
  };
  // Purged files drop their blob references first, so the collector below deletes their bytes.
  await step(async () => {
    const { purged, kept } = await purgeExpiredTrash(ctx, now);
    report.purged = purged;
    report.keptUnderRetention = kept;
  });
  // Unfinished resumable uploads past their expiry; the staged writes of the others are kept.
  await step(() => removeExpiredUploads(ctx, now));
  await step(async () => ctx.blobs.removeStaleUploads(STALE_UPLOAD_MS, await openUploadBlobIds(ctx.db)));
  await step(async () => {
    report.collected = await collectGarbage(ctx.database, ctx.blobs);
  });
  await step(async () => {
    report.linksDeleted = await deleteClosedLinks(ctx.db, isoPlus(now, -ENDED_KEPT_MS));
  });
  await step(() => deleteEndedInvitations(ctx.db, isoPlus(now, -ENDED_KEPT_MS)));
  // Link resume passes past their window (and those an instance that died left held).
  await step(() => deleteOldPasses(ctx.db, now));
  await step(() => deleteExpiredTokens(ctx.db, now));
  // WebDAV locks past their timeout (they already count for nothing; this keeps the table small).
  await step(() => deleteExpiredLocks(ctx.db, now));
  await step(() => forgetOldAttempts(ctx.db, Date.now() - OLD_ATTEMPTS_MS));
  await step(() => forgetOldLeases(ctx.db, isoPlus(now, -DAY_MS)));
  // Quota held by uploads of an instance that died mid-upload (its lease ran out).
  await step(() => clearStaleHolds(ctx.db, now));
  if (errors.length === 1) throw errors[0];
  if (errors.length > 1) throw new AggregateError(errors, `${errors.length} upkeep steps failed`);
  return report;
}

/**
 * Background work of an instance: `maintenanceRound`, on a timer, and the thumbnail job. Safe on every instance at
 * once (see above); stopped when the app closes.
 */
export function startBackgroundJobs(app: FastifyInstance, ctx: AppContext): void {
  // Thumbnails (modules/thumbnails): their own loop, claimed row by row through the database.
  const thumbnails = thumbnailWorker(ctx, (error) => app.log.error({ err: error }, 'thumbnail job failed'));
  app.addHook('onReady', async () => thumbnails.start());
  app.addHook('onClose', () => thumbnails.stop());
  const seconds = ctx.config.collectIntervalSeconds;
  if (seconds <= 0) return;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> = Promise.resolve();
  const run = () => {
    running = (async () => {
      try {
        const report = await maintenanceRound(ctx);
        if (report.collected > 0) app.log.info({ collected: report.collected }, 'deleted unreferenced blobs');
        if (report.purged > 0) app.log.info({ purged: report.purged }, 'purged the trash past its retention');
        if (report.linksDeleted > 0) app.log.info({ linksDeleted: report.linksDeleted }, 'deleted long-closed share links');
      } catch (error) {
        app.log.error({ err: error }, 'maintenance round failed');
      }
    })();
  };
  app.addHook('onReady', async () => {
    run();
    timer = setInterval(run, seconds * 1000);
    timer.unref();
  });
  app.addHook('onClose', async () => {
    clearInterval(timer);
    await running;
  });
}
