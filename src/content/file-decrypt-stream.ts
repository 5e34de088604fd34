import type { FileHandle } from 'node:fs/promises';
import { OutgoingMessage } from 'node:http';
import { Socket } from 'node:net';
import { Readable } from 'node:stream';
import { bufferPool, type BufferPool } from './buffer-pool.js';
import { CipherFormatError, TAG_BYTES, segmentOffset, type SegmentRange, type StreamHeader } from './format.js';
import type { NativeAddon } from './native-addon.js';

/**
 * Plaintext read from a blob file in jobs of about this much, each one read and opened on libuv's
 * threadpool by the native addon (native/read-open.c), and pushed as one chunk: one socket write,
 * as a bare file server's 1 MiB reads are.
 */
const JOB_PLAIN_BYTES = 1024 * 1024;
/**
 * Jobs queued at once: the next one is read and opened while one is sent. More jobs, or larger
 * ones, went no faster and cost memory (the A/B is in docs/performance.md).
 */
const MAX_JOBS = 2;

interface Job {
  staging: Buffer;
  /** The whole output buffer; `opened` its part this job fills. */
  out: Buffer;
  opened: Buffer;
  settled: boolean;
  error?: Error;
}

/** What the stream is piped into, as far as recycling needs it (an HTTP response, a socket). */
export interface Sink {
  readonly writableLength: number;
  readonly destroyed?: boolean;
}

/** Output buffers sent and not yet known to be written out, kept for reuse (older ones become garbage). */
const MAX_SENT = 4;

/**
 * The plaintext of a range of a blob file's segments, decrypted on libuv's threadpool: the
 * event loop only queues jobs and pushes what they opened. Emits exactly the range's plaintext,
 * authenticated; a segment that does not authenticate (or a file shorter than the range needs)
 * fails the stream before anything of it is pushed. Owns `handle`: closes it when it ends or is
 * destroyed, once no job of it can still read there.
 */
export class FileDecryptStream extends Readable {
  private readonly jobs: Job[] = [];
  private readonly spareStaging: Buffer[] = [];
  /** Output buffers pushed, oldest first, with the stream offset where their bytes end. */
  private readonly sent: { buffer: Buffer; end: number }[] = [];
  private pushedBytes = 0;
  /** The one destination this stream is piped into; null when there is none or several. */
  private sink: Sink | null = null;
  private pipes = 0;
  /** Output buffers reused once written out (for tests). */
  recycled = 0;
  private readonly segmentsPerJob: number;
  /** Where read buffers and output buffers come from, and go back to once nothing uses them. */
  private readonly stagingPool: BufferPool;
  private readonly outputPool: BufferPool;
  private readonly finalIndex: number;
  private nextSegment: number;
  private toSkip: number;
  private remaining: number;
  /** The reader wants more: jobs may be queued. */
  private wanted = false;
  private closing: (() => void) | null = null;

  constructor(
    private readonly native: NativeAddon,
    private readonly handle: FileHandle,
    private readonly key: Buffer,
    private readonly header: StreamHeader,
    private readonly range: SegmentRange,
  ) {
    // Pushed chunks are whole jobs; one waiting in the buffer is enough to keep the socket busy.
    super({ highWaterMark: JOB_PLAIN_BYTES });
    this.segmentsPerJob = Math.max(1, Math.floor(JOB_PLAIN_BYTES / header.segmentSize));
    this.stagingPool = bufferPool(this.segmentsPerJob * (header.segmentSize + TAG_BYTES));
    this.outputPool = bufferPool(this.segmentsPerJob * header.segmentSize);
    this.finalIndex = range.totalSegments - 1;
    this.nextSegment = range.firstSegment;
    this.toSkip = range.skip;
    this.remaining = range.length;
  }

  /**
   * Remembers the destination when it is an HTTP response or a socket, so that output buffers can
   * be reused once it has written them out (see `outputBuffer`). Into anything else (a transform
   * whose `writableLength` no longer counts what it has passed on), or into several, buffers are
   * never reused.
   */
  override pipe<T extends NodeJS.WritableStream>(destination: T, options?: { end?: boolean }): T {
    this.pipes++;
    const final = destination instanceof OutgoingMessage || destination instanceof Socket;
    this.sink = this.pipes === 1 && final ? (destination as unknown as Sink) : null;
    // Once the response has handed its last byte to the system, no buffer of this stream is read any more.
    if (this.sink) destination.once('finish', () => this.returnOutputBuffers(destination));
    return super.pipe(destination, options);
  }

  /**
   * Lets output buffers be reused while the stream is read some other way than piped into its
   * final destination (a zip archive reads it chunk by chunk): `sink.writableLength` must count
   * every byte this stream pushed that is not yet written out downstream (an over-count only
   * delays reuse).
   */
  recycleThrough(sink: Sink): void {
    if (this.pipes === 0) this.sink = sink;
  }

  override _read(): void {
    this.wanted = true;
    this.queueJobs();
  }

  override _destroy(error: Error | null, callback: (error: Error | null) => void): void {
    // The descriptor is closed only once no job can still read from it (its number is reused at once).
    this.closing = () => {
      // No job reads into a staging buffer any more.
      this.stagingPool.give([...this.spareStaging, ...this.jobs.map((job) => job.staging)]);
      this.spareStaging.length = 0;
      this.handle.close().then(
        () => callback(error),
        (closeError: Error) => callback(error ?? closeError),
      );
    };
    if (this.jobs.every((job) => job.settled)) this.closing();
  }

  private queueJobs(): void {
    while (this.wanted && !this.destroyed && this.jobs.length < MAX_JOBS && this.nextSegment <= this.range.lastSegment) this.queueJob();
  }

  private queueJob(): void {
    const { segmentSize } = this.header;
    const first = this.nextSegment;
    const last = Math.min(first + this.segmentsPerJob - 1, this.range.lastSegment);
    this.nextSegment = last + 1;
    const position = segmentOffset(first, segmentSize);
    const end = last === this.range.lastSegment ? this.range.storedEnd + 1 : segmentOffset(last + 1, segmentSize);
    const storedBytes = end - position;
    const plainBytes = storedBytes - (last - first + 1) * TAG_BYTES;
    const out = this.outputBuffer(plainBytes);
    const job: Job = {
      staging: this.spareStaging.pop() ?? this.stagingPool.take(),
      out,
      opened: out.subarray(0, plainBytes),
      settled: false,
    };
    this.jobs.push(job);
    this.native
      .readOpen(this.handle.fd, position, storedBytes, this.key, this.header.bytes, first, this.finalIndex, job.staging, job.opened)
      .then(
        (opened) => {
          if (opened !== job.opened.length) job.error = new CipherFormatError('stored stream is shorter than expected');
          this.settle(job);
        },
        (error: Error & { code?: string }) => {
          job.error = error.code === 'ERR_CIPHER_FORMAT' ? new CipherFormatError(error.message) : error;
          this.settle(job);
        },
      );
  }

  /** Pushes the jobs done at the head of the queue, in order, then queues more. */
  private settle(job: Job): void {
    job.settled = true;
    if (this.destroyed) {
      if (this.closing && this.jobs.every((queued) => queued.settled)) this.closing();
      return;
    }
    while (this.jobs[0]?.settled) {
      const done = this.jobs.shift()!;
      this.spareStaging.push(done.staging);
      if (done.error) {
        this.destroy(done.error);
        return;
      }
      const plain = this.trim(done.opened);
      if (plain.length === 0) continue;
      this.pushedBytes += plain.length;
      this.sent.push({ buffer: done.out, end: this.pushedBytes });
      // Not known to be written out yet: left to the collector.
      if (this.sent.length > MAX_SENT) this.sent.shift();
      if (!this.push(plain)) this.wanted = false;
    }
    if (this.jobs.length === 0 && this.nextSegment > this.range.lastSegment) {
      this.push(null);
      this.stagingPool.give(this.spareStaging);
      this.spareStaging.length = 0;
      return;
    }
    this.queueJobs();
  }

  /**
   * A buffer for `bytes` of a job's plaintext: the oldest one sent, once the destination has
   * written it out (and when it is large enough), else a new one. Written out means: of the bytes pushed, those still in this stream's buffer
   * and those the destination still holds (its `writableLength`, which for a socket counts a
   * write until the kernel has taken all of it, and for an HTTP response adds what it holds
   * itself) leave a count of bytes gone that reaches the buffer's end. Without the reuse, a
   * download allocated and dropped a 1 MiB buffer per job: the failed download bar and the
   * peak RSS of docs/performance.md.
   */
  private outputBuffer(bytes: number): Buffer {
    const oldest = this.sent[0];
    const sink = this.sink;
    if (oldest && oldest.buffer.length >= bytes && sink && !sink.destroyed) {
      const gone = this.pushedBytes - this.readableLength - sink.writableLength;
      if (oldest.end <= gone) {
        this.sent.shift();
        this.recycled++;
        return oldest.buffer;
      }
    }
    return bytes <= this.outputPool.size ? this.outputPool.take() : Buffer.allocUnsafeSlow(bytes);
  }

  /** Hands the output buffers back once the destination finished: it has written every byte out. */
  private returnOutputBuffers(destination: NodeJS.WritableStream): void {
    if (this.sink !== (destination as unknown as Sink) || this.readableLength > 0 || !this.readableEnded) return;
    this.outputPool.give(this.sent.map((sent) => sent.buffer));
    this.sent.length = 0;
  }

  /** The part of a job's plaintext inside the range. */
  private trim(plain: Buffer): Buffer {
    let out = plain;
    if (this.toSkip > 0) {
      out = out.subarray(this.toSkip);
      this.toSkip = 0;
    }
    if (out.length > this.remaining) out = out.subarray(0, this.remaining);
    this.remaining -= out.length;
    return out;
  }
}
