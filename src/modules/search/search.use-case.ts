import type { AppContext, Principal } from '../../context.js';
import { AppError } from '../../errors.js';
import { DEFAULT_PAGE_SIZE, decodeCursor, encodeCursor } from '../../lib/cursor.js';
import { placesOf } from './search.paths.js';
import { matchesOfKind } from './search.strategy.js';
import { hasGrants, type SearchCriteria, type SearchHit, type SearchKind } from './search.repository.js';
import { MIN_QUERY_LENGTH, type SearchQuery, type SearchResult, type SearchType } from './search.schemas.js';

/** Content types each family of `type` stands for: a prefix ends with `/`. */
const FAMILIES: Partial<Record<SearchType, string[]>> = {
  image: ['image/'],
  pdf: ['application/pdf'],
  text: ['text/'],
  audio: ['audio/'],
  video: ['video/'],
};

/** Results come folders first, then files, each kind newest first: the cursor is (kind, id). */
const KIND_ORDER: readonly SearchKind[] = ['folder', 'file'];

/**
 * Search by name: the caller's own live items in every bucket, and the live items shared with
 * them (a folder's grant covering its subtree), whose name contains the text, case and accents
 * aside. Someone else's trash is never searched, nor by default one's own.
 */
export async function search(ctx: AppContext, principal: Principal, query: SearchQuery) {
  const text = searchText(query.q);
  const limit = query.limit ?? DEFAULT_PAGE_SIZE;
  const after = query.cursor ? readCursor(query.cursor) : undefined;
  const criteria: SearchCriteria = {
    userId: principal.userId,
    withShared: await hasGrants(ctx.db, principal.userId),
    text,
    contentTypes: query.type ? FAMILIES[query.type] : undefined,
    modifiedAfter: query.modifiedAfter ? new Date(query.modifiedAfter).toISOString() : undefined,
    modifiedBefore: query.modifiedBefore ? new Date(query.modifiedBefore).toISOString() : undefined,
    limit: limit + 1,
  };

  const hits: SearchHit[] = [];
  for (const kind of kindsToSearch(query.type, after?.kind)) {
    if (hits.length > limit) break;
    const beforeId = after?.kind === kind ? after.id : undefined;
    hits.push(...(await matchesOfKind(ctx.db, kind, { ...criteria, beforeId, limit: limit + 1 - hits.length })));
  }

  const page = hits.slice(0, limit);
  const places = await placesOf(ctx.db, principal, page);
  const last = page[page.length - 1];
  return {
    data: page.map((hit) => resultOf(hit, places.get(hit.id)!, principal.userId)),
    nextCursor: hits.length > limit && last ? encodeCursor([last.kind, last.id]) : null,
  };
}

/** The text to look for; shorter than a trigram it is refused (docs/api.md). */
function searchText(q: string): string {
  const text = q.trim().normalize('NFC');
  if ([...text].length < MIN_QUERY_LENGTH) {
    throw new AppError('SEARCH_QUERY_TOO_SHORT', undefined, [{ field: 'q', problem: `at least ${MIN_QUERY_LENGTH} characters` }]);
  }
  return text;
}

function readCursor(cursor: string): { kind: SearchKind; id: string } {
  const [kind, id] = decodeCursor(cursor, 2);
  if ((kind !== 'file' && kind !== 'folder') || typeof id !== 'string') {
    throw new AppError('INVALID_CURSOR', undefined, [{ field: 'cursor', problem: 'not a cursor from a previous page' }]);
  }
  return { kind, id };
}

/** The kinds `type` allows, in result order, from the cursor's kind on. */
function kindsToSearch(type: SearchType | undefined, from: SearchKind | undefined): SearchKind[] {
  const kinds = KIND_ORDER.filter((k) => !type || type === k || (k === 'file' && type !== 'folder'));
  return from ? kinds.slice(kinds.indexOf(from)) : kinds;
}

function resultOf(hit: SearchHit, place: { path: string; folderId: string }, callerId: string): SearchResult {
  return {
    kind: hit.kind,
    id: hit.id,
    name: hit.name,
    path: place.path,
    folderId: place.folderId,
    bucketId: hit.bucket_id,
    size: hit.size === null ? null : Number(hit.size),
    contentType: hit.content_type,
    updatedAt: hit.updated_at,
    owner: hit.owner_id === callerId ? null : { userId: hit.owner_id, name: hit.owner_name },
  };
}
