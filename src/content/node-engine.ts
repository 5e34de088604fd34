import { open, type FileHandle } from 'node:fs/promises';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { BlobFile } from '../blobs/blob-store.js';
import { nodeFsDurableFiles } from '../blobs/fs/durable-files.js';
import { FileAppender } from '../lib/write-all.js';
import { nodeAead } from './aead.js';
import { CodecStream } from './codec-stream.js';
import { RangeOpener, Sealer, openWhole } from './codecs.js';
import { CipherFormatError, DEFAULT_SEGMENT_LOG2, newHeader } from './format.js';
import { appendSegments } from './segment-appender.js';
import { JsSha256 } from './sha256-midstate.js';
import { wholeReadStaging, type CryptoEngine } from './engine.js';

const READ_HIGH_WATER_MARK = 1024 * 1024;

/** The portable engine: node:crypto and node:fs on the event loop, no addon. */
export const nodeEngine: CryptoEngine = {
  name: 'node',
  aead: nodeAead,
  durableFiles: nodeFsDurableFiles,

  async sealIntoFile(source, dataKey, file, options) {
    const sealer = new Sealer(nodeAead(dataKey), newHeader(options.segmentLog2 ?? DEFAULT_SEGMENT_LOG2, options.noncePrefix), {
      hash: true,
    });
    const seal = new CodecStream(sealer, { checkInput: options.checkInput });
    const writer = fileWriter(file);
    // The writer closes only once its last write is over (see fileWriter).
    await pipeline(source, seal, writer).finally(() => closed(writer));
    return { size: seal.inputBytes, checksum: sealer.checksum!, crc32: sealer.crc32! };
  },

  appendIntoFile(source, dataKey, file, start) {
    const appender = new FileAppender(file.fd, file.position);
    const write = async (chunks: Buffer[]) => file.wrote(await appender.append(chunks));
    // A failed write stops the appending at once; the one still queued settles before this does.
    return appendSegments(source, nodeAead(dataKey), start, write).finally(() => appender.settled());
  },

  sha256: (midstate) => new JsSha256(midstate),

  openFile(file: FileHandle, dataKey, header, range) {
    const stored = file.createReadStream({ start: range.storedStart, end: range.storedEnd, highWaterMark: READ_HIGH_WATER_MARK });
    const opened = new CodecStream(new RangeOpener(nodeAead(dataKey), header, range));
    pipeline(stored, opened).catch(() => {
      // pipeline has destroyed `opened` with the error already; its reader sees it there.
    });
    return opened;
  },

  openWhole: (stored, size, dataKey, out) => openWhole(nodeAead(dataKey), stored, size, out),
  // Node 20 cannot free an ArrayBuffer's memory before the collector does.
  release: () => {},

  async readWholeFile(path, size, dataKey, out) {
    const file = await open(path, 'r');
    try {
      // No more than the longest a stream of `size` bytes may be (the smallest segments) is read.
      const stored = (await file.stat()).size;
      if (stored > wholeReadStaging(size)) throw new CipherFormatError('stored stream is longer than expected');
      const { buffer, bytesRead } = await file.read({ buffer: Buffer.alloc(stored), position: 0 });
      return openWhole(nodeAead(dataKey), buffer.subarray(0, bytesRead), size, out);
    } finally {
      await file.close();
    }
  },
};

/**
 * Writes a stream's chunks into a blob file one after another from offset 0, telling `file` of
 * each. Destroyed mid-write, it closes only once that write is over.
 */
function fileWriter(file: BlobFile): Writable {
  const appender = new FileAppender(file.fd);
  return new Writable({
    writev(chunks, callback) {
      appender
        .append(chunks.map((c) => c.chunk as Buffer))
        .then((bytes) => file.wrote(bytes))
        .then(() => callback(), callback);
    },
    destroy(error, callback) {
      appender.settled().then(() => callback(error));
    },
  });
}

/** Resolves once a stream has closed, whether it failed or not. */
function closed(stream: Writable): Promise<void> {
  return stream.closed ? Promise.resolve() : new Promise((resolve) => stream.once('close', () => resolve()));
}
