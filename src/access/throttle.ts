import { sql } from 'kysely';
import type { DbOrTrx } from '../db/database.js';
import { AppError } from '../errors.js';

/**
 * Fixed-window attempt counters kept in the database, so every instance sees the same count.
 * Used for failed logins now and wrong link passwords and keys later.
 *
 * An attempt is counted *before* the slow check it guards (password hashing), so simultaneous
 * guesses cannot all slip in under the limit; a successful attempt gives its count back.
 */
export interface ThrottleRule {
  key: string;
  limit: number;
  windowSeconds: number;
}

/**
 * Counts one attempt against every rule (one atomic upsert per key) and throws 429 RATE_LIMITED
 * with `Retry-After` when any counter is now past its limit.
 */
export async function consumeAttempt(db: DbOrTrx, rules: ThrottleRule[], nowMs = Date.now()): Promise<void> {
  let retryAfter = 0;
  for (const rule of rules) {
    const windowStartedBefore = nowMs - rule.windowSeconds * 1000;
    const result = await sql<{ count: number; window_start_ms: number }>`
      insert into throttles (key, count, window_start_ms) values (${rule.key}, 1, ${nowMs})
      on conflict (key) do update set
        count = case when throttles.window_start_ms <= ${windowStartedBefore} then 1 else throttles.count + 1 end,
        window_start_ms = case when throttles.window_start_ms <= ${windowStartedBefore} then ${nowMs} else throttles.window_start_ms end
      returning count, window_start_ms
    `.execute(db);
    const row = result.rows[0];
    if (Number(row.count) > rule.limit) {
      const windowEnds = Number(row.window_start_ms) + rule.windowSeconds * 1000;
      retryAfter = Math.max(retryAfter, Math.max(1, Math.ceil((windowEnds - nowMs) / 1000)));
    }
  }
  if (retryAfter > 0) throw new AppError('RATE_LIMITED', undefined, undefined, { 'retry-after': String(retryAfter) });
}

/**
 * Throws 429 when any counter is already at its limit in its window, without counting anything:
 * for checks where only failures count (share links, whose right answers may come in bursts).
 */
export async function assertNotThrottled(db: DbOrTrx, rules: ThrottleRule[], nowMs = Date.now()): Promise<void> {
  let retryAfter = 0;
  for (const rule of rules) {
    const row = await db.selectFrom('throttles').select(['count', 'window_start_ms']).where('key', '=', rule.key).executeTakeFirst();
    if (!row || Number(row.window_start_ms) <= nowMs - rule.windowSeconds * 1000 || Number(row.count) < rule.limit) continue;
    const windowEnds = Number(row.window_start_ms) + rule.windowSeconds * 1000;
    retryAfter = Math.max(retryAfter, Math.max(1, Math.ceil((windowEnds - nowMs) / 1000)));
  }
  if (retryAfter > 0) throw new AppError('RATE_LIMITED', undefined, undefined, { 'retry-after': String(retryAfter) });
}

/** Takes back one counted attempt (it succeeded). */
export async function refundAttempt(db: DbOrTrx, keys: string[]): Promise<void> {
  for (const key of keys) await sql`update throttles set count = count - 1 where key = ${key} and count > 0`.execute(db);
}

/** Forgets the counters of these keys (e.g. an account after a successful login). */
export async function clearAttempts(db: DbOrTrx, keys: string[]): Promise<void> {
  if (keys.length > 0) await db.deleteFrom('throttles').where('key', 'in', keys).execute();
}

/** Deletes counters whose window started before `beforeMs` (they no longer refuse anything). */
export async function forgetOldAttempts(db: DbOrTrx, beforeMs: number): Promise<void> {
  await db.deleteFrom('throttles').where('window_start_ms', '<', beforeMs).execute();
}
