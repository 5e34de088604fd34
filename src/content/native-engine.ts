import type { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { assertDataKey, type SegmentAead } from './aead.js';
import { bufferPool } from './buffer-pool.js';
import { WHOLE_READ_LIMIT, wholeReadStaging, type CryptoEngine } from './engine.js';
import { CipherFormatError } from './format.js';
import { FileDecryptStream } from './file-decrypt-stream.js';
import { FileEncryptStream, wholeMemory } from './file-encrypt-stream.js';
import { addonSha256, type NativeAddon } from './native-addon.js';

/**
 * The fast engine, over the addon: blob files are sealed and written, read and opened, by
 * threadpool jobs (file-encrypt-stream.ts, file-decrypt-stream.ts), as a bare file server's reads
 * and writes run there; the event loop only queues them. Codecs seal with one AES-GCM context per
 * stream, which keeps the expanded key and writes into the caller's buffer.
 */
export function nativeEngine(addon: NativeAddon): CryptoEngine {
  // One per whole read at once: a zip archive's entries opened ahead (zip-archive.ts's LOOKAHEAD).
  const wholeStaging = bufferPool(wholeReadStaging(WHOLE_READ_LIMIT), 4);
  return {
    name: 'native',
    aead: (key) => nativeAead(addon, key),
    durableFiles: {
      writeFileDurably: (file, chunks, renameTo) => addon.writeFileDurably(file, chunks, renameTo),
      syncDirectory: (dir) => addon.syncDirectory(dir),
    },

    async sealIntoFile(source, dataKey, file, options) {
      const encrypt = new FileEncryptStream(addon, dataKey, file, {
        ownsInput: options.sourceOwnsChunks,
        checkInput: options.checkInput,
        segmentLog2: options.segmentLog2,
        noncePrefix: options.noncePrefix,
      });
      // Settled once the stream has closed: no job of it can write into the file after that.
      await pipeline(source, encrypt).finally(() => closed(encrypt));
      return { size: encrypt.plaintextBytes, checksum: encrypt.checksum!, crc32: encrypt.crc32! };
    },

    async appendIntoFile(source, dataKey, file, start, options) {
      const encrypt = new FileEncryptStream(addon, dataKey, file, {
        ownsInput: options.sourceOwnsChunks,
        continueFrom: { start, position: file.position },
      });
      await pipeline(source, encrypt).finally(() => closed(encrypt));
      return encrypt.appended!;
    },

    openFile: (file, dataKey, header, range) => new FileDecryptStream(addon, file, dataKey, header, range),

    openWhole(stored, size, dataKey, out) {
      assertDataKey(dataKey);
      try {
        return out.subarray(0, addon.openWhole(stored, size, dataKey, out));
      } catch (error) {
        throw cipherFormatOf(error);
      }
    },

    release(buffer) {
      // A view of part of a shared ArrayBuffer (Buffer's pool) must not take the rest with it.
      const memory = wholeMemory(buffer);
      if (memory) addon.detachBuffers([memory]);
    },

    async readWholeFile(path, size, dataKey, out) {
      assertDataKey(dataKey);
      if (size > WHOLE_READ_LIMIT) throw new RangeError(`whole reads are of at most ${WHOLE_READ_LIMIT} bytes`);
      const staging = wholeStaging.take();
      try {
        return out.subarray(0, await addon.readWhole(path, size, dataKey, staging, out));
      } catch (error) {
        throw cipherFormatOf(error);
      } finally {
        wholeStaging.give([staging]);
      }
    },

    // The addon hashes on the threadpool: the event loop goes on reading the request meanwhile.
    sha256: (midstate) => addonSha256(addon, midstate),
  };
}

function nativeAead(addon: NativeAddon, key: Buffer): SegmentAead {
  assertDataKey(key);
  const context = addon.context(key);
  return {
    seal: (nonce, aad, plaintext, out, at) => addon.seal(context, nonce, aad, plaintext, out, at),
    open: (nonce, aad, sealed, out, at) => addon.open(context, nonce, aad, sealed, out, at),
  };
}

/** Resolves once a stream has closed, whether it failed or not. */
function closed(stream: Writable | Readable): Promise<void> {
  return stream.closed ? Promise.resolve() : new Promise((resolve) => stream.once('close', () => resolve()));
}

/** The addon's format failures (code ERR_CIPHER_FORMAT) as the CipherFormatError the content core knows. */
function cipherFormatOf(error: unknown): unknown {
  return (error as { code?: string }).code === 'ERR_CIPHER_FORMAT' ? new CipherFormatError((error as Error).message) : error;
}
