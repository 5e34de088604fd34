import { MIDSTATE_BYTES, type ResumableSha256 } from './sha256-midstate.js';

interface Queued {
  chunks: Buffer[];
  bytes: number;
  hashed: () => void;
  failed: (error: Error) => void;
}

/**
 * A SHA-256 fed in order and computed one update at a time behind whoever feeds it (on the
 * threadpool with the native engine), over all that waits at once. A resumable upload's request
 * can then answer once its segments are durable while the hash, its slowest step, goes on: the
 * upload's next request on this instance carries on with the same lane (LaneKeeper), and any other
 * catches up from the midstate the lane had `reached` (resumable.ts).
 */
export class HashLane {
  private readonly queue: Queued[] = [];
  private running = false;
  private failure: Error | undefined;
  private idleWaiters: { resolve: () => void; reject: (error: Error) => void }[] = [];
  /** Plaintext bytes handed to the lane so far (counted from the start of the content). */
  queuedBytes: number;
  /** Plaintext bytes hashed so far. */
  private hashedBytes: number;
  /** The midstate (sha256-midstate.ts) at the last point the hash stood at a 64-byte boundary. */
  reached: Buffer;
  /** Pushes not hashed yet: each holds its chunks' memory until then. */
  waiting = 0;

  /** A lane carrying on from `midstate` (which `hash` was made from), or from the start. */
  constructor(
    private readonly hash: ResumableSha256,
    midstate?: Buffer,
  ) {
    this.reached = midstate ?? hash.midstate();
    this.queuedBytes = this.hashedBytes = midstateBytes(this.reached);
  }

  /** Queues chunks holding `bytes` bytes; resolves once they are hashed, rejects when the hash fails (then every later push does too). */
  push(chunks: Buffer[], bytes: number): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    this.queuedBytes += bytes;
    this.waiting++;
    return new Promise((hashed, failed) => {
      this.queue.push({ chunks, bytes, hashed, failed });
      this.next();
    });
  }

  /** Resolves once everything pushed is hashed; rejects when the hash failed. */
  idle(): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    if (!this.running && this.queue.length === 0) return Promise.resolve();
    return new Promise((resolve, reject) => this.idleWaiters.push({ resolve, reject }));
  }

  /** The digest of everything pushed, once idle; the lane is then spent. */
  digest(): Buffer {
    if (this.running || this.queue.length > 0) throw new Error('the hash lane is still hashing');
    return this.hash.digest();
  }

  private next(): void {
    if (this.running) return;
    if (this.queue.length === 0) return this.settleIdle();
    const batch = this.queue.splice(0);
    this.running = true;
    this.hash.update(batch.flatMap((queued) => queued.chunks)).then(
      () => {
        this.running = false;
        for (const queued of batch) this.hashedBytes += queued.bytes;
        if (this.hashedBytes % 64 === 0) this.reached = this.hash.midstate();
        this.waiting -= batch.length;
        for (const queued of batch) queued.hashed();
        this.next();
      },
      (error: Error) => {
        this.running = false;
        this.failure = error;
        for (const queued of [...batch, ...this.queue.splice(0)]) queued.failed(error);
        this.settleIdle();
      },
    );
  }

  private settleIdle(): void {
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const waiter of waiters) {
      if (this.failure) waiter.reject(this.failure);
      else waiter.resolve();
    }
  }
}

/** The plaintext bytes a midstate has hashed (its last 8 bytes). */
export function midstateBytes(midstate: Buffer): number {
  if (midstate.length !== MIDSTATE_BYTES) throw new RangeError('a SHA-256 midstate is 40 bytes');
  return Number(midstate.readBigUInt64BE(32));
}

/** Lanes kept after their request, at most: an upload whose lane was dropped catches up from its tail. */
const KEPT_LANES = 64;

/**
 * The lanes of the uploads this instance appended to last, each under the tail record saved with
 * it: a request takes the lane only if the upload's row still holds that tail (no request
 * elsewhere, and no failed one, has moved it since), else it catches up from the tail's midstate.
 */
export class LaneKeeper {
  private readonly lanes = new Map<string, { tail: Buffer; lane: HashLane }>();

  /** The lane kept for `blobId` under exactly `tail`, taken out (a request that fails does not put it back). */
  take(blobId: string, tail: Buffer): HashLane | undefined {
    const kept = this.lanes.get(blobId);
    this.lanes.delete(blobId);
    return kept?.tail.equals(tail) ? kept.lane : undefined;
  }

  keep(blobId: string, tail: Buffer, lane: HashLane): void {
    this.lanes.delete(blobId);
    this.lanes.set(blobId, { tail, lane });
    // A Map iterates in insertion order: the first is the one kept longest.
    if (this.lanes.size > KEPT_LANES) this.lanes.delete(this.lanes.keys().next().value!);
  }

  forget(blobId: string): void {
    this.lanes.delete(blobId);
  }
}
