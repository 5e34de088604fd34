// Background fdatasyncs while a file is written (src/blobs/fs/write-behind.ts).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { WriteBehind } from '../../src/blobs/fs/write-behind.js';
import { tick } from '../support/wait.js';

/** A fake fdatasync that records each call and finishes only when the test says so. */
function controlledDataSyncs() {
  const started: { fd: number; finish: (error?: Error) => void }[] = [];
  const dataSync = (fd: number) =>
    new Promise<void>((resolve, reject) => {
      started.push({ fd, finish: (error) => (error ? reject(error) : resolve()) });
    });
  return { dataSync, started };
}

describe('WriteBehind', () => {
  it('starts a sync once enough bytes wait, never two at once, and counts again from each start', async () => {
    const { dataSync, started } = controlledDataSyncs();
    const behind = new WriteBehind(7, 10, dataSync);
    behind.wrote(4);
    behind.wrote(5);
    assert.equal(started.length, 0, '9 bytes wait: below the threshold');
    behind.wrote(1);
    assert.deepEqual(
      started.map((s) => s.fd),
      [7],
    );
    behind.wrote(30);
    assert.equal(started.length, 1, 'one sync at a time');
    started[0].finish();
    await tick();
    behind.wrote(1);
    assert.equal(started.length, 2, 'the bytes written while it ran start the next one');
    let settled = false;
    const settling = behind.settle().then(() => (settled = true));
    await tick();
    assert.equal(settled, false, 'settle waits for the sync in flight');
    started[1].finish();
    await settling;
    assert.equal(started.length, 2);
  });

  it('throws a failed sync at the next write or at settle, without an unhandled rejection', async () => {
    const { dataSync, started } = controlledDataSyncs();
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const behind = new WriteBehind(3, 1, dataSync);
      behind.wrote(1);
      started[0].finish(new Error('EIO'));
      await tick();
      await tick();
      assert.deepEqual(unhandled, []);
      assert.throws(() => behind.wrote(1), /EIO/);
      await assert.rejects(behind.settle(), /EIO/);
      assert.equal(started.length, 1, 'no sync starts after a failure');
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});
