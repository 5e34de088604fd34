import { mayActOnFile, mayActOnFolder, type Action } from '../../access/access.js';
import type { AppContext, Principal } from '../../context.js';
import type { FileRow, FolderRow } from '../../db/schema.js';
import { AppError } from '../../errors.js';
import { SHARED_COLLECTION, type DavPath } from './dav.paths.js';
import * as repo from './dav.repository.js';

/**
 * What a path below /dav/ names: the list of buckets, the shared-with-me collection, a folder (a
 * bucket's root included), a file, or nothing yet. `missing` keeps the folder a new item of that
 * name would go to, or null when there is none (its parent is missing too, or is not a folder of
 * anyone's: PUT and MKCOL there are 409).
 */
export type DavResource =
  | { kind: 'root'; path: DavPath }
  | { kind: 'shared'; path: DavPath }
  | { kind: 'folder'; path: DavPath; folder: FolderRow }
  | { kind: 'file'; path: DavPath; file: FileRow }
  | { kind: 'missing'; path: DavPath; parent: FolderRow | null; name: string };

/** Resolves a path for the principal: their buckets, and what others shared with them. */
export async function resolve(ctx: AppContext, principal: Principal, path: DavPath): Promise<DavResource> {
  if (path.length === 0) return { kind: 'root', path };
  const [top, ...rest] = path;
  if (top === SHARED_COLLECTION) return resolveShared(ctx, principal, path);
  const bucket = await repo.bucketNamed(ctx.db, principal.userId, top);
  const root = bucket?.root_folder_id ? await repo.findFolderById(ctx.db, bucket.root_folder_id) : undefined;
  if (!root) return { kind: 'missing', path, parent: null, name: path[path.length - 1] };
  return walk(ctx, root, path, rest);
}

async function resolveShared(ctx: AppContext, principal: Principal, path: DavPath): Promise<DavResource> {
  if (path.length === 1) return { kind: 'shared', path };
  const label = path[1];
  const item = (await sharedEntries(ctx, principal)).find((entry) => entry.label === label);
  const missing: DavResource = { kind: 'missing', path, parent: null, name: path[path.length - 1] };
  if (!item) return missing;
  if (item.kind === 'file') {
    const file = await repo.findFileById(ctx.db, item.itemId);
    return file && path.length === 2 ? { kind: 'file', path, file } : missing;
  }
  const folder = await repo.liveFolderById(ctx.db, item.itemId);
  return folder ? walk(ctx, folder, path, path.slice(2)) : missing;
}

/** Follows `rest` down from `folder` by live names; a folder wins over a file of the same name. */
async function walk(ctx: AppContext, folder: FolderRow, path: DavPath, rest: DavPath): Promise<DavResource> {
  let current = folder;
  for (const [i, name] of rest.entries()) {
    const child = await repo.liveFolderNamed(ctx.db, current.id, name);
    if (child) {
      current = child;
      continue;
    }
    const last = i === rest.length - 1;
    const file = last ? await repo.liveFileNamed(ctx.db, current.id, name) : undefined;
    if (file) return { kind: 'file', path, file };
    return { kind: 'missing', path, parent: last ? current : null, name: path[path.length - 1] };
  }
  return { kind: 'folder', path, folder: current };
}

/** An item shared with the caller as it appears in the shared collection. */
export interface SharedEntry extends repo.SharedRoot {
  label: string;
}

/**
 * The items others shared with the caller, each under a label of its own: its name, or, where two
 * share a name, the name with its owner's (`Report (Alice).pdf`), numbered if that clashes still.
 */
export async function sharedEntries(ctx: AppContext, principal: Principal): Promise<SharedEntry[]> {
  const roots = await repo.sharedRoots(ctx.db, principal.userId);
  const count = new Map<string, number>();
  for (const root of roots) count.set(root.name, (count.get(root.name) ?? 0) + 1);
  const taken = new Set<string>();
  return roots.map((root) => {
    let label = count.get(root.name) === 1 ? root.name : withSuffix(root.name, root.ownerName, root.kind === 'file');
    for (let n = 2; taken.has(label); n++) label = withSuffix(root.name, `${root.ownerName} ${n}`, root.kind === 'file');
    taken.add(label);
    return { ...root, label };
  });
}

function withSuffix(name: string, suffix: string, keepExtension: boolean): string {
  const dot = keepExtension ? name.lastIndexOf('.') : -1;
  return dot > 0 ? `${name.slice(0, dot)} (${suffix})${name.slice(dot)}` : `${name} (${suffix})`;
}

/** Throws 403 unless the principal may `action` the folder or file (view-only shares refuse writes). */
export async function assertMay(ctx: AppContext, principal: Principal, item: DavResource, action: Action): Promise<void> {
  if (item.kind === 'folder' && (await mayActOnFolder(ctx.db, principal, item.folder, action))) return;
  if (item.kind === 'file' && (await mayActOnFile(ctx.db, principal, item.file, action))) return;
  if (item.kind === 'missing' && item.parent && (await mayActOnFolder(ctx.db, principal, item.parent, action))) return;
  throw new AppError('DAV_FORBIDDEN');
}

/** Whether the resource is a collection. */
export function isCollection(resource: DavResource): boolean {
  return resource.kind === 'root' || resource.kind === 'shared' || resource.kind === 'folder';
}
