import type { AppContext } from '../../context.js';
import type { DbOrTrx } from '../../db/database.js';
import { mutation } from '../../db/transaction.js';
import { lockTrees, type TreeRefs } from './folders.repository.js';

/** A mutation of the trees holding `refs`, serialised with the others on them (see lockTrees). */
export function mutateTrees<T>(ctx: AppContext, refs: TreeRefs, work: (trx: DbOrTrx) => Promise<T>): Promise<T> {
  return mutation(ctx.db, async (trx) => {
    await lockTrees(trx, ctx.database.capabilities.rowLocks, refs);
    return work(trx);
  });
}
