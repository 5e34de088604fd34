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
  return new ZipRangeStream(layout, start, end, open);
}

type Destination = NodeJS.WritableStream & { writableLength?: number; destroyed?: boolean };

/**
 * One loop pushes every part of the range (headers, contents, directory) and waits only when the
 * reader wants no more. Parts passed up a chain of async generators instead cost a few promises
 * per part per level: over 100,000 small entries, more memory than the entries themselves.
 */
class ZipRangeStream extends Readable {
  /** Where this stream is piped into, if anywhere: what `downstream` counts. */
  private destination: Destination | undefined;
  /** Bytes of the range pushed, counted once each push is over. */
  private pushed = 0;
  private started = false;
  /** Ends the loop's wait for the reader to want more. */
  private wanted: (() => void) | null = null;
  private readonly downstream: Downstream;

  constructor(
    private readonly layout: ZipLayout,
    private readonly start: number,
    private readonly end: number,
    private readonly openEntry: OpenEntry,
  ) {
    super();
    // What the stream holds and its destination still holds; and whether that can be known.
    const heldDownstream = () => this.readableLength + (this.destination?.writableLength ?? 0);
    const cutOff = () => {
      const destination = this.destination;
      return this.destroyed || destination === undefined || destination.destroyed === true || destination.writableLength === undefined;
    };
    this.downstream = {
      get writableLength() {
        return heldDownstream();
      },
      get destroyed() {
        return cutOff();
      },
      isWrittenOut: (index, contentEnd) => {
        if (cutOff()) return false;
        const writtenOut = start + this.pushed - heldDownstream();
        return layout.offsets[index] + localHeaderLength(layout.entries.at(index)!) + contentEnd <= writtenOut;
      },
    };
  }

  override pipe<T extends NodeJS.WritableStream>(destination: T, options?: { end?: boolean }): T {
    this.destination = destination;
    return super.pipe(destination, options);
  }

  override _read(): void {
    this.wake();
    if (this.started) return;
    this.started = true;
    this.writeRange().then(
      () => {
        if (!this.destroyed) this.push(null);
      },
      (error: Error) => this.destroy(error),
    );
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.wake();
    callback(error);
  }

  private wake(): void {
    const wanted = this.wanted;
    this.wanted = null;
    wanted?.();
  }

  /** Pushes a part: nothing to wait for while the reader wants more, else a promise of when it does. */
  private put(part: Buffer): Promise<void> | undefined {
    const more = this.push(part);
    this.pushed += part.length;
    if (more || this.destroyed) return undefined;
    return new Promise((resolve) => (this.wanted = resolve));
  }

  private async writeRange(): Promise<void> {
    const { layout, start, end } = this;
    if (!(await this.writeEntries())) return;
    const { entries, directoryOffset, directoryLength } = layout;
    if (!(await this.putAll(directoryPart(layout, start, end)))) return;
    await this.putAll(clip(endRecords(entries.length, directoryOffset, directoryLength), directoryOffset + directoryLength, start, end));
  }

  /** Pushes parts as they are made (a directory's chunks one at a time); false when the stream was destroyed meanwhile. */
  private async putAll(parts: Iterable<Buffer>): Promise<boolean> {
    for (const part of parts) {
      const wait = this.put(part);
      if (wait) await wait;
      if (this.destroyed) return false;
    }
    return true;
  }

  /**
   * The local headers and contents of the entries the range reaches; false when the stream was
   * destroyed meanwhile. The contents of the next few entries are opened while one streams
   * (LOOKAHEAD), so that each file's first read overlaps the previous one's last instead of
   * waiting for it; those left unread when the stream stops are destroyed.
   */
  private async writeEntries(): Promise<boolean> {
    const { layout, start, end } = this;
    const { entries, offsets } = layout;
    // Opened in order, taken from the front: a Map with an entry added and deleted per entry
    // grew new tables all along the archive, which lived long enough to reach the old generation.
    const ahead: Promise<EntryContent>[] = [];
    let scanned = entryAt(offsets, start);
    const inRange = (i: number) => i < entries.length && offsets[i] < end;
    const topUp = () => {
      for (; ahead.length < LOOKAHEAD && inRange(scanned); scanned++) {
        const span = contentSpan(layout, scanned, start, end);
        if (!span) continue;
        const opened = this.openEntry(scanned, span.from, span.to, this.downstream);
        opened.catch(() => {}); // awaited (and its failure thrown) when its turn comes
        ahead.push(opened);
      }
    };
    try {
      let yieldedAt = performance.now();
      for (let i = entryAt(offsets, start); inRange(i); i++) {
        // Contents at hand would otherwise keep the loop busy until the archive's end.
        if (performance.now() - yieldedAt > 10) {
          await new Promise((resolve) => setImmediate(resolve));
          yieldedAt = performance.now();
        }
        const header = clipped(localHeader(entries.at(i)!), offsets[i], start, end);
        const wait = header && this.put(header);
        if (wait) await wait;
        if (this.destroyed) return false;
        const span = contentSpan(layout, i, start, end);
        if (!span) continue;
        topUp();
        const content = await ahead.shift()!;
        topUp();
        if (!(await this.writeContent(content, span.to - span.from, i))) return false;
      }
      return true;
    } finally {
      for (const opened of ahead) opened.then(destroy, () => {});
    }
  }

  /** Pushes exactly `bytes` bytes of an entry's content; false when the stream was destroyed meanwhile. */
  private async writeContent(content: EntryContent, bytes: number, index: number): Promise<boolean> {
    let seen = 0;
    if (Symbol.asyncIterator in content) {
      for await (const chunk of content) {
        seen += chunk.length;
        if (seen > bytes) break;
        await this.put(chunk);
        if (this.destroyed) return false;
      }
    } else {
      // Read whole (an array): no promise per chunk unless the reader wants no more.
      for (const chunk of content) {
        seen += chunk.length;
        if (seen > bytes) break;
        const wait = this.put(chunk);
        if (wait) await wait;
        if (this.destroyed) return false;
      }
    }
    if (seen !== bytes) throw new Error(`entry ${index} of the archive has ${seen > bytes ? 'more' : 'fewer'} bytes than laid out`);
    return true;
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

/** The part of `bytes`, lying at `at` in the archive, inside [start, end), or null when none is. */
function clipped(bytes: Buffer, at: number, start: number, end: number): Buffer | null {
  const from = Math.max(start, at) - at;
  const to = Math.min(end, at + bytes.length) - at;
  if (to <= from) return null;
  return from === 0 && to === bytes.length ? bytes : bytes.subarray(from, to);
}

function* clip(bytes: Buffer, at: number, start: number, end: number): Generator<Buffer> {
  const part = clipped(bytes, at, start, end);
  if (part) yield part;
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
