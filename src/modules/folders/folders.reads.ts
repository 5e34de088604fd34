import { onePerContext, type AppContext } from '../../context.js';
import type { DbOrTrx } from '../../db/database.js';
import type { FolderRow } from '../../db/schema.js';
import { GroupRunner } from '../../lib/group-runner.js';
import { findFolder, findFolderDetails, findFolders, type FolderDetailRows } from './folders.repository.js';

/** Folders one batched read asks for at most. */
const BATCHED_READS_MAX = 100;

/**
 * The folders (and details) wanted in one turn by many clients browsing are read by one
 * statement, started after every request that joins it arrived, so none reads an older state.
 * Each statement has a fixed cost well above a folder's share of it: a round trip that wakes a
 * PostgreSQL backend, or on SQLite a read transaction (lock calls) and the statement's start.
 * One set of batches per context.
 */
export const folderReads = onePerContext((ctx: AppContext) => {
  const detailReads = batchedReads((ids) => findFolderDetails(ctx.db, ids));
  const folderRows = batchedReads((ids) => findFolders(ctx.db, ids));
  return {
    /** The details rows of a folder, read with the turn's other reads. */
    details: (id: string): Promise<FolderDetailRows | undefined> => detailReads.submit('details', id),
    /** A folder row: read with the turn's other reads, unless inside a transaction (which must read its own). */
    folder: (target: DbOrTrx, id: string): Promise<FolderRow | undefined> =>
      target === ctx.db ? folderRows.submit('folders', id) : findFolder(target, id),
  };
});

function batchedReads<T>(read: (ids: string[]) => Promise<Map<string, T>>) {
  return new GroupRunner<string, T | undefined>(async (ids) => {
    const found = await read(ids);
    return ids.map((id) => ({ status: 'fulfilled', value: found.get(id) }));
  }, BATCHED_READS_MAX);
}
