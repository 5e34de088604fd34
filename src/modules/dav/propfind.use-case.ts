import type { AppContext, Principal } from '../../context.js';
import type { FileRow, FolderRow } from '../../db/schema.js';
import { AppError } from '../../errors.js';
import { storageService } from '../storage/storage.service.js';
import { lockDiscoveries } from './dav.locks.js';
import { SHARED_COLLECTION, hrefOf, type DavPath } from './dav.paths.js';
import {
  PROTECTED,
  deadProperties,
  entryResponse,
  propfindRequest,
  type DavEntry,
  type PropfindRequest,
  type QuotaFigures,
} from './dav.properties.js';
import * as repo from './dav.repository.js';
import { resolve, sharedEntries, type DavResource } from './dav.resources.js';
import { DAV_NS, XML_HEADER, clark, parseXmlBody } from './dav.xml.js';

const QUOTA_NAMES = [clark(DAV_NS, 'quota-used-bytes'), clark(DAV_NS, 'quota-available-bytes')];
const LOCK_DISCOVERY = clark(DAV_NS, 'lockdiscovery');

/**
 * PROPFIND (RFC 4918 §9.1): the properties asked of a resource, and of its members at Depth 1,
 * as a multistatus body. Depth infinity (also the default) is refused: a whole tree in one answer
 * is a denial of service waiting to happen, and clients walk it level by level instead.
 */
export async function propfind(ctx: AppContext, principal: Principal, path: DavPath, depth: string | undefined, body?: Buffer) {
  const level = (depth ?? 'infinity').trim().toLowerCase();
  if (level !== '0' && level !== '1') {
    if (level === 'infinity') throw new AppError('DAV_FINITE_DEPTH');
    throw new AppError('DAV_BAD_HEADER', 'Depth is 0, 1 or infinity');
  }
  const request = propfindRequest(parseXmlBody(body));
  const resource = await resolve(ctx, principal, path);
  if (resource.kind === 'missing') throw new AppError('DAV_NOT_FOUND');
  const entries = [entryOf(resource)];
  if (level === '1') entries.push(...(await membersOf(ctx, principal, resource)));
  return multistatus(ctx, principal, entries, request);
}

/** The answer for the entries: dead properties, quota and locks read only when the request needs them. */
async function multistatus(ctx: AppContext, principal: Principal, entries: DavEntry[], request: PropfindRequest): Promise<string> {
  const asked = request.kind === 'prop' ? request.names : [];
  const ids = entries.flatMap((entry) => (entry.itemId ? [entry.itemId] : []));
  const needsDead = request.kind !== 'prop' || asked.some((name) => !PROTECTED.has(name) && name !== clark(DAV_NS, 'displayname'));
  const dead = needsDead ? await deadProperties(ctx.db, ids) : new Map<string, Map<string, string>>();
  const quota = asked.some((name) => QUOTA_NAMES.includes(name)) || request.kind === 'propname' ? await quotaOf(ctx, principal) : undefined;
  const needsLocks = request.kind === 'allprop' || asked.includes(LOCK_DISCOVERY);
  const locked = entries.flatMap((entry) => (entry.itemId ? [{ itemId: entry.itemId, href: entry.href }] : []));
  const locks = needsLocks ? await lockDiscoveries(ctx, locked) : new Map<string, string>();
  const responses = entries.map((entry) =>
    entryResponse(entry, request, entry.itemId ? dead.get(entry.itemId) : undefined, {
      quota,
      lockDiscovery: entry.itemId ? (locks.get(entry.itemId) ?? '') : undefined,
    }),
  );
  return `${XML_HEADER}<d:multistatus xmlns:d="DAV:">${responses.join('')}</d:multistatus>\n`;
}

/** The caller's quota as RFC 4331 reports it: the figures of /api/storage/status. */
async function quotaOf(ctx: AppContext, principal: Principal): Promise<QuotaFigures> {
  const status = await storageService(ctx).status(principal);
  return { used: status.used_bytes, available: status.remaining_bytes };
}

/** The entry of a resolved resource (not a missing one). */
export function entryOf(resource: DavResource): DavEntry {
  const name = resource.path[resource.path.length - 1] ?? 'Coffre';
  switch (resource.kind) {
    case 'root':
    case 'shared':
      return { href: hrefOf(resource.path, true), collection: true, displayName: name };
    case 'folder':
      return folderEntry(resource.path, resource.folder);
    case 'file':
      return fileEntry(resource.path, resource.file);
    default:
      throw new AppError('DAV_NOT_FOUND');
  }
}

function folderEntry(path: DavPath, folder: repo.ListedFolder): DavEntry {
  return {
    href: hrefOf(path, true),
    collection: true,
    displayName: path[path.length - 1],
    itemId: folder.id,
    createdAt: folder.created_at,
    modifiedAt: folder.updated_at,
  };
}

function fileEntry(path: DavPath, file: repo.ListedFile): DavEntry {
  return {
    href: hrefOf(path, false),
    collection: false,
    displayName: path[path.length - 1],
    itemId: file.id,
    size: Number(file.size),
    contentType: file.content_type,
    etag: file.current_version_id ? `"${file.current_version_id}"` : undefined,
    createdAt: file.created_at,
    modifiedAt: file.updated_at,
  };
}

/** The members of a collection: buckets and the shared collection, shared items, or a folder's live children. */
async function membersOf(ctx: AppContext, principal: Principal, resource: DavResource): Promise<DavEntry[]> {
  const { db } = ctx;
  const at = (name: string) => [...resource.path, name];
  if (resource.kind === 'root') {
    const buckets = await repo.bucketsOf(db, principal.userId);
    return [
      ...buckets.map((bucket) => ({ ...folderEntry(at(bucket.name), { ...bucket, id: bucket.root_folder_id ?? bucket.id }) })),
      { href: hrefOf(at(SHARED_COLLECTION), true), collection: true, displayName: SHARED_COLLECTION },
    ];
  }
  if (resource.kind === 'shared') return sharedMembers(ctx, principal, resource.path);
  if (resource.kind !== 'folder') return [];
  const [folders, files] = await Promise.all([repo.liveChildFolders(db, resource.folder.id), repo.liveChildFiles(db, resource.folder.id)]);
  return [...folders.map((f) => folderEntry(at(f.name), f)), ...files.map((f) => fileEntry(at(f.name), f))];
}

async function sharedMembers(ctx: AppContext, principal: Principal, path: DavPath): Promise<DavEntry[]> {
  const entries = await sharedEntries(ctx, principal);
  const out: DavEntry[] = [];
  for (const entry of entries) {
    const row: FolderRow | FileRow | undefined =
      entry.kind === 'folder' ? await repo.liveFolderById(ctx.db, entry.itemId) : await repo.findFileById(ctx.db, entry.itemId);
    if (!row) continue;
    const at = [...path, entry.label];
    out.push(entry.kind === 'folder' ? folderEntry(at, row as FolderRow) : fileEntry(at, row as FileRow));
  }
  return out;
}
