import { parentPort } from 'node:worker_threads';
import { createCodec, type SegmentCodec } from './segment-codecs.js';
import type { WorkerReply, WorkerRequest } from './cipher-pool.js';
import { GarbageMeter } from '../lib/gc.js';

/**
 * A cipher thread: keeps one codec per stream and answers every request in arrival order, so a
 * stream's output comes back in order. Output buffers are transferred, never copied.
 */
// Input received in buffers of its own (copied or transferred), and every cipher.update (about as
// many bytes as the output), leave buffers that V8 would only collect after ~64 MB more of them:
// collecting every 4 MiB of them keeps the worker's memory flat (see gc.ts). Input read in place
// from a stream's shared ring leaves none: a thread that only hashes it has nothing to collect.
const garbage = new GarbageMeter(4 * 1024 * 1024);
const codecs = new Map<number, SegmentCodec>();
const port = parentPort!;

function reply(message: WorkerReply, out: Buffer[] = []): void {
  const transfer = [...new Set(out.filter((b) => b.byteLength > 0).map((b) => b.buffer as ArrayBuffer))];
  port.postMessage({ ...message, out }, transfer);
}

port.on('message', (request: WorkerRequest) => {
  const { id } = request;
  try {
    switch (request.op) {
      case 'open':
        codecs.set(id, createCodec(request.spec));
        return;
      case 'write': {
        const codec = codecs.get(id);
        if (!codec) return; // dropped, or failed earlier: the stream is already gone
        const chunks = request.chunks.map((c) => Buffer.from(c.buffer, c.byteOffset, c.byteLength));
        const out = codec.write(chunks);
        garbage.add(chunks.reduce((sum, c) => sum + (c.buffer instanceof SharedArrayBuffer ? 0 : c.length), 0) + out.reduce((sum, b) => sum + b.length, 0));
        return reply({ id, done: false }, out);
      }
      case 'end': {
        const codec = codecs.get(id);
        if (!codec) return;
        codecs.delete(id);
        const { out, checksum } = codec.end();
        return reply({ id, done: true, checksum }, out);
      }
      case 'drop':
        codecs.delete(id);
        return;
    }
  } catch (error) {
    codecs.delete(id);
    const { name, message } = error as Error;
    reply({ id, done: true, error: { name, message } });
  }
});
