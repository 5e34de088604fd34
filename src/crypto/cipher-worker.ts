import { parentPort, type MessagePort } from 'node:worker_threads';
import { createCodec, type SegmentCodec } from './segment-codecs.js';
import type { WorkerReply, WorkerRequest } from './cipher-pool.js';
import { GarbageMeter } from '../lib/gc.js';
import { FileAppender } from '../lib/write-all.js';

/**
 * A cipher thread: keeps one codec per stream and answers every request in arrival order, so a
 * stream's output comes back in order. Output buffers are transferred, never copied; or, for a
 * stream opened with a file, written into that file from here (see `OutputFile` in
 * stream-cipher.ts) and only their byte count is answered.
 */
// Input received in buffers of its own (copied or transferred), and every cipher.update (about as
// many bytes as the output), leave buffers that V8 would only collect after ~64 MB more of them:
// collecting every 4 MiB of them keeps the worker's memory flat (see gc.ts). Input read in place
// from a stream's shared ring leaves none: a thread that only hashes it has nothing to collect.
const garbage = new GarbageMeter(4 * 1024 * 1024);
const port = parentPort!;

/**
 * The size of a file stream's output buffers: a batch's segments (a batch is about 1 MiB, see
 * stream-cipher.ts, plus up to one 64 KiB input chunk) with their tags, so one buffer fits any.
 * Up to SPARE_OUTPUTS written ones wait for reuse (two batches are in flight at most).
 */
const OUTPUT_BYTES = 18 * (64 * 1024 + 16);
const SPARE_OUTPUTS = 3;

function reuse(spares: Buffer[], bytes: number): Buffer {
  const index = spares.findIndex((buffer) => buffer.length >= bytes);
  const buffer = index >= 0 ? spares.splice(index, 1)[0] : Buffer.allocUnsafeSlow(Math.max(bytes, OUTPUT_BYTES));
  return buffer.subarray(0, bytes);
}

interface Stream {
  codec: SegmentCodec;
  /**
   * The file the output goes into (each write answered once done), and output buffers already
   * written, which the codec fills again: no new memory per batch, nothing for V8 to collect.
   */
  file?: { appender: FileAppender; spares: Buffer[] };
  /** `end` was taken: the reply after its last write is the stream's last. */
  ending: boolean;
  /** Failed or dropped: its last reply goes once its writes have stopped. */
  finished: boolean;
  /** Where its input comes from when another thread forwards it; closed with the stream. */
  from?: MessagePort;
  /** Where its input goes on to once processed. */
  forward?: { port: MessagePort; id: number };
}
/** Streams until their last reply has gone. */
const streams = new Map<number, Stream>();

function reply(message: WorkerReply, out: Buffer[] = []): void {
  const transfer = [...new Set(out.filter((b) => b.byteLength > 0).map((b) => b.buffer as ArrayBuffer))];
  port.postMessage({ ...message, out }, transfer);
}

/**
 * Hands a stream's output on: transferred in the reply, or queued for its file and answered once
 * written (the file's writes run on the threadpool while this thread seals the next batch).
 */
function emit(id: number, stream: Stream, out: Buffer[], message: { done: boolean; checksum?: string }): void {
  const { file } = stream;
  if (!file) {
    if (message.done) forget(id, stream);
    return reply({ id, ...message }, out);
  }
  file.appender.append(out).then(
    (bytes) => {
      for (const buffer of out) if (buffer.buffer.byteLength >= OUTPUT_BYTES && file.spares.length < SPARE_OUTPUTS) file.spares.push(Buffer.from(buffer.buffer));
      if (stream.finished) return;
      if (message.done) forget(id, stream);
      reply({ id, ...message, written: bytes });
    },
    (error: Error) => finish(id, stream, error),
  );
}

/**
 * Ends a stream early (a failure, or a drop) with a last reply sent once none of its writes can
 * still touch its file: the caller closes the file on that reply, and a descriptor number is
 * reused as soon as it is closed.
 */
function finish(id: number, stream: Stream, error?: Error): void {
  if (stream.finished) return;
  stream.finished = true;
  // Nothing more goes on to the next thread (whose stream is dropped with this one).
  stream.forward?.port.close();
  (stream.file?.appender.settled() ?? Promise.resolve()).then(() => {
    forget(id, stream);
    reply({ id, done: true, ...(error && { error: { name: error.name, message: error.message, code: (error as NodeJS.ErrnoException).code } }) });
  });
}

/** The stream's last reply has gone: nothing more arrives for it (closing one end closes both). */
function forget(id: number, stream: Stream): void {
  streams.delete(id);
  stream.from?.close();
}

/** Moves a processed batch on to the stream's next thread (buffers in shared memory are passed as views). */
function forward(to: NonNullable<Stream['forward']>, request: WorkerRequest & { op: 'write' | 'end' }): void {
  const owned = request.op === 'write' ? request.chunks.map((c) => c.buffer).filter((b): b is ArrayBuffer => !(b instanceof SharedArrayBuffer)) : [];
  to.port.postMessage({ ...request, id: to.id }, [...new Set(owned)]);
}

port.on('message', handle);

function handle(request: WorkerRequest): void {
  const { id } = request;
  const stream = streams.get(id);
  if (request.op === 'open') {
    const file = request.fd === undefined ? undefined : { appender: new FileAppender(request.fd), spares: [] as Buffer[] };
    const codec = file ? createCodec(request.spec, (bytes) => reuse(file.spares, bytes)) : createCodec(request.spec);
    streams.set(id, { codec, file, ending: false, finished: false, from: request.from, forward: request.forward });
    request.from?.on('message', handle);
    return;
  }
  if (!stream) {
    // Its last reply has gone already (or it never was). A drop is always answered.
    if (request.op === 'drop') reply({ id, done: true });
    return;
  }
  // After an end, the end's reply is the last one (a drop waits for it); after a failure, the failure's.
  if (stream.ending || stream.finished) return;
  try {
    switch (request.op) {
      case 'write': {
        const chunks = request.chunks.map((c) => Buffer.from(c.buffer, c.byteOffset, c.byteLength));
        const out = stream.codec.write(chunks);
        // Output written into a file is reused (see `reuse`), not left for V8; forwarded input lives on elsewhere.
        const outputGarbage = stream.file ? 0 : out.reduce((sum, b) => sum + b.length, 0);
        const inputGarbage = stream.forward ? 0 : chunks.reduce((sum, c) => sum + (c.buffer instanceof SharedArrayBuffer ? 0 : c.length), 0);
        garbage.add(inputGarbage + outputGarbage);
        // A forwarding thread answers only at the end: the next thread's answer covers the batch.
        if (stream.forward) return forward(stream.forward, request);
        return emit(id, stream, out, { done: false });
      }
      case 'end': {
        const { out, checksum } = stream.codec.end();
        stream.ending = true;
        if (stream.forward) forward(stream.forward, request);
        return emit(id, stream, out, { done: true, checksum });
      }
      case 'drop':
        return finish(id, stream);
    }
  } catch (error) {
    finish(id, stream, error as Error);
  }
}
