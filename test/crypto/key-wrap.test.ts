import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import { KeyUnwrapError, newKey, unwrapKey, wrapKey } from '../../src/crypto/key-wrap.js';

const B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** Replaces the character at `at` by another base64url character (so the decoded bytes change). */
function changeChar(s: string, at: number): string {
  const next = B64URL[(B64URL.indexOf(s[at]) + 1) % B64URL.length];
  return s.slice(0, at) + next + s.slice(at + 1);
}

describe('key wrapping', () => {
  test('newKey makes distinct 32-byte keys', () => {
    const a = newKey();
    const b = newKey();
    assert.equal(a.length, 32);
    assert.equal(b.length, 32);
    assert.ok(!a.equals(b));
  });

  test('round trip', () => {
    const kek = newKey();
    for (const keyId of ['file_01HZX', '', 'dossier-é-ü-🔑', 'x'.repeat(500)]) {
      const key = newKey();
      const wrapped = wrapKey(kek, key, keyId);
      assert.ok(unwrapKey(kek, wrapped, keyId).equals(key), `keyId ${JSON.stringify(keyId)}`);
    }
  });

  test('a wrapped key is 80 base64url characters (60 bytes: nonce, key, tag) and differs between wraps', () => {
    const kek = newKey();
    const key = newKey();
    const a = wrapKey(kek, key, 'k1');
    const b = wrapKey(kek, key, 'k1');
    for (const wrapped of [a, b]) {
      assert.match(wrapped, /^[A-Za-z0-9_-]{80}$/);
      assert.equal(Buffer.from(wrapped, 'base64url').length, 60);
      assert.ok(!Buffer.from(wrapped, 'base64url').includes(key), 'the key does not appear in clear');
    }
    assert.notEqual(a, b);
    assert.ok(!Buffer.from(a, 'base64url').subarray(0, 12).equals(Buffer.from(b, 'base64url').subarray(0, 12)), 'nonces differ');
    assert.ok(unwrapKey(kek, a, 'k1').equals(key));
    assert.ok(unwrapKey(kek, b, 'k1').equals(key));
  });

  test('a wrong kek throws KeyUnwrapError', () => {
    const kek = newKey();
    const wrapped = wrapKey(kek, newKey(), 'k1');
    assert.throws(() => unwrapKey(newKey(), wrapped, 'k1'), KeyUnwrapError);
    const nearly = Buffer.from(kek);
    nearly[31] ^= 1;
    assert.throws(() => unwrapKey(nearly, wrapped, 'k1'), KeyUnwrapError);
    // A kek of the wrong size (e.g. a malformed link key sent by a client) is a wrong key too.
    for (const size of [0, 16, 31, 33, 64]) {
      assert.throws(() => unwrapKey(randomBytes(size), wrapped, 'k1'), KeyUnwrapError, `kek of ${size} bytes`);
    }
  });

  test('a wrong keyId (associated data) throws KeyUnwrapError', () => {
    const kek = newKey();
    const wrapped = wrapKey(kek, newKey(), 'file_1');
    for (const other of ['file_2', 'file_1 ', 'File_1', '', 'file_']) {
      assert.throws(() => unwrapKey(kek, wrapped, other), KeyUnwrapError, JSON.stringify(other));
    }
    const empty = wrapKey(kek, newKey(), '');
    assert.throws(() => unwrapKey(kek, empty, 'a'), KeyUnwrapError);
  });

  test('a modified wrapped string throws KeyUnwrapError', () => {
    const kek = newKey();
    const wrapped = wrapKey(kek, newKey(), 'k1');
    // Every character: nonce (0..15), encrypted key (16..58), tag (59..79) all straddle characters.
    for (let at = 0; at < wrapped.length; at++) {
      assert.throws(() => unwrapKey(kek, changeChar(wrapped, at), 'k1'), KeyUnwrapError, `character ${at}`);
    }
    // Wrong lengths.
    for (const damaged of [
      '',
      wrapped.slice(0, 79),
      wrapped.slice(0, 78),
      wrapped.slice(1),
      `${wrapped}AAAA`,
      `${wrapped}A`,
      wrapped + wrapped,
    ]) {
      assert.throws(() => unwrapKey(kek, damaged, 'k1'), KeyUnwrapError, `length ${damaged.length}`);
    }
    // Strings that Node's lenient base64url decoder would read as the same 60 bytes.
    const lenient = [
      `${wrapped}A`,
      `${wrapped}=`,
      ` ${wrapped}`,
      `${wrapped}\n`,
      `${wrapped.slice(0, 40)}!${wrapped.slice(40)}`,
      `${wrapped.slice(0, 40)}.${wrapped.slice(41)}A`,
    ];
    const std = wrapped.replace(/-/g, '+').replace(/_/g, '/');
    if (std !== wrapped) lenient.push(std);
    for (const damaged of lenient) {
      assert.throws(() => unwrapKey(kek, damaged, 'k1'), KeyUnwrapError, JSON.stringify(damaged));
    }
    assert.throws(() => unwrapKey(kek, 'A'.repeat(80).replace(/A$/, '+'), 'k1'), KeyUnwrapError);
    // The wrap of another key under the same kek and id does not open as this one.
    const other = wrapKey(kek, newKey(), 'k1');
    const spliced = other.slice(0, 16) + wrapped.slice(16);
    assert.throws(() => unwrapKey(kek, spliced, 'k1'), KeyUnwrapError);
  });

  test('a wrap moved to another kek level does not open (chain of keys)', () => {
    const master = newKey();
    const bucket = newKey();
    const folder = newKey();
    const wrappedBucket = wrapKey(master, bucket, 'bucket_1');
    const wrappedFolder = wrapKey(bucket, folder, 'folder_1');
    const openedBucket = unwrapKey(master, wrappedBucket, 'bucket_1');
    assert.ok(unwrapKey(openedBucket, wrappedFolder, 'folder_1').equals(folder));
    assert.throws(() => unwrapKey(master, wrappedFolder, 'folder_1'), KeyUnwrapError);
  });

  test('only 32-byte keys can be wrapped, with a 32-byte kek', () => {
    const kek = newKey();
    for (const size of [0, 16, 31, 33]) {
      assert.throws(() => wrapKey(kek, randomBytes(size), 'k1'), `key of ${size} bytes`);
    }
    assert.throws(() => wrapKey(randomBytes(16), newKey(), 'k1'));
  });
});
