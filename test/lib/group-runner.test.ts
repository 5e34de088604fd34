// Group commit scheduling (src/lib/group-runner.ts): what is submitted in one turn of the event
// loop starts as one group, what arrives while a key's group runs waits and runs as the next group; keys are independent; each item gets its own outcome.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { GroupRunner } from '../../src/lib/group-runner.js';

describe('GroupRunner', () => {
  it('runs what was submitted in one turn as the first group, then what arrived meanwhile, capped at maxGroup', async () => {
    const groups: number[][] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const runner = new GroupRunner<number, number>(async (items) => {
      groups.push(items);
      if (groups.length === 1) await gate;
      return items.map((n) => ({ status: 'fulfilled', value: n * 10 }));
    }, 3);
    const sameTurn = [1, 2].map((n) => runner.submit('owner', n));
    const other = runner.submit('someone else', 9);
    assert.equal(await other, 90, 'another key does not wait for this one');
    assert.deepEqual(groups, [[1, 2], [9]]);
    const meanwhile = [3, 4, 5, 6].map((n) => runner.submit('owner', n));
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(groups, [[1, 2], [9]], 'nothing else runs while the group of the key does');
    release();
    assert.deepEqual(await Promise.all([...sameTurn, ...meanwhile]), [10, 20, 30, 40, 50, 60]);
    assert.deepEqual(groups, [[1, 2], [9], [3, 4, 5], [6]]);
  });

  it('gives each item its own outcome, and a failed run fails its group only', async () => {
    let runs = 0;
    const runner = new GroupRunner<string, string>(async (items) => {
      runs++;
      if (items.includes('crash')) throw new Error('run failed');
      return items.map((item) =>
        item.startsWith('bad') ? { status: 'rejected', reason: new Error(item) } : { status: 'fulfilled', value: item.toUpperCase() },
      );
    }, 10);
    const outcomes = await Promise.allSettled(['ok', 'bad one', 'fine'].map((item) => runner.submit('k', item)));
    assert.deepEqual(
      outcomes.map((o) => (o.status === 'fulfilled' ? o.value : (o.reason as Error).message)),
      ['OK', 'bad one', 'FINE'],
    );
    await assert.rejects(runner.submit('k', 'crash'), /run failed/);
    assert.equal(await runner.submit('k', 'after'), 'AFTER');
    assert.equal(runs, 3, 'the three submitted together ran as one group');
  });
});
