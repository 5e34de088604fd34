import { setTimeout as sleep } from 'node:timers/promises';
import type { Readable } from 'node:stream';
import type { StoredContent } from '../../content/index.js';
import type { AppContext } from '../../context.js';
import { openChildKey, rewrapChildKey } from '../../crypto/keyring.js';
import { mutation } from '../../db/transaction.js';
import { writeAll } from '../../db/write-batch.js';
import { isoPlus, nowIso } from '../../lib/time.js';
import * as files from '../files/files.repository.js';
import { fileKeyOf } from '../files/files.tree.js';
import { renderThumbnail, type Rendered } from './thumbnail-render.js';
import { claimPending, finishClaim, type ClaimedThumbnail } from './thumbnails.repository.js';

/**
 * The thumbnail job: claims pending rows of `thumbnails` (a lease, so instances share the work
 * and a crash mid-way leaves the row to be claimed again), makes each thumbnail from the
 * decrypted original, stores it encrypted like any blob, and records it. An image sharp refuses
 * (too many pixels, damaged, too slow) is marked failed and keeps the generic icon.
 */

/** Claims after which a row still pending (the job crashed on it each time) is failed. */
export const MAX_ATTEMPTS = 3;
/** Rows claimed at once: few, so a stopping instance leaves little to wait for its lease. */
const BATCH = 4;

export interface ThumbnailRound {
  made: number;
  failed: number;
}

export interface RoundOptions {
  /** Rest after each thumbnail as long as it took (at most half a core for thumbnails), to yield to requests. */
  paced?: boolean;
  /** Stop claiming more once this says so (the app is closing). */
  stopped?: () => boolean;
}

/** Makes thumbnails until none is pending and free (or `stopped`). */
export async function makeThumbnails(ctx: AppContext, options: RoundOptions = {}): Promise<ThumbnailRound> {
  const round: ThumbnailRound = { made: 0, failed: 0 };
  const leaseMs = (ctx.config.thumbnailSeconds + 60) * 1000;
  while (!options.stopped?.()) {
    const now = nowIso();
    const claims = await claimPending(ctx.db, now, isoPlus(now, leaseMs), BATCH, ctx.database.capabilities.skipLocked);
    if (claims.length === 0) break;
    for (const claim of claims) {
      const started = Date.now();
      const outcome = await makeOne(ctx, claim);
      if (outcome === 'done') round.made++;
      if (outcome === 'failed') round.failed++;
      if (options.paced) await sleep(Math.min(Date.now() - started, 1000));
    }
  }
  return round;
}

type Outcome = 'done' | 'failed' | 'lost';

/** One claimed row: made, failed, or lost (its version went, or the claim ran out meanwhile). */
export async function makeOne(ctx: AppContext, claim: ClaimedThumbnail): Promise<Outcome> {
  const fail = async () => ((await finishClaim(ctx.db, claim, nowIso())) ? 'failed' : 'lost');
  if (claim.attempts > MAX_ATTEMPTS) return fail();
  const file = await files.findFile(ctx.db, claim.fileId);
  const version = file && (await files.findVersion(ctx.db, file.id, claim.versionId));
  if (!file || !version) return 'lost';
  if (Number(version.size) > ctx.config.thumbnailMaxInputBytes) return fail();
  const fileKey = await fileKeyOf(ctx, ctx.db, file);
  const dataKey = openChildKey(fileKey, version.data_key_wrapped, version.id);
  // Errors reading the original (a storage outage) leave the row claimed: it is tried again after the lease.
  const opened = await ctx.content.open({ blobId: version.blob_id, size: Number(version.size), dataKey });
  const input = await readWhole(opened.stream, opened.length);
  let rendered: Rendered;
  try {
    rendered = await renderThumbnail(input, { maxPixels: ctx.config.thumbnailMaxPixels, seconds: ctx.config.thumbnailSeconds });
  } catch {
    return fail();
  }
  return (await record(ctx, claim, fileKey, rendered)) ? 'done' : 'lost';
}

/** Stores a thumbnail encrypted under a data key of its own and records it, if the claim still holds. */
async function record(ctx: AppContext, claim: ClaimedThumbnail, fileKey: Buffer, rendered: Rendered): Promise<boolean> {
  const stored: StoredContent = await ctx.content.store(rendered.data, {
    maxBytes: rendered.data.length,
    inlineMaxBytes: ctx.config.inlineBlobBytes,
  });
  const made = {
    blobId: stored.blobId,
    dataKeyWrapped: rewrapChildKey(stored.dataKey, fileKey, `thumbnail:${claim.versionId}`),
    size: stored.size,
    width: rendered.width,
    height: rendered.height,
  };
  try {
    const recorded = await mutation(ctx.db, async (trx) => {
      const now = nowIso();
      if (!(await finishClaim(trx, claim, now, made))) return false;
      await writeAll(trx, ctx.database.capabilities.writesInOneStatement, ctx.content.recordWrites(trx, [stored], now));
      await ctx.content.awaitDurable([stored]);
      return true;
    });
    if (!recorded) await ctx.content.discard(stored);
    return recorded;
  } catch (error) {
    await ctx.content.discard(stored);
    throw error;
  }
}

async function readWhole(stream: Readable, length: number): Promise<Buffer> {
  const out = Buffer.allocUnsafe(length);
  let at = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    chunk.copy(out, at);
    at += chunk.length;
  }
  return out.subarray(0, at);
}

/**
 * Runs the job on this instance while the app is up: a round, then a rest of
 * COFFRE_THUMBNAIL_INTERVAL_SECONDS when nothing is left; paced so uploads keep their speed.
 */
export function thumbnailWorker(ctx: AppContext, log: (error: unknown) => void): { start(): void; stop(): Promise<void> } {
  let stopping = false;
  let wake: (() => void) | undefined;
  let running: Promise<void> = Promise.resolve();
  const loop = async () => {
    while (!stopping) {
      try {
        await makeThumbnails(ctx, { paced: true, stopped: () => stopping });
      } catch (error) {
        log(error);
      }
      if (stopping) break;
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, ctx.config.thumbnailIntervalSeconds * 1000).unref();
      });
    }
  };
  return {
    start: () => {
      if (ctx.config.thumbnailIntervalSeconds > 0) running = loop();
    },
    stop: async () => {
      stopping = true;
      wake?.();
      await running;
    },
  };
}
