import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { chooseEngine } from '../../src/content/choose-engine.js';
import { HashLane, LaneKeeper, midstateBytes } from '../../src/content/hash-lane.js';
import type { ResumableSha256 } from '../../src/content/sha256-midstate.js';
import { requireNativeAddon } from '../support/native.js';

requireNativeAddon();

for (const engine of [chooseEngine('native'), chooseEngine('node')]) {
  describe(`HashLane: ${engine.name} engine`, () => {
    it('hashes what is pushed, in order, whatever waits at once; its midstate follows 64-byte boundaries', async () => {
      const data = randomBytes(5 * 65536 + 64);
      const lane = new HashLane(engine.sha256());
      assert.equal(lane.queuedBytes, 0);
      const pieces = [data.subarray(0, 65536), data.subarray(65536, 3 * 65536), data.subarray(3 * 65536)];
      const pushed = pieces.map((piece) => lane.push([piece.subarray(0, 100), piece.subarray(100)], piece.length));
      assert.equal(lane.queuedBytes, data.length);
      assert.equal(lane.waiting, 3);
      await Promise.all(pushed);
      await lane.idle();
      assert.equal(lane.waiting, 0);
      assert.equal(midstateBytes(lane.reached), data.length);
      assert.ok(lane.digest().equals(createHash('sha256').update(data).digest()));
    });

    it('carries on from a midstate it reached, as another lane', async () => {
      const data = randomBytes(3 * 65536 + 17);
      const first = new HashLane(engine.sha256());
      await first.push([data.subarray(0, 2 * 65536)], 2 * 65536);
      const midstate = first.reached;
      const second = new HashLane(engine.sha256(midstate), midstate);
      assert.equal(second.queuedBytes, 2 * 65536);
      await second.push([data.subarray(2 * 65536)], data.length - 2 * 65536);
      assert.ok(second.digest().equals(createHash('sha256').update(data).digest()));
    });
  });
}

describe('HashLane failures', () => {
  it('a failed update rejects its push, every later push and idle; the midstate stays where it was', async () => {
    let calls = 0;
    const good = chooseEngine('node').sha256();
    const failing: ResumableSha256 = {
      update: async (chunks) => {
        if (++calls === 2) throw new Error('hash failed');
        await good.update(chunks);
      },
      midstate: () => good.midstate(),
      digest: () => good.digest(),
    };
    const lane = new HashLane(failing);
    await lane.push([Buffer.alloc(64)], 64);
    const reached = lane.reached;
    await assert.rejects(lane.push([Buffer.alloc(64)], 64), /hash failed/);
    await assert.rejects(lane.push([Buffer.alloc(64)], 64), /hash failed/);
    await assert.rejects(lane.idle(), /hash failed/);
    assert.equal(lane.reached, reached);
    assert.equal(midstateBytes(lane.reached), 64);
  });
});

describe('LaneKeeper', () => {
  const lane = () => new HashLane(chooseEngine('node').sha256());

  it('gives a lane back only under the tail it was kept with, and only once', () => {
    const keeper = new LaneKeeper();
    const kept = lane();
    const tail = randomBytes(60);
    keeper.keep('blob-a', tail, kept);
    assert.equal(keeper.take('blob-a', Buffer.from(tail)), kept);
    assert.equal(keeper.take('blob-a', tail), undefined, 'taken out');
    keeper.keep('blob-a', tail, kept);
    assert.equal(keeper.take('blob-a', randomBytes(60)), undefined, 'another tail: the row moved on elsewhere');
    assert.equal(keeper.take('blob-a', tail), undefined, 'a lane that did not match is dropped');
    keeper.keep('blob-b', tail, kept);
    keeper.forget('blob-b');
    assert.equal(keeper.take('blob-b', tail), undefined);
  });

  it('keeps the 64 lanes used last', () => {
    const keeper = new LaneKeeper();
    const tail = Buffer.from('tail');
    const lanes = Array.from({ length: 66 }, lane);
    lanes.forEach((kept, i) => keeper.keep(`blob-${i}`, tail, kept));
    assert.equal(keeper.take('blob-0', tail), undefined);
    assert.equal(keeper.take('blob-1', tail), undefined);
    assert.equal(keeper.take('blob-2', tail), lanes[2]);
    assert.equal(keeper.take('blob-65', tail), lanes[65]);
  });
});
