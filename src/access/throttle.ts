import { sql } from 'kysely';
import type { DbOrTrx } from '../db/database.js';
import { AppError } from '../errors.js';

/**
 * Fixed-window failure counters kept in the database, so every instance sees the same count.
 * Used for failed logins now and wrong link passwords and keys later.
 */
export interface ThrottleRule {
  key: string;
  limit: number;
  windowSeconds: number;
}

/** Throws 429 RATE_LIMITED with `Retry-After` when any of the rules' counters is at its limit. */
export async function assertNotThrottled(db: DbOrTrx, rules: ThrottleRule[], nowMs = Date.now()): Promise<void> {
  if (rules.length === 0) return;
  const rows = await db
    .selectFrom('throttles')
    .select(['key', 'count', 'window_start_ms'])
    .where('key', 'in', rules.map((r) => r.key))
    .execute();
  let retryAfter = 0;
  for (const row of rows) {
    const rule = rules.find((r) => r.key === row.key)!;
    const windowEnds = Number(row.window_start_ms) + rule.windowSeconds * 1000;
    if (windowEnds > nowMs && row.count >= rule.limit) retryAfter = Math.max(retryAfter, Math.ceil((windowEnds - nowMs) / 1000));
  }
  if (retryAfter > 0) {
    throw new AppError('RATE_LIMITED', undefined, undefined, { 'retry-after': String(retryAfter) });
  }
}

/** Counts one failure against each rule, atomically (one upsert per key, safe across instances). */
export async function recordFailure(db: DbOrTrx, rules: ThrottleRule[], nowMs = Date.now()): Promise<void> {
  for (const rule of rules) {
    const windowStartedBefore = nowMs - rule.windowSeconds * 1000;
    await sql`
      insert into throttles (key, count, window_start_ms) values (${rule.key}, 1, ${nowMs})
      on conflict (key) do update set
        count = case when throttles.window_start_ms <= ${windowStartedBefore} then 1 else throttles.count + 1 end,
        window_start_ms = case when throttles.window_start_ms <= ${windowStartedBefore} then ${nowMs} else throttles.window_start_ms end
    `.execute(db);
  }
}

export async function clearFailures(db: DbOrTrx, keys: string[]): Promise<void> {
  if (keys.length > 0) await db.deleteFrom('throttles').where('key', 'in', keys).execute();
}
