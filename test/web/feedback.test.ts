// Feedback for every change (issue 34, item 6), in Chromium against the real server: a toast for a
// new folder, a rename, a move and a copy, with Undo where it can be undone; an upload under an
// existing name says it becomes a new version; the upload panel collapses and closes; making a
// file public says what it means and waits for a confirmation; a version restored, an item restored
// from the trash or deleted for good each say so.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { signUp } from '../helper.js';
import { BROWSER_DIALECTS, newPage, openSignedIn, screenshots, startServer } from '../support/browser.js';
import { putFile, rootFolderId } from '../support/files.js';

/** The toast that says `text`, once it shows. */
async function toast(page: Page, text: string | RegExp) {
  const notice = page.locator('.notices .notice', { hasText: text });
  await notice.first().waitFor();
  return notice.first();
}

/** Opens the row menu of `name` and runs its item `action`. */
async function rowAction(page: Page, name: string, action: string) {
  await page.getByRole('button', { name: `Actions for ${name}` }).click();
  await page.getByRole('menuitem', { name: action, exact: true }).click();
}

/** Chooses `folder` (a subfolder of the root) in the folder picker that is open. */
async function pick(page: Page, folder: string) {
  const picker = page.locator('dialog#picker');
  await picker.getByRole('button', { name: folder }).click();
  await picker.locator('.picker-path', { hasText: `/${folder}` }).waitFor();
  await picker.getByRole('button', { name: 'Choose this folder' }).click();
}

for (const dialect of BROWSER_DIALECTS) {
  describe(`feedback in Chromium [${dialect}]`, () => {
    it('toasts with Undo, the new-version notice, the upload panel and the public confirmation', { timeout: 180_000 }, async (t) => {
      const started = await startServer(t, dialect);
      if (!started) return;
      const { browser, app, base } = started;
      const owner = await signUp(app);
      const root = await rootFolderId(owner);
      await putFile(app, owner, root, 'report.txt', 'first');
      const violations: string[] = [];
      const { context, page } = await newPage(browser, violations);
      t.after(() => context.close());
      await openSignedIn(page, base, owner.token, `/files/${root}`);
      const row = (name: string) => page.locator(`tr[data-name="${name}"]`);
      await row('report.txt').waitFor();

      // ---- a new folder, a rename undone, a move undone, a copy ----
      await page.getByRole('button', { name: 'New folder' }).click();
      await page.getByLabel('Folder name').fill('Plans');
      await page.locator('dialog#prompt').getByRole('button', { name: 'Create' }).click();
      await toast(page, 'Folder “Plans” created');
      await rowAction(page, 'report.txt', 'Rename');
      await page.getByLabel('New name').fill('summary.txt');
      await page.locator('dialog#prompt').getByRole('button', { name: 'Rename' }).click();
      await row('summary.txt').waitFor();
      await (await toast(page, 'Renamed to “summary.txt”')).getByRole('button', { name: 'Undo' }).click();
      await row('report.txt').waitFor();
      assert.equal(await row('summary.txt').count(), 0);
      await rowAction(page, 'report.txt', 'Move');
      await pick(page, 'Plans');
      await (await toast(page, '“report.txt” moved')).getByRole('button', { name: 'Undo' }).click();
      await row('report.txt').waitFor();
      await rowAction(page, 'report.txt', 'Copy');
      await pick(page, 'Plans');
      await toast(page, '“report.txt” copied');
      await screenshots(`feedback-${dialect}`)(page, 'toasts');

      // ---- an upload under an existing name: a new version, said before and after ----
      await page
        .locator('input[type="file"]')
        .setInputFiles([{ name: 'report.txt', mimeType: 'text/plain', buffer: Buffer.from('second') }]);
      const upload = page.locator('.uploads li[data-name="report.txt"]');
      await upload.getByText('new version').waitFor();
      await toast(page, '“report.txt” was saved as a new version of the file already there');
      const versions = await owner.api.get(`/api/files/list/${root}`);
      assert.equal(versions.body.data.data.find((f: { name: string }) => f.name === 'report.txt').versionCount, 2);
      await page.getByRole('button', { name: 'Hide the uploads' }).click();
      assert.equal(await upload.isVisible(), false, 'collapsed');
      await page.getByRole('button', { name: 'Show the uploads' }).click();
      await upload.waitFor();
      await page.getByRole('button', { name: 'Close the uploads' }).click();
      assert.equal(await page.locator('.uploads').count(), 0, 'closed');

      // ---- public: explained and confirmed ----
      await row('report.txt').locator('td.col-size').click();
      const details = page.locator('aside.details');
      await details.getByLabel('Visibility').selectOption('public');
      await details.getByRole('button', { name: 'Save' }).click();
      const confirm = page.locator('dialog#confirm');
      await confirm.getByText('Anyone who has its public address can download it without signing in').waitFor();
      await confirm.getByRole('button', { name: 'Cancel' }).click();
      const file = () =>
        owner.api.get(`/api/files/list/${root}`).then((r) => r.body.data.data.find((f: { name: string }) => f.name === 'report.txt'));
      assert.equal((await file()).visibility, 'private', 'nothing changes without the confirmation');
      await details.getByRole('button', { name: 'Save' }).click();
      await confirm.getByRole('button', { name: 'Make public' }).click();
      await details.getByRole('link', { name: /\/api\/files\/public\// }).waitFor();
      assert.equal((await file()).visibility, 'public');

      // ---- an older version made current again, then the trash: restore, delete for good, empty ----
      await details.getByRole('button', { name: 'Restore this version' }).click();
      await toast(page, /^The version of .+ is the current one again/);
      for (const name of ['report.txt', 'Plans']) {
        await rowAction(page, name, 'Move to trash');
        await row(name).waitFor({ state: 'detached' });
      }
      await page.getByRole('link', { name: 'Trash' }).click();
      await row('report.txt').getByRole('button', { name: 'Restore' }).click();
      await toast(page, '“report.txt” restored');
      await row('report.txt').waitFor({ state: 'detached' });
      await row('Plans').getByRole('button', { name: 'Delete forever' }).click();
      await page.locator('dialog#confirm').getByRole('button', { name: 'Delete forever' }).click();
      await toast(page, '“Plans” deleted for good');
      assert.deepEqual(violations, []);
    });
  });
}
