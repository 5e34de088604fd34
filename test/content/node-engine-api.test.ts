import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DIALECTS, build, useCryptoEngine } from '../helper.js';

// The content suites again on the portable engine (node:crypto, no addon), as on a machine where
// `npm ci` could not build the addon or with COFFRE_CRYPTO_ENGINE=node: uploads, downloads,
// links and small files go through the codecs on the event loop instead of the threadpool jobs.
useCryptoEngine('node');

test('the apps of this file run the node engine', async (t) => {
  const { app } = await build(t, DIALECTS[0]);
  assert.equal(app.cryptoEngine, 'node');
  const native = await build(t, DIALECTS[0], { config: { cryptoEngine: 'native' } });
  assert.equal(native.app.cryptoEngine, 'native');
});

await import('../modules/files/files-api.test.js');
await import('../modules/files/files-robustness.test.js');
await import('../modules/files/inline-blobs.test.js');
await import('../modules/files/no-plaintext-at-rest.test.js');
await import('../modules/links/links.test.js');
await import('../web/sealed-decrypt.test.js');
