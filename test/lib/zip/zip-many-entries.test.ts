// An archive of more than 65,535 entries (issue 33): its zip64 end record, read by unzip -t, 7z t
// and zipdetails. zipdetails 2.104 compares every central header with every earlier one (its
// overlap check), over an hour on this many: it runs with that check indexed, which prints the same
// (test/support/zipdetails-indexed.test.ts).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { buffer } from 'node:stream/consumers';
import { describe, it } from 'node:test';
import { crc32 } from 'node:zlib';
import { entryName, layoutZip, zipRange } from '../../../src/lib/zip/zip-archive.js';
import { tempDir } from '../../support/disk.js';
import { checkZipWithTools } from '../../support/zip-tools.js';

/** The fewest entries that need the zip64 end record. */
const ENTRIES = 65_536;

describe('an archive past 65,535 entries', () => {
  it('carries a zip64 end record that unzip, 7z and zipdetails accept', { timeout: 20 * 60_000 }, async (t) => {
    const contents = Array.from({ length: ENTRIES }, (_, i) => Buffer.from(String(i % 10)));
    const entries = contents.map((content, i) => ({
      name: entryName(['many', `${i}.txt`], false),
      size: content.length,
      crc32: crc32(content),
      modifiedAt: new Date('2026-03-04T05:06:08Z'),
    }));
    const layout = layoutZip(entries);
    const bytes = await buffer(zipRange(layout, 0, layout.length, async (i, start, end) => [contents[i].subarray(start, end)]));
    assert.equal(bytes.readUInt32LE(bytes.length - 22), 0x06054b50);
    assert.equal(bytes.readUInt16LE(bytes.length - 12), 0xffff, 'the classic end record counts 0xFFFF');
    assert.equal(bytes.readUInt32LE(bytes.length - 98), 0x06064b50, 'the zip64 end record precedes its locator');
    assert.equal(bytes.readBigUInt64LE(bytes.length - 98 + 32), BigInt(ENTRIES));
    const file = path.join(tempDir(t, 'coffre-zip-many-'), 'many.zip');
    fs.writeFileSync(file, bytes);
    await checkZipWithTools(t, file, { indexedOverlaps: true });
  });
});
