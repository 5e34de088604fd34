import { crc32 } from 'node:zlib';
import type { AppContext } from '../../context.js';
import { WHOLE_READ_LIMIT, type VersionContent } from '../../content/index.js';
import { openChildKey } from '../../crypto/keyring.js';
import { AppError } from '../../errors.js';
import { chunksOf } from '../../lib/readable-chunks.js';
import type { Downstream, EntryContent, OpenEntry } from '../../lib/zip/zip-archive.js';
import type { ArchiveTree, GatheredEntries } from './archive-plan.js';
import { EntryBuffers } from './entry-buffers.js';
import { liveVersionContents, recordCrc32, type VersionContentRow } from './archives.repository.js';

// How an archive's entries get their content: keys unwrapped down the tree, what opens each
// version read a batch ahead, small entries read whole into buffers used again.

/** How often, at most, a streaming archive checks that what it is sending is still live. */
const LIVENESS_INTERVAL_MS = 1000;
/** Entries checked together ahead of the stream. */
const LIVENESS_BATCH = 256;

/**
 * Unwraps keys down the tree as entries need them, each folder's once. A file now in a folder
 * outside the tree (moved while its archive streams) is gone from it.
 */
export function keysOf({ base, folders: rows }: Pick<ArchiveTree, 'base' | 'folders'>) {
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

export type DataKeyOf = ReturnType<typeof keysOf>;

/**
 * Records the CRC-32s an archive lacks, of versions uploaded before they were recorded (migration
 * 016): each read once, then kept with its version.
 */
export async function fillMissingCrcs(ctx: AppContext, gathered: GatheredEntries, dataKeyOf: DataKeyOf): Promise<void> {
  const { entries, versionIds, crcMissing } = gathered;
  const contents = await liveContents(
    ctx,
    crcMissing.map((index) => versionIds.at(index)),
  );
  for (const index of crcMissing) {
    const content = contents.get(versionIds.at(index))!;
    const opened = await ctx.content.open({ blobId: content.blob_id, size: Number(content.size), dataKey: await dataKeyOf(content) });
    let crc = 0;
    for await (const chunk of opened.stream) crc = crc32(chunk as Buffer, crc);
    await recordCrc32(ctx.db, content.version_id, crc);
    entries.setCrc32(index, crc);
  }
}

/** The version of entry `index` of an archive; none for a folder, or past the last entry. */
export type VersionOf = (index: number) => string | undefined;

/**
 * Opens entries' contents for zipRange. What opens them is read a batch ahead (again once a
 * second has passed), and only live files have it; between the chunks of a long one, it checks
 * the file is still live once a second. A file or folder deleted while the archive streams so
 * fails the stream, which cuts the connection rather than ending an archive that would look
 * whole. A small entry wanted whole is read whole, in one step, into a buffer reused once it is
 * written out; the others stream.
 */
export function entryOpener(ctx: AppContext, versionOf: VersionOf, dataKeyOf: DataKeyOf): OpenEntry {
  let checkedAt = 0;
  const stale = () => Date.now() - checkedAt > LIVENESS_INTERVAL_MS;
  // The batch of entries whose contents were read last; each entry awaits the batch it was in.
  let batch: { start: number; end: number; contents: Promise<Map<string, VersionContentRow>> } | undefined;
  const contentsFor = (index: number) => {
    if (!batch || index < batch.start || index >= batch.end || stale()) {
      checkedAt = Date.now();
      const ids: string[] = [];
      for (let i = index; i < index + LIVENESS_BATCH; i++) {
        const id = versionOf(i);
        if (id !== undefined) ids.push(id);
      }
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
    const versionId = versionOf(index)!;
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
  // What the archive holds downstream, and what the content stream handed out that the archive
  // has not taken yet: its buffers are reused once past both.
  let handedOut = 0;
  const sink = {
    get writableLength() {
      return downstream.writableLength + handedOut;
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
      // Counted from the moment a chunk leaves the stream. Listening starts the stream flowing,
      // which only emits from the next tick, once chunksOf below listens too.
      stream.on('data', (chunk: Buffer) => (handedOut += chunk.length));
      for await (const chunk of chunksOf(stream)) {
        await checkLive();
        yield chunk;
        // Resumed once the archive's stream has taken the chunk (its buffer, or its destination's).
        handedOut -= chunk.length;
      }
    } finally {
      stream.destroy();
    }
  })();
  return Object.assign(checked, { destroy: () => stream.destroy() });
}
