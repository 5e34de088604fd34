/**
 * Group commit: work submitted under one key while earlier work of that key runs waits, then runs
 * as one group (at most `maxGroup` items), so N concurrent items cost a few runs instead of N. An
 * idle key's first group starts on the event loop's next turn (setImmediate), with what was
 * submitted in the same turn: requests read from several sockets at once, or uploads released by
 * one shared directory fsync (these came one alone, then the rest, a quarter of the runs). Nothing
 * waits longer for a group to fill. This is only
 * scheduling inside one process; `run` reads and writes its state in the database as usual, so
 * several instances stay correct (each groups its own requests).
 */
export class GroupRunner<I, O> {
  private readonly queues = new Map<string, Waiting<I, O>[]>();

  /** `run` answers one settled result per item, in the items' order. */
  constructor(
    private readonly run: (items: I[]) => Promise<PromiseSettledResult<O>[]>,
    private readonly maxGroup: number,
  ) {}

  submit(key: string, item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      const queue = this.queues.get(key);
      if (queue) {
        queue.push({ item, resolve, reject });
        return;
      }
      const fresh = [{ item, resolve, reject }];
      this.queues.set(key, fresh);
      setImmediate(() => void this.drain(key, fresh));
    });
  }

  private async drain(key: string, queue: Waiting<I, O>[]): Promise<void> {
    while (queue.length > 0) {
      const group = queue.splice(0, this.maxGroup);
      let results: PromiseSettledResult<O>[];
      try {
        results = await this.run(group.map((waiting) => waiting.item));
      } catch (error) {
        results = group.map(() => ({ status: 'rejected', reason: error }));
      }
      group.forEach((waiting, i) => {
        const result = results[i];
        if (result.status === 'fulfilled') waiting.resolve(result.value);
        else waiting.reject(result.reason);
      });
    }
    this.queues.delete(key);
  }
}

interface Waiting<I, O> {
  item: I;
  resolve: (value: O) => void;
  reject: (reason: unknown) => void;
}
