import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DIALECTS, build, useCryptoEngine } from '../helper.js';

/**
 * Makes the apps of the calling test file run the portable engine (node:crypto, no addon), as on a
 * machine where `npm ci` could not build the addon or with COFFRE_CRYPTO_ENGINE=node, and checks
 * that they do. The file then imports the suites it runs again: uploads, downloads, links and
 * small files go through the codecs on the event loop instead of the threadpool jobs.
 */
export function runOnTheNodeEngine(): void {
  useCryptoEngine('node');
  test('the apps of this file run the node engine', async (t) => {
    const { app } = await build(t, DIALECTS[0]);
    assert.equal(app.cryptoEngine, 'node');
    const native = await build(t, DIALECTS[0], { config: { cryptoEngine: 'native' } });
    assert.equal(native.app.cryptoEngine, 'native');
  });
}
