import type { CryptoEngineChoice } from '../config.js';
import type { CryptoEngine } from './engine.js';
import { loadNativeAddon } from './native-addon.js';
import { nativeEngine } from './native-engine.js';
import { nodeEngine } from './node-engine.js';

/**
 * The engine a process uses, chosen once when the app is built (COFFRE_CRYPTO_ENGINE). `native`
 * without a built addon is an error rather than a silent fallback: whoever asked for it expects it.
 */
export function chooseEngine(choice: CryptoEngineChoice): CryptoEngine {
  if (choice === 'node') return nodeEngine;
  const addon = loadNativeAddon();
  if (addon) return nativeEngine(addon);
  if (choice === 'native')
    throw new Error('COFFRE_CRYPTO_ENGINE=native, but the native addon is not built (npm ci builds it; see scripts/build-native.mjs)');
  return nodeEngine;
}
