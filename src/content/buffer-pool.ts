/**
 * Buffers of one size that finished downloads hand back for the next ones. A download's 1 MiB
 * read and output buffers are memory outside V8's heap, which V8 frees only in a full collection,
 * and it starts one only after such memory has grown by about 64 MB: without reuse, a dozen 1 GiB
 * downloads in a row took the server past its 200 MB bar (docs/performance.md). At most `max`
 * buffers wait here; a download that finds none allocates its own, as before.
 */
export class BufferPool {
  private readonly free: Buffer[] = [];
  /** Buffers this pool had to allocate (for tests). */
  allocated = 0;

  constructor(
    readonly size: number,
    private readonly max: number,
  ) {}

  take(): Buffer {
    const kept = this.free.pop();
    if (kept) return kept;
    this.allocated++;
    return Buffer.allocUnsafeSlow(this.size);
  }

  /** Takes back buffers nothing reads or writes any more (of this pool's size; others are left to the collector). */
  give(buffers: Iterable<Buffer>): void {
    for (const buffer of buffers) {
      if (buffer.length === this.size && this.free.length < this.max && !this.free.includes(buffer)) this.free.push(buffer);
    }
  }

  get available(): number {
    return this.free.length;
  }
}

const pools = new Map<number, BufferPool>();

/** The process's pool of buffers of `size` bytes: at most `max` of them wait for reuse. */
export function bufferPool(size: number, max = 8): BufferPool {
  let pool = pools.get(size);
  if (!pool) {
    pool = new BufferPool(size, max);
    pools.set(size, pool);
  }
  return pool;
}
