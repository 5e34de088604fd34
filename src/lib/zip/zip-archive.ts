import { Readable } from 'node:stream';
import { centralHeaderLength, endRecords, endRecordsLength, localHeader, localHeaderLength, writeCentralHeader } from './zip-records.js';
import type { ZipEntries } from './zip-entry-list.js';

/**
 * A zip archive of stored entries laid out before its first byte (zip-records.ts): its length, so
 * `Content-Length` is known, and where each record lies, so any byte range of it can be streamed
 * on its own (a `Range` request resuming a broken download). yazl and archiver compute CRCs while
 * they stream and cannot start in the middle; the records are few and written here instead.
 */
export interface ZipLayout {
  entries: ZipEntries;
  /** Where each entry's local header starts; its content follows the header. */
  offsets: Float64Array;
  directoryOffset: number;
  directoryLength: number;
  /** The archive's length in bytes. */
  length: number;
}

/**
 * Reads bytes [start, end) of entry `index`'s content. It may be called for the next entries
 * before the current one is read; content with a `destroy` method (a stream) is destroyed when it
 * is never read.
 */
export type OpenEntry = (index: number, start: number, end: number, downstream: Downstream) => Promise<EntryContent>;

/**
 * The bytes the archive's stream holds that are not yet written out: those it has buffered, and
 * those the destination it is piped into still holds. `destroyed` while it is piped into none
 * (nothing then says when bytes are written out).
 */
export interface Downstream {
  readonly writableLength: number;
  readonly destroyed: boolean;
  /**
   * Whether entry `index`'s content up to `end` (exclusive) is written out: its memory may then be
   * reused. False while that cannot be known (destroyed).
   */
  isWrittenOut(index: number, end: number): boolean;
}
export type EntryContent = (AsyncIterable<Buffer> | Iterable<Buffer>) & { destroy?: () => void };

type OpenAt = (index: number, start: number, end: number) => Promise<EntryContent>;

/** Entries whose content is opened ahead of the one streaming. */
const LOOKAHEAD = 4;

/** Central directory bytes gathered before one chunk is sent. */
const DIRECTORY_CHUNK = 64 * 1024;

export function layoutZip(entries: ZipEntries): ZipLayout {
  const offsets = new Float64Array(entries.length);
  let at = 0;
  for (let i = 0; i < entries.length; i++) {
    const entry = entries.at(i)!;
    offsets[i] = at;
    at += localHeaderLength(entry) + entry.size;
  }
  const directoryOffset = at;
  let directoryLength = 0;
  for (let i = 0; i < entries.length; i++) directoryLength += centralHeaderLength(entries.at(i)!, offsets[i]);
  const length = directoryOffset + directoryLength + endRecordsLength(entries.length, directoryOffset, directoryLength);
  return { entries, offsets, directoryOffset, directoryLength, length };
}

/**
 * Bytes [start, end) of the archive, streamed as they are made; an entry's content is read
 * through `open` only for its part inside the range. Content of another length than the entry was
 * laid out with fails the stream: an archive cut short must never end as if whole.
 */
export function zipRange(layout: ZipLayout, start: number, end: number, open: OpenEntry): Readable {
  if (!(start >= 0 && start <= end && end <= layout.length)) throw new RangeError(`${start}–${end} is not a range of the archive`);
  let destination: NodeJS.WritableStream & { writableLength?: number; destroyed?: boolean };
  // Bytes of the range pushed into `out`, counted once the push is over (an under-count at most).
  let pushed = 0;
  const downstream: Downstream = {
    get writableLength() {
      return out.readableLength + (destination?.writableLength ?? 0);
    },
    get destroyed() {
      return out.destroyed || destination === undefined || destination.destroyed === true || destination.writableLength === undefined;
    },
    isWrittenOut(index, contentEnd) {
      if (downstream.destroyed) return false;
      const writtenOut = start + pushed - downstream.writableLength;
      return layout.offsets[index] + localHeaderLength(layout.entries.at(index)!) + contentEnd <= writtenOut;
    },
  };
  async function* counted(): AsyncGenerator<Buffer> {
    for await (const part of archiveParts(layout, start, end, (i, from, to) => open(i, from, to, downstream))) {
      yield part;
      // Resumed by Readable.from's next read, after it pushed the part.
      pushed += part.length;
    }
  }
  const out = Readable.from(counted(), { objectMode: false });
  const pipe = out.pipe.bind(out);
  out.pipe = <T extends NodeJS.WritableStream>(to: T, options?: { end?: boolean }): T => {
    destination = to;
    return pipe(to, options);
  };
  return out;
}

async function* archiveParts(layout: ZipLayout, start: number, end: number, open: OpenAt): AsyncGenerator<Buffer> {
  yield* entriesPart(layout, start, end, open);
  yield* directoryPart(layout, start, end);
  const { entries, directoryOffset, directoryLength } = layout;
  yield* clip(endRecords(entries.length, directoryOffset, directoryLength), directoryOffset + directoryLength, start, end);
}

/**
 * The local headers and contents of the entries the range reaches. The contents of the next few
 * entries are opened while one streams (LOOKAHEAD), so that each file's first read overlaps the
 * previous one's last instead of waiting for it; those left unread when the stream stops are
 * destroyed.
 */
async function* entriesPart(layout: ZipLayout, start: number, end: number, open: OpenAt): AsyncGenerator<Buffer> {
  const { entries, offsets } = layout;
  const ahead = new Map<number, Promise<EntryContent>>();
  let scanned = entryAt(offsets, start);
  const inRange = (i: number) => i < entries.length && offsets[i] < end;
  const topUp = () => {
    for (; ahead.size < LOOKAHEAD && inRange(scanned); scanned++) {
      const span = contentSpan(layout, scanned, start, end);
      if (!span) continue;
      const opened = open(scanned, span.from, span.to);
      opened.catch(() => {}); // awaited (and its failure thrown) when its turn comes
      ahead.set(scanned, opened);
    }
  };
  try {
    let yieldedAt = performance.now();
    for (let i = entryAt(offsets, start); inRange(i); i++) {
      if (performance.now() - yieldedAt > 10) {
        await new Promise((resolve) => setImmediate(resolve));
        yieldedAt = performance.now();
      }
      yield* clip(localHeader(entries.at(i)!), offsets[i], start, end);
      const span = contentSpan(layout, i, start, end);
      if (!span) continue;
      topUp();
      const content = await ahead.get(i)!;
      ahead.delete(i);
      topUp();
      yield* exactly(content, span.to - span.from, i);
    }
  } finally {
    for (const opened of ahead.values()) opened.then(destroy, () => {});
  }
}

/** The part [from, to) of entry `index`'s content inside the range, or null when it has none there. */
function contentSpan({ entries, offsets }: ZipLayout, index: number, start: number, end: number): { from: number; to: number } | null {
  const entry = entries.at(index)!;
  const dataStart = offsets[index] + localHeaderLength(entry);
  const from = Math.max(start, dataStart) - dataStart;
  const to = Math.min(end, dataStart + entry.size) - dataStart;
  return to > from ? { from, to } : null;
}

function destroy(content: EntryContent): void {
  if ('destroy' in content && typeof content.destroy === 'function') content.destroy();
}

/** The central directory headers the range reaches, written into chunks of about DIRECTORY_CHUNK bytes. */
function* directoryPart({ entries, offsets, directoryOffset }: ZipLayout, start: number, end: number): Generator<Buffer> {
  let at = directoryOffset;
  let chunk = Buffer.allocUnsafe(0);
  let chunkFrom = at;
  let used = 0;
  for (let i = 0; i < entries.length && at < end; i++) {
    const entry = entries.at(i)!;
    const length = centralHeaderLength(entry, offsets[i]);
    if (at + length > start) {
      if (used + length > chunk.length) {
        if (used > 0) yield* clip(chunk.subarray(0, used), chunkFrom, start, end);
        chunk = Buffer.allocUnsafe(Math.max(DIRECTORY_CHUNK, length));
        chunkFrom = at;
        used = 0;
      }
      used = writeCentralHeader(chunk, used, entry, offsets[i]);
    }
    at += length;
  }
  if (used > 0) yield* clip(chunk.subarray(0, used), chunkFrom, start, end);
}

/** The entry whose local header holds `position`, or the first after it (binary search). */
function entryAt(offsets: Float64Array, position: number): number {
  let low = 0;
  let high = offsets.length - 1;
  let found = 0;
  while (low <= high) {
    const middle = (low + high) >> 1;
    if (offsets[middle] <= position) {
      found = middle;
      low = middle + 1;
    } else high = middle - 1;
  }
  return found;
}

/** The part of `bytes`, lying at `at` in the archive, inside [start, end). */
function* clip(bytes: Buffer, at: number, start: number, end: number): Generator<Buffer> {
  const from = Math.max(start, at) - at;
  const to = Math.min(end, at + bytes.length) - at;
  if (to > from) yield from === 0 && to === bytes.length ? bytes : bytes.subarray(from, to);
}

async function* exactly(content: EntryContent, bytes: number, index: number): AsyncGenerator<Buffer> {
  let seen = 0;
  for await (const chunk of content) {
    seen += chunk.length;
    if (seen > bytes) break;
    yield chunk;
  }
  if (seen !== bytes) throw new Error(`entry ${index} of the archive has ${seen > bytes ? 'more' : 'fewer'} bytes than laid out`);
}

/**
 * An entry's path from its folders' and its own names: `/`-separated, relative, a folder's ending
 * with `/`. A name that could climb out or reach elsewhere when extracted (`.`, `..`, a slash or a
 * backslash in it, empty) has those characters replaced, whatever the names' own rules allow.
 */
export function entryName(segments: string[], folder: boolean): Buffer {
  return Buffer.from(segments.map(safeSegment).join('/') + (folder ? '/' : ''), 'utf8');
}

/** One name of an entry's path made safe to extract (see entryName). */
export function safeSegment(segment: string): string {
  const replaced = segment.replace(/[/\\\0]/g, '_');
  return replaced === '' || replaced === '.' || replaced === '..' ? replaced.replace(/\./g, '_') || '_' : replaced;
}
