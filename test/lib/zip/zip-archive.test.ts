// The zip archive writer (src/lib/zip/): archives whose every byte range is produced on its own,
// checked by extractors no one here wrote (unzip -t, 7z t, zipdetails), and extracted back.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { describe, it } from 'node:test';
import { crc32 } from 'node:zlib';
import { entryName, layoutZip, zipRange, type Downstream, type OpenEntry } from '../../../src/lib/zip/zip-archive.js';
import { MAX_32, centralHeader, localHeader, localHeaderLength, type ZipEntry } from '../../../src/lib/zip/zip-records.js';
import { tempDir } from '../../support/disk.js';
import { requireTool } from '../../support/dav-clients.js';
import { checkZipWithTools } from '../../support/zip-tools.js';
import { prng } from '../../support/prng.js';

const MODIFIED = new Date('2026-03-04T05:06:08Z');

interface Item {
  segments: string[];
  /** Absent for a folder. */
  content?: Buffer;
}

function archiveOf(items: Item[]): { entries: ZipEntry[]; open: OpenEntry } {
  const entries = items.map(({ segments, content }) => ({
    name: entryName(segments, !content),
    size: content?.length ?? 0,
    crc32: content ? crc32(content) : 0,
    modifiedAt: MODIFIED,
  }));
  const open: OpenEntry = async (index, start, end) => [items[index].content!.subarray(start, end)];
  return { entries, open };
}

async function wholeArchive(items: Item[]): Promise<Buffer> {
  const { entries, open } = archiveOf(items);
  const layout = layoutZip(entries);
  const bytes = await buffer(zipRange(layout, 0, layout.length, open));
  assert.equal(bytes.length, layout.length, 'the archive is as long as laid out');
  return bytes;
}

describe('zip archives', () => {
  it('stores folders, empty and UTF-8-named files that unzip, 7z and zipdetails accept and extract as sent', async (t) => {
    const dir = tempDir(t, 'coffre-zip-');
    const items: Item[] = [
      { segments: ['Reports'] },
      { segments: ['Reports', 'Q1 résumé.pdf'], content: randomBytes(100_000) },
      { segments: ['Reports', 'empty.txt'], content: Buffer.alloc(0) },
      { segments: ['Reports', 'Empty folder'] },
      { segments: ['日本語', 'ファイル.bin'], content: randomBytes(3) },
      { segments: ['top.txt'], content: Buffer.from('hello\n') },
    ];
    const file = path.join(dir, 'archive.zip');
    fs.writeFileSync(file, await wholeArchive(items));
    await checkZipWithTools(t, file);
    const unzip = requireTool(t, 'unzip');
    if (!unzip) return;
    const out = path.join(dir, 'out');
    execFileSync(unzip, ['-q', file, '-d', out], { env: { ...process.env, LANG: 'C.UTF-8', LC_ALL: 'C.UTF-8' } });
    for (const { segments, content } of items) {
      const extracted = path.join(out, ...segments);
      if (!content) assert.ok(fs.statSync(extracted).isDirectory(), `${segments.join('/')} is a folder`);
      else assert.ok(fs.readFileSync(extracted).equals(content), `${segments.join('/')} holds its bytes`);
    }
    assert.equal(fs.statSync(path.join(out, 'top.txt')).mtime.getTime(), MODIFIED.getTime(), 'the modification time is kept');
  });

  it('lets the event loop run while many entries whose contents are at hand stream', async () => {
    const items: Item[] = Array.from({ length: 10_000 }, (_, i) => ({ segments: [`f${i}.bin`], content: Buffer.from([i & 0xff]) }));
    const { entries, open } = archiveOf(items);
    const layout = layoutZip(entries);
    // Read with nothing but promises in between, such an archive would hold the loop until its end.
    let turns = 0;
    const tick = () => {
      turns++;
      immediate = setImmediate(tick);
    };
    let immediate = setImmediate(tick);
    const started = performance.now();
    const bytes = await buffer(zipRange(layout, 0, layout.length, open));
    const took = performance.now() - started;
    clearImmediate(immediate);
    assert.equal(bytes.length, layout.length);
    assert.ok(took >= 40, `streamed long enough to tell (${took.toFixed(0)} ms)`);
    assert.ok(turns >= 2, `the loop turned ${turns} times in ${took.toFixed(0)} ms of streaming`);
  });

  it('contents opened ahead of their turn are destroyed when the stream stops before them', async () => {
    const items: Item[] = Array.from({ length: 12 }, (_, i) => ({ segments: [`f${i}.bin`], content: randomBytes(10_000) }));
    const { entries } = archiveOf(items);
    const layout = layoutZip(entries);
    const opened = new Set<number>();
    const taken = new Set<number>();
    const destroyed = new Set<number>();
    const open: OpenEntry = async (index, start, end) => {
      opened.add(index);
      const chunks = [items[index].content!.subarray(start, end)];
      // Taken once the archive starts on it: it may run ahead of its reader into its own buffer.
      return { [Symbol.iterator]: () => (taken.add(index), chunks[Symbol.iterator]()), destroy: () => destroyed.add(index) };
    };
    // The reader goes away inside entry 2: entries after it may have been opened ahead, never read.
    const stream = zipRange(layout, 0, layout.length, open);
    let received = 0;
    for await (const chunk of stream) {
      received += chunk.length;
      if (received > layout.offsets[2] + 100) break;
    }
    await new Promise((resolve) => setImmediate(resolve));
    const unread = [...opened].filter((i) => i > 2 && !taken.has(i));
    assert.ok(unread.length > 0, 'later entries were opened ahead and never taken');
    assert.deepEqual(unread.sort(), [...destroyed].sort(), 'every one opened ahead and left unread is destroyed, and only those');
  });

  it("tells an entry's content written out only once the destination has let go of its last byte", async () => {
    const items: Item[] = Array.from({ length: 6 }, (_, i) => ({ segments: [`f${i}.bin`], content: randomBytes(10_000) }));
    const { entries } = archiveOf(items);
    const layout = layoutZip(entries);
    const contentEnd = (i: number) => layout.offsets[i] + localHeaderLength(entries[i]) + entries[i].size;
    let downstream: Downstream | undefined;
    const open: OpenEntry = async (index, start, end, given) => {
      downstream = given;
      return [items[index].content!.subarray(start, end)];
    };
    // A destination that lets go of each write only when the test says so.
    const held: (() => void)[] = [];
    let letGo = 0;
    const destination = new Writable({
      highWaterMark: 1,
      write(chunk: Buffer, _encoding, callback) {
        held.push(() => {
          letGo += chunk.length;
          callback();
        });
      },
    });
    zipRange(layout, 0, layout.length, open).pipe(destination);
    const told = new Set<number>();
    for (let turn = 0; turn < 1000 && !destination.writableFinished; turn++) {
      await new Promise((resolve) => setImmediate(resolve));
      entries.forEach((entry, i) => {
        if (!downstream?.isWrittenOut(i, entry.size)) return;
        assert.ok(letGo >= contentEnd(i), `entry ${i} told written out with ${letGo} bytes let go, its content ending at ${contentEnd(i)}`);
        told.add(i);
      });
      held.shift()?.();
    }
    assert.ok(destination.writableFinished, 'the archive was written whole');
    assert.deepEqual([...told].sort(), [0, 1, 2, 3, 4, 5], 'each entry was told written out once it was');
    // Read without a destination, nothing is ever known written out.
    const unpiped = await buffer(zipRange(layout, 0, layout.length, open));
    assert.equal(unpiped.length, layout.length);
    assert.equal(downstream!.isWrittenOut(0, entries[0].size), false);
  });

  it('any byte range is the same bytes as in the whole archive, wherever it starts and ends', async () => {
    const random = prng(0x21b);
    const items: Item[] = Array.from({ length: 40 }, (_, i) =>
      i % 7 === 0
        ? { segments: [`folder ${i}`] }
        : { segments: [`f${i}`, `file ${i}.bin`], content: randomBytes(Math.floor(random() * 5000)) },
    );
    const whole = await wholeArchive(items);
    const { entries, open } = archiveOf(items);
    const layout = layoutZip(entries);
    const edges = [
      0,
      1,
      29,
      30,
      layout.directoryOffset - 1,
      layout.directoryOffset,
      layout.directoryOffset + 47,
      whole.length - 22,
      whole.length - 1,
    ];
    for (let i = 0; i < 60; i++) edges.push(Math.floor(random() * whole.length));
    for (const start of edges)
      for (const length of [0, 1, 2, 100, 7000, whole.length]) {
        const end = Math.min(whole.length, start + length);
        const part = await buffer(zipRange(layout, start, end, open));
        assert.ok(part.equals(whole.subarray(start, end)), `bytes ${start}–${end}`);
      }
    const resumed = Buffer.concat([
      await buffer(zipRange(layout, 0, 12_345, open)),
      await buffer(zipRange(layout, 12_345, whole.length, open)),
    ]);
    assert.ok(resumed.equals(whole), 'a download resumed at 12,345 is byte-identical to the whole');
    assert.throws(() => zipRange(layout, 10, whole.length + 1, open), RangeError);
  });

  it('an entry past 4 GiB carries its sizes, and one placed past 4 GiB its offset, in zip64 extra fields', () => {
    const big: ZipEntry = { name: entryName(['big.bin'], false), size: 5 * 2 ** 30, crc32: 0x12345678, modifiedAt: MODIFIED };
    const local = localHeader(big);
    assert.equal(local.readUInt16LE(4), 45, 'version needed 4.5');
    assert.equal(local.readUInt32LE(18), MAX_32);
    assert.equal(local.readUInt32LE(22), MAX_32);
    const extra = local.subarray(30 + big.name.length);
    const zip64At = extra.readUInt16LE(0) === 0x0001 ? 0 : 4 + extra.readUInt16LE(2);
    assert.equal(extra.readUInt16LE(zip64At), 0x0001);
    assert.equal(extra.readBigUInt64LE(zip64At + 4), BigInt(big.size));
    const small: ZipEntry = { ...big, size: 10 };
    const central = centralHeader(small, 6 * 2 ** 30);
    assert.equal(central.readUInt32LE(42), MAX_32, 'the offset is in the zip64 field');
    assert.equal(central.readUInt32LE(24), 10, 'a small size stays in place');
    const centralExtra = central.subarray(46 + small.name.length);
    assert.equal(centralExtra.readUInt16LE(9), 0x0001);
    assert.equal(centralExtra.readUInt16LE(11), 8);
    assert.equal(centralExtra.readBigUInt64LE(13), BigInt(6 * 2 ** 30));
    const layout = layoutZip([big, small]);
    assert.equal(layout.offsets[1], local.length + big.size);
    assert.ok(layout.directoryOffset > MAX_32);
  });

  it('content of another length than laid out fails the stream (never an archive that looks whole)', async () => {
    const items: Item[] = [{ segments: ['a.bin'], content: randomBytes(1000) }];
    const { entries } = archiveOf(items);
    const layout = layoutZip(entries);
    const short: OpenEntry = async () => [randomBytes(999)];
    const long: OpenEntry = async () => [randomBytes(1001)];
    await assert.rejects(buffer(zipRange(layout, 0, layout.length, short)), /fewer bytes/);
    await assert.rejects(buffer(zipRange(layout, 0, layout.length, long)), /more bytes/);
  });

  it('names are relative paths that never climb out: ., .., slashes and backslashes are replaced', () => {
    assert.equal(entryName(['..', 'a/b', 'c\\d', '.', ''], false).toString(), '__/a_b/c_d/_/_');
    assert.equal(entryName(['Folder', 'Sub'], true).toString(), 'Folder/Sub/');
    assert.equal(entryName(['...', '.hidden'], false).toString(), '.../.hidden');
  });
});
