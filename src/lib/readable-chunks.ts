import { finished, type Readable } from 'node:stream';

/**
 * The chunks of a readable stream one by one, as they were pushed. `for await` over a Readable
 * reads it paused, and a paused `read()` returns everything buffered, concatenated into a new
 * buffer: a download's 1 MiB chunks came out as fresh 2 MiB copies whenever two were waiting.
 * Flowing, the stream hands out its chunks as they are; it is paused after each until the
 * consumer asks for the next. As with `for await`, a consumer that stops early destroys the
 * stream, and a stream that fails or closes before its end throws.
 */
export async function* chunksOf(stream: Readable): AsyncGenerator<Buffer> {
  const waiting: Buffer[] = [];
  let ended = false;
  let failure: Error | null = null;
  let wake: (() => void) | null = null;
  const onData = (chunk: Buffer) => {
    waiting.push(chunk);
    stream.pause();
    wake?.();
  };
  const stopWatching = finished(stream, (error) => {
    ended = true;
    failure = error ?? null;
    wake?.();
  });
  stream.on('data', onData);
  try {
    for (;;) {
      const chunk = waiting.shift();
      if (chunk) {
        yield chunk;
        continue;
      }
      if (ended) {
        if (failure) throw failure;
        return;
      }
      stream.resume();
      await new Promise<void>((resolve) => (wake = resolve));
      wake = null;
    }
  } finally {
    stream.off('data', onData);
    stopWatching();
    if (!ended) stream.destroy();
  }
}
