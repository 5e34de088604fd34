import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { WHOLE_READ_LIMIT } from '../../../src/content/index.js';
import type { Downstream } from '../../../src/lib/zip/zip-archive.js';
import { EntryBuffers } from '../../../src/modules/archives/entry-buffers.js';

/** A downstream that has written out the entries before `writtenUpTo`, whole. */
function downstreamUpTo(state: { writtenUpTo: number }): Downstream {
  return { writableLength: 0, destroyed: false, isWrittenOut: (index) => index < state.writtenUpTo };
}

describe('entry buffers of an archive', () => {
  it('reuses a buffer only once the entry read into it is written out', () => {
    const state = { writtenUpTo: 0 };
    const downstream = downstreamUpTo(state);
    const buffers = new EntryBuffers();
    const first = buffers.take(0, 400_000, downstream);
    assert.ok(first.length >= 400_000);
    const second = buffers.take(1, 400_000, downstream);
    assert.notEqual(second.buffer, first.buffer, 'entry 0 still downstream: a new buffer');
    state.writtenUpTo = 1;
    assert.equal(buffers.take(2, 400_000, downstream).buffer, first.buffer, 'entry 0 written out: its buffer again');
    assert.notEqual(buffers.take(3, 400_000, downstream).buffer, second.buffer, 'entry 1 still downstream');
    state.writtenUpTo = 4;
    assert.equal(buffers.take(4, 400_000, downstream).buffer, second.buffer);
  });

  it('lends a buffer only to an entry it is large enough for', () => {
    const state = { writtenUpTo: 0 };
    const downstream = downstreamUpTo(state);
    const buffers = new EntryBuffers();
    const small = buffers.take(0, 400_000, downstream);
    state.writtenUpTo = 1;
    const large = buffers.take(1, WHOLE_READ_LIMIT, downstream);
    assert.notEqual(large.buffer, small.buffer, 'too small for it: a new one');
    assert.ok(large.length >= WHOLE_READ_LIMIT);
    state.writtenUpTo = 2;
    assert.equal(buffers.take(2, 400_000, downstream).buffer, large.buffer, 'a large one serves a smaller entry');
  });

  it('gives small entries slices of one buffer, one after the other, which comes back once the last of them is written out', () => {
    const state = { writtenUpTo: 0 };
    const downstream = downstreamUpTo(state);
    const buffers = new EntryBuffers();
    const first = buffers.take(0, 1000, downstream);
    const second = buffers.take(1, 2000, downstream);
    assert.equal(first.length, 1000, 'exactly its size');
    assert.equal(second.buffer, first.buffer, 'the same buffer');
    assert.equal(second.byteOffset, first.byteOffset + 1000, 'right after the first');
    let index = 2;
    let next = buffers.take(index, 100_000, downstream);
    while (next.buffer === first.buffer) next = buffers.take(++index, 100_000, downstream);
    assert.equal(next.byteOffset, 0, 'a full buffer: the next entry starts another');
    state.writtenUpTo = index - 1;
    assert.notEqual(buffers.take(index + 1, 200_000, downstream).buffer, first.buffer, 'its last entry not written out yet');
    state.writtenUpTo = index;
    assert.equal(buffers.take(index + 2, 200_000, downstream).buffer, first.buffer, 'all written out: used again');
  });
});
