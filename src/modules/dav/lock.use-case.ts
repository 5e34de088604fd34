import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Element } from '@xmldom/xmldom';
import type { AppContext, Principal } from '../../context.js';
import type { DavLockRow } from '../../db/schema.js';
import { AppError } from '../../errors.js';
import { isoPlus, nowIso } from '../../lib/time.js';
import { fileService } from '../files/files.service.js';
import * as locks from './dav-locks.repository.js';
import { activeLock, appliedLocks, assertUnlocked, locksBelow, type LockContext } from './dav.locks.js';
import { SHARED_COLLECTION, hrefOf, type DavPath } from './dav.paths.js';
import { assertMay, isCollection, resolve, type DavResource } from './dav.resources.js';
import { XML_HEADER, childElements, davChild, isDav, parseXmlBody, serializeElement } from './dav.xml.js';

/** A lock asked without a Timeout lasts an hour. */
const DEFAULT_TIMEOUT_SECONDS = 3600;
/**
 * No lock lasts longer than a week (`Infinite` and longer asks get this): a client that vanished
 * must not keep a resource from others for ever, and clients refresh long before (RFC 4918 §10.7
 * lets the server choose).
 */
const MAX_TIMEOUT_SECONDS = 7 * 24 * 3600;
// Any fixed 64-bit number, unique among the advisory locks of the service.
const LOCK_CREATION_LOCK = 0x64617620_6c6b;

export interface LockRequest extends LockContext {
  body?: Buffer;
  depth?: string;
  timeout?: string;
}

/** What LOCK answers: the lock's token, whether it made the resource, and the DAV:prop body. */
export interface LockResult {
  token: string;
  created: boolean;
  xml: string;
}

interface LockInfo {
  scope: 'exclusive' | 'shared';
  ownerXml: string | null;
}

/**
 * LOCK (RFC 4918 §9.10): a new write lock on the resource, or, without a body, the refresh of the
 * caller's locks the If header names. A lock on an unmapped URL whose folder exists makes an empty
 * file there first (§7.3) and answers 201.
 */
export async function lock(ctx: AppContext, principal: Principal, path: DavPath, request: LockRequest): Promise<LockResult> {
  const info = lockInfo(parseXmlBody(request.body));
  const seconds = timeoutSeconds(request.timeout);
  let target = await resolve(ctx, principal, path);
  if (target.kind === 'root' || target.kind === 'shared')
    throw new AppError('DAV_NOT_ALLOWED', 'Buckets and the shared collection cannot be locked');
  if (target.kind === 'missing' && !target.parent) throw new AppError(info ? 'DAV_PARENT_MISSING' : 'DAV_NOT_FOUND');
  if (!info) return refresh(ctx, principal, target, request.tokens, seconds);
  const depth = lockDepth(request.depth);
  await assertMay(ctx, principal, target, 'edit');
  const created = target.kind === 'missing';
  if (target.kind === 'missing') target = await createEmptyFile(ctx, principal, target, request);
  const now = nowIso();
  const row: DavLockRow = {
    token: `urn:uuid:${randomUUID()}`,
    user_id: principal.userId,
    item_id: target.kind === 'file' ? target.file.id : (target as DavResource & { kind: 'folder' }).folder.id,
    depth,
    scope: info.scope,
    owner_xml: info.ownerXml,
    timeout_seconds: seconds,
    expires_at: isoPlus(now, seconds * 1000),
    created_at: now,
  };
  await insertUnlessConflicting(ctx, target, row);
  return { token: row.token, created, xml: lockBody([activeLock(row, hrefOf(path, isCollection(target)))]) };
}

/** §7.3: the empty file a lock on an unmapped URL makes, as a PUT of nothing would. */
async function createEmptyFile(ctx: AppContext, principal: Principal, target: DavResource & { kind: 'missing' }, context: LockContext) {
  await assertUnlocked(ctx, principal, [target], context);
  await fileService(ctx).uploadOne(principal, target.parent!.id, {
    name: target.name,
    contentType: 'application/octet-stream',
    body: Buffer.alloc(0),
    bodyOwnsChunks: false,
    onConflict: 'version',
  });
  const made = await resolve(ctx, principal, target.path);
  if (made.kind !== 'file') throw new AppError('DAV_NOT_FOUND');
  return made;
}

/**
 * Writes the lock unless one conflicts (423 no-conflicting-lock): an exclusive lock conflicts
 * with any other lock that applies to the resource or, at Depth infinity, lies below it; a shared
 * one with exclusive ones only. The check and the insert are one transaction, serialised across
 * instances (PostgreSQL advisory lock; SQLite has one writer).
 */
async function insertUnlessConflicting(ctx: AppContext, target: DavResource, row: DavLockRow): Promise<void> {
  await ctx.db.transaction().execute(async (trx) => {
    if (ctx.database.capabilities.rowLocks) await sql`select pg_advisory_xact_lock(${LOCK_CREATION_LOCK})`.execute(trx);
    const existing = (await appliedLocks(trx, target, row.created_at)).map((entry) => entry.lock);
    if (row.depth === 'infinity') existing.push(...(await locksBelow(trx, target, row.created_at)));
    if (existing.some((other) => row.scope === 'exclusive' || other.scope === 'exclusive')) throw new AppError('DAV_LOCK_CONFLICT');
    await locks.insertLock(trx, row);
  });
}

/** A refresh: the caller's locks that apply to the resource and whose tokens the If header submits get the new timeout. */
async function refresh(ctx: AppContext, principal: Principal, target: DavResource, tokens: string[], seconds: number): Promise<LockResult> {
  if (tokens.length === 0) throw new AppError('DAV_MALFORMED_XML', 'A LOCK without a body refreshes a lock, named in the If header');
  const now = nowIso();
  const named = (await appliedLocks(ctx.db, target, now)).filter((entry) => tokens.includes(entry.lock.token));
  if (named.length === 0) throw new AppError('DAV_PRECONDITION_FAILED', 'The If header names no lock of this resource');
  if (named.some((entry) => entry.lock.user_id !== principal.userId)) throw new AppError('DAV_LOCKED');
  const expiresAt = isoPlus(now, seconds * 1000);
  const elements: string[] = [];
  for (const { lock: row, distance } of named) {
    await locks.refreshLock(ctx.db, row.token, seconds, expiresAt);
    elements.push(activeLock({ ...row, timeout_seconds: seconds, expires_at: expiresAt }, rootHref(target, distance)));
  }
  return { token: named[0].lock.token, created: false, xml: lockBody(elements) };
}

/**
 * The href of the folder `distance` levels above the resource, as the caller sees the tree; the
 * resource's own when that folder lies above what the caller can see (a share's own folders).
 */
function rootHref(target: DavResource, distance: number): string {
  const visible = target.path[0] === SHARED_COLLECTION ? target.path.length - 2 : target.path.length - 1;
  if (distance === 0 || distance > visible) return hrefOf(target.path, isCollection(target));
  return hrefOf(target.path.slice(0, target.path.length - distance), true);
}

function lockBody(activeLocks: string[]): string {
  return `${XML_HEADER}<d:prop xmlns:d="DAV:"><d:lockdiscovery>${activeLocks.join('')}</d:lockdiscovery></d:prop>\n`;
}

/** The scope and owner a DAV:lockinfo body asks for (write locks only), or null when there is no body (a refresh). */
function lockInfo(root: Element | null): LockInfo | null {
  if (!root) return null;
  if (!isDav(root, 'lockinfo')) throw new AppError('DAV_MALFORMED_XML', 'A LOCK body is a DAV:lockinfo element');
  const scope = davChild(root, 'lockscope');
  const type = davChild(root, 'locktype');
  const scopes = scope ? childElements(scope) : [];
  if (scopes.length !== 1 || !(isDav(scopes[0], 'exclusive') || isDav(scopes[0], 'shared')))
    throw new AppError('DAV_MALFORMED_XML', 'DAV:lockscope holds DAV:exclusive or DAV:shared');
  const types = type ? childElements(type) : [];
  if (types.length !== 1 || !isDav(types[0], 'write')) throw new AppError('DAV_MALFORMED_XML', 'Only DAV:write locks are supported');
  const owner = davChild(root, 'owner');
  return { scope: scopes[0].localName as LockInfo['scope'], ownerXml: owner ? serializeElement(owner) : null };
}

/** Depth 0 or infinity (the default, RFC 4918 §9.10.3); anything else is 400. */
function lockDepth(header: string | undefined): '0' | 'infinity' {
  const depth = (header ?? 'infinity').trim().toLowerCase();
  if (depth !== '0' && depth !== 'infinity') throw new AppError('DAV_BAD_HEADER', 'Depth is 0 or infinity for LOCK');
  return depth;
}

/** The first timeout of the Timeout header we understand (`Second-N`, `Infinite`), capped; the default otherwise (§10.7). */
export function timeoutSeconds(header: string | undefined): number {
  for (const part of (header ?? '').split(',')) {
    const value = part.trim();
    if (/^infinite$/i.test(value)) return MAX_TIMEOUT_SECONDS;
    const match = /^second-(\d{1,12})$/i.exec(value);
    if (match) return Math.min(Math.max(Number(match[1]), 1), MAX_TIMEOUT_SECONDS);
  }
  return DEFAULT_TIMEOUT_SECONDS;
}

/**
 * UNLOCK (RFC 4918 §9.11): removes the lock the Lock-Token header names. It must apply to the
 * resource (409 lock-token-matches-request-uri otherwise) and be the caller's (403).
 */
export async function unlock(ctx: AppContext, principal: Principal, path: DavPath, lockToken: string | undefined): Promise<void> {
  const token = /^\s*<([^<>\s]+)>\s*$/.exec(lockToken ?? '')?.[1];
  if (!token) throw new AppError('DAV_BAD_HEADER', 'UNLOCK needs a Lock-Token header: <urn:uuid:…>');
  const target = await resolve(ctx, principal, path);
  if (target.kind === 'missing') throw new AppError('DAV_NOT_FOUND');
  const applied = await appliedLocks(ctx.db, target, nowIso());
  const found = applied.find((entry) => entry.lock.token === token);
  if (!found) throw new AppError('DAV_NO_LOCK');
  if (found.lock.user_id !== principal.userId) throw new AppError('DAV_NOT_LOCK_OWNER');
  await locks.deleteLock(ctx.db, token);
}
