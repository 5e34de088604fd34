/**
 * Shared memory through which a stream hands input it does not own to the cipher threads. Sent
 * through `postMessage`, a batch of plain buffers is copied by the structured clone on the event
 * loop, and the worker then owns fresh garbage. A batch copied once into a ring of shared memory
 * is sent as views, which `postMessage` passes without a copy, and the threads read it in place.
 *
 * A region is reused once the stream's output thread has answered the batch it held: codecs keep
 * no reference to their input once `write` returns (`SegmentCodec`), a thread answers a stream's
 * batches in the order they were sent, and a batch reaches the output thread last (a hashing
 * thread passes it on once done with it, see `threadSpecs`).
 */

/**
 * Room for the batches a stream has in flight and the one it is placing (three of about 1 MiB,
 * see stream-cipher.ts), so placing a batch rarely waits.
 */
export const RING_BYTES = 4 * 1024 * 1024;
/** Rings of finished streams, kept for the next ones: their pages are already in memory. */
const SPARE_RINGS = 4;
const spares: SharedArrayBuffer[] = [];

export class InputRing {
  /** Taken on the first copy: a stream whose input moves to the threads as it is never needs it. */
  private memory: SharedArrayBuffer | null = null;
  private closed = false;
  /** Bytes ever copied in, and bytes every thread is done with: the ring holds the difference. */
  private written = 0;
  private released = 0;
  /** Ring bytes of each batch sent and not answered yet, oldest first (0: sent another way). */
  private readonly pending: number[] = [];

  /**
   * Records a batch sent to every thread. With `copy`, copies its chunks into the ring when they
   * fit beside the batches still in flight, and returns views of them to send instead (one, or
   * two when the batch wraps around the end); null when they do not fit, or without `copy`.
   */
  send(chunks: Uint8Array[], bytes: number, copy: boolean): Uint8Array[] | null {
    if (!copy || this.closed || bytes > RING_BYTES - this.inUse) {
      this.pending.push(0);
      return null;
    }
    const memory = (this.memory ??= spares.pop() ?? new SharedArrayBuffer(RING_BYTES));
    const start = this.written % RING_BYTES;
    const ring = Buffer.from(memory);
    let at = start;
    for (const chunk of chunks) {
      const first = Math.min(chunk.byteLength, RING_BYTES - at);
      copyInto(ring, at, chunk.subarray(0, first));
      if (first < chunk.byteLength) copyInto(ring, 0, chunk.subarray(first));
      at = (at + chunk.byteLength) % RING_BYTES;
    }
    this.written += bytes;
    this.pending.push(bytes);
    const end = start + bytes;
    if (end <= RING_BYTES) return [new Uint8Array(memory, start, bytes)];
    return [new Uint8Array(memory, start, RING_BYTES - start), new Uint8Array(memory, 0, end - RING_BYTES)];
  }

  /** The oldest batch outstanding was answered: its region is free. */
  answer(): void {
    this.released += this.pending.shift() ?? 0;
  }

  /** Bytes a thread may still be reading. */
  get inUse(): number {
    return this.written - this.released;
  }

  /**
   * The stream is over. A ring no thread reads any more is kept for another stream; one that a
   * thread may still be reading (a stream destroyed mid-way) is left to the garbage collector.
   */
  close(): void {
    if (this.memory && this.inUse === 0 && spares.length < SPARE_RINGS) spares.push(this.memory);
    this.memory = null;
    this.closed = true;
  }
}

/**
 * Copies `source` into `target` at `at`. V8 copies into shared memory (`set`, and `Buffer#copy`
 * which uses it) with relaxed atomic moves, at less than half the speed of memcpy here; `fill`
 * with a buffer exactly as long as the range is copied once, by memcpy.
 */
function copyInto(target: Buffer, at: number, source: Uint8Array): void {
  if (source.byteLength > 0) target.fill(source, at, at + source.byteLength);
}
