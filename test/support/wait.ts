import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';

/** Retries `check` until it passes or `ms` have passed (then its last error is thrown). */
export async function eventually<T>(check: () => Promise<T> | T, ms = 3000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > until) throw error;
      await sleep(40);
    }
  }
}

/** Waits until `check` is true (see eventually); fails with `message` when it never becomes so. */
export async function becomesTrue(check: () => Promise<boolean> | boolean, message?: string, ms = 3000): Promise<void> {
  await eventually(async () => assert.ok(await check(), message), ms);
}

/** Resolves after the current turn of the event loop, once pending I/O callbacks have run. */
export function tick(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Resolves once the clock has moved past the current millisecond, so the next timestamp differs. */
export async function nextMillisecond(): Promise<void> {
  const now = Date.now();
  while (Date.now() === now) await tick();
}
