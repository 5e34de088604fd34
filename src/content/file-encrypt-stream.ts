import { Writable } from 'node:stream';
import { crc32 } from 'node:zlib';
import type { BlobFile } from '../blobs/blob-store.js';
import { KEY_BYTES } from '../crypto/key-wrap.js';
import { DEFAULT_SEGMENT_LOG2, HEADER_BYTES, TAG_BYTES, newHeader, type StreamHeader } from './format.js';
import { HashLane } from './hash-lane.js';
import { addonSha256, type NativeAddon } from './native-addon.js';
import { sealableBytes, type AppendStart, type AppendedSegments } from './segment-appender.js';

/**
 * Plaintext sealed and written per job, about: each job seals its segments and writes them into
 * the blob file on libuv's threadpool (native/seal-write.c), as a bare server's writes run there.
 */
const JOB_BYTES = 1024 * 1024;
/**
 * Input runs held at once (sealed, written and hashed, or waiting to be): the next runs are read
 * from the socket while earlier ones are sealed and hashed, on other pool threads. SHA-256 costs
 * twice AES-GCM per byte, so the hashing falls behind the sealing, then catches up with one job
 * over every run waiting for it; room for 8 runs rather than 4 lets it do so without stopping the
 * socket, at the same peak RSS (docs/performance.md).
 */
const MAX_RUNS = 8;
/** Input waiting in the stream's own buffer before the writer is asked to wait. */
const HIGH_WATER_MARK = 512 * 1024;

export interface FileEncryptOptions {
  segmentLog2?: number;
  /** Fixed only by the test vectors; random otherwise. */
  noncePrefix?: Buffer;
  /**
   * Each input chunk is memory of its own that nothing else uses once written here (an HTTP
   * request's body chunks): jobs read it in place, and a chunk filling its whole ArrayBuffer is
   * then detached, which frees it (views of it read as empty afterwards). Otherwise each chunk is
   * copied first, as a writer may reuse its buffer once its write is done.
   */
  ownsInput?: boolean;
  /**
   * Called with the input's running byte count before each chunk is taken; an error it throws
   * fails the stream with that chunk (an upload's size limits, checked as the bytes arrive), and
   * a promise it returns holds the chunk until it settles (the quota held in steps).
   */
  checkInput?: (bytes: number) => void | Promise<void>;
  /**
   * Carries on a blob written before (a resumable upload's staging file) instead of starting one:
   * the header, the segment index and the hash go on from `start`, writes from `position` of the
   * file. At the end the whole segments known not to be the final one are sealed (sealableBytes),
   * and `appended` holds the plaintext left unsealed. The stream finishes once its segments are
   * written, its runs maybe still waiting in `start.hash` (the lane frees them once hashed).
   */
  continueFrom?: { start: AppendStart; position: number };
}

/** Input taken and not yet in a run: a chunk, or what is left of one. */
interface PendingChunk {
  view: Buffer;
  /** The memory of its own that the chunk fills whole (owned or copied), freed once done with. */
  memory: ArrayBuffer | null;
}

/** A run of input: consecutive whole segments (the last run may end short). */
interface Run {
  chunks: Buffer[];
  bytes: number;
  /** Memory of chunks that end in this run, freed once it is done (and every run before it). */
  memory: ArrayBuffer[];
  sealed: boolean;
  hashed: boolean;
}

interface Job {
  settled: boolean;
  written: number;
  error?: Error;
}

/** The memory a chunk fills whole, when it does (a body chunk of Node's HTTP parser does). */
export function wholeMemory(chunk: Buffer): ArrayBuffer | null {
  const memory = chunk.buffer;
  return memory instanceof ArrayBuffer && chunk.byteOffset === 0 && chunk.byteLength === memory.byteLength ? memory : null;
}

/** A copy of a chunk in memory of its own (never a slice of Node's shared pool: it is freed by detaching it). */
function copied(chunk: Buffer): PendingChunk {
  const view = Buffer.allocUnsafeSlow(chunk.length);
  chunk.copy(view);
  return { view, memory: view.buffer as ArrayBuffer };
}

/**
 * Encrypts a plaintext stream into the stored format (header, then sealed segments) written into
 * a file from offset 0 on libuv's threadpool: the event loop only cuts the input into runs of
 * whole segments and queues two kinds of threadpool jobs over them, in place: one seals a run and
 * writes it at its offset (several may run at once), the other adds it to the SHA-256 of the
 * plaintext (one at a time, in order). `checksum` is `sha256:<hex>` once the stream has finished,
 * and `crc32` the plaintext's CRC-32, computed on the event loop as each chunk is taken (it runs at
 * several GB/s: not worth a job).
 * Closes ('close') only once no job of it can still write into the file, also when it fails:
 * only then may the file be closed.
 */
export class FileEncryptStream extends Writable {
  readonly header: StreamHeader;
  private readonly segmentSize: number;
  /** Whole segments per run at most (about JOB_BYTES). */
  private readonly runSegments: number;
  /** Input not yet in a run; `pendingBytes` of it. */
  private pending: PendingChunk[] = [];
  private pendingBytes = 0;
  private readonly runs: Run[] = [];
  private readonly jobs: Job[] = [];
  private nextSegment = 0;
  /** Stored bytes queued for writing so far: where the next job writes. */
  private storedBytes = 0;
  /** The SHA-256 of the plaintext: runs are hashed in order, all those waiting in one job. */
  private readonly lane: HashLane;
  private seenBytes = 0;
  /** A write's callback, waiting for room among the runs. */
  private waiting: ((error?: Error | null) => void) | null = null;
  private finishing: ((error?: Error | null) => void) | null = null;
  private closing: (() => void) | null = null;
  private readonly ownsInput: boolean;
  private readonly checkInput: ((bytes: number) => void | Promise<void>) | undefined;
  /** `sha256:<hex>` of the plaintext, once the stream has finished (a new blob). */
  checksum: string | undefined;
  /** CRC-32 of the plaintext, once the stream has finished (a new blob). */
  crc32: number | undefined;
  /** The running CRC-32 of the chunks taken (a continued blob's is its caller's: resumable.ts). */
  private crc = 0;
  private readonly continued: AppendStart | undefined;
  /** Where a continued blob stands once the stream has finished. */
  appended: AppendedSegments | undefined;

  constructor(
    private readonly native: NativeAddon,
    private readonly key: Buffer,
    private readonly into: BlobFile,
    options: FileEncryptOptions = {},
  ) {
    super({ highWaterMark: HIGH_WATER_MARK });
    if (key.length !== KEY_BYTES) throw new Error('data key must be 32 bytes');
    const start = (this.continued = options.continueFrom?.start);
    this.header = start?.header ?? newHeader(options.segmentLog2 ?? DEFAULT_SEGMENT_LOG2, options.noncePrefix);
    this.segmentSize = this.header.segmentSize;
    this.runSegments = Math.max(1, Math.floor(JOB_BYTES / this.segmentSize));
    this.ownsInput = options.ownsInput ?? false;
    this.checkInput = options.checkInput;
    this.lane = start?.hash ?? new HashLane(addonSha256(native));
    if (start) {
      this.storedBytes = options.continueFrom!.position;
      this.nextSegment = (start.received - start.pending.length) / this.segmentSize;
      // Memory of the caller's: read, never freed here.
      if (start.pending.length > 0) this.pending.push({ view: start.pending, memory: null });
      this.pendingBytes = start.pending.length;
    }
  }

  /** Plaintext bytes taken so far. */
  get plaintextBytes(): number {
    return this.seenBytes;
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    let checked: void | Promise<void>;
    try {
      checked = this.checkInput?.(this.seenBytes + chunk.length);
    } catch (error) {
      return callback(error as Error);
    }
    // Held until the check settles (a step of the quota's hold); destroyed meanwhile, it takes nothing.
    if (checked instanceof Promise) checked.then(() => (this.destroyed ? callback() : this.takeChunk(chunk, callback)), callback);
    else this.takeChunk(chunk, callback);
  }

  private takeChunk(chunk: Buffer, callback: (error?: Error | null) => void): void {
    this.seenBytes += chunk.length;
    if (chunk.length === 0) return callback();
    if (!this.continued) this.crc = crc32(chunk, this.crc);
    this.pending.push(this.ownsInput ? { view: chunk, memory: wholeMemory(chunk) } : copied(chunk));
    this.pendingBytes += chunk.length;
    // Runs are cut only with input left after them: their last segment is then known not to be
    // the final one. A chunk larger than a run (not from a socket) makes several.
    while (this.pendingBytes > this.runSegments * this.segmentSize && !this.destroyed)
      this.startRun(this.runSegments * this.segmentSize, false);
    this.waitForRoom(callback);
  }

  override _final(callback: (error?: Error | null) => void): void {
    if (!this.continued) this.startRun(this.pendingBytes, true);
    else {
      const { length } = this.continued;
      const bytes = sealableBytes(this.pendingBytes, this.nextSegment * this.segmentSize, this.segmentSize, length);
      if (bytes > 0) this.startRun(bytes, false);
    }
    this.finishing = callback;
    this.maybeFinish();
  }

  override _destroy(error: Error | null, callback: (error: Error | null) => void): void {
    this.waiting = null;
    this.finishing = null;
    // Closed only once no job can still write into the file (the caller closes it on 'close').
    this.closing = () => callback(error);
    if (this.jobs.every((job) => job.settled)) this.closing();
  }

  /**
   * Calls `callback` now when fewer than MAX_RUNS runs are held, else once one of ours is done.
   * Runs an earlier request left waiting in a continued blob's lane count too: they are hashed
   * before ours, so one of ours being done means they are; without runs of ours, nothing would
   * call back, so the input is taken (less than a run).
   */
  private waitForRoom(callback: (error?: Error | null) => void): void {
    const ownWaiting = this.runs.filter((run) => !run.hashed).length;
    if (this.runs.length === 0 || this.runs.length + this.lane.waiting - ownWaiting < MAX_RUNS) return callback();
    this.waiting = callback;
  }

  /** Takes the first `bytes` of the pending input as a run, and queues its sealing and hashing. */
  private startRun(bytes: number, final: boolean): void {
    const run: Run = { chunks: [], bytes, memory: [], sealed: false, hashed: false };
    let taken = 0;
    while (taken < bytes) {
      const chunk = this.pending[0];
      const want = bytes - taken;
      if (chunk.view.length <= want) {
        this.pending.shift();
        run.chunks.push(chunk.view);
        if (chunk.memory) run.memory.push(chunk.memory);
        taken += chunk.view.length;
      } else {
        run.chunks.push(chunk.view.subarray(0, want));
        chunk.view = chunk.view.subarray(want);
        taken += want;
      }
    }
    this.pendingBytes -= bytes;
    this.runs.push(run);
    this.seal(run, final);
    this.lane.push(run.chunks, run.bytes).then(
      () => {
        run.hashed = true;
        this.release();
        this.maybeFinish();
      },
      (error: Error) => this.destroy(error),
    );
  }

  private seal(run: Run, final: boolean): void {
    const segments = Math.floor(run.bytes / this.segmentSize) + (final && (run.bytes % this.segmentSize !== 0 || run.bytes === 0) ? 1 : 0);
    const position = this.storedBytes;
    // The first run writes the header before its segments.
    const withHeader = position === 0;
    this.storedBytes += (withHeader ? HEADER_BYTES : 0) + run.bytes + segments * TAG_BYTES;
    const job: Job = { settled: false, written: 0 };
    this.jobs.push(job);
    let sealed: Promise<number>;
    try {
      sealed = this.native.sealWrite(this.into.fd, position, this.key, this.header.bytes, this.nextSegment, final, run.chunks, withHeader);
    } catch (error) {
      // Not queued (arguments out of range): nothing runs, the stream fails.
      sealed = Promise.reject(error as Error);
    }
    sealed.then(
      (written) => {
        job.written = written;
        this.settled(job, run);
      },
      (error: Error) => {
        job.error = error;
        this.settled(job, run);
      },
    );
    this.nextSegment += segments;
  }

  /** A sealing job is done: reports the writes done at the head of the queue, in order. */
  private settled(job: Job, run: Run): void {
    job.settled = true;
    run.sealed = true;
    if (this.destroyed) {
      if (this.closing && this.jobs.every((queued) => queued.settled)) this.closing();
      return;
    }
    while (this.jobs[0]?.settled && !this.destroyed) {
      const done = this.jobs.shift()!;
      if (done.error) {
        this.destroy(done.error);
        return;
      }
      try {
        this.into.wrote(done.written);
      } catch (error) {
        this.destroy(error as Error);
        return;
      }
    }
    this.release();
    this.maybeFinish();
  }

  /**
   * Runs sealed and hashed, oldest first, are done with, and a waiting write may go on. The memory
   * of their chunks is freed at once (a later run may read a chunk split with it: hence in order).
   * Left to V8, a body chunk that happened to live through two young collections was freed only
   * by a full one, which either raised the peak RSS or, with the old generation's limit near a
   * small heap, made V8 run full collections back to back (docs/performance.md).
   */
  private release(): void {
    while (this.runs[0]?.sealed && this.runs[0].hashed) {
      const run = this.runs.shift()!;
      if (run.memory.length > 0) this.native.detachBuffers(run.memory);
    }
    const waiting = this.waiting;
    if (waiting) {
      this.waiting = null;
      this.waitForRoom(waiting);
    }
  }

  /**
   * Once finishing and every run is sealed and written, and hashed for a new blob: its checksum,
   * or where a continued blob stands (its hash may go on in the lane), then 'finish'.
   */
  private maybeFinish(): void {
    if (!this.finishing || this.jobs.length > 0 || !this.runs.every((run) => run.sealed && (run.hashed || this.continued))) return;
    const finishing = this.finishing;
    this.finishing = null;
    if (this.continued) this.appended = { pending: Buffer.concat(this.pending.map((chunk) => chunk.view)) };
    else {
      this.checksum = `sha256:${this.lane.digest().toString('hex')}`;
      this.crc32 = this.crc;
    }
    finishing();
  }
}
