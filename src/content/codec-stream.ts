import { Transform, type TransformCallback } from 'node:stream';
import type { SegmentCodec } from './codecs.js';

/** Output buffered before the input is asked to wait. */
const HIGH_WATER_MARK = 512 * 1024;

export interface CodecStreamOptions {
  /**
   * Called with the input's running byte count before each chunk is taken; an error it throws
   * fails the stream with that chunk (an upload's size limits, checked as the bytes arrive), and
   * a promise it returns holds the chunk until it settles (the quota held in steps).
   */
  checkInput?: (bytes: number) => void | Promise<void>;
}

/** A codec as a stream, run on the event loop: the portable path, and the path of stores that are not local files. */
export class CodecStream extends Transform {
  private seen = 0;

  constructor(
    private readonly codec: SegmentCodec,
    private readonly options: CodecStreamOptions = {},
  ) {
    super({ readableHighWaterMark: HIGH_WATER_MARK, writableHighWaterMark: HIGH_WATER_MARK });
  }

  /** Input bytes taken so far. */
  get inputBytes(): number {
    return this.seen;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    let checked: void | Promise<void>;
    try {
      checked = this.options.checkInput?.(this.seen + chunk.length);
    } catch (error) {
      return callback(error as Error);
    }
    // Held until the check settles (a step of the quota's hold); destroyed meanwhile, it takes nothing.
    if (checked instanceof Promise) checked.then(() => (this.destroyed ? callback() : this.takeChunk(chunk, callback)), callback);
    else this.takeChunk(chunk, callback);
  }

  private takeChunk(chunk: Buffer, callback: TransformCallback): void {
    try {
      this.seen += chunk.length;
      this.pushAll(this.codec.write([chunk]));
    } catch (error) {
      return callback(error as Error);
    }
    callback();
  }

  override _flush(callback: TransformCallback): void {
    try {
      this.pushAll(this.codec.end());
    } catch (error) {
      return callback(error as Error);
    }
    callback();
  }

  private pushAll(chunks: Buffer[]): void {
    for (const chunk of chunks) if (chunk.length > 0) this.push(chunk);
  }
}
