import { setTimeout as sleep } from 'node:timers/promises';
import { AppError } from '../errors.js';
import type { Db, DbOrTrx } from './database.js';
import { isUniqueViolation } from './errors.js';

/** Deadlock (40P01) or serialization failure (40001): the transaction may simply be run again. */
function isRetryable(error: unknown): boolean {
  const code = (error as { code?: string } | null)?.code;
  return code === '40P01' || code === '40001';
}

/**
 * Runs a mutation in one transaction. A unique-index violation is a race between two writers on
 * one sibling name, which the loser sees as 409 NAME_CONFLICT; a deadlock is retried.
 */
export async function mutation<T>(db: Db, work: (trx: DbOrTrx) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await db.transaction().execute(work);
    } catch (error) {
      if (isUniqueViolation(error)) throw new AppError('NAME_CONFLICT');
      if (isRetryable(error) && attempt < 5) {
        await sleep(Math.random() * 20 * attempt);
        continue;
      }
      throw error;
    }
  }
}

/**
 * Runs reads in one transaction that sees the database as it was when the first of them ran, so
 * that rows read in several statements (pages) agree with each other: PostgreSQL's repeatable
 * read, and SQLite's every transaction (WAL mode). It holds a connection until `read` returns.
 */
export function inReadSnapshot<T>(db: DbOrTrx, read: (trx: DbOrTrx) => Promise<T>): Promise<T> {
  if (db.isTransaction) return read(db);
  return (db as Db).transaction().setIsolationLevel('repeatable read').execute(read);
}
