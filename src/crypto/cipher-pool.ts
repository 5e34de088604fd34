import { availableParallelism } from 'node:os';
import { Worker, type MessagePort, type TransferListItem } from 'node:worker_threads';
import type { CodecSpec } from './segment-codecs.js';

/**
 * Cipher threads shared by every stream of the process. AES-GCM, hashing and segment framing run
 * there, so the event loop keeps only socket and disk work: on a 2-core machine the crypto of a
 * transfer gets the other core instead of halving the event loop's throughput.
 */

export type WorkerRequest =
  | { op: 'open'; id: number; spec: CodecSpec } & OpenOptions
  | { op: 'write'; id: number; chunks: Uint8Array[] }
  | { op: 'end'; id: number }
  | { op: 'drop'; id: number };

/** How a stream's thread is linked to its file and to the stream's other thread, if any. */
export interface OpenOptions {
  /** The worker writes the output into this open file itself (see `OutputFile` in stream-cipher.ts). */
  fd?: number;
  /** The stream's input arrives through this port (from another cipher thread) rather than from the main thread. */
  from?: MessagePort;
  /** Each input batch, once processed, moves on through `port` to the stream `id` of another thread. */
  forward?: { port: MessagePort; id: number };
}

export interface WorkerReply {
  id: number;
  /** True on the last reply of a stream (after `end`, or after an error). */
  done: boolean;
  out?: Uint8Array[];
  /** Output bytes written into the stream's file (instead of `out`). */
  written?: number;
  checksum?: string;
  /** A system error (a failed write) keeps its `code`. */
  error?: { name: string; message: string; code?: string };
}

export interface ChannelListener {
  (reply: WorkerReply): void;
}

interface Slot {
  worker: Worker;
  listeners: Map<number, ChannelListener>;
}

const FROM_SOURCE = import.meta.url.endsWith('.ts');
const WORKER_URL = new URL(FROM_SOURCE ? './cipher-worker.ts' : './cipher-worker.js', import.meta.url);
const WORKER_LIMITS = { maxYoungGenerationSizeMb: 4 };
/** How many cipher threads the pool runs (a stream may use two, see `threadSpecs`). */
export const cipherThreads = Math.max(1, Math.min(4, availableParallelism()));

const slots: (Slot | undefined)[] = [];
let nextId = 1;

function spawn(index: number): Slot {
  // From the build the worker is plain JavaScript. Run from source under tsx (tests), the worker
  // thread does not inherit tsx's loader hooks, so it registers them before loading the module.
  const worker = FROM_SOURCE
    ? new Worker(`import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(WORKER_URL.href)}); })`, { eval: true, resourceLimits: WORKER_LIMITS })
    : new Worker(WORKER_URL, { resourceLimits: WORKER_LIMITS });
  const slot: Slot = { worker, listeners: new Map() };
  worker.unref(); // referenced only while it has streams (see open/close below)
  worker.on('message', (reply: WorkerReply) => {
    const listener = slot.listeners.get(reply.id);
    if (reply.done) release(slot, reply.id);
    listener?.(reply);
  });
  const fail = (error: Error) => {
    if (slots[index] === slot) slots[index] = undefined;
    const listeners = [...slot.listeners];
    slot.listeners.clear();
    for (const [id, listener] of listeners) listener({ id, done: true, error: { name: 'Error', message: `cipher worker stopped: ${error.message}` } });
  };
  worker.on('error', fail);
  worker.on('exit', (code) => fail(new Error(`exit code ${code}`)));
  slots[index] = slot;
  return slot;
}

function release(slot: Slot, id: number): void {
  if (slot.listeners.delete(id) && slot.listeners.size === 0) slot.worker.unref();
}

/** The least busy worker, started on first use. */
function pick(): Slot {
  let best: Slot | undefined;
  for (let i = 0; i < cipherThreads; i++) {
    const slot = slots[i] ?? spawn(i);
    if (!best || slot.listeners.size < best.listeners.size) best = slot;
    if (slot.listeners.size === 0) break;
  }
  return best!;
}

/**
 * One stream's conversation with a cipher worker. Replies reach `listener` in request order.
 * Two channels of one stream may be linked (`OpenOptions.forward` and `from`): the stream then
 * writes to the one that forwards, which passes each batch on to the other.
 */
export class CipherChannel {
  readonly id = nextId++;
  private readonly slot: Slot;
  private closed = false;
  /** Once dropped: resolves on the worker's last reply. */
  private dropped: Promise<void> | null = null;
  private onDropped: (() => void) | null = null;

  constructor(spec: CodecSpec, listener: ChannelListener, options: OpenOptions = {}) {
    this.slot = pick();
    if (this.slot.listeners.size === 0) this.slot.worker.ref();
    this.slot.listeners.set(this.id, (reply) => {
      if (!this.onDropped) return listener(reply);
      if (reply.done) this.onDropped();
    });
    const ports = [options.from, options.forward?.port].filter((port) => port !== undefined);
    this.post({ op: 'open', id: this.id, spec, ...options }, ports);
  }

  /** Sends chunks; those listed in `transfer` move to the worker and must not be used again. */
  write(chunks: Uint8Array[], transfer: ArrayBuffer[]): void {
    if (!this.closed) this.post({ op: 'write', id: this.id, chunks }, transfer);
  }

  end(): void {
    if (!this.closed) this.post({ op: 'end', id: this.id });
    this.closed = true;
  }

  /**
   * Abandons the stream: the worker forgets it and no more replies are delivered. Resolves once
   * the worker has stopped working on it, when nothing of it can still touch its file (if any).
   */
  drop(): Promise<void> {
    if (this.dropped) return this.dropped;
    // Its last reply has come (the worker is done with it), or the worker is gone.
    if (!this.slot.listeners.has(this.id)) return (this.dropped = Promise.resolve());
    this.closed = true;
    this.dropped = new Promise((resolve) => (this.onDropped = resolve));
    this.post({ op: 'drop', id: this.id });
    return this.dropped;
  }

  private post(request: WorkerRequest, transfer: TransferListItem[] = []): void {
    this.slot.worker.postMessage(request, transfer);
  }
}
