import { Writable } from 'node:stream';

/** A log stream for `build(t, dialect, { logStream })` that keeps every line written to it. */
export function captureLog(): { stream: Writable; text: () => string } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, callback) {
      lines.push(String(chunk));
      callback();
    },
  });
  return { stream, text: () => lines.join('') };
}
