import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Readable } from 'node:stream';
import { chunksOf } from '../../src/lib/readable-chunks.js';

/** A byte stream whose chunks are all pushed before anyone reads: they wait in its buffer together. */
function buffered(chunks: Buffer[], failure?: Error): Readable {
  const stream = new Readable({ read() {}, highWaterMark: 1 });
  for (const chunk of chunks) stream.push(chunk);
  if (failure) setImmediate(() => stream.destroy(failure));
  else stream.push(null);
  return stream;
}

describe('chunksOf', () => {
  it('hands out the very buffers pushed, one at a time, where for await would concatenate them', async () => {
    const chunks = [Buffer.alloc(1024, 1), Buffer.alloc(1024, 2), Buffer.alloc(512, 3)];
    const got: Buffer[] = [];
    for await (const chunk of chunksOf(buffered(chunks))) got.push(chunk);
    assert.equal(got.length, 3);
    got.forEach((chunk, i) => assert.equal(chunk, chunks[i], `chunk ${i} is the buffer pushed`));

    // The behaviour chunksOf exists for: a paused read takes everything buffered as one new buffer.
    const viaForAwait: Buffer[] = [];
    for await (const chunk of buffered(chunks)) viaForAwait.push(chunk as Buffer);
    assert.equal(viaForAwait.length, 1);
    assert.notEqual(viaForAwait[0], chunks[0]);
  });

  it('reads no further than the consumer: the stream stays paused between chunks', async () => {
    let reads = 0;
    let next = 0;
    const stream = new Readable({
      highWaterMark: 1,
      read() {
        reads++;
        this.push(next < 100 ? Buffer.alloc(16, next++) : null);
      },
    });
    const iterator = chunksOf(stream);
    await iterator.next();
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.ok(reads < 5, `${reads} reads for one chunk taken`);
    await iterator.return(undefined);
  });

  it('throws the failure of a stream after the chunks it delivered', async () => {
    const got: Buffer[] = [];
    await assert.rejects(
      (async () => {
        for await (const chunk of chunksOf(buffered([Buffer.from('a'), Buffer.from('b')], new Error('disk gone')))) got.push(chunk);
      })(),
      /disk gone/,
    );
    assert.deepEqual(got.map(String), ['a', 'b']);
  });

  it('throws when the stream closes before its end', async () => {
    const stream = new Readable({ read() {} });
    stream.push(Buffer.from('partial'));
    setImmediate(() => stream.destroy());
    await assert.rejects(
      (async () => {
        for await (const chunk of chunksOf(stream)) void chunk;
      })(),
      { code: 'ERR_STREAM_PREMATURE_CLOSE' },
    );
  });

  it('destroys the stream when the consumer stops early', async () => {
    const stream = buffered([Buffer.from('a'), Buffer.from('b'), Buffer.from('c')]);
    for await (const chunk of chunksOf(stream)) {
      assert.equal(String(chunk), 'a');
      break;
    }
    assert.equal(stream.destroyed, true);
  });
});
