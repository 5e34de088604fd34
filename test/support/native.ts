import { loadNativeAddon, type NativeAddon } from '../../src/content/native-addon.js';

/**
 * The native addon, which `npm ci` builds. Its tests do not skip when it is missing: a build
 * that failed must fail the run, not hide the native engine's tests.
 */
export function requireNativeAddon(): NativeAddon {
  const addon = loadNativeAddon();
  if (!addon) throw new Error('the native addon is not built: run npm ci (scripts/build-native.mjs)');
  return addon;
}
