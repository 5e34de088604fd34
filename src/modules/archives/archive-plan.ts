import { createHash } from 'node:crypto';
import { crc32 } from 'node:zlib';
import type { AppContext } from '../../context.js';
import { WHOLE_READ_LIMIT, type VersionContent } from '../../content/index.js';
import { openChildKey } from '../../crypto/keyring.js';
import { AppError } from '../../errors.js';
import type { Sendable } from '../../lib/sendable.js';
import { entryName, layoutZip, zipRange, type Downstream, type EntryContent, type OpenEntry } from '../../lib/zip/zip-archive.js';
import type { ZipEntry } from '../../lib/zip/zip-records.js';
import { EntryBuffers } from './entry-buffers.js';
import { recordCrc32, stillLive, type ArchiveFileRow, type ArchiveFolderRow } from './archives.repository.js';

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
  const layout = layoutZip(planned.map((p) => p.entry));
  const open = entryOpener(ctx, planned, keys);
  return {
    size: layout.length,
    tag: tagOf(tree.base.id, planned),
    name: `${name}.zip`,
    contentType: 'application/zip',
    open: async (span) => zipRange(layout, span?.start ?? 0, span ? span.end + 1 : layout.length, open),
  };
}

/** The entries, sorted by path: each folder's own entry, then what it holds. */
function plan(tree: ArchiveTree): PlannedEntry[] {
  const paths = new Map<string, string[]>([[tree.base.id, tree.basePath]]);
  const planned: PlannedEntry[] = [];
  const add = (segments: string[], file?: ArchiveFileRow, modified?: string) =>
    planned.push({
      entry: {
        name: entryName(segments, !file),
        size: file ? Number(file.size) : 0,
        crc32: file ? Number(file.crc32) : 0,
        modifiedAt: new Date(modified ?? Date.now()),
      },
      key: segments.join('\0'),
      file,
    });
  for (const folder of tree.folders) {
    if (folder.id === tree.base.id) {
      if (tree.basePath.length > 0) add(tree.basePath, undefined, folder.updated_at);
      continue;
    }
    const segments = [...paths.get(folder.parent_id!)!, folder.name];
    paths.set(folder.id, segments);
    if (tree.includeFolder(folder.id)) add(segments, undefined, folder.updated_at);
  }
  for (const file of tree.files) add([...paths.get(file.folder_id)!, file.name], file, file.updated_at);
  return planned.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/** Names these exact bytes: every entry's path, version and time, so a changed tree gets another tag. */
function tagOf(baseId: string, planned: PlannedEntry[]): string {
  const hash = createHash('sha256').update(baseId);
  for (const { entry, file } of planned)
    hash.update(`\n${entry.name.toString('utf8')}\0${file?.version_id ?? ''}\0${entry.modifiedAt.getTime()}`);
  return `zip.${hash.digest('base64url').slice(0, 32)}`;
}

/** Unwraps keys down the tree as entries need them, each folder's once. */
function keysOf(tree: ArchiveTree) {
  const folders = new Map(tree.folders.map((f) => [f.id, f]));
  const folderKeys = new Map<string, Promise<Buffer>>();
  const folderKey = (id: string): Promise<Buffer> => {
    let key = folderKeys.get(id);
    if (!key) {
      const folder = folders.get(id)!;
      key =
        id === tree.base.id ? tree.base.key() : folderKey(folder.parent_id!).then((parent) => openChildKey(parent, folder.key_wrapped, id));
      folderKeys.set(id, key);
    }
    return key;
  };
  return async (file: ArchiveFileRow): Promise<Buffer> => {
    const fileKey = openChildKey(await folderKey(file.folder_id), file.key_wrapped, file.id);
    return openChildKey(fileKey, file.data_key_wrapped, file.version_id);
  };
}

type DataKeyOf = ReturnType<typeof keysOf>;

async function fillMissingCrcs(ctx: AppContext, files: ArchiveFileRow[], dataKeyOf: DataKeyOf): Promise<void> {
  for (const file of files) {
    if (file.crc32 !== null) continue;
    const opened = await ctx.content.open({ blobId: file.blob_id, size: Number(file.size), dataKey: await dataKeyOf(file) });
    let crc = 0;
    for await (const chunk of opened.stream) crc = crc32(chunk as Buffer, crc);
    await recordCrc32(ctx.db, file.version_id, crc);
    file.crc32 = crc;
  }
}

/**
 * Opens entries' contents for zipRange. Before each file it checks (a batch ahead, and again once
 * a second has passed, also between the chunks of a long one) that the files are still live: a
 * file or folder deleted while the archive streams fails the stream, which cuts the connection
 * rather than ending an archive that would look whole. A small entry wanted whole is read whole,
 * in one step, into a buffer reused once it is written out; the others stream.
 */
function entryOpener(ctx: AppContext, planned: PlannedEntry[], dataKeyOf: DataKeyOf): OpenEntry {
  let checkedUntil = 0;
  let checkedAt = 0;
  const check = async (ids: string[]) => {
    checkedAt = Date.now();
    const live = await stillLive(ctx.db, ids);
    if (ids.some((id) => !live.has(id))) throw new AppError('ARCHIVE_ITEM_GONE');
  };
  const stale = () => Date.now() - checkedAt > LIVENESS_INTERVAL_MS;
  const buffers = new EntryBuffers();
  return async (index, start, end, downstream) => {
    const file = planned[index].file!;
    if (index >= checkedUntil || stale()) {
      const batch = planned.slice(index, index + LIVENESS_BATCH).flatMap((p) => (p.file ? [p.file.id] : []));
      await check(batch);
      checkedUntil = index + LIVENESS_BATCH;
    }
    const version = { blobId: file.blob_id, size: Number(file.size), dataKey: await dataKeyOf(file) };
    if (start === 0 && end === version.size && version.size <= WHOLE_READ_LIMIT)
      return [await ctx.content.readWhole(version, buffers.take(index, version.size, downstream))];
    return streamedEntry(ctx, version, { start, end }, downstream, async () => {
      if (stale()) await check([file.id]);
    });
  };
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
