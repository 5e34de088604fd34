// The header's search box (issue 35, item 3), in Chromium against the real server: results as
// you type, accents and case aside, with each result's folder path and who shared it; the keyboard
// moves through them and opens one (a file: its folder, with the file selected); a phone's width
// keeps the results on screen; axe finds nothing wrong with the open list.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { signUp } from '../helper.js';
import { assertNoAxeViolations } from '../support/axe.js';
import { BROWSER_DIALECTS, openSignedIn, screenshots, startWithOwner } from '../support/browser.js';
import { putFile, rootFolderId } from '../support/files.js';
import { assertStatus, mkdir } from '../support/folders.js';
import { photo, putTyped } from '../support/thumbnails.js';
import { becomesTrue } from '../support/wait.js';

// Browser globals used inside page.evaluate (this file is type-checked with Node's library only).
declare const document: any;
declare const window: any;

/** The texts of the search results shown, once there are `count`. */
async function resultsOf(page: Page, count: number): Promise<string[]> {
  const options = page.getByRole('listbox', { name: 'Search results' }).getByRole('option');
  await page.waitForFunction((n: number) => document.querySelectorAll('#search-results [role="option"]').length === n, count);
  return (await options.allInnerTexts()).map((text) => text.replace(/\s+/g, ' ').trim());
}

for (const dialect of BROWSER_DIALECTS) {
  describe(`search box in Chromium [${dialect}]`, () => {
    it('finds names as you type, across shares, and opens a result with the keyboard', { timeout: 120_000 }, async (t) => {
      const started = await startWithOwner(t, dialect, { 'notes.txt': 'notes' });
      if (!started) return;
      const { app, base, owner, root, page, violations } = started;
      const recipes = await mkdir(owner, 'Recipes', root);
      await putFile(app, owner, recipes, 'Café menu.txt', 'soup');
      const colleague = await signUp(app, 'Colette Colleague');
      const plans = await mkdir(colleague, 'Team plans', await rootFolderId(colleague));
      await putFile(app, colleague, plans, 'CAFETERIA budget.pdf', '%PDF');
      const grant = { users: [{ userId: owner.id, canView: true, canDownload: true, canEdit: false }] };
      assertStatus(await colleague.api.post(`/api/folders/share-users/${plans}`, grant), 201);
      const screenshot = screenshots(`search-${dialect}`);
      await openSignedIn(page, base, owner.token, `/files/${root}`);
      await page.locator('tr[data-name="notes.txt"]').waitFor();
      const box = page.getByRole('combobox', { name: 'Search files and folders by name' });

      // ---- too short, then results as you type ----
      await box.fill('ca');
      await page.getByText('Type at least 3 characters.').waitFor();
      await box.fill('caf');
      const found = await resultsOf(page, 2);
      assert.ok(
        found.some((text) => /^Café menu\.txt \/Recipes · /.test(text)),
        found.join(' | '),
      );
      assert.ok(
        found.some((text) => /^CAFETERIA budget\.pdf \/Team plans · Shared by Colette Colleague · /.test(text)),
        found.join(' | '),
      );
      assert.equal(await box.getAttribute('aria-expanded'), 'true');
      await assertNoAxeViolations(page, 'the search results');
      await screenshot(page, 'results');
      await box.fill('zzzq');
      await page.getByText('Nothing is named like “zzzq”.').waitFor();

      // ---- the keyboard: down to a file, Enter opens its folder with the file selected ----
      await box.fill('menu');
      await resultsOf(page, 1);
      await box.press('ArrowDown');
      assert.equal(await box.getAttribute('aria-activedescendant'), 'search-result-0');
      await box.press('Enter');
      await page.waitForURL(`${base}/files/${recipes}`);
      await page.locator('aside.details').getByRole('heading', { name: 'Café menu.txt' }).waitFor();
      await page.waitForFunction(() => document.activeElement?.closest('tr')?.dataset.name === 'Café menu.txt');
      assert.equal(await box.inputValue(), '', 'the box is cleared');

      // ---- a folder result opens the folder; Escape closes the list ----
      await box.fill('TEAM');
      await resultsOf(page, 1);
      await box.press('Escape');
      assert.equal(await page.locator('#search-results').count(), 0, 'closed');
      await box.press('ArrowDown');
      await page.getByRole('option', { name: /Team plans/ }).click();
      await page.waitForURL(`${base}/files/${plans}`);
      await page.locator('.breadcrumbs li', { hasText: 'Team plans' }).waitFor();
      assert.deepEqual(await page.locator('.breadcrumbs li').allInnerTexts(), ['Shared with me', 'Team plans']);

      // ---- a phone: the results stay on screen ----
      await page.setViewportSize({ width: 390, height: 844 });
      await box.fill('caf');
      await resultsOf(page, 2);
      const fits = await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth);
      assert.ok(fits, 'no horizontal scrolling with the results open');
      const popup = await page.locator('.search-popup').boundingBox();
      assert.ok(popup && popup.x >= 0 && popup.x + popup.width <= 390, `the results fit the screen: ${JSON.stringify(popup)}`);
      await screenshot(page, 'phone');
      assert.deepEqual(violations, []);
    });

    it('a photo among the results shows its thumbnail, other files their icon', { timeout: 120_000 }, async (t) => {
      const started = await startWithOwner(t, dialect, { 'holiday notes.txt': 'notes' }, { config: { thumbnailIntervalSeconds: 1 } });
      if (!started) return;
      const { app, base, owner, root, page, violations } = started;
      const photoFile = await putTyped(app, owner, root, 'holiday beach.jpg', 'image/jpeg', await photo(800, 600));
      await becomesTrue(async () => (await owner.api.get(`/api/files/thumbnail/${photoFile.id}`)).status === 200, 'made', 20_000);
      await openSignedIn(page, base, owner.token, `/files/${root}`);
      await page.locator('tr[data-name="holiday notes.txt"]').waitFor();
      await page.getByRole('combobox', { name: 'Search files and folders by name' }).fill('holiday');
      await resultsOf(page, 2);
      const picture = page.locator('#search-results [role="option"]', { hasText: 'holiday beach.jpg' }).locator('img.thumbnail');
      await picture.waitFor();
      await page.waitForFunction(() => (document.querySelector('#search-results img.thumbnail')?.naturalWidth ?? 0) > 0);
      const text = page.locator('#search-results [role="option"]', { hasText: 'holiday notes.txt' });
      assert.equal(await text.locator('img').count(), 0);
      assert.equal(await text.locator('svg.icon-file').count(), 1, 'a text file keeps the generic icon');
      await assertNoAxeViolations(page, 'results with a thumbnail');
      assert.deepEqual(violations, []);
    });
  });
}
