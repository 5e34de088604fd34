import { sql, type RawBuilder } from 'kysely';
import type { DbOrTrx } from './database.js';

/**
 * Leases of background jobs (table `job_leases`, migration 005): before working on an item, an
 * instance takes its lease in one conditional upsert; a lease another instance holds is not
 * taken, and a lease left by a crashed instance is free again after `lease_until`.
 */

/** The row-lock suffix of a claim query: `FOR UPDATE SKIP LOCKED` where the dialect has it. */
export function skipLockedClause(skipLocked: boolean): RawBuilder<unknown> {
  return skipLocked ? sql`for update skip locked` : sql``;
}

/** Takes the leases of `job` on those of `ids` nobody holds at `now`; returns the ids taken. */
export async function takeLeases(db: DbOrTrx, job: string, ids: string[], now: string, until: string): Promise<Set<string>> {
  const taken = new Set<string>();
  for (const id of ids) {
    const result = await sql<{ item_id: string }>`
      insert into job_leases (job, item_id, lease_until) values (${job}, ${id}, ${until})
      on conflict (job, item_id) do update set lease_until = excluded.lease_until
      where job_leases.lease_until <= ${now}
      returning item_id
    `.execute(db);
    if (result.rows.length === 1) taken.add(id);
  }
  return taken;
}

/** Gives a lease back (the work is done, or there is nothing to do). */
export async function releaseLease(db: DbOrTrx, job: string, id: string): Promise<void> {
  await db.deleteFrom('job_leases').where('job', '=', job).where('item_id', '=', id).execute();
}

/** Deletes leases that ran out before `before` (their items are gone or free again). */
export async function forgetOldLeases(db: DbOrTrx, before: string): Promise<void> {
  await db.deleteFrom('job_leases').where('lease_until', '<', before).execute();
}
