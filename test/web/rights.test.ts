// Rights-aware screens (issue 34, item 2), in Chromium against the real server: inside a folder
// shared with them, a person is offered only what their grant allows, is told what they may not
// do, and finds "Shared with me" at the start of the breadcrumb and highlighted in the navigation;
// a change refused because the owner took rights back meanwhile says what is missing.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { signUp } from '../helper.js';
import { BROWSER_DIALECTS, newPage, openSignedIn, screenshots, startServer, startWithOwner } from '../support/browser.js';
import { putFile, rootFolderId } from '../support/files.js';
import { assertStatus, mkdir } from '../support/folders.js';
import { eventually } from '../support/wait.js';

/** The labels of the row menu of `name` (closed again afterwards). */
async function menuOf(page: Page, name: string): Promise<string[]> {
  await page.getByRole('button', { name: `Actions for ${name}` }).click();
  const labels = await page.getByRole('menuitem').allInnerTexts();
  await page.keyboard.press('Escape');
  return labels;
}

for (const dialect of BROWSER_DIALECTS) {
  describe(`rights-aware screens in Chromium [${dialect}]`, () => {
    it('a grantee sees only the actions their grant allows, and where they are', { timeout: 120_000 }, async (t) => {
      const started = await startServer(t, dialect);
      if (!started) return;
      const { browser, app, base } = started;
      const owner = await signUp(app, 'Olivia Owner');
      const guest = await signUp(app, 'Gus Guest');
      const root = await rootFolderId(owner);
      const readable = await mkdir(owner, 'Readable', root);
      const writable = await mkdir(owner, 'Writable', root);
      await putFile(app, owner, readable, 'doc.txt', 'read me');
      await putFile(app, owner, writable, 'draft.txt', 'edit me');
      const grant = (folderId: string, flags: object) =>
        owner.api.post(`/api/folders/share-users/${folderId}`, { users: [{ userId: guest.id, ...flags }] });
      assertStatus(await grant(readable, { canView: true, canDownload: true, canEdit: false }), 201);
      assertStatus(await grant(writable, { canView: true, canDownload: true, canEdit: true }), 201);
      const violations: string[] = [];
      const { context, page } = await newPage(browser, violations);
      t.after(() => context.close());

      // ---- view and download ----
      await openSignedIn(page, base, guest.token, `/files/${readable}`);
      await page.locator('tr[data-name="doc.txt"]').waitFor();
      await eventually(async () => assert.deepEqual(await page.locator('.breadcrumbs li').allInnerTexts(), ['Shared with me', 'Readable']));
      await page.locator('.sidebar a[aria-current="page"]', { hasText: 'Shared with me' }).waitFor();
      await page.getByText('You can view and download in this folder, but not change it.').waitFor();
      assert.equal(await page.getByRole('button', { name: 'New folder' }).count(), 0);
      assert.equal(await page.getByRole('button', { name: 'Upload files' }).count(), 0);
      assert.deepEqual(await menuOf(page, 'doc.txt'), ['Preview', 'Download', 'Details']);
      await page.locator('tr[data-name="doc.txt"] td.col-size').click();
      const details = page.locator('aside.details');
      await details.getByRole('heading', { name: 'doc.txt' }).waitFor();
      assert.equal(await details.getByLabel('Visibility').count(), 0, 'no settings for someone who is not the owner');
      await page.locator('tr[data-name="doc.txt"] input[type="checkbox"]').check();
      const bar = page.getByRole('toolbar', { name: 'Selected items' });
      await bar.waitFor();
      assert.deepEqual(
        (await bar.getByRole('button').allInnerTexts()).map((label) => label.trim()),
        ['Download as zip', 'Clear selection'],
      );
      await screenshots(`rights-${dialect}`)(page, 'view-download');

      // ---- edit ----
      await page.goto(`${base}/files/${writable}`);
      await page.locator('tr[data-name="draft.txt"]').waitFor();
      await page.getByRole('button', { name: 'New folder' }).waitFor();
      await page.getByRole('button', { name: '⇪ Upload files' }).waitFor();
      assert.equal(await page.locator('.read-only-note').count(), 0);
      assert.deepEqual(await menuOf(page, 'draft.txt'), ['Preview', 'Download', 'Details', 'Rename', 'Move', 'Copy', 'Move to trash']);

      // ---- the owner, for comparison: everything, and "My files" ----
      const mine = await newPage(browser, violations);
      t.after(() => mine.context.close());
      await openSignedIn(mine.page, base, owner.token, `/files/${readable}`);
      await mine.page.locator('tr[data-name="doc.txt"]').waitFor();
      await eventually(async () => assert.deepEqual(await mine.page.locator('.breadcrumbs li').allInnerTexts(), ['My files', 'Readable']));
      assert.deepEqual(await menuOf(mine.page, 'doc.txt'), [
        'Preview',
        'Download',
        'Details',
        'Rename',
        'Move',
        'Copy',
        'Share',
        'Move to trash',
        'Delete forever',
      ]);
      assert.deepEqual(violations, []);
    });

    it('a refusal after the owner took rights back says what is missing, and the screen catches up', { timeout: 120_000 }, async (t) => {
      const started = await startWithOwner(t, dialect, {});
      if (!started) return;
      const { app, base, owner, root, page, violations } = started;
      const guest = await signUp(app, 'Gus Guest');
      const shared = await mkdir(owner, 'Team', root);
      await putFile(app, owner, shared, 'draft.txt', 'edit me');
      const grant = (flags: object) => owner.api.post(`/api/folders/share-users/${shared}`, { users: [{ userId: guest.id, ...flags }] });
      assertStatus(await grant({ canView: true, canDownload: true, canEdit: true }), 201);
      await openSignedIn(page, base, guest.token, `/files/${shared}`);
      await page.locator('tr[data-name="draft.txt"]').waitFor();

      // The edit right taken back while the page is open: the rename says so, the menu catches up.
      assertStatus(await grant({ canView: true, canDownload: false, canEdit: false }), 200);
      await page.getByRole('button', { name: 'Actions for draft.txt' }).click();
      await page.getByRole('menuitem', { name: 'Rename' }).click();
      await page.getByLabel('New name').fill('final.txt');
      await page.locator('dialog#prompt').getByRole('button', { name: 'Rename' }).click();
      await page.locator('dialog#prompt').getByText('You can view this folder, but not change it.').waitFor();
      await page.locator('dialog#prompt').getByRole('button', { name: 'Cancel' }).click();
      await page.getByText('You can view this folder, but not download or change it.').waitFor();
      assert.deepEqual(await menuOf(page, 'draft.txt'), ['Preview', 'Details']);

      // All rights taken back: the trash says the folder is no longer shared.
      assertStatus(await grant({ canView: true, canDownload: true, canEdit: true }), 200);
      await page.reload();
      await page.getByRole('button', { name: 'New folder' }).waitFor();
      assertStatus(await owner.api.delete(`/api/folders/share-users/${shared}/${guest.id}`), 200);
      await page.getByRole('button', { name: 'Actions for draft.txt' }).click();
      await page.getByRole('menuitem', { name: 'Move to trash' }).click();
      await page.locator('.notices .notice.error', { hasText: 'This folder is no longer shared with you.' }).waitFor();
      assert.equal((await owner.api.get(`/api/folders/details/${shared}`)).status, 200, 'nothing changed');
      assert.deepEqual(violations, []);
    });
  });
}
