// Thumbnails in the file list (issue 35), in Chromium against the real server, whose own job makes
// them: a photo shows its thumbnail, a text file the generic icon; the grid view is an option
// remembered across reloads, fits a phone's 390 px and passes axe. Thumbnails are asked for by
// version (`?v=`, cached a year), so a new version shows a new one; a photo uploaded with a generic
// type shows one too; one still being made (404 THUMBNAIL_PENDING) is asked again until it shows.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { signUp } from '../helper.js';
import { assertNoAxeViolations } from '../support/axe.js';
import { BROWSER_DIALECTS, newPage, openSignedIn, screenshots, startServer } from '../support/browser.js';
import { putFile, rootFolderId } from '../support/files.js';
import { makeThumbnails } from '../../src/modules/thumbnails/thumbnails.job.js';
import { contextOf, photo, putTyped } from '../support/thumbnails.js';
import { becomesTrue } from '../support/wait.js';

for (const dialect of BROWSER_DIALECTS) {
  describe(`thumbnails in Chromium [${dialect}]`, () => {
    it('shows a photo by its thumbnail, in a list or a remembered grid that fits a phone', { timeout: 180_000 }, async (t) => {
      const started = await startServer(t, dialect, { thumbnailIntervalSeconds: 1 });
      if (!started) return;
      const { app, base, browser } = started;
      const owner = await signUp(app);
      const root = await rootFolderId(owner);
      const file = await putTyped(app, owner, root, 'photo.jpg', 'image/jpeg', await photo(1200, 900));
      await putFile(app, owner, root, 'notes.txt', 'plain words');
      await becomesTrue(async () => (await owner.api.get(`/api/files/thumbnail/${file.id}`)).status === 200, 'the job made it', 20_000);
      const screenshot = screenshots(`thumbnails-${dialect}`);

      const violations: string[] = [];
      const { context, page } = await newPage(browser, violations);
      t.after(() => context.close());
      await openSignedIn(page, base, owner.token, `/files/${root}`);
      const picture = page.locator('tr[data-name="photo.jpg"] img.thumbnail');
      await picture.waitFor();
      await page.waitForFunction(() => ((globalThis as any).document.querySelector('img.thumbnail')?.naturalWidth ?? 0) > 0);
      assert.equal(await picture.evaluate((img: any) => img.naturalWidth), 256);
      assert.equal(await page.locator('tr[data-name="notes.txt"] img').count(), 0);
      assert.equal(await page.locator('tr[data-name="notes.txt"] svg.icon-file').count(), 1, 'a text file keeps the generic icon');
      await screenshot(page, 'list');

      const toggle = page.getByRole('button', { name: 'Grid view' });
      assert.equal(await toggle.getAttribute('aria-pressed'), 'false');
      await toggle.click();
      await page.locator('table.items.grid').waitFor();
      assert.equal(await toggle.getAttribute('aria-pressed'), 'true');
      const tile = await page.locator('tr[data-name="photo.jpg"] .item-picture').boundingBox();
      assert.ok(tile && tile.height >= 90, `the tile's picture is large (${tile?.height} px)`);
      await screenshot(page, 'grid');
      await assertNoAxeViolations(page, 'the grid view');
      // The row menu still works from a tile.
      await page.getByRole('button', { name: 'Actions for photo.jpg' }).click();
      await page.getByRole('menuitem', { name: 'Download', exact: true }).waitFor();
      await page.keyboard.press('Escape');

      await page.reload();
      await page.locator('table.items.grid').waitFor();
      assert.equal(await page.getByRole('button', { name: 'Grid view' }).getAttribute('aria-pressed'), 'true', 'remembered');

      const phone = await newPage(browser, violations, { viewport: { width: 390, height: 844 } });
      t.after(() => phone.context.close());
      await openSignedIn(phone.page, base, owner.token, `/files/${root}`);
      await phone.page.getByRole('button', { name: 'Grid view' }).click();
      await phone.page.locator('table.items.grid tr[data-name="photo.jpg"] img.thumbnail').waitFor();
      const widths = await phone.page.evaluate(() => {
        const doc = (globalThis as any).document.documentElement;
        return [doc.scrollWidth, doc.clientWidth];
      });
      assert.ok(widths[0] <= widths[1], `no horizontal scroll at 390 px (${widths[0]} > ${widths[1]})`);
      await screenshot(phone.page, 'phone-grid');
      assert.deepEqual(violations, []);
    });

    it('a photo whose thumbnail is still being made shows it once made, without a reload', { timeout: 120_000 }, async (t) => {
      // The job's first round runs at start; the next would be an hour later: this test makes the thumbnail itself.
      const started = await startServer(t, dialect, { thumbnailIntervalSeconds: 3600 });
      if (!started) return;
      const { app, base, browser, test } = started;
      const owner = await signUp(app);
      const root = await rootFolderId(owner);
      const file = await putTyped(app, owner, root, 'photo.jpg', 'image/jpeg', await photo(1200, 900));
      const violations: string[] = [];
      const { context, page } = await newPage(browser, violations);
      t.after(() => context.close());
      const answers: string[] = [];
      page.on('response', async (response) => {
        if (response.url().includes(`/api/files/thumbnail/${file.id}`)) answers.push(response.ok() ? 'made' : (await response.json()).code);
      });
      await openSignedIn(page, base, owner.token, `/files/${root}`);
      await page.locator('tr[data-name="photo.jpg"] svg.icon-file').waitFor();
      await becomesTrue(async () => answers.includes('THUMBNAIL_PENDING'), 'asked while it was being made', 10_000);

      assert.deepEqual(await makeThumbnails(await contextOf(test)), { made: 1, failed: 0 });
      const picture = page.locator('tr[data-name="photo.jpg"] img.thumbnail');
      await picture.waitFor({ timeout: 30_000 });
      assert.equal(answers.at(-1), 'made', answers.join(', '));
      assert.deepEqual(violations, []);
    });

    it('asks for the thumbnail of the current version, and shows the new one after a new version', { timeout: 180_000 }, async (t) => {
      const started = await startServer(t, dialect, { thumbnailIntervalSeconds: 1 });
      if (!started) return;
      const { app, base, browser } = started;
      const owner = await signUp(app);
      const root = await rootFolderId(owner);
      const first = await putTyped(app, owner, root, 'photo.jpg', 'image/jpeg', await photo(1200, 900));
      const raw = await putTyped(app, owner, root, 'raw.jpg', 'application/octet-stream', await photo(900, 900));
      const made = (id: string) =>
        becomesTrue(async () => (await owner.api.get(`/api/files/thumbnail/${id}`)).status === 200, 'made', 20_000);
      await made(first.id);
      await made(raw.id);

      const violations: string[] = [];
      const { context, page } = await newPage(browser, violations);
      t.after(() => context.close());
      const asked: string[] = [];
      page.on('request', (request) => {
        if (request.url().includes('/api/files/thumbnail/')) asked.push(new URL(request.url()).pathname + new URL(request.url()).search);
      });
      const width = (name: string) =>
        page.waitForFunction(
          (row: string) => (globalThis as any).document.querySelector(`tr[data-name="${row}"] img.thumbnail`)?.naturalWidth || 0,
          name,
        );
      await openSignedIn(page, base, owner.token, `/files/${root}`);
      assert.equal(await (await width('photo.jpg')).jsonValue(), 256);
      assert.equal(await (await width('raw.jpg')).jsonValue(), 256, 'a photo stored as application/octet-stream has its thumbnail');
      assert.ok(asked.includes(`/api/files/thumbnail/${first.id}?v=${first.currentVersionId}`), asked.join(', '));
      assert.ok(asked.includes(`/api/files/thumbnail/${raw.id}?v=${raw.currentVersionId}`), asked.join(', '));

      const second = await putTyped(app, owner, root, 'photo.jpg', 'image/jpeg', await photo(900, 1200));
      assert.equal(second.id, first.id);
      await becomesTrue(
        async () => (await owner.api.get(`/api/files/thumbnail/${first.id}?v=${second.currentVersionId}`)).status === 200,
        'the new version has its thumbnail',
        20_000,
      );
      await page.reload();
      await page.waitForFunction(
        () => (globalThis as any).document.querySelector('tr[data-name="photo.jpg"] img.thumbnail')?.naturalWidth === 192,
      );
      assert.ok(asked.includes(`/api/files/thumbnail/${first.id}?v=${second.currentVersionId}`), asked.join(', '));
      assert.deepEqual(violations, []);
    });
  });
}
