import v8 from 'node:v8';
import vm from 'node:vm';

/**
 * Streaming allocates a buffer per batch; V8 frees that memory only on a collection, and starts
 * one only after about 64 MB more of it per thread. Counting the bytes a thread streams and
 * collecting the young generation every few MiB (its new space is small, see the
 * `--max-semi-space-size` flag of `npm start`, and the workers' resource limits) frees the
 * batches already passed on, in about 0.1 ms, and keeps a transfer's memory flat whatever the
 * file's size. Forced full collections were tried as well: each cost the event loop about 0.1 s
 * for no lower peak.
 * `--expose-gc` set at run time only installs `gc` in contexts created afterwards, hence the new context.
 */
v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as (options: { type: 'minor' }) => void;

export class GarbageMeter {
  private since = 0;
  constructor(private readonly every: number) {}

  add(bytes: number): void {
    this.since += bytes;
    if (this.since >= this.every) {
      this.since = 0;
      gc({ type: 'minor' });
    }
  }
}

/**
 * The event loop's meter, shared by its streams (cipher streams, file decryption): one count of
 * the buffers they drop, so that several streams together still collect every few MiB.
 */
export const streamGarbage = new GarbageMeter(8 * 1024 * 1024);
