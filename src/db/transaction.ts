import { AppError } from '../errors.js';
import type { Db, DbOrTrx } from './database.js';
import { isUniqueViolation } from './errors.js';

/**
 * Runs a mutation in one transaction. A unique-index violation at commit time is a race between
 * two writers on one sibling name, which the loser sees as 409 NAME_CONFLICT.
 */
export async function mutation<T>(db: Db, work: (trx: DbOrTrx) => Promise<T>): Promise<T> {
  try {
    return await db.transaction().execute(work);
  } catch (error) {
    if (isUniqueViolation(error)) throw new AppError('NAME_CONFLICT');
    throw error;
  }
}
