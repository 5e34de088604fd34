import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sealableBytes } from '../../src/content/segment-appender.js';

const SEGMENT = 64 * 1024;

describe('sealableBytes', () => {
  it('seals the whole segments and keeps a partial one for the next request', () => {
    assert.equal(sealableBytes(0, 0, SEGMENT, undefined), 0);
    assert.equal(sealableBytes(SEGMENT - 1, 0, SEGMENT, undefined), 0);
    assert.equal(sealableBytes(3 * SEGMENT + 5, 7 * SEGMENT, SEGMENT, undefined), 3 * SEGMENT);
  });

  it('keeps the last whole segment when it may be the final one (the length unknown, or ending there)', () => {
    assert.equal(sealableBytes(SEGMENT, 0, SEGMENT, undefined), 0);
    assert.equal(sealableBytes(4 * SEGMENT, SEGMENT, SEGMENT, undefined), 3 * SEGMENT);
    assert.equal(sealableBytes(4 * SEGMENT, SEGMENT, SEGMENT, 5 * SEGMENT), 3 * SEGMENT, 'the known length ends with it');
  });

  it('seals the last whole segment when the known length goes on past it', () => {
    assert.equal(sealableBytes(4 * SEGMENT, SEGMENT, SEGMENT, 5 * SEGMENT + 1), 4 * SEGMENT);
    assert.equal(sealableBytes(SEGMENT, 0, SEGMENT, 10 * SEGMENT), SEGMENT);
  });
});
