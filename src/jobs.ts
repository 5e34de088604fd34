import type { FastifyInstance } from 'fastify';
import { collectGarbage } from './blobs/blob-collector.js';
import type { AppContext } from './context.js';

/**
 * Background work of an instance: the blob collector, on a timer. Safe on every instance at
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
        await ctx.blobs.removeStaleUploads?.(6 * 60 * 60 * 1000);
        const collected = await collectGarbage(ctx.db, ctx.blobs);
        if (collected > 0) app.log.info({ collected }, 'deleted unreferenced blobs');
      } catch (error) {
        app.log.error({ err: error }, 'blob collection failed');
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
