import assert from 'node:assert/strict';
import { test } from 'node:test';

// The whole stream-cipher suite again, with the segment codecs on node:crypto (the fallback when
// the native AES-256-GCM is not built). Set before any import: the choice is made at load, by
// this process and by the cipher workers it starts (they inherit its environment).
process.env.COFFRE_AES_GCM = 'node';
const { aeadImplementation } = await import('../../src/crypto/aes-gcm.js');

test('this file runs the codecs on node:crypto', () => {
  assert.equal(aeadImplementation, 'node:crypto');
});

await import('./stream-cipher.test.js');
