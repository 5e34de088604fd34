// One datahub and one bucket stay out of the way, French reads French, and a dark theme follows
// the system unless the person chooses (issue 34, item 8), in Chromium against the real server.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { signUp } from '../helper.js';
import { BROWSER_DIALECTS, newPage, openSignedIn, screenshots, startServer } from '../support/browser.js';
import { putFile, rootFolderId } from '../support/files.js';

// Browser globals used inside page.evaluate (this file is type-checked with Node's library only).
declare const document: any, getComputedStyle: any;

const SLOW = { timeout: 120_000 };
/** Waits (up to 5 s: the system's change arrives as an event) for the page's background to be `colour`. */
async function assertBackground(page: Page, colour: string, label?: string): Promise<void> {
  await page
    .waitForFunction((expected: string) => getComputedStyle(document.documentElement).backgroundColor === expected, colour, {
      timeout: 5_000,
    })
    .catch(() => {});
  assert.equal(await page.evaluate(() => getComputedStyle(document.documentElement).backgroundColor as string), colour, label);
}

for (const dialect of BROWSER_DIALECTS) {
  describe(`everyday screens in Chromium [${dialect}]`, () => {
    it('no datahub or bucket selector without a choice; the folder names the page; counts and units read right', SLOW, async (t) => {
      const started = await startServer(t, dialect);
      if (!started) return;
      const { browser, app, base } = started;
      const owner = await signUp(app);
      const root = await rootFolderId(owner);
      await putFile(app, owner, root, 'notes.txt', Buffer.alloc(2048, 'n'));
      const violations: string[] = [];
      const { context, page } = await newPage(browser, violations);
      t.after(() => context.close());
      await openSignedIn(page, base, owner.token, `/files/${root}`);
      await page.locator('tr[data-name="notes.txt"]').waitFor();
      assert.equal(await page.getByRole('combobox', { name: 'Datahub' }).count(), 0);
      assert.equal(await page.getByRole('combobox', { name: 'Bucket' }).count(), 0);
      assert.equal(await page.locator('.breadcrumbs [aria-current="page"]').innerText(), 'My files');
      assert.equal(await page.locator('.display-path').count(), 0);
      assert.equal(await page.title(), 'My files · Coffre');
      await page.locator('.paging', { hasText: '1 item' }).waitFor();
      assert.equal(await page.locator('#keyboard-help').isVisible(), false, 'the shortcuts wait behind their summary');
      await page.getByText('Keyboard shortcuts').click();
      assert.equal(await page.locator('#keyboard-help').isVisible(), true);
      await page.locator('tr[data-name="notes.txt"]').getByText('2 KB').waitFor();
      await screenshots(`everyday-${dialect}`)(page, 'one-bucket');

      await page.getByRole('combobox', { name: 'Language' }).selectOption('fr');
      await page.locator('tr[data-name="notes.txt"]').getByText('2 Ko').waitFor();
      assert.equal(await page.title(), 'Mes fichiers · Coffre');
      await page.locator('.paging', { hasText: '1 élément' }).waitFor();
      await page.getByRole('combobox', { name: 'Langue' }).selectOption('en');

      const second = await owner.api.post(`/api/bucket/create/${owner.defaultDatahubId}`, { name: 'photos' });
      assert.equal(second.status, 201, JSON.stringify(second.body));
      await page.reload();
      await page.getByRole('combobox', { name: 'Bucket' }).waitFor();
      assert.equal(await page.getByRole('combobox', { name: 'Datahub' }).count(), 0, 'still one datahub');
      assert.equal(
        await page.locator('.breadcrumbs [aria-current="page"]').innerText(),
        'default',
        'with several buckets, the bucket names the root',
      );
      assert.deepEqual(violations, []);
    });

    it('the theme follows the system until the person chooses one, and keeps the choice', SLOW, async (t) => {
      const started = await startServer(t, dialect);
      if (!started) return;
      const { browser, app, base } = started;
      const owner = await signUp(app);
      const violations: string[] = [];
      const { context, page } = await newPage(browser, violations, { colorScheme: 'dark' });
      t.after(() => context.close());
      await openSignedIn(page, base, owner.token, `/files`);
      const theme = page.getByRole('combobox', { name: 'Theme' });
      await theme.waitFor();
      await assertBackground(page, 'rgb(21, 23, 27)', 'dark, as the system says');
      await screenshots(`everyday-dark-${dialect}`)(page, 'dark');
      await theme.selectOption('light');
      await assertBackground(page, 'rgb(245, 246, 248)');
      await page.reload();
      await page.getByRole('combobox', { name: 'Theme' }).waitFor();
      await assertBackground(page, 'rgb(245, 246, 248)', 'the choice outlives a reload');
      await page.getByRole('combobox', { name: 'Theme' }).selectOption('system');
      await assertBackground(page, 'rgb(21, 23, 27)');
      await page.emulateMedia({ colorScheme: 'light' });
      await assertBackground(page, 'rgb(245, 246, 248)', 'the system turning light while the page is open');
      await page.emulateMedia({ colorScheme: 'dark' });
      await page.goto(`${base}/login`);
      await assertBackground(page, 'rgb(21, 23, 27)', 'the signed-out pages too');
      assert.deepEqual(violations, []);
    });
  });
}
