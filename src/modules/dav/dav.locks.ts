import type { AppContext, Principal } from '../../context.js';
import type { DbOrTrx } from '../../db/database.js';
import type { DavLockRow } from '../../db/schema.js';
import { AppError } from '../../errors.js';
import { nowIso } from '../../lib/time.js';
import { ancestorsFrom } from '../folders/folders.repository.js';
import * as locks from './dav-locks.repository.js';
import { escapeXml } from './dav.xml.js';
import type { DavResource } from './dav.resources.js';

/**
 * WebDAV write locks (RFC 4918 §6–7), kept in the database (dav_locks) so every instance honours
 * them. A lock is rooted on a file or folder by id (so a path seen through "Shared with me" meets
 * the same locks as the owner's); Depth infinity on a folder covers everything below it.
 */

/** What a request brings to get past locks: the lock tokens its If header submits (already evaluated, see dav.conditions.ts). */
export interface LockContext {
  tokens: string[];
}

export const NO_LOCKS: LockContext = { tokens: [] };

/** A live lock that applies to a resource, `distance` levels above it (0: rooted on it). */
export interface AppliedLock {
  lock: DavLockRow;
  distance: number;
}

/** The items a resource's locks may be rooted on: itself, then its folders up to the bucket root, with their distance. */
async function chainOf(db: DbOrTrx, resource: DavResource): Promise<{ id: string; distance: number }[]> {
  const above = async (folderId: string, offset: number) =>
    (await ancestorsFrom(db, folderId)).map((row) => ({ id: row.id, distance: row.depth + offset }));
  if (resource.kind === 'file') return [{ id: resource.file.id, distance: 0 }, ...(await above(resource.file.folder_id, 1))];
  if (resource.kind === 'folder') return above(resource.folder.id, 0);
  if (resource.kind === 'missing' && resource.parent) return above(resource.parent.id, 1);
  return [];
}

/**
 * The live locks that apply to a resource: those rooted on it, and those of Depth infinity on its
 * folders. With `membership`, also those of Depth 0 on its parent folder, whose members it
 * changes (RFC 4918 §7.4): always so for a missing resource, which a write would add.
 */
export async function appliedLocks(
  db: DbOrTrx,
  resource: DavResource,
  now: string,
  options: { membership?: boolean } = {},
): Promise<AppliedLock[]> {
  const chain = await chainOf(db, resource);
  if (chain.length === 0) return [];
  const distanceOf = new Map(chain.map((link) => [link.id, link.distance]));
  const membership = options.membership || resource.kind === 'missing';
  return (await locks.liveLocksOn(db, [...distanceOf.keys()], now))
    .map((lock) => ({ lock, distance: distanceOf.get(lock.item_id)! }))
    .filter(({ lock, distance }) => distance === 0 || lock.depth === 'infinity' || (membership && distance === 1))
    .sort((a, b) => a.distance - b.distance);
}

/** The live locks rooted below a folder (for Depth infinity: DELETE, MOVE, and LOCK of the folder). */
export async function locksBelow(db: DbOrTrx, resource: DavResource, now: string): Promise<DavLockRow[]> {
  if (resource.kind !== 'folder') return [];
  return (await locks.liveLocksWithin(db, resource.folder.id, now)).filter((lock) => lock.item_id !== resource.folder.id);
}

/**
 * Throws 423 unless the request may change `targets`: each lock that applies to them (for a
 * missing one, those of the folder it would be added to; with `subtree`, which DELETE and MOVE
 * pass as they remove a member, those of its parent and those below it) must be named by a token
 * the caller submitted in the If header and holds: every exclusive one, and one at least of the
 * shared ones. A token of another user's lock counts for nothing (RFC 4918 §6.4: a lock token is
 * tied to its principal).
 */
export async function assertUnlocked(
  ctx: AppContext,
  principal: Principal,
  targets: DavResource[],
  context: LockContext,
  options: { subtree?: boolean } = {},
): Promise<void> {
  const now = nowIso();
  if (!(await locks.anyLiveLock(ctx.db, now))) return;
  const held = (lock: DavLockRow) => context.tokens.includes(lock.token) && lock.user_id === principal.userId;
  for (const target of targets) {
    const applied = (await appliedLocks(ctx.db, target, now, { membership: options.subtree })).map((entry) => entry.lock);
    if (options.subtree) applied.push(...(await locksBelow(ctx.db, target, now)));
    const exclusive = applied.filter((lock) => lock.scope === 'exclusive');
    const shared = applied.filter((lock) => lock.scope === 'shared');
    if (!exclusive.every(held) || (shared.length > 0 && !shared.some(held))) throw new AppError('DAV_LOCKED');
  }
}

/** Forgets the locks of an item that was deleted or moved, and of everything below it (RFC 4918 §9.9.4: locks do not move). */
export async function forgetLocks(ctx: AppContext, resource: DavResource): Promise<void> {
  // Expired rows too (an empty `now`): the walk below a folder is only spared when there is no lock row at all.
  if (!(await locks.anyLiveLock(ctx.db, ''))) return;
  if (resource.kind === 'file') await locks.deleteLocksWithin(ctx.db, { fileId: resource.file.id });
  else if (resource.kind === 'folder') await locks.deleteLocksWithin(ctx.db, { folderId: resource.folder.id });
}

/** A resource a PROPFIND describes: its item and its href (the lockroot of the locks rooted on it). */
export interface LockedEntry {
  itemId: string;
  href: string;
}

/** The lockdiscovery XML content of each entry with live locks rooted on its item, by item id. */
export async function lockDiscoveries(ctx: AppContext, entries: LockedEntry[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const now = nowIso();
  if (entries.length === 0 || !(await locks.anyLiveLock(ctx.db, now))) return out;
  const hrefOf = new Map(entries.map((entry) => [entry.itemId, entry.href]));
  for (const lock of await locks.liveLocksOn(ctx.db, [...hrefOf.keys()], now))
    out.set(lock.item_id, (out.get(lock.item_id) ?? '') + activeLock(lock, hrefOf.get(lock.item_id)!, Date.parse(now)));
  return out;
}

/** One DAV:activelock element (RFC 4918 §14.1): its timeout is what is left of it, in seconds. */
export function activeLock(lock: DavLockRow, rootHref: string, nowMs = Date.now()): string {
  const left = Math.max(0, Math.ceil((Date.parse(lock.expires_at) - nowMs) / 1000));
  return (
    `<d:activelock><d:locktype><d:write/></d:locktype><d:lockscope><d:${lock.scope}/></d:lockscope>` +
    `<d:depth>${lock.depth}</d:depth>${lock.owner_xml ?? ''}<d:timeout>Second-${left}</d:timeout>` +
    `<d:locktoken><d:href>${escapeXml(lock.token)}</d:href></d:locktoken>` +
    `<d:lockroot><d:href>${escapeXml(rootHref)}</d:href></d:lockroot></d:activelock>`
  );
}
