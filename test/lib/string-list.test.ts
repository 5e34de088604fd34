// StringList (src/lib/string-list.ts): strings kept as UTF-8 bytes in blocks, read back exactly.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { StringList } from '../../src/lib/string-list.js';

describe('StringList', () => {
  it('gives back every string pushed, across blocks, whatever its length and characters', () => {
    const list = new StringList();
    const strings: string[] = [];
    for (let i = 0; i < 10_000; i++) {
      // Empty, ASCII, accented, beyond the BMP, and now and then longer than a block's first bytes.
      const s = i % 997 === 0 ? 'x'.repeat(200_000 + i) : i % 3 === 0 ? '' : `n° ${i} 日本 😀`;
      strings.push(s);
      assert.equal(list.push(s), i, 'push returns the index');
    }
    assert.equal(list.length, strings.length);
    strings.forEach((s, i) => {
      assert.equal(list.at(i), s, `string ${i}`);
      assert.deepEqual(list.bytesAt(i), Buffer.from(s, 'utf8'), `bytes of ${i}`);
    });
  });

  it('keeps bytes pushed as a Buffer, and refuses an index it does not hold', () => {
    const list = new StringList();
    list.push(Buffer.from([0xe2, 0x82, 0xac]));
    assert.equal(list.at(0), '€');
    assert.throws(() => list.bytesAt(1), RangeError);
    assert.throws(() => list.bytesAt(-1), RangeError);
  });

  it('feeds a hash that tells lists apart, even when their strings join into the same bytes', () => {
    const digest = (strings: string[]) => {
      const list = new StringList();
      strings.forEach((s) => list.push(s));
      const hash = createHash('sha256');
      list.updateHash(hash);
      return hash.digest('hex');
    };
    const many = Array.from({ length: 9000 }, (_, i) => `entry ${i}`);
    assert.equal(digest(many), digest([...many]), 'the same strings, the same digest');
    assert.notEqual(digest(['ab', 'c']), digest(['a', 'bc']));
    assert.notEqual(digest(['a']), digest(['a', '']));
    assert.notEqual(digest([]), digest(['']));
    const renamed = [...many];
    renamed[8500] = 'entry 8500 renamed';
    assert.notEqual(digest(many), digest(renamed), 'a change in the last block');
    assert.notEqual(digest(many), digest(many.slice(0, 4096)), 'a list cut at a block boundary');
  });
});
