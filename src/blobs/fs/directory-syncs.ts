/**
 * Shares directory fsyncs between concurrent writers. A writer that has just added an entry to a
 * directory asks for a sync and is answered once an fsync that began after it asked has finished:
 * writers asking while one runs all wait for the next one, so however many uploads rename into a
 * directory at the same time, it is synced at most twice for them instead of once each.
 */
export class DirectorySyncs {
  /** The latest sync of each directory, until it has finished. */
  private readonly latest = new Map<string, { started: boolean; done: Promise<void> }>();

  constructor(private readonly syncDirectory: (dir: string) => Promise<void>) {}

  sync(dir: string): Promise<void> {
    const latest = this.latest.get(dir);
    // Not begun yet: it will see this writer's entry.
    if (latest && !latest.started) return latest.done;
    const previous = latest ? latest.done.catch(() => {}) : Promise.resolve();
    const next = { started: false, done: undefined as unknown as Promise<void> };
    next.done = previous
      .then(() => {
        next.started = true;
        return this.syncDirectory(dir);
      })
      .finally(() => {
        if (this.latest.get(dir) === next) this.latest.delete(dir);
      });
    this.latest.set(dir, next);
    return next.done;
  }
}
