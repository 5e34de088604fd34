import type { Readable } from 'node:stream';

/**
 * Reads a stream whole if it ends within `limit` bytes. Otherwise it puts back what it read
 * (`unshift`) and gives the stream itself, which then yields every byte from the start: a body of
 * unknown length (a multipart part, a chunked request) is found small or large without holding
 * more than `limit` bytes. Rejects if the stream fails or closes before its end (client gone).
 */
export function readWholeUpTo(stream: Readable, limit: number): Promise<Buffer | Readable> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    const settle = (outcome: () => void) => {
      stream.off('readable', onReadable);
      stream.off('end', onEnd);
      stream.off('error', onError);
      stream.off('close', onClose);
      outcome();
    };
    function onReadable() {
      for (let chunk: Buffer | null; (chunk = stream.read()) !== null;) {
        chunks.push(chunk);
        bytes += chunk.length;
        if (bytes > limit) {
          // Paused (a 'readable' listener pauses the stream); whoever consumes it next resumes it.
          settle(() => {
            for (let i = chunks.length - 1; i >= 0; i--) stream.unshift(chunks[i]);
            resolve(stream);
          });
          return;
        }
      }
    }
    function onEnd() {
      settle(() => resolve(Buffer.concat(chunks, bytes)));
    }
    function onError(error: Error) {
      settle(() => reject(error));
    }
    function onClose() {
      settle(() => reject(Object.assign(new Error('the body was cut before its end'), { code: 'ERR_STREAM_PREMATURE_CLOSE' })));
    }
    stream.on('readable', onReadable);
    stream.on('end', onEnd);
    stream.on('error', onError);
    stream.on('close', onClose);
  });
}
