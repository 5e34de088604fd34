// Directory fsyncs shared between concurrent writers (src/blobs/fs/directory-syncs.ts), and blob
// keys made close in time sharing the directories they land in.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DirectorySyncs } from '../../src/blobs/fs/directory-syncs.js';
import { assertBlobKey } from '../../src/blobs/blob-store.js';
import { newBlobKey } from '../../src/blobs/blob-keys.js';
import { tick } from '../support/wait.js';

/** A fake fsync that records each call and finishes only when the test says so. */
function controlledDirectorySyncs() {
  const started: { dir: string; finish: (error?: Error) => void }[] = [];
  const syncs = new DirectorySyncs(
    (dir) =>
      new Promise<void>((resolve, reject) => {
        started.push({ dir, finish: (error) => (error ? reject(error) : resolve()) });
      }),
  );
  return { syncs, started };
}

describe('DirectorySyncs', () => {
  it('answers writers asking during a running fsync only after the next one, which they share', async () => {
    const { syncs, started } = controlledDirectorySyncs();
    let firstDone = false;
    const first = syncs.sync('/d').then(() => (firstDone = true));
    await tick();
    assert.equal(started.length, 1);
    const laterDone: boolean[] = [false, false, false];
    const later = laterDone.map((_, i) => syncs.sync('/d').then(() => (laterDone[i] = true)));
    started[0].finish();
    await first;
    await tick();
    assert.equal(firstDone, true);
    // The running fsync may have begun before their entries were made: it does not answer them.
    assert.deepEqual(laterDone, [false, false, false]);
    assert.equal(started.length, 2, 'the three writers share one fsync');
    started[1].finish();
    await Promise.all(later);
    assert.deepEqual(laterDone, [true, true, true]);
    assert.equal(started.length, 2);
  });

  it('syncs different directories independently and passes an fsync error to its waiters only', async () => {
    const { syncs, started } = controlledDirectorySyncs();
    const a = syncs.sync('/a');
    const b = syncs.sync('/b');
    await tick();
    assert.deepEqual(
      started.map((s) => s.dir),
      ['/a', '/b'],
    );
    started[0].finish(new Error('EIO'));
    await assert.rejects(a, /EIO/);
    started[1].finish();
    await b;
    // A failed fsync does not stop the next writer's.
    const again = syncs.sync('/a');
    await tick();
    assert.equal(started.length, 3);
    started[2].finish();
    await again;
  });
});

describe('newBlobKey', () => {
  it('gives keys of the same few seconds one directory prefix, and random, valid keys', () => {
    const t = Date.UTC(2026, 10, 23, 12, 0, 0);
    const keys = [newBlobKey(t), newBlobKey(t + 1), newBlobKey(t + 9_999)];
    for (const key of keys) assert.equal(assertBlobKey(key), key);
    assert.equal(new Set(keys.map((k) => k.slice(0, 4))).size, 1);
    assert.equal(new Set(keys).size, 3);
    assert.notEqual(newBlobKey(t + 10_000).slice(0, 4), keys[0].slice(0, 4));
    assert.equal(keys[0].length, 24);
  });
});
