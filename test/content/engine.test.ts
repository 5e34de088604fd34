import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { closeSync, fstatSync, openSync } from 'node:fs';
import { open, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { describe, it } from 'node:test';
import { crc32 } from 'node:zlib';
import { chooseEngine } from '../../src/content/choose-engine.js';
import { WHOLE_READ_LIMIT, type CryptoEngine } from '../../src/content/engine.js';
import { CipherFormatError, HEADER_BYTES, parseHeader, sealedSize, segmentRange } from '../../src/content/format.js';
import { requireNativeAddon } from '../support/native.js';
import { openSealed } from '../support/sealed.js';
import { sha256Tag, tempDir } from '../support/disk.js';

// The contract every crypto engine keeps (src/content/engine.ts), run against both: the content
// store calls them alike and never asks which one it has.
requireNativeAddon();
const ENGINES: CryptoEngine[] = [chooseEngine('native'), chooseEngine('node')];
const MIB = 1024 * 1024;

function* chunksOf(data: Buffer, size: number): Generator<Buffer> {
  for (let at = 0; at < data.length; at += size) yield Buffer.from(data.subarray(at, at + size));
}

const noLimit = () => {};

for (const engine of ENGINES) {
  describe(`crypto engine contract: ${engine.name}`, () => {
    it('sealIntoFile writes the stored format from offset 0, tells each write in order, and returns the size, SHA-256 and CRC-32', async (t) => {
      const dir = tempDir(t, 'engine');
      for (const size of [0, 1, 65536, 65537, 3 * MIB + 5]) {
        const file = path.join(dir, `blob-${size}`);
        const fd = openSync(file, 'w');
        const plaintext = randomBytes(size);
        let told = 0;
        const sizes: number[] = [];
        try {
          const summary = await engine.sealIntoFile(
            Readable.from(chunksOf(plaintext, 65536)),
            randomBytes(32),
            { fd, wrote: (bytes) => ((told += bytes), sizes.push(fstatSync(fd).size)) },
            { sourceOwnsChunks: true, checkInput: noLimit },
          );
          assert.deepEqual(summary, { size, checksum: sha256Tag(plaintext), crc32: crc32(plaintext) });
        } finally {
          closeSync(fd);
        }
        assert.equal(told, sealedSize(size), `${size} bytes: every stored byte told`);
        assert.ok(
          sizes.every((at, i) => i === 0 || at >= sizes[i - 1]),
          'writes are told in order',
        );
        assert.equal((await readFile(file)).length, sealedSize(size));
      }
    });

    it('what sealIntoFile wrote opens with the format, and openFile opens it, whole and by ranges', async (t) => {
      const dir = tempDir(t, 'engine');
      const key = randomBytes(32);
      const plaintext = randomBytes(2 * MIB + 12345);
      const file = path.join(dir, 'blob');
      const fd = openSync(file, 'w');
      await engine.sealIntoFile(
        Readable.from(chunksOf(plaintext, 10_000)),
        key,
        { fd, wrote: noLimit },
        { sourceOwnsChunks: false, checkInput: noLimit },
      );
      closeSync(fd);
      const stored = await readFile(file);
      assert.ok(openSealed(key, stored).equals(plaintext));
      const header = parseHeader(stored.subarray(0, HEADER_BYTES));
      for (const [start, end] of [
        [0, plaintext.length - 1],
        [0, 0],
        [65535, 65536],
        [MIB - 3, MIB + 70_000],
        [plaintext.length - 1, plaintext.length - 1],
      ]) {
        const opened = engine.openFile(await open(file, 'r'), key, header, segmentRange(plaintext.length, start, end, header.segmentSize));
        assert.ok(Buffer.concat(await opened.toArray()).equals(plaintext.subarray(start, end + 1)), `range ${start}-${end}`);
      }
    });

    it('sealIntoFile fails with the limit check error, having destroyed the source, and settles only once nothing writes', async (t) => {
      const dir = tempDir(t, 'engine');
      const file = path.join(dir, 'blob');
      const fd = openSync(file, 'w');
      const source = Readable.from(chunksOf(randomBytes(8 * MIB), 65536));
      const refuse = (bytes: number) => {
        if (bytes > 3 * MIB) throw new Error('over the limit');
      };
      await assert.rejects(
        engine.sealIntoFile(source, randomBytes(32), { fd, wrote: noLimit }, { sourceOwnsChunks: true, checkInput: refuse }),
        /over the limit/,
      );
      assert.ok(source.destroyed, 'the source is destroyed');
      const sizeThen = fstatSync(fd).size;
      await new Promise((resolve) => setTimeout(resolve, 50));
      assert.equal(fstatSync(fd).size, sizeThen, 'no write after the seal settled');
      assert.ok(sizeThen <= sealedSize(3 * MIB), 'nothing past the limit was written');
      closeSync(fd);
    });

    it('sealIntoFile fails with a write error (EBADF on a read-only descriptor)', async (t) => {
      const dir = tempDir(t, 'engine');
      const file = path.join(dir, 'blob');
      await writeFile(file, '');
      const fd = openSync(file, 'r');
      t.after(() => closeSync(fd));
      await assert.rejects(
        engine.sealIntoFile(
          Readable.from(chunksOf(randomBytes(2 * MIB), 65536)),
          randomBytes(32),
          { fd, wrote: noLimit },
          { sourceOwnsChunks: false, checkInput: noLimit },
        ),
        (error: NodeJS.ErrnoException) => error.code === 'EBADF',
      );
    });

    it('openFile fails a damaged segment with a CipherFormatError and emits nothing of it', async (t) => {
      const dir = tempDir(t, 'engine');
      const key = randomBytes(32);
      const plaintext = randomBytes(3 * 65536);
      const file = path.join(dir, 'blob');
      const fd = openSync(file, 'w');
      await engine.sealIntoFile(Readable.from([plaintext]), key, { fd, wrote: noLimit }, { sourceOwnsChunks: false, checkInput: noLimit });
      closeSync(fd);
      const stored = await readFile(file);
      stored[HEADER_BYTES + 65536 + 16 + 10] ^= 1; // inside segment 1
      await writeFile(file, stored);
      const header = parseHeader(stored);
      const opened = engine.openFile(
        await open(file, 'r'),
        key,
        header,
        segmentRange(plaintext.length, 65536, 2 * 65536 - 1, header.segmentSize),
      );
      const received: Buffer[] = [];
      await assert.rejects(
        (async () => {
          for await (const chunk of opened) received.push(chunk as Buffer);
        })(),
        CipherFormatError,
      );
      assert.equal(Buffer.concat(received).length, 0);
    });

    it('readWholeFile and openWhole open a small stored stream whole into the given buffer, whatever its segment size', async (t) => {
      const dir = tempDir(t, 'engine');
      const key = randomBytes(32);
      const cases = [
        { size: 0, log2: 16 },
        { size: 1, log2: 16 },
        { size: 65536, log2: 16 },
        { size: 300_001, log2: 16 },
        { size: WHOLE_READ_LIMIT, log2: 16 },
        // The smallest segments: the most stored bytes a whole read may take.
        { size: WHOLE_READ_LIMIT, log2: 10 },
        { size: 5000, log2: 24 },
      ];
      for (const { size, log2 } of cases) {
        const plaintext = randomBytes(size);
        const file = await sealedFile(engine, dir, `blob-${size}-${log2}`, key, plaintext, log2);
        const out = Buffer.alloc(WHOLE_READ_LIMIT + 7, 0xee);
        const opened = await engine.readWholeFile(file, size, key, out);
        assert.equal(opened.buffer, out.buffer, `${size} bytes in 2^${log2}: read into the given buffer`);
        assert.ok(opened.equals(plaintext), `${size} bytes in 2^${log2}`);
        const inMemory = engine.openWhole(await readFile(file), size, key, Buffer.alloc(size + 3));
        assert.ok(inMemory.equals(plaintext), `${size} bytes in 2^${log2}, opened in memory`);
      }
    });

    it('readWholeFile and openWhole refuse a damaged segment, a wrong length, another header or key; a missing file is ENOENT', async (t) => {
      const dir = tempDir(t, 'engine');
      const key = randomBytes(32);
      const plaintext = randomBytes(3 * 65536 + 10);
      const file = await sealedFile(engine, dir, 'blob', key, plaintext);
      const stored = await readFile(file);
      const damaged = async (name: string, bytes: Buffer, size = plaintext.length, withKey = key) => {
        const out = Buffer.alloc(plaintext.length + 100);
        await writeFile(path.join(dir, name), bytes);
        await assert.rejects(engine.readWholeFile(path.join(dir, name), size, withKey, out), CipherFormatError, name);
        assert.ok(!out.includes(plaintext.subarray(0, 64)), `${name}: nothing of the plaintext is left in the buffer`);
        assert.throws(() => engine.openWhole(bytes, size, withKey, out), CipherFormatError, `${name}, in memory`);
        assert.ok(!out.includes(plaintext.subarray(0, 64)), `${name}, in memory: nothing of the plaintext is left`);
      };
      const flipped = Buffer.from(stored);
      flipped[HEADER_BYTES + 65536 + 16 + 10] ^= 1; // inside segment 1
      await damaged('flipped', flipped);
      await damaged('cut', stored.subarray(0, stored.length - 1));
      await damaged('lengthened', Buffer.concat([stored, Buffer.alloc(1)]));
      await damaged('smaller size', stored, plaintext.length - 1);
      await damaged('other magic', Buffer.concat([Buffer.from('XXXX'), stored.subarray(4)]));
      await damaged('empty', Buffer.alloc(0));
      await damaged('other key', stored, plaintext.length, randomBytes(32));
      await assert.rejects(engine.readWholeFile(path.join(dir, 'missing'), 10, key, Buffer.alloc(10)), { code: 'ENOENT' });
    });

    it('release frees a buffer that views its whole memory (native) or leaves it to the collector (node); a shared one stays whole', () => {
      // Memory of its own, as a database driver's copy of a blob is (Buffer.from would take a pool slice).
      const owned = Buffer.allocUnsafeSlow(1024 + 7).fill(7);
      const ownedCopy = Buffer.from(owned);
      const pooled = Buffer.from('a small string lives in the shared pool');
      const slice = Buffer.from(randomBytes(4096)).subarray(10, 20);
      const sliceCopy = Buffer.from(slice);
      for (const buffer of [pooled, slice]) engine.release(buffer);
      assert.equal(pooled.toString(), 'a small string lives in the shared pool');
      assert.ok(slice.equals(sliceCopy));
      engine.release(owned);
      if (engine.name === 'native') assert.equal(owned.length, 0, 'its memory is freed: it reads as empty');
      else assert.ok(owned.equals(ownedCopy), 'the node engine cannot free it: it stays as it was');
    });
  });
}

/** `plaintext` sealed by the engine into a new file of `dir`: its path. */
async function sealedFile(
  engine: CryptoEngine,
  dir: string,
  name: string,
  key: Buffer,
  plaintext: Buffer,
  segmentLog2?: number,
): Promise<string> {
  const file = path.join(dir, name);
  const fd = openSync(file, 'w');
  try {
    await engine.sealIntoFile(
      Readable.from([plaintext]),
      key,
      { fd, wrote: noLimit },
      { sourceOwnsChunks: false, checkInput: noLimit, segmentLog2 },
    );
  } finally {
    closeSync(fd);
  }
  return file;
}
