// ZipEntryList (src/lib/zip/zip-entry-list.ts): entries kept in blocks read back as pushed, and an
// archive laid out from them is the one laid out from the same entries as an array.
import assert from 'node:assert/strict';
import { buffer } from 'node:stream/consumers';
import { describe, it } from 'node:test';
import { layoutZip, zipRange, type OpenEntry } from '../../../src/lib/zip/zip-archive.js';
import { ZipEntryList } from '../../../src/lib/zip/zip-entry-list.js';
import type { ZipEntry } from '../../../src/lib/zip/zip-records.js';

function entries(count: number): ZipEntry[] {
  return Array.from({ length: count }, (_, i) => ({
    name: Buffer.from(i % 10 === 0 ? `dossier ${i}/` : `dossier ${i - (i % 10)}/fichier ${i}.bin`, 'utf8'),
    size: i % 10 === 0 ? 0 : i === 7 ? 5 * 2 ** 32 : i % 50,
    crc32: i % 10 === 0 ? 0 : (0xfffffff0 + i) >>> 0,
    modifiedAt: new Date(Date.UTC(2026, 0, 1) + i * 1000),
  }));
}

describe('ZipEntryList', () => {
  it('gives back each entry as pushed, past its blocks, with sizes past 4 GiB and CRC-32s past 2^31', () => {
    const expected = entries(9000);
    const list = new ZipEntryList();
    expected.forEach((entry, i) => assert.equal(list.push({ ...entry, name: i % 2 ? entry.name : entry.name.toString('utf8') }), i));
    assert.equal(list.length, expected.length);
    expected.forEach((entry, i) => assert.deepEqual(list.at(i), entry, `entry ${i}`));
    assert.equal(list.at(expected.length), undefined);
    list.setCrc32(5000, -1);
    assert.equal(list.at(5000)!.crc32, 0xffffffff, 'a CRC-32 is unsigned');
  });

  it('reads its entries in another order without copying them', () => {
    const list = new ZipEntryList();
    const expected = entries(20);
    expected.forEach((entry) => list.push(entry));
    const order = Uint32Array.from({ length: 20 }, (_, i) => 19 - i);
    const reversed = list.inOrder(order);
    assert.equal(reversed.length, 20);
    assert.deepEqual(reversed.at(0), expected[19]);
    assert.deepEqual(reversed.at(19), expected[0]);
    assert.equal(reversed.at(20), undefined);
  });

  it('lays out and streams the same archive as the same entries in an array', async () => {
    const expected = entries(200).map((entry) => ({ ...entry, size: Math.min(entry.size, 40) }));
    const list = new ZipEntryList();
    expected.forEach((entry) => list.push(entry));
    const open: OpenEntry = async (index, start, end) => [Buffer.alloc(end - start, index)];
    const fromArray = layoutZip(expected);
    const fromList = layoutZip(list);
    assert.equal(fromList.length, fromArray.length);
    assert.deepEqual(
      await buffer(zipRange(fromList, 0, fromList.length, open)),
      await buffer(zipRange(fromArray, 0, fromArray.length, open)),
    );
  });
});
