/**
 * Hands a file's data to the disk while the file is still being written, so that the fsync
 * closing an upload finds little left to flush (RocksDB's `bytes_per_sync` does the same).
 *
 * Without it, the bytes of a large upload sit dirty in the page cache until that closing fsync,
 * which then writes all of them while the client waits and every core idles: about 0.7 s per GiB
 * on this project's VM, a third of an upload's time. Here, every `everyBytes` written, an
 * fdatasync runs in the background (one at a time, never awaited by the writes), and the disk
 * writes while the upload streams. Node has no sync_file_range; fdatasync on a file still being
 * appended to does the same job here, and the writes go on while it runs.
 */
export class WriteBehind {
  private unsynced = 0;
  private running: Promise<void> | null = null;
  private failure: { error: unknown } | null = null;

  constructor(
    private readonly fd: number,
    private readonly everyBytes: number,
    private readonly dataSync: (fd: number) => Promise<void>,
  ) {}

  /** Counts bytes just written; starts a sync when enough are waiting and none runs. Throws the error of an earlier sync. */
  wrote(bytes: number): void {
    if (this.failure) throw this.failure.error;
    this.unsynced += bytes;
    if (this.running || this.unsynced < this.everyBytes) return;
    this.unsynced = 0;
    this.running = this.dataSync(this.fd).then(
      () => {
        this.running = null;
      },
      // Kept for the next call: a rejection nobody awaits yet must not go unhandled.
      (error: unknown) => {
        this.failure = { error };
        this.running = null;
      },
    );
  }

  /** Waits for the sync in flight (before the closing fsync, or before the descriptor is closed); throws its error. */
  async settle(): Promise<void> {
    await this.running;
    if (this.failure) throw this.failure.error;
  }
}
