import type { AppContext, Principal } from '../../context.js';
import { AppError } from '../../errors.js';
import { nowIso } from '../../lib/time.js';
import { parseIfHeader, submittedTokens, type IfCondition, type IfList } from './dav.if-header.js';
import { NO_LOCKS, appliedLocks, type LockContext } from './dav.locks.js';
import { DAV_PREFIX, davPathOf, type DavPath } from './dav.paths.js';
import { resolve, type DavResource } from './dav.resources.js';

/** What a condition is checked against: the entity tag and the tokens of the locks that apply to one resource. */
interface ResourceState {
  etag?: string;
  tokens: Set<string>;
}

/**
 * Evaluates a request's If header (RFC 4918 §10.4) and answers the lock tokens it submits. The
 * header holds when one of its lists does, a list when all its conditions do: an untagged list
 * speaks of the request's resource, a tagged one of the resource its tag names. A state token
 * holds when it names a live lock that applies to that resource (whoever holds it: whether the
 * caller may use it is asked by assertUnlocked), an entity tag when it is the resource's. A header
 * that does not hold is 412; no header submits nothing.
 */
export async function ifConditions(
  ctx: AppContext,
  principal: Principal,
  requestPath: DavPath,
  header: string | undefined,
): Promise<LockContext> {
  if (header === undefined || header.trim() === '') return NO_LOCKS;
  const lists = parseIfHeader(header);
  const states = new Map<string, Promise<ResourceState>>();
  const stateOf = (path: DavPath | null) => {
    const key = path ? path.join('/') : '\0elsewhere';
    if (!states.has(key)) states.set(key, resourceState(ctx, principal, path));
    return states.get(key)!;
  };
  for (const list of lists) {
    const state = await stateOf(list.resource === undefined ? requestPath : taggedPath(list.resource));
    if (listHolds(list, state)) return { tokens: submittedTokens(lists) };
  }
  throw new AppError('DAV_PRECONDITION_FAILED', 'The If header does not hold');
}

function listHolds(list: IfList, state: ResourceState): boolean {
  return list.conditions.every((condition) => conditionHolds(condition, state) !== condition.not);
}

function conditionHolds(condition: IfCondition, state: ResourceState): boolean {
  if (condition.kind === 'token') return state.tokens.has(condition.value);
  return state.etag !== undefined && condition.value === state.etag;
}

/** The path a resource tag names below /dav/ (an absolute URI of any host, or an absolute path), or null for anything else. */
function taggedPath(tag: string): DavPath | null {
  let pathname: string;
  try {
    pathname = new URL(tag, 'http://localhost').pathname;
  } catch {
    return null;
  }
  if (pathname !== DAV_PREFIX && !pathname.startsWith(`${DAV_PREFIX}/`)) return null;
  try {
    return davPathOf(pathname);
  } catch {
    return null;
  }
}

async function resourceState(ctx: AppContext, principal: Principal, path: DavPath | null): Promise<ResourceState> {
  if (!path) return { tokens: new Set() };
  const resource: DavResource = await resolve(ctx, principal, path);
  const applied = await appliedLocks(ctx.db, resource, nowIso());
  return {
    etag: resource.kind === 'file' && resource.file.current_version_id ? `"${resource.file.current_version_id}"` : undefined,
    tokens: new Set(applied.map((entry) => entry.lock.token)),
  };
}
