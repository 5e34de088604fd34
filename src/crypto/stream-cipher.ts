import { Transform, type TransformCallback } from 'node:stream';
import { MessageChannel } from 'node:worker_threads';
import { streamGarbage } from '../lib/gc.js';
import { FileAppender } from '../lib/write-all.js';
import { CipherChannel, cipherThreads, type WorkerReply } from './cipher-pool.js';
import { InputRing } from './input-ring.js';
import {
  CipherFormatError,
  DEFAULT_SEGMENT_LOG2,
  KEY_BYTES,
  createCodec,
  threadSpecs,
  type CodecSpec,
  type SegmentCodec,
  type SegmentRange,
  type StreamHeader,
} from './segment-codecs.js';

export * from './segment-codecs.js';

/**
 * Streams over the segment codecs. A stream shorter than one batch is processed in-process when
 * it ends (a worker round trip would cost more than its crypto); longer ones send batches of
 * about `BATCH_BYTES` to a cipher thread, with up to `MAX_IN_FLIGHT` batches outstanding so
 * that reading, crypto and writing overlap. Memory per stream stays a few MiB whatever its size.
 * Every batch costs a message to each thread and a reply from each, and each message wakes a
 * thread (a context switch on a busy 2-core machine): 1 MiB batches rather than 512 KiB took an
 * upload from 280-470 to 425-500 MB/s here, at the same peak RSS.
 */
const BATCH_BYTES = 1024 * 1024;
const MAX_IN_FLIGHT = 2;
const STREAM_HIGH_WATER_MARK = 512 * 1024;
/**
 * Batches coming back from the workers are garbage once written out, and input chunks once
 * copied for the workers (see gc.ts). Counting both keeps the buffers waiting for a collection
 * on the event loop at a few MiB: an upload's input is as many bytes as its output.
 */
const garbage = streamGarbage;

/**
 * An open file that a stream writes its output into itself, from the cipher thread when it uses
 * one, instead of emitting it (its readable side then stays empty). The event loop then never
 * holds the output: an upload spent about a third of its event-loop time receiving output from
 * the worker, passing it down a stream, handing it to the threadpool and collecting it after.
 */
export interface OutputFile {
  fd: number;
  /** Told of each write once done, in order (an error it throws fails the stream). */
  wrote(bytes: number): void;
}

export interface CipherStreamOptions {
  /**
   * `auto` (default): small streams in-process, others on a cipher thread. `worker` / `inline`
   * force one path (tests cover both).
   */
  offload?: 'auto' | 'worker' | 'inline';
  /**
   * The input chunks belong to this stream alone (a file read stream's buffers, an HTTP request's
   * body chunks): whole ones move to the cipher thread without a copy (and from a hashing thread
   * on to a sealing one, see `threadSpecs`). Never set it for chunks that a parser may still read.
   */
  ownsInput?: boolean;
  /**
   * Called with the input's running byte count before each chunk is taken; an error it throws
   * fails the stream with that chunk (an upload's size limits, checked as the bytes arrive
   * without a stream of their own in front).
   */
  checkInput?: (bytes: number) => void;
  /**
   * The output goes into this file, from offset 0, instead of the readable side. The stream
   * closes ('close') only once nothing of it can still write there, also when it fails: only
   * then may the file be closed.
   */
  into?: OutputFile;
}

abstract class CipherStream extends Transform {
  private batch: Buffer[] = [];
  private batchBytes = 0;
  protected seenBytes = 0;
  /** The thread producing the output, then any side threads (a checksum). */
  private channels: CipherChannel[] | null = null;
  private codec: SegmentCodec | null = null;
  /** Batches sent and not answered yet by the output thread (the last one each batch reaches). */
  private inFlight = 0;
  /** Shared memory carrying input the stream does not own to the channels (see input-ring.ts). */
  private ring: InputRing | null = null;
  /** Channels that have not answered their last reply yet, once the input has ended. */
  private unfinished = 0;
  private writeCallback: TransformCallback | null = null;
  private flushCallback: TransformCallback | null = null;
  private readonly offload: 'auto' | 'worker' | 'inline';
  private readonly ownsInput: boolean;
  private readonly checkInput: ((bytes: number) => void) | undefined;
  private readonly into: OutputFile | undefined;
  /** With `into`: output written from this thread (short streams, `inline`). */
  private readonly appender: FileAppender | undefined;
  /** `sha256:<hex>` of the plaintext, when the spec asked for it, once the stream has ended. */
  checksum: string | undefined;

  protected constructor(private readonly spec: CodecSpec, options: CipherStreamOptions = {}) {
    super({ highWaterMark: STREAM_HIGH_WATER_MARK });
    this.offload = options.offload ?? 'auto';
    this.ownsInput = options.ownsInput ?? false;
    this.checkInput = options.checkInput;
    this.into = options.into;
    this.appender = this.into && new FileAppender(this.into.fd);
    // Nothing is ever pushed: flowing, the empty readable side ends with the input, and the
    // stream closes once both sides are done.
    if (this.into) this.resume();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    if (this.checkInput) {
      try {
        this.checkInput(this.seenBytes + chunk.length);
      } catch (error) {
        return callback(error as Error);
      }
    }
    this.batch.push(chunk);
    this.batchBytes += chunk.length;
    this.seenBytes += chunk.length;
    if (this.batchBytes < BATCH_BYTES) return callback();
    if (this.offload === 'inline') {
      try {
        return this.output(this.inlineCodec().write(this.takeBatch()), callback);
      } catch (error) {
        return callback(error as Error);
      }
    }
    this.send();
    this.writeCallback = callback;
    this.maybeContinue();
  }

  /**
   * Accepts more input only while few batches are out and the output is being read. Output is
   * pushed when workers answer, outside `_transform`, so Transform's own back-pressure (which
   * only sees pushes made inside it) would let a slow reader pile up output without this.
   * `_read` (the reader asking for more) releases input whatever the buffered output.
   */
  private maybeContinue(readerWaiting = false): void {
    if (!this.writeCallback || this.inFlight >= MAX_IN_FLIGHT) return;
    if (!readerWaiting && this.readableLength >= this.readableHighWaterMark) return;
    const callback = this.writeCallback;
    this.writeCallback = null;
    callback();
  }

  override _read(size: number): void {
    this.maybeContinue(true);
    super._read(size);
  }

  override _flush(callback: TransformCallback): void {
    if (!this.channels && this.offload !== 'worker') {
      // Short streams (and the `inline` mode) finish in-process.
      try {
        const codec = this.inlineCodec();
        const head = codec.write(this.takeBatch());
        const { out, checksum } = codec.end();
        this.checksum = checksum;
        return this.output([...head, ...out], callback);
      } catch (error) {
        return callback(error as Error);
      }
    }
    this.send();
    this.flushCallback = callback;
    this.unfinished = this.channels!.length;
    // The first thread of a chain passes the end on after the last batch.
    this.inputChannel().end();
  }

  override _destroy(error: Error | null, callback: (error: Error | null) => void): void {
    const drops = (this.channels ?? []).map((channel) => channel.drop());
    this.writeCallback = null;
    this.flushCallback = null;
    if (!this.into) {
      this.ring?.close();
      return callback(error);
    }
    // Closed only once no write of ours, on any thread, can still reach the file.
    Promise.all([...drops, this.appender!.settled()]).then(() => {
      this.ring?.close();
      callback(error);
    });
  }

  private inlineCodec(): SegmentCodec {
    this.codec ??= createCodec(this.spec);
    return this.codec;
  }

  private takeBatch(): Buffer[] {
    const batch = this.batch;
    this.batch = [];
    this.batchBytes = 0;
    return batch;
  }

  /** Output made on this thread: pushed, or with `into` written into the file; then `callback`. */
  private output(chunks: Buffer[], callback: TransformCallback): void {
    if (!this.into) {
      for (const chunk of chunks) if (chunk.length > 0) this.push(chunk);
      return callback();
    }
    const into = this.into;
    this.appender!.append(chunks)
      .then((bytes) => into.wrote(bytes))
      .then(() => callback(), callback);
  }

  /**
   * Sends the batch to the cipher thread(s): whole owned buffers move there; anything else is
   * copied once into the stream's ring of shared memory, which every thread reads in place (or,
   * when it does not fit there, copied by postMessage). With two threads, the batch goes to the
   * hashing one, which moves it on to the sealing one (see `threadSpecs`).
   */
  private send(): void {
    this.channels ??= this.openChannels();
    if (this.batchBytes === 0) return;
    const owned = this.ownsInput && this.batch.every((c) => c.byteOffset === 0 && c.byteLength === c.buffer.byteLength);
    const bytes = this.batchBytes;
    let chunks: Uint8Array[] = this.takeBatch();
    this.ring ??= new InputRing();
    chunks = this.ring.send(chunks, bytes, !owned) ?? chunks;
    // Input that was copied (into the ring, or by postMessage) is garbage from here on.
    if (!owned) garbage.add(bytes);
    this.inFlight++;
    this.inputChannel().write(chunks, owned ? chunks.map((c) => c.buffer as ArrayBuffer) : []);
  }

  /**
   * The thread producing the output (and writing it `into` the file), then, when the spec splits,
   * the thread hashing the input, linked to the first by a port of their own.
   */
  private openChannels(): CipherChannel[] {
    const [output, side] = threadSpecs(this.spec, { threads: cipherThreads });
    const fd = this.into?.fd;
    const listener = (reply: WorkerReply) => this.onReply(reply);
    if (!side) return [new CipherChannel(output, listener, { fd })];
    const link = new MessageChannel();
    const first = new CipherChannel(output, listener, { fd, from: link.port2 });
    return [first, new CipherChannel(side, listener, { forward: { port: link.port1, id: first.id } })];
  }

  /** The thread the input goes to: the last of the list, which forwards to the others. */
  private inputChannel(): CipherChannel {
    return this.channels![this.channels!.length - 1];
  }

  private onReply(reply: WorkerReply): void {
    if (this.destroyed) return;
    if (reply.error) {
      const { name, message, code } = reply.error;
      const error = name === 'CipherFormatError' ? new CipherFormatError(message) : Object.assign(new Error(message), code === undefined ? {} : { code });
      this.destroy(error);
      return;
    }
    let pushed = false;
    if (reply.written !== undefined) {
      try {
        this.into!.wrote(reply.written);
      } catch (error) {
        this.destroy(error as Error);
        return;
      }
    }
    for (const out of reply.out ?? []) {
      if (out.byteLength === 0) continue;
      pushed = true;
      garbage.add(out.byteLength);
      this.push(Buffer.from(out.buffer, out.byteOffset, out.byteLength));
    }
    if (reply.done) {
      this.checksum ??= reply.checksum;
      if (--this.unfinished > 0) return;
      this.ring?.close();
      const flushCallback = this.flushCallback;
      this.flushCallback = null;
      flushCallback?.();
      return;
    }
    // Only the output thread answers each batch (a forwarding thread answers only at the end).
    this.inFlight--;
    this.ring!.answer();
    // A reply without output gives the reader nothing to ask more for: continue at once.
    this.maybeContinue(!pushed);
  }
}

/** Encrypts a plaintext stream into the stored format (header, then sealed segments). */
export class EncryptStream extends CipherStream {
  constructor(key: Buffer, segmentLog2 = DEFAULT_SEGMENT_LOG2, options: CipherStreamOptions & { checksum?: boolean } = {}) {
    if (key.length !== KEY_BYTES) throw new Error('data key must be 32 bytes');
    super({ kind: 'seal', key: new Uint8Array(key), segmentLog2, hash: options.checksum ?? false }, options);
  }

  /** Plaintext bytes seen so far. */
  get plaintextBytes(): number {
    return this.seenBytes;
  }
}

/** Decrypts a stored stream (header first) and emits only authenticated plaintext. */
export class DecryptStream extends CipherStream {
  constructor(key: Buffer, options: CipherStreamOptions = {}) {
    super({ kind: 'open', key: new Uint8Array(key) }, options);
  }
}

/**
 * Decrypts the segments of a range (the stored bytes `storedStart..storedEnd`, fed in order) and
 * emits exactly the requested plaintext bytes.
 */
export class RangeDecryptStream extends CipherStream {
  constructor(key: Buffer, header: StreamHeader, range: SegmentRange, options: CipherStreamOptions = {}) {
    super({ kind: 'open-range', key: new Uint8Array(key), header: new Uint8Array(header.bytes), range }, options);
  }
}
