import type { TestContext } from 'node:test';
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

/**
 * Counts the jobs the native addon's `method` queues and how many are still running, by wrapping
 * the method for the duration of the test.
 */
export function countJobs(t: TestContext, addon: NativeAddon, method: 'readOpen' | 'sealWrite'): { queued: number; running: number } {
  const original = addon[method] as (...args: any[]) => Promise<unknown>;
  const counts = { queued: 0, running: 0 };
  (addon as any)[method] = (...args: any[]) => {
    counts.queued++;
    counts.running++;
    return original(...args).finally(() => counts.running--);
  };
  t.after(() => {
    (addon as any)[method] = original;
  });
  return counts;
}
