import { createHash } from 'node:crypto';
import { crc32 } from 'node:zlib';
import type { AppContext } from '../../context.js';
import { WHOLE_READ_LIMIT, type VersionContent } from '../../content/index.js';
import { openChildKey } from '../../crypto/keyring.js';
import { AppError } from '../../errors.js';
import type { Sendable } from '../../lib/sendable.js';
import { layoutZip, safeSegment, zipRange, type Downstream, type EntryContent, type OpenEntry } from '../../lib/zip/zip-archive.js';
import type { ZipEntry } from '../../lib/zip/zip-records.js';
import { EntryBuffers } from './entry-buffers.js';
import {
  liveVersionContents,
  recordCrc32,
  type ArchiveFileRow,
  type ArchiveFolderRow,
  type VersionContentRow,
} from './archives.repository.js';

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
  files: ArchiveFileRow[];
  /** Which folders become entries (a grantee's archive leaves out the folders they may not download). */
  includeFolder: (id: string) => boolean;
}

interface PlannedEntry {
  entry: ZipEntry;
  /** Sort key: the path's segments joined by NUL, so a folder comes right before what it holds. */
  key: string;
  file?: ArchiveFileRow;
}

/** How often, at most, a streaming archive checks that what it is sending is still live. */
const LIVENESS_INTERVAL_MS = 1000;
/** Entries checked together ahead of the stream. */
const LIVENESS_BATCH = 256;

/**
 * An archive of the tree as content to send (`Sendable`): its length and tag known before the
 * first byte, any byte range streamed on its own. Versions uploaded before CRC-32s were recorded
 * get theirs computed (by reading them) and recorded first.
 */
export async function archiveOf(ctx: AppContext, tree: ArchiveTree, name: string): Promise<Sendable> {
  const keys = keysOf(tree);
  await fillMissingCrcs(ctx, tree.files, keys);
  const planned = plan(tree);
  const tag = tagOf(tree.base.id, planned);
  // Only each entry and its version are kept while the archive streams, not the tree's rows.
  const layout = layoutZip(planned.map((p) => p.entry));
  const open = entryOpener(
    ctx,
    planned.map((p) => p.file?.version_id),
    keys,
  );
  return {
    size: layout.length,
    tag,
    name: `${name}.zip`,
    contentType: 'application/zip',
    open: async (span) => zipRange(layout, span?.start ?? 0, span ? span.end + 1 : layout.length, open),
  };
}

/** Where an item lies in the archive: its entry's name (names made safe, joined by `/`) and its sort key (names joined by NUL). */
interface ArchivePath {
  name: string;
  key: string;
  depth: number;
}

const TOP: ArchivePath = { name: '', key: '', depth: 0 };

function childPath(parent: ArchivePath, segment: string): ArchivePath {
  const safe = safeSegment(segment);
  if (parent.depth === 0) return { name: safe, key: segment, depth: 1 };
  return { name: `${parent.name}/${safe}`, key: `${parent.key}\0${segment}`, depth: parent.depth + 1 };
}

/** The entries, sorted by path: each folder's own entry, then what it holds (a NUL sorts before any character of a name). */
function plan(tree: ArchiveTree): PlannedEntry[] {
  const basePath = tree.basePath.reduce(childPath, TOP);
  const paths = new Map<string, ArchivePath>([[tree.base.id, basePath]]);
  const planned: PlannedEntry[] = [];
  const add = (path: ArchivePath, modified: string, file?: ArchiveFileRow) =>
    planned.push({
      entry: {
        name: Buffer.from(file ? path.name : `${path.name}/`, 'utf8'),
        size: file ? Number(file.size) : 0,
        crc32: file ? Number(file.crc32) : 0,
        modifiedAt: new Date(modified),
      },
      key: path.key,
      file,
    });
  for (const folder of tree.folders) {
    if (folder.id === tree.base.id) {
      if (basePath.depth > 0) add(basePath, folder.updated_at);
      continue;
    }
    const path = childPath(paths.get(folder.parent_id!)!, folder.name);
    paths.set(folder.id, path);
    if (tree.includeFolder(folder.id)) add(path, folder.updated_at);
  }
  for (const file of tree.files) add(childPath(paths.get(file.folder_id)!, file.name), file.updated_at, file);
  return planned.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/** Names these exact bytes: every entry's path, version and time, so a changed tree gets another tag. */
function tagOf(baseId: string, planned: PlannedEntry[]): string {
  const hash = createHash('sha256').update(baseId);
  for (const { entry, file } of planned)
    hash.update(`\n${entry.name.toString('utf8')}\0${file?.version_id ?? ''}\0${entry.modifiedAt.getTime()}`);
  return `zip.${hash.digest('base64url').slice(0, 32)}`;
}

/**
 * Unwraps keys down the tree as entries need them, each folder's once. A file now in a folder
 * outside the tree (moved while its archive streams) is gone from it.
 */
function keysOf({ base, folders: rows }: ArchiveTree) {
  const folders = new Map(rows.map((f) => [f.id, f]));
  const folderKeys = new Map<string, Promise<Buffer>>();
  const folderKey = (id: string): Promise<Buffer> => {
    let key = folderKeys.get(id);
    if (!key) {
      const folder = folders.get(id);
      if (!folder) throw new AppError('ARCHIVE_ITEM_GONE');
      key = id === base.id ? base.key() : folderKey(folder.parent_id!).then((parent) => openChildKey(parent, folder.key_wrapped, id));
      folderKeys.set(id, key);
    }
    return key;
  };
  return async (content: VersionContentRow): Promise<Buffer> => {
    const fileKey = openChildKey(await folderKey(content.folder_id), content.key_wrapped, content.file_id);
    return openChildKey(fileKey, content.data_key_wrapped, content.version_id);
  };
}

type DataKeyOf = ReturnType<typeof keysOf>;

async function fillMissingCrcs(ctx: AppContext, files: ArchiveFileRow[], dataKeyOf: DataKeyOf): Promise<void> {
  const missing = new Map(files.filter((file) => file.crc32 === null).map((file) => [file.version_id, file]));
  for (const content of await liveVersionContents(ctx.db, [...missing.keys()])) {
    const file = missing.get(content.version_id)!;
    const opened = await ctx.content.open({ blobId: content.blob_id, size: Number(file.size), dataKey: await dataKeyOf(content) });
    let crc = 0;
    for await (const chunk of opened.stream) crc = crc32(chunk as Buffer, crc);
    await recordCrc32(ctx.db, file.version_id, crc);
    file.crc32 = crc;
  }
  if (files.some((file) => file.crc32 === null)) throw new AppError('ARCHIVE_ITEM_GONE');
}

/**
 * Opens entries' contents for zipRange. What opens them is read a batch ahead (again once a
 * second has passed), and only live files have it; between the chunks of a long one, it checks
 * the file is still live once a second. A file or folder deleted while the archive streams so
 * fails the stream, which cuts the connection rather than ending an archive that would look
 * whole. A small entry wanted whole is read whole, in one step, into a buffer reused once it is
 * written out; the others stream.
 */
function entryOpener(ctx: AppContext, versionIds: (string | undefined)[], dataKeyOf: DataKeyOf): OpenEntry {
  let checkedAt = 0;
  const stale = () => Date.now() - checkedAt > LIVENESS_INTERVAL_MS;
  // The batch of entries whose contents were read last; each entry awaits the batch it was in.
  let batch: { start: number; end: number; contents: Promise<Map<string, VersionContentRow>> } | undefined;
  const contentsFor = (index: number) => {
    if (!batch || index < batch.start || index >= batch.end || stale()) {
      checkedAt = Date.now();
      const ids = versionIds.slice(index, index + LIVENESS_BATCH).filter((id) => id !== undefined);
      batch = { start: index, end: index + LIVENESS_BATCH, contents: liveContents(ctx, ids) };
      batch.contents.catch(() => {}); // awaited by the entries of the batch
    }
    return batch.contents;
  };
  const checkLive = async (versionId: string) => {
    if (!stale()) return;
    checkedAt = Date.now();
    await liveContents(ctx, [versionId]);
  };
  const buffers = new EntryBuffers();
  return async (index, start, end, downstream) => {
    const versionId = versionIds[index]!;
    const content = (await contentsFor(index)).get(versionId)!;
    const version = { blobId: content.blob_id, size: Number(content.size), dataKey: await dataKeyOf(content) };
    if (start === 0 && end === version.size && version.size <= WHOLE_READ_LIMIT)
      return [await ctx.content.readWhole(version, buffers.take(index, version.size, downstream))];
    return streamedEntry(ctx, version, { start, end }, downstream, () => checkLive(versionId));
  };
}

/** What opens each of these versions; any of them whose file is gone (trashed) fails the archive. */
async function liveContents(ctx: AppContext, versionIds: string[]): Promise<Map<string, VersionContentRow>> {
  const contents = await liveVersionContents(ctx.db, versionIds);
  if (contents.length < versionIds.length) throw new AppError('ARCHIVE_ITEM_GONE');
  return new Map(contents.map((content) => [content.version_id, content]));
}

/** Bytes [start, end) of a version as a stream, `checkLive` awaited before each chunk goes on. */
async function streamedEntry(
  ctx: AppContext,
  version: VersionContent,
  { start, end }: { start: number; end: number },
  downstream: Downstream,
  checkLive: () => Promise<void>,
): Promise<EntryContent> {
  const whole = start === 0 && end === version.size;
  // What the archive holds downstream, and the chunk between the content stream and the archive's.
  let inFlight = 0;
  const sink = {
    get writableLength() {
      return downstream.writableLength + inFlight;
    },
    get destroyed() {
      return downstream.destroyed;
    },
  };
  const { stream } = await ctx.content.open(version, whole ? undefined : { start, end: end - 1 }, { downstream: sink });
  // Opened ahead of its turn (zipRange's lookahead), it may fail before anyone reads it: the
  // failure then waits in the stream for its reader instead of going unhandled.
  stream.on('error', () => {});
  // Start its first read now: opened ahead, it is then ready when its turn comes.
  stream.read(0);
  const checked = (async function* () {
    try {
      for await (const chunk of stream) {
        inFlight = (chunk as Buffer).length;
        await checkLive();
        yield chunk as Buffer;
        // Resumed once the archive's stream has taken the chunk (its buffer, or its destination's).
        inFlight = 0;
      }
    } finally {
      stream.destroy();
    }
  })();
  return Object.assign(checked, { destroy: () => stream.destroy() });
}
