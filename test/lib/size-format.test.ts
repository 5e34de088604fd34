// The human-readable size format of docs/api.md, used by the datahub size and storage status routes.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { formatSize } from '../../src/lib/size-format.js';

const KiB = 1024;
const GiB = KiB ** 3;
const PiB = KiB ** 5;

describe('formatSize', () => {
  it('formats the reference points of the size format', () => {
    assert.equal(formatSize(0), '0 B');
    assert.equal(formatSize(1023), '1023 B');
    assert.equal(formatSize(1024), '1 KB');
    assert.equal(formatSize(1536), '1.5 KB');
    assert.equal(formatSize(10 * GiB), '10 GB');
    assert.equal(formatSize(1.5 * PiB), '1.5 PB');
  });

  it('keeps at most two decimals and trims trailing zeros', () => {
    assert.equal(formatSize(512), '512 B');
    assert.equal(formatSize(1024 + 10), '1.01 KB'); // 1.0097…
    assert.equal(formatSize(1024 + 5), '1 KB'); // 1.0048… rounds to 1.00, shown as 1
    assert.equal(formatSize(Math.round(1.25 * KiB ** 2)), '1.25 MB');
    assert.equal(formatSize(Math.round(3.1 * GiB)), '3.1 GB');
    for (const bytes of [1, 999, 1025, 123_456_789, 9_876_543_210_123, 7 * PiB + 3]) {
      const [number, unit] = formatSize(bytes).split(' ');
      assert.match(number, /^\d+(\.\d{1,2})?$/, `${bytes} → ${number}`);
      assert.ok(!/\.\d*0$/.test(number), `${bytes} → ${number} has a trailing zero`);
      assert.ok(['B', 'KB', 'MB', 'GB', 'TB', 'PB'].includes(unit), unit);
    }
  });

  it('moves to the next unit instead of showing 1024 of one', () => {
    assert.equal(formatSize(KiB ** 2 - 1), '1 MB');
    assert.equal(formatSize(GiB - 1), '1 GB');
    assert.equal(formatSize(KiB ** 4), '1 TB');
  });

  it('stays in PB beyond the last unit', () => {
    assert.equal(formatSize(2048 * PiB), '2048 PB');
  });

  it('refuses what is not a byte count', () => {
    for (const bad of [-1, Number.NaN, Number.POSITIVE_INFINITY]) assert.throws(() => formatSize(bad), RangeError);
  });
});
