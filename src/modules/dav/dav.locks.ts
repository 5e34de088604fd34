import type { AppContext, Principal } from '../../context.js';
import { AppError } from '../../errors.js';
import type { DavPath } from './dav.paths.js';
import type { DavResource } from './dav.resources.js';

/** What a request brings to get past locks: its If header (lock tokens and entity tags). */
export interface LockContext {
  ifHeader?: string;
}

/**
 * WebDAV write locks (RFC 4918 §6–7), kept in the database (dav_locks) so every instance honours
 * them. The lockdiscovery XML of each locked item, by item id.
 */
export async function lockDiscoveries(_ctx: AppContext, _itemIds: string[]): Promise<Map<string, string>> {
  return new Map();
}

/**
 * Throws 423 unless the request may change `targets`: every lock on them (or, for a missing one,
 * on the folder it would be added to), on their ancestors with Depth infinity, and with
 * `subtree`, on anything below them, must be named by a token of the caller's in the If header.
 */
export async function assertUnlocked(
  _ctx: AppContext,
  _principal: Principal,
  _targets: DavResource[],
  _locks: LockContext,
  _options: { subtree?: boolean } = {},
): Promise<void> {}

export interface LockRequest extends LockContext {
  body?: Buffer;
  depth?: string;
  timeout?: string;
}

/** LOCK: a new lock (or a refreshed one, when the body is empty and If names it). */
export async function lock(
  _ctx: AppContext,
  _principal: Principal,
  _path: DavPath,
  _request: LockRequest,
): Promise<{ token: string; created: boolean; xml: string }> {
  throw new AppError('DAV_NOT_ALLOWED');
}

/** UNLOCK: removes the caller's lock named by the Lock-Token header. */
export async function unlock(_ctx: AppContext, _principal: Principal, _path: DavPath, _lockToken: string | undefined): Promise<void> {
  throw new AppError('DAV_NOT_ALLOWED');
}
