import { randomUUID } from 'node:crypto';
import { onePerContext, type AppContext } from '../../context.js';
import { AppError } from '../../errors.js';
import { isoPlus, nowIso } from '../../lib/time.js';
import { releaseLease, renewLease, takeLease } from './uploads.repository.js';

/** A write lease runs out this long after it was last renewed (a crashed instance's). */
const LEASE_MS = 90 * 1000;

interface Writer {
  /** Ends the request's body early: what arrived is kept, and the lease released. */
  stop: () => void;
  settled: Promise<unknown>;
}

/** The requests writing uploads in this instance, by upload id. */
const writers = onePerContext(() => new Map<string, Writer>());

/**
 * Runs `work` holding the upload's write lease (one request at a time, whatever the instance),
 * renewed while it runs and released after; 423 UPLOAD_BUSY when another request holds it. A
 * request of this instance holding it is stopped first: a client whose connection dropped comes
 * back (or cancels) before the server has seen the old request's body stall, and the newer
 * request is the one the client still waits for. `stop` is how this request is stopped in turn.
 */
export async function withLease<T>(ctx: AppContext, id: string, stop: () => void, work: (token: string) => Promise<T>): Promise<T> {
  const token = randomUUID();
  const take = () => takeLease(ctx.db, id, token, nowIso(), isoPlus(nowIso(), LEASE_MS));
  if (!(await take())) {
    const running = writers(ctx).get(id);
    if (!running) throw new AppError('UPLOAD_BUSY');
    running.stop();
    await running.settled;
    if (!(await take())) throw new AppError('UPLOAD_BUSY');
  }
  const renewal = setInterval(() => {
    renewLease(ctx.db, id, token, isoPlus(nowIso(), LEASE_MS)).catch(() => {});
  }, LEASE_MS / 3);
  const settled = work(token).finally(async () => {
    clearInterval(renewal);
    await releaseLease(ctx.db, id, token);
  });
  const writer = { stop, settled: settled.catch(() => {}) };
  writers(ctx).set(id, writer);
  try {
    return await settled;
  } finally {
    if (writers(ctx).get(id) === writer) writers(ctx).delete(id);
  }
}
