import assert from 'node:assert/strict';
import { test } from 'node:test';

// The files robustness suite again with the native AES-256-GCM turned off, as on a machine where
// `npm ci` could not build the addon: uploads then go through the cipher threads (EncryptStream
// writing the blob file) and downloads through the cipher streams, instead of the threadpool jobs
// of file-encrypt-stream.ts and file-decrypt-stream.ts. Set before any import: the choice is made
// at load, by this process and by the cipher workers it starts (they inherit its environment).
process.env.COFFRE_AES_GCM = 'node';
const { aeadImplementation } = await import('../../src/crypto/aes-gcm.js');
const { fileEncryptAvailable } = await import('../../src/crypto/file-encrypt-stream.js');
const { fileDecryptAvailable } = await import('../../src/crypto/file-decrypt-stream.js');

test('this file runs uploads and downloads through the cipher threads, on node:crypto', () => {
  assert.equal(aeadImplementation, 'node:crypto');
  assert.equal(fileEncryptAvailable, false);
  assert.equal(fileDecryptAvailable, false);
});

await import('./files-robustness.test.js');
