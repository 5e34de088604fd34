import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isId, newId } from '../../src/lib/ids.js';

test('ids are well formed and sort in the order they were made, also within one millisecond', () => {
  const ids = Array.from({ length: 20_000 }, (_, i) => newId(i % 2 === 0 ? 'ver' : 'fil').slice(4));
  for (let i = 1; i < ids.length; i++) assert.ok(ids[i - 1] < ids[i], `id ${i} (${ids[i]}) sorts after id ${i - 1} (${ids[i - 1]})`);
  assert.ok(isId('ver', `ver_${ids[0]}`));
  assert.equal(new Set(ids).size, ids.length);
  // 20,000 ids take a few milliseconds: many shared one, and sorted all the same.
  assert.ok(new Set(ids.map((id) => id.slice(0, 10))).size < ids.length / 10);
});

test('the time part is the creation time in milliseconds', () => {
  const before = Date.now();
  const id = newId('fil');
  const alphabet = '0123456789abcdefghjkmnpqrstvwxyz';
  const time = [...id.slice(4, 14)].reduce((t, c) => t * 32 + alphabet.indexOf(c), 0);
  assert.ok(time >= before && time <= Date.now() + 1, `${time} is about ${before}`);
});
