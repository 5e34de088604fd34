// Answers that come back out of order never show stale content, in Chromium against the real server:
// a listing asked before a rename but answered after the next one, and the details of a file no
// longer selected. Each stale answer is fetched from the
// server when it is asked (what was true then) and handed to the page only after the newer one.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { BROWSER_DIALECTS, openSignedIn, startWithOwner } from '../support/browser.js';

/**
 * Catches the next request of `page` whose URL matches `pattern`: its answer is fetched from the
 * server at once, and reaches the page only when `release()` is called.
 */
async function holdNextAnswer(page: Page, pattern: string | RegExp) {
  let caught!: () => void;
  const asked = new Promise<void>((resolve) => (caught = resolve));
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let delivered!: () => void;
  const handedOver = new Promise<void>((resolve) => (delivered = resolve));
  await page.route(
    pattern,
    async (route) => {
      const response = await route.fetch();
      caught();
      await released;
      await route.fulfill({ response });
      delivered();
    },
    { times: 1 },
  );
  return {
    /** Resolves once the request was made and its (now stale) answer fetched. */
    asked,
    /** Hands the held answer to the page and waits until the page has had the time to use it. */
    release: async () => {
      release();
      await handedOver;
      // Nothing on the page signals that a dropped answer was dropped: give its handlers time to run.
      await page.waitForTimeout(500);
    },
  };
}

for (const dialect of BROWSER_DIALECTS) {
  describe(`answers out of order in Chromium [${dialect}]`, () => {
    it('the latest listing and details win over older answers that arrive after them', { timeout: 120_000 }, async (t) => {
      const started = await startWithOwner(t, dialect, { 'report.txt': 'first', 'big.txt': Buffer.alloc(3 * 1024 * 1024, 'b') });
      if (!started) return;
      const { base, owner, root, page, violations } = started;
      const row = (name: string) => page.locator(`tr[data-name="${name}"]`);
      await openSignedIn(page, base, owner.token, `/files/${root}`);
      await row('report.txt').waitFor();

      // A listing asked after a new folder, answered after the one asked after a rename.
      const afterFolder = await holdNextAnswer(page, /\/api\/files\/list\//);
      await page.getByRole('button', { name: 'New folder' }).click();
      await page.getByLabel('Folder name').fill('Plans');
      await page.locator('dialog#prompt').getByRole('button', { name: 'Create' }).click();
      await afterFolder.asked;
      await page.getByRole('button', { name: 'Actions for report.txt' }).click();
      await page.getByRole('menuitem', { name: 'Rename', exact: true }).click();
      await page.getByLabel('New name').fill('summary.txt');
      await page.locator('dialog#prompt').getByRole('button', { name: 'Rename' }).click();
      await row('summary.txt').waitFor();
      await afterFolder.release();
      assert.equal(await row('summary.txt').count(), 1, 'the rename stays shown');
      assert.equal(await row('report.txt').count(), 0, 'the old name does not come back');
      assert.equal(await row('Plans').count(), 1);

      // The details of a file no longer selected.
      const summary = (await owner.api.get(`/api/files/list/${root}`)).body.data.data.find((f: any) => f.name === 'summary.txt');
      const summaryDetails = await holdNextAnswer(page, new RegExp(`/api/files/details/${summary.id}`));
      await row('summary.txt').locator('td.col-size').click();
      await summaryDetails.asked;
      await row('big.txt').locator('td.col-size').click();
      const details = page.locator('aside.details');
      await details.locator('h2', { hasText: 'big.txt' }).waitFor();
      await details.locator('dl').waitFor();
      const shown = await details.locator('dl').innerText();
      assert.match(shown, /3(\.0)? MB/);
      await summaryDetails.release();
      assert.equal(await details.locator('dl').innerText(), shown, 'the panel keeps the details of the file selected');
      assert.deepEqual(violations, []);
    });
  });
}
