import { sql, type OperationNodeSource } from 'kysely';
import { PLANNED_EACH_TIME, type DbOrTrx } from './database.js';

/** A write that can go alone or beside others: a query builder or raw SQL, not executed yet. */
export type Write = OperationNodeSource;

/**
 * Runs independent writes of one transaction (none reads what another writes), in order. Where
 * the engine allows it (`capabilities.writesInOneStatement`) they go as one statement, each a
 * data-modifying `WITH` of it: one round trip instead of one each. Over PostgreSQL a transaction
 * holding the owner's lock (every upload of an owner waits for it) is mostly round trips: each one
 * fewer shortens what all the owner's uploads queue for.
 */
export async function writeAll(
  db: DbOrTrx,
  oneStatement: boolean,
  writes: Write[],
  options: { plannedEachTime?: boolean } = {},
): Promise<void> {
  if (writes.length === 0) return;
  // Where asked, the statements are planned at each execution on PostgreSQL (see PLANNED_EACH_TIME).
  const lead = sql.raw(options.plannedEachTime ? PLANNED_EACH_TIME : '');
  if (oneStatement && writes.length > 1) {
    const parts = writes.map((write, i) => sql`${sql.id(`w${i}`)} as (${write})`);
    await sql`${lead}with ${sql.join(parts)} select 1`.execute(db);
    return;
  }
  for (const write of writes) await sql`${lead}${write}`.execute(db);
}
