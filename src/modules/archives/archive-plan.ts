import { createHash } from 'node:crypto';
import type { AppContext } from '../../context.js';
import type { DbOrTrx } from '../../db/database.js';
import { inReadSnapshot } from '../../db/transaction.js';
import type { Sendable } from '../../lib/sendable.js';
import { layoutZip, safeSegment, zipRange } from '../../lib/zip/zip-archive.js';
import { ZipEntryList, type ZipEntries } from '../../lib/zip/zip-entry-list.js';
import { StringList } from '../../lib/string-list.js';
import { entryOpener, fillMissingCrcs, keysOf, type VersionOf } from './archive-contents.js';
import type { ArchiveFileRow, ArchiveFolderRow } from './archives.repository.js';

/**
 * What an archive holds: the folders and files of one tree under `base`, whose key opens the
 * keys of everything below it (folder keys, then file keys, then data keys).
 */
export interface ArchiveTree {
  base: { id: string; key: () => Promise<Buffer> };
  /** The path of `base` inside the archive: `[name]` when the base folder is an entry, `[]` when its items are at the top. */
  basePath: string[];
  /** Every folder between `base` and the files, parents first (the base itself may be among them). */
  folders: ArchiveFolderRow[];
  /** The files the archive holds, a page at a time (liveFilePages, without what the reader may not download). */
  filePages: AsyncIterable<ArchiveFileRow[]>;
  /** Which folders become entries, asked once every page was read (a grantee's archive leaves out the folders they may not download). */
  includeFolder: (id: string) => boolean;
}

/** The entries of a tree in the order its rows were read, each with its version and its place in the archive. */
export interface GatheredEntries {
  entries: ZipEntryList;
  /** Each entry's version id ('' for a folder). */
  versionIds: StringList;
  /** Where each entry goes: its folder's rank (folders depth first, by name), times two, plus one for a file (after its folder's own entry). */
  places: number[];
  /** Indexes of the files whose versions have no CRC-32 recorded (uploaded before migration 016). */
  crcMissing: number[];
}

/**
 * An archive of the tree that `readTree` reads (in one snapshot of the database), as content to
 * send (`Sendable`): its length and tag known before the first byte, any byte range streamed on
 * its own. The tree's files are planned a page at a time, and the archive keeps only its entries
 * (ZipEntryList) and their versions while it streams: 100,000 files' rows would otherwise stay in
 * the heap's old generation long after they were read.
 */
export async function archiveOf(ctx: AppContext, name: string, readTree: (trx: DbOrTrx) => Promise<ArchiveTree>): Promise<Sendable> {
  const { tree, gathered } = await inReadSnapshot(ctx.db, async (trx) => {
    const tree = await readTree(trx);
    return { tree, gathered: await gatherEntries(tree) };
  });
  const dataKeyOf = keysOf(tree);
  await fillMissingCrcs(ctx, gathered, dataKeyOf);
  const { entries, versionOf, order } = sortedEntries(gathered);
  const tag = tagOf(tree.base.id, gathered, order);
  const layout = layoutZip(entries);
  const open = entryOpener(ctx, versionOf, dataKeyOf);
  return {
    size: layout.length,
    tag,
    name: `${name}.zip`,
    contentType: 'application/zip',
    open: async (span) => zipRange(layout, span?.start ?? 0, span ? span.end + 1 : layout.length, open),
  };
}

/**
 * Each folder's path in the archive and its rank: folders depth first, a folder's subfolders by
 * name. The base's path is `basePath` (no entry when empty); names are made safe (safeSegment).
 */
function folderPlaces(tree: ArchiveTree): Map<string, { path: string; rank: number }> {
  const children = new Map<string, ArchiveFolderRow[]>();
  for (const folder of tree.folders) {
    if (folder.id === tree.base.id) continue;
    const siblings = children.get(folder.parent_id!) ?? [];
    siblings.push(folder);
    children.set(folder.parent_id!, siblings);
  }
  const places = new Map<string, { path: string; rank: number }>();
  const visit = (id: string, path: string) => {
    places.set(id, { path, rank: places.size });
    const sorted = (children.get(id) ?? []).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const child of sorted) visit(child.id, joinPath(path, child.name));
  };
  visit(tree.base.id, tree.basePath.reduce(joinPath, ''));
  return places;
}

const joinPath = (parent: string, segment: string) => (parent === '' ? safeSegment(segment) : `${parent}/${safeSegment(segment)}`);

/** Every file of the tree's pages, then every folder that is an entry, as they come. */
async function gatherEntries(tree: ArchiveTree): Promise<GatheredEntries> {
  const folders = folderPlaces(tree);
  const gathered: GatheredEntries = { entries: new ZipEntryList(), versionIds: new StringList(), places: [], crcMissing: [] };
  for await (const page of tree.filePages)
    for (const file of page) {
      const folder = folders.get(file.folder_id)!;
      const index = gathered.entries.push({
        name: joinPath(folder.path, file.name),
        size: Number(file.size),
        crc32: Number(file.crc32),
        modifiedAt: new Date(file.updated_at),
      });
      gathered.versionIds.push(file.version_id);
      gathered.places.push(2 * folder.rank + 1);
      if (file.crc32 === null) gathered.crcMissing.push(index);
    }
  for (const folder of tree.folders) {
    const { path, rank } = folders.get(folder.id)!;
    if (folder.id === tree.base.id ? path === '' : !tree.includeFolder(folder.id)) continue;
    gathered.entries.push({ name: `${path}/`, size: 0, crc32: 0, modifiedAt: new Date(folder.updated_at) });
    gathered.versionIds.push('');
    gathered.places.push(2 * rank);
  }
  return gathered;
}

/** The entries in their places: each folder's own entry, then its files (by name, as read), then its subfolders. */
function sortedEntries({ entries, versionIds, places }: GatheredEntries): {
  entries: ZipEntries;
  versionOf: VersionOf;
  order: Uint32Array;
} {
  const order = new Uint32Array(places.length);
  let sorted = true;
  for (let i = 0; i < order.length; i++) {
    order[i] = i;
    sorted &&= i === 0 || places[i - 1] <= places[i];
  }
  // The files of one folder come in their places already: most archives need no sort.
  if (!sorted) order.sort((a, b) => places[a] - places[b] || a - b);
  return {
    entries: entries.inOrder(order),
    versionOf: (index) => (index < order.length ? versionIds.at(order[index]) || undefined : undefined),
    order,
  };
}

/**
 * Names these exact bytes: every entry's path, size, CRC-32, time and version, and their order,
 * so a changed tree gets another tag. The lists are hashed as they are kept, not entry by entry.
 */
function tagOf(baseId: string, { entries, versionIds }: GatheredEntries, order: Uint32Array): string {
  const hash = createHash('sha256').update(baseId);
  entries.updateHash(hash);
  versionIds.updateHash(hash);
  hash.update(order);
  return `zip.${hash.digest('base64url').slice(0, 32)}`;
}
