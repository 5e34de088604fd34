import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { buffer } from 'node:stream/consumers';
import { describe, it } from 'node:test';
import { crc32 } from 'node:zlib';
import { entryName, layoutZip, zipRange } from '../../src/lib/zip/zip-archive.js';
import { requireTool } from './dav-clients.js';
import { tempDir } from './disk.js';
import { zipdetailsCommand } from './zip-tools.js';

// The archive of 65,536 entries is read by zipdetails with its duplicate and overlap bookkeeping
// indexed (perl/ZipdetailsIndexedSeen.pm). These archives are small enough for the tool as shipped:
// both must print the same, byte for byte, and exit the same way, complaints included.

/** An archive of these contents (null: a folder), stored as the server stores them. */
async function zipOf(contents: (Buffer | null)[]): Promise<Buffer> {
  const entries = contents.map((content, i) => ({
    name: entryName(['d', content ? `${i}.bin` : `${i}`], content === null),
    size: content?.length ?? 0,
    crc32: content ? crc32(content) : 0,
    modifiedAt: new Date('2026-03-04T05:06:08Z'),
  }));
  const layout = layoutZip(entries);
  return buffer(zipRange(layout, 0, layout.length, async (i, start, end) => [contents[i]!.subarray(start, end)]));
}

/** The offset of each central header's "relative offset of local header" field. */
function localOffsetFields(zip: Buffer): number[] {
  const end = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  const fields: number[] = [];
  for (let at = zip.readUInt32LE(end + 16); zip.readUInt32LE(at) === 0x02014b50;) {
    fields.push(at + 42);
    at += 46 + zip.readUInt16LE(at + 28) + zip.readUInt16LE(at + 30) + zip.readUInt16LE(at + 32);
  }
  return fields;
}

function compare(zipdetails: string, file: string): string {
  const env = { ...process.env, LANG: 'C.UTF-8', LC_ALL: 'C.UTF-8' };
  const runs = [false, true].map((indexed) => {
    const [command, ...args] = zipdetailsCommand(zipdetails, indexed);
    return spawnSync(command!, [...args, file], { env, maxBuffer: 256 * 1024 * 1024, encoding: 'utf8' });
  });
  assert.equal(runs[1]!.stderr, runs[0]!.stderr);
  assert.equal(runs[1]!.status, runs[0]!.status);
  assert.ok(runs[0]!.stdout.length > 0);
  assert.equal(runs[1]!.stdout, runs[0]!.stdout);
  return runs[0]!.stdout;
}

describe('zipdetails with its overlap bookkeeping indexed', () => {
  it('prints what the shipped tool prints for a valid archive of folders, empty and sized files', async (t) => {
    const zipdetails = requireTool(t, 'zipdetails');
    if (!zipdetails) return;
    const contents = Array.from({ length: 1500 }, (_, i) =>
      i % 50 === 0 ? null : Buffer.alloc(i % 7 === 0 ? 0 : (i * 37) % 3000, String(i % 10)),
    );
    const file = path.join(tempDir(t, 'coffre-zipdetails-'), 'valid.zip');
    fs.writeFileSync(file, await zipOf(contents));
    const output = compare(zipdetails, file);
    assert.doesNotMatch(output, /overlaps with|matches with/);
    assert.equal(output.match(/CENTRAL HEADER #/g)?.length, 1500);
  });

  it('prints the same duplicates and overlaps as the shipped tool, in the same order', async (t) => {
    const zipdetails = requireTool(t, 'zipdetails');
    if (!zipdetails) return;
    const contents = Array.from({ length: 60 }, (_, i) => (i === 30 ? null : Buffer.alloc(100 + (i % 5) * 400, String(i % 5))));
    const zip = await zipOf(contents);
    const fields = localOffsetFields(zip);
    const offsetOf = (i: number) => zip.readUInt32LE(fields[i]!);
    // Same content (size and CRC) at the same place: duplicates; elsewhere inside another entry's
    // bytes, at its start with other content, or across its end: overlaps; a folder at a file.
    for (const [entry, target, shift] of [
      [10, 5, 0],
      [15, 5, 0],
      [12, 3, 0],
      [20, 4, 250],
      [21, 19, 900],
      [30, 8, 0],
      [45, 40, 0],
      [59, 2, 0],
    ] as const) {
      zip.writeUInt32LE(offsetOf(target) + shift, fields[entry]!);
    }
    const file = path.join(tempDir(t, 'coffre-zipdetails-'), 'overlapping.zip');
    fs.writeFileSync(file, zip);
    const output = compare(zipdetails, file);
    assert.ok((output.match(/matches with/g)?.length ?? 0) >= 3, output);
    assert.ok((output.match(/overlaps with/g)?.length ?? 0) >= 3, output);
  });
});
