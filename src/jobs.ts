import type { FastifyInstance } from 'fastify';
import { forgetOldAttempts } from './access/throttle.js';
import { collectGarbage } from './blobs/blob-collector.js';
import type { AppContext } from './context.js';
import { nowIso } from './lib/time.js';
import { deleteExpiredTokens } from './modules/accounts/accounts.repository.js';

const STALE_UPLOAD_MS = 6 * 60 * 60 * 1000;
// Throttle windows last minutes; a day-old counter can no longer refuse anything.
const OLD_ATTEMPTS_MS = 24 * 60 * 60 * 1000;

/**
 * One round of upkeep: partial writes left by a crash, blobs no version references any more,
 * expired sign-in tokens and stale throttle counters. Every step is a conditional statement, so
 * rounds may run on several instances at once.
 */
export async function maintenanceRound(ctx: AppContext): Promise<{ collected: number }> {
  await ctx.blobs.removeStaleUploads?.(STALE_UPLOAD_MS);
  const collected = await collectGarbage(ctx.db, ctx.blobs);
  await deleteExpiredTokens(ctx.db, nowIso());
  await forgetOldAttempts(ctx.db, Date.now() - OLD_ATTEMPTS_MS);
  return { collected };
}

/**
 * Background work of an instance: `maintenanceRound`, on a timer. Safe on every instance at
 * once (claims are conditional updates); stopped when the app closes.
 */
export function startBackgroundJobs(app: FastifyInstance, ctx: AppContext): void {
  const seconds = ctx.config.collectIntervalSeconds;
  if (seconds <= 0) return;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> = Promise.resolve();
  const run = () => {
    running = (async () => {
      try {
        const { collected } = await maintenanceRound(ctx);
        if (collected > 0) app.log.info({ collected }, 'deleted unreferenced blobs');
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
