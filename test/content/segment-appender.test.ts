import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sealableAtEnd } from '../../src/content/segment-appender.js';

const SEGMENT = 64 * 1024;

describe('sealableAtEnd', () => {
  it('seals the whole segments and keeps a partial one for the next request', () => {
    assert.equal(sealableAtEnd(0, 0, SEGMENT, undefined), 0);
    assert.equal(sealableAtEnd(SEGMENT - 1, 0, SEGMENT, undefined), 0);
    assert.equal(sealableAtEnd(3 * SEGMENT + 5, 7 * SEGMENT, SEGMENT, undefined), 3 * SEGMENT);
  });

  it('keeps the last whole segment when it may be the final one (the length unknown, or ending there)', () => {
    assert.equal(sealableAtEnd(SEGMENT, 0, SEGMENT, undefined), 0);
    assert.equal(sealableAtEnd(4 * SEGMENT, SEGMENT, SEGMENT, undefined), 3 * SEGMENT);
    assert.equal(sealableAtEnd(4 * SEGMENT, SEGMENT, SEGMENT, 5 * SEGMENT), 3 * SEGMENT, 'the known length ends with it');
  });

  it('seals the last whole segment when the known length goes on past it', () => {
    assert.equal(sealableAtEnd(4 * SEGMENT, SEGMENT, SEGMENT, 5 * SEGMENT + 1), 4 * SEGMENT);
    assert.equal(sealableAtEnd(SEGMENT, 0, SEGMENT, 10 * SEGMENT), SEGMENT);
  });
});
