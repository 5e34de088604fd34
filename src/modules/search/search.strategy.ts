import type { DbOrTrx } from '../../db/database.js';
import * as repo from './search.repository.js';
import type { ReadPlan, SearchCriteria, SearchHit, SearchKind } from './search.repository.js';

/** When each read is chosen (docs/performance.md, search); tests make them small. */
export interface SearchTuning {
  /** Below this many trigram matches, anyone's, the index lists them all. */
  indexedUpTo: number;
  /**
   * Otherwise the caller's newest items are read row by row in windows of these sizes, one after
   * the other, before the index. A first window without a match ends the reading row by row: the
   * count was wrong about the caller's items (PostgreSQL's estimate before its first ANALYZE of a
   * bulk import says 4 % of every table matches anything).
   */
  windows: readonly number[];
}

export const SEARCH_TUNING: SearchTuning = { indexedUpTo: 5_000, windows: [1_000, 10_000] };

const INDEXED: ReadPlan = { check: 'indexed' };
const ROW_BY_ROW: ReadPlan = { check: 'row-by-row' };

/**
 * The caller's own and shared matches of one kind, newest first, at most `criteria.limit`. A rare
 * text is read through the trigram index; a common one ("fil" in a million `file …` names) would
 * make the index list every name, so the caller's items are read newest first instead, and the
 * page fills after a few hundred rows.
 */
export async function matchesOfKind(
  db: DbOrTrx,
  kind: SearchKind,
  criteria: SearchCriteria,
  tuning: SearchTuning = SEARCH_TUNING,
): Promise<SearchHit[]> {
  const common = (await repo.countIndexed(db, kind, criteria.text, tuning.indexedUpTo)) >= tuning.indexedUpTo;
  const own = await ownMatches(db, kind, criteria, common ? tuning.windows : []);
  const shared = criteria.withShared ? await sharedMatches(db, kind, criteria, common ? ROW_BY_ROW : INDEXED) : [];
  return [...own, ...shared].sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0)).slice(0, criteria.limit);
}

/**
 * The caller's own matches. With windows, the newest items are read row by row first; if the page
 * is not full and older items remain, the index lists the matches among those.
 */
async function ownMatches(db: DbOrTrx, kind: SearchKind, c: SearchCriteria, windows: readonly number[]): Promise<SearchHit[]> {
  const read = kind === 'file' ? repo.ownFiles : repo.ownFolders;
  const hits: SearchHit[] = [];
  let rest = c;
  for (const window of windows) {
    const found = await read(db, rest, { check: 'row-by-row', window });
    hits.push(...found);
    if (hits.length >= c.limit) return hits;
    const end = await repo.windowEnd(db, kind, rest, window);
    if (end === undefined) return hits;
    rest = { ...c, beforeId: end, limit: c.limit - hits.length };
    if (found.length === 0) break;
  }
  return [...hits, ...(await read(db, rest, INDEXED))];
}

/**
 * Shared matches: what is shared with one person is read whole either way, by the index when the
 * text is rare, row by row when it is common.
 */
function sharedMatches(db: DbOrTrx, kind: SearchKind, c: SearchCriteria, plan: ReadPlan): Promise<SearchHit[]> {
  return kind === 'file' ? repo.sharedFiles(db, c, plan) : repo.sharedFoldersMatching(db, c, plan);
}
