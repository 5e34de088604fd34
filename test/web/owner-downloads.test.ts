// Owner downloads show their progress (issue 34, item 6), in Chromium against the real server: the
// network is slowed down (DevTools network emulation) so that a download is seen under way, with
// the bytes received of the whole, cancelled from the panel, then saved whole.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { assertNoAxeViolations } from '../support/axe.js';
import { BROWSER_DIALECTS, openSignedIn, screenshots, startWithOwner } from '../support/browser.js';

const SIZE = 6 * 1024 * 1024;

/** Limits what the page downloads to `bytesPerSecond` (-1: no limit). */
async function throttle(page: Page, bytesPerSecond: number) {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Network.enable');
  await cdp.send('Network.emulateNetworkConditions', {
    offline: false,
    latency: 0,
    downloadThroughput: bytesPerSecond,
    uploadThroughput: -1,
  });
}

/** Starts the download of `name` from its row menu. */
async function download(page: Page, name: string) {
  await page.getByRole('button', { name: `Actions for ${name}` }).click();
  await page.getByRole('menuitem', { name: 'Download', exact: true }).click();
}

for (const dialect of BROWSER_DIALECTS) {
  describe(`owner downloads in Chromium [${dialect}]`, () => {
    it('show the bytes received of the whole, can be cancelled, and end saved', { timeout: 180_000 }, async (t) => {
      const data = randomBytes(SIZE);
      const started = await startWithOwner(t, dialect, { 'big.bin': data });
      if (!started) return;
      const { base, owner, root, page, violations } = started;
      const screenshot = screenshots(`owner-downloads-${dialect}`);
      await openSignedIn(page, base, owner.token, `/files/${root}`);
      await page.locator('tr[data-name="big.bin"]').waitFor();
      const row = page.locator('.downloads li[data-name="big.bin"]');
      const progress = row.locator('progress');

      // ---- under way: part of the whole, then cancelled ----
      await throttle(page, 512 * 1024);
      await download(page, 'big.bin');
      await page.waitForFunction(() => Number((globalThis as any).document.querySelector('.downloads progress')?.value) > 0);
      assert.equal(await progress.getAttribute('max'), String(SIZE));
      const value = Number(await progress.evaluate((element: any) => element.value));
      assert.ok(value > 0 && value < SIZE, `${value} of ${SIZE} bytes, under way`);
      assert.match(await row.locator('.download-state').innerText(), /^[\d.]+ (B|KB|MB) of 6 MB$/);
      await screenshot(page, 'under-way');
      await assertNoAxeViolations(page, 'the downloads panel');
      let saved = 0;
      page.on('download', () => saved++);
      await page.getByRole('button', { name: 'Cancel the download of big.bin' }).click();
      await row.getByText('Cancelled').waitFor();
      assert.equal(await page.locator('.notices .notice.error').count(), 0, 'a cancel is no error');

      // ---- at full speed: saved whole ----
      await throttle(page, -1);
      const [file] = await Promise.all([page.waitForEvent('download'), download(page, 'big.bin')]);
      assert.ok(fs.readFileSync((await file.path())!).equals(data), 'the saved file is the upload');
      await page.locator('.downloads li[data-name="big.bin"].done').getByText('Saved').waitFor();
      assert.equal(saved, 1, 'the cancelled download saved nothing');
      assert.deepEqual(violations, []);
    });
  });
}
