// Keyboard and focus (issue 34, item 9), in Chromium against the real server: opening a folder with
// Enter (or going up with Backspace) puts the focus on the new folder's first row; the row menu
// follows the WAI-ARIA menu pattern (arrows, Home, End, Escape back to its button, Tab leaves it);
// a dialog gives the focus back to what opened it when it closes.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { signUp } from '../helper.js';
import { BROWSER_DIALECTS, newPage, openSignedIn, startServer } from '../support/browser.js';
import { putFile, rootFolderId } from '../support/files.js';
import { mkdir } from '../support/folders.js';

// Browser globals used inside page.evaluate (this file is type-checked with Node's library only).
declare const document: any;

/** What has the focus: its role or tag, and its accessible label or text. */
const focused = (page: Page) =>
  page.evaluate(() => {
    const el = document.activeElement;
    return `${el?.getAttribute('role') ?? el?.tagName.toLowerCase()}: ${el?.getAttribute('aria-label') ?? el?.textContent?.trim()}`;
  });

for (const dialect of BROWSER_DIALECTS) {
  describe(`keyboard and focus in Chromium [${dialect}]`, () => {
    it('folders open onto their first row; the row menu and dialogs keep the focus where it belongs', { timeout: 120_000 }, async (t) => {
      const started = await startServer(t, dialect);
      if (!started) return;
      const { browser, app, base } = started;
      const owner = await signUp(app);
      const root = await rootFolderId(owner);
      const docs = await mkdir(owner, 'Docs', root);
      await putFile(app, owner, docs, 'inside.txt', 'in');
      await putFile(app, owner, root, 'notes.txt', 'notes');
      const violations: string[] = [];
      const { context, page } = await newPage(browser, violations);
      t.after(() => context.close());
      await openSignedIn(page, base, owner.token, `/files/${root}`);

      // ---- Enter opens a folder onto its first row; Backspace goes up onto the first row ----
      await page.locator('tr[data-name="Docs"] .item-name').focus();
      await page.keyboard.press('Enter');
      await page.locator('tr[data-name="inside.txt"]').waitFor();
      await page.waitForFunction(() => document.activeElement?.closest('tr')?.dataset.name === 'inside.txt');
      await page.keyboard.press('Backspace');
      await page.locator('tr[data-name="notes.txt"]').waitFor();
      await page.waitForFunction(() => document.activeElement?.closest('tr')?.dataset.name === 'Docs');

      // ---- the row menu: first item focused, arrows wrap, Home, End, Escape, Tab ----
      const menuButton = page.getByRole('button', { name: 'Actions for notes.txt' });
      await menuButton.focus();
      await page.keyboard.press('Enter');
      await page.getByRole('menu').waitFor();
      assert.equal(await focused(page), 'menuitem: Preview');
      await page.keyboard.press('End');
      assert.equal(await focused(page), 'menuitem: Delete forever');
      await page.keyboard.press('ArrowDown');
      assert.equal(await focused(page), 'menuitem: Preview', 'ArrowDown wraps');
      await page.keyboard.press('ArrowUp');
      assert.equal(await focused(page), 'menuitem: Delete forever', 'ArrowUp wraps');
      await page.keyboard.press('Home');
      assert.equal(await focused(page), 'menuitem: Preview');
      await page.keyboard.press('Escape');
      assert.equal(await page.getByRole('menu').count(), 0);
      assert.equal(await focused(page), 'button: Actions for notes.txt', 'Escape goes back to the button');
      await page.keyboard.press('Enter');
      await page.getByRole('menu').waitFor();
      await page.keyboard.press('Tab');
      await page.getByRole('menu').waitFor({ state: 'detached' });
      const afterTab = await focused(page);
      assert.doesNotMatch(afterTab, /^menuitem|^body/, `Tab leaves the menu for the next control, not the body: ${afterTab}`);

      // ---- a dialog opened from the menu gives the focus back to the menu's button ----
      await menuButton.focus();
      await page.keyboard.press('Enter');
      await page.getByRole('menuitem', { name: 'Rename' }).focus();
      await page.keyboard.press('Enter');
      await page.locator('dialog#prompt').waitFor();
      await page.keyboard.press('Escape');
      await page.locator('dialog#prompt').waitFor({ state: 'detached' });
      assert.equal(await focused(page), 'button: Actions for notes.txt', 'back on the opener');
      // ---- and the New folder button, likewise ----
      await page.getByRole('button', { name: 'New folder' }).click();
      await page.locator('dialog#prompt').getByRole('button', { name: 'Close' }).click();
      await page.locator('dialog#prompt').waitFor({ state: 'detached' });
      assert.equal(await focused(page), 'button: + New folder');
      assert.deepEqual(violations, []);
    });
  });
}
