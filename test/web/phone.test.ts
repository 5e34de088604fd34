// The phone layout (issue 34, item 7), in Chromium at 390 × 844 against the real server: every
// main screen fits the width without horizontal scrolling, the header is compact, the navigation
// is a drawer that the keyboard opens and closes, rows keep their "⋯" button, the details open as
// a sheet over the list, and long names wrap between words. At 1280 × 800 the desktop is unchanged.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Locator, Page } from 'playwright-core';
import { signUp } from '../helper.js';
import { BROWSER_DIALECTS, newPage, openSignedIn, screenshots, startServer } from '../support/browser.js';
import { putFile, rootFolderId } from '../support/files.js';
import { assertStatus, mkdir } from '../support/folders.js';
import { becomesTrue } from '../support/wait.js';

// Browser globals used inside page.evaluate (this file is type-checked with Node's library only).
declare const document: any, window: any;

const PHONE = { width: 390, height: 844 };
const LONG = 'Quarterly financial report for the board of directors 2026 final version.pdf';
const FOLDER = 'Annual general meeting minutes and supporting documents';

/** Fails when the page scrolls sideways: the document and the body are no wider than the window. */
async function assertFits(page: Page, screen: string): Promise<void> {
  const widths = await page.evaluate(() => ({
    document: document.documentElement.scrollWidth as number,
    body: document.body.scrollWidth as number,
    window: window.innerWidth as number,
  }));
  assert.equal(widths.window, PHONE.width, `${screen}: the window`);
  assert.ok(widths.document <= widths.window, `${screen}: the page is ${widths.document} px wide in a ${widths.window} px window`);
  assert.ok(widths.body <= widths.window, `${screen}: the body is ${widths.body} px wide in a ${widths.window} px window`);
}

/** Fails unless `locator` is shown, and entirely inside the window. */
async function assertInView(locator: Locator, what: string): Promise<void> {
  const box = await locator.boundingBox();
  assert.ok(box, `${what} is shown`);
  assert.ok(box.x >= 0 && box.x + box.width <= PHONE.width, `${what} is within the width: x ${box.x}, width ${box.width}`);
  assert.ok(box.y >= 0 && box.y + box.height <= PHONE.height, `${what} is within the height: y ${box.y}, height ${box.height}`);
}

/** The words of the name shown in `locator` that are cut across two lines (none when names wrap between words). */
async function wordsCut(locator: Locator): Promise<string[]> {
  return locator.evaluate((element: any) => {
    const cut: string[] = [];
    const walker = element.ownerDocument.createTreeWalker(element, 4 /* text nodes */);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (const match of (node.textContent as string).matchAll(/\S+/g)) {
        const range = element.ownerDocument.createRange();
        range.setStart(node, match.index!);
        range.setEnd(node, match.index! + match[0].length);
        if (range.getClientRects().length > 1) cut.push(match[0]);
      }
    }
    return cut;
  });
}

/** The people and things the screens show: long names, a folder, a trashed file, a share, an app password. */
async function seed(app: Parameters<typeof putFile>[0]) {
  const owner = await signUp(app, 'Ada Administrator'); // the first account: an administrator
  const colleague = await signUp(app, 'Bartholomew Colleague-Longname');
  const root = await rootFolderId(owner);
  const folder = await mkdir(owner, FOLDER, root);
  await putFile(app, owner, folder, `Appendix to the ${LONG}`, 'appendix');
  const report = await putFile(app, owner, root, LONG, Buffer.alloc(2048, 'r'));
  await putFile(app, owner, root, 'notes.txt', 'short');
  const old = await putFile(app, owner, root, `Old ${LONG}`, 'old');
  assertStatus(await owner.api.delete(`/api/files/delete/${old.id}?trash=soft`), 200);
  assertStatus(await owner.api.post('/api/auth/tokens', { name: 'Backup script on the office network storage appliance' }), 201);
  const theirs = await mkdir(colleague, `Shared ${FOLDER}`, await rootFolderId(colleague));
  assertStatus(
    await colleague.api.post(`/api/folders/share-users/${theirs}`, {
      users: [{ userId: owner.id, canView: true, canDownload: true, canEdit: false }],
    }),
    201,
  );
  const fileLink = (await owner.api.post(`/api/files/share/${report.id}`, {})).body.data.shareLink as string;
  const folderLink = (await owner.api.post(`/api/folders/share/${folder}`, {})).body.data.shareLink as string;
  return { owner, root, fileLink, folderLink };
}

/** The drawer: the menu button opens it with the focus inside; Escape and a click outside close it. */
async function checkDrawer(page: Page, shot: (page: Page, name: string) => Promise<unknown>): Promise<void> {
  const menu = page.getByRole('button', { name: 'Menu' });
  const drawer = page.locator('#drawer');
  assert.equal(await menu.getAttribute('aria-controls'), 'drawer');
  assert.equal(await menu.getAttribute('aria-expanded'), 'false');
  assert.equal(await drawer.isVisible(), false, 'the drawer starts closed');
  assert.equal(await page.getByRole('link', { name: 'Trash' }).isVisible(), false, 'the navigation waits in the drawer');
  assert.equal(await page.locator('.storage').isVisible(), false, 'the storage bar waits in the drawer');
  assert.equal(await page.getByRole('combobox', { name: 'Language' }).isVisible(), false, 'the switches wait in the drawer');

  await menu.focus();
  await page.keyboard.press('Enter');
  assert.equal(await menu.getAttribute('aria-expanded'), 'true');
  await page.waitForFunction(() => document.getElementById('drawer').getBoundingClientRect().left === 0); // slid in
  await assertInView(drawer.getByRole('link', { name: 'Trash' }), 'the Trash link in the open drawer');
  await drawer.locator('.storage').waitFor();
  await drawer.getByRole('combobox', { name: 'Language' }).waitFor();
  await drawer.getByRole('button', { name: 'Sign out' }).waitFor();
  assert.equal(await drawer.evaluate((el: any) => el.contains(document.activeElement)), true, 'the focus is in the drawer');
  await assertFits(page, 'the open drawer');
  await shot(page, 'drawer');
  await page.keyboard.press('Escape');
  assert.equal(await menu.getAttribute('aria-expanded'), 'false');
  await drawer.waitFor({ state: 'hidden' });
  await becomesTrue(() => menu.evaluate((el: any) => el === document.activeElement), 'Escape gives the focus back to the button');

  await menu.click();
  await drawer.getByRole('link', { name: 'Trash' }).waitFor();
  // Opened, as a person sees it: slid in, its link focused (a click before that races the opening).
  await page.waitForFunction(() => document.getElementById('drawer')!.contains(document.activeElement));
  await page.mouse.click(PHONE.width - 10, PHONE.height / 2);
  await drawer.waitFor({ state: 'hidden' });
  assert.equal(await menu.getAttribute('aria-expanded'), 'false', 'a click outside closes the drawer');
  await becomesTrue(() => menu.evaluate((el: any) => el === document.activeElement), 'the focus is back on the button');
}

/** Opens a page of the navigation through the drawer, which closes behind the choice. */
async function goVia(page: Page, link: string): Promise<void> {
  await page.getByRole('button', { name: 'Menu' }).click();
  await page.locator('#drawer').getByRole('link', { name: link }).click();
  await page.locator('#drawer').waitFor({ state: 'hidden' });
}

/** The file list: fits, a compact header, the first row high up, every row's "⋯" in view, names cut between words. */
async function checkFileList(page: Page, shot: (page: Page, name: string) => Promise<unknown>): Promise<void> {
  const row = page.locator(`tr[data-name="${LONG}"]`);
  await row.waitFor();
  await assertFits(page, 'the file list');
  const header = await page.locator('.topbar').boundingBox();
  assert.ok(header && header.height <= 64, `the header is compact: ${header?.height} px`);
  const first = await page.locator('.items tbody tr').first().boundingBox();
  assert.ok(first && first.y < PHONE.height / 2, `the first row starts at ${first?.y} px`);
  for (const name of [FOLDER, LONG, 'notes.txt'])
    await assertInView(page.getByRole('button', { name: `Actions for ${name}` }), `the "⋯" of ${name}`);
  const name = row.locator('.item-name');
  assert.equal(await name.getAttribute('title'), LONG, 'the full name in the title');
  assert.deepEqual(await wordsCut(name), [], 'no word of the name is cut');
  assert.equal(await row.locator('td.col-size').isVisible(), false, 'no size column');
  assert.match(await row.locator('.item-meta').innerText(), /^2 KB · /, 'the size and date, folded under the name');
  await shot(page, 'files');
}

/** The details: a sheet over the list, inside the window, with a close button; the list stays as wide. */
async function checkDetails(page: Page, shot: (page: Page, name: string) => Promise<unknown>): Promise<void> {
  const row = page.locator(`tr[data-name="${LONG}"]`);
  await row.locator('.item-name').click();
  const sheet = page.locator('aside.details');
  await sheet.getByRole('heading', { name: LONG }).waitFor();
  await sheet.getByText('Checksum').waitFor();
  await assertInView(sheet, 'the details sheet');
  await assertInView(page.getByRole('button', { name: `Actions for ${LONG}` }), 'the "⋯" with the details open');
  await assertFits(page, 'the file list with the details');
  assert.deepEqual(await wordsCut(sheet.getByRole('heading', { name: LONG })), [], 'no word of the title is cut');
  await shot(page, 'details');
  await sheet.getByRole('button', { name: 'Close' }).click();
  await sheet.getByRole('heading', { name: LONG }).waitFor({ state: 'detached' });
  assert.equal(await sheet.isVisible(), false, 'closed, the sheet is gone');
  assert.equal(await row.locator('.item-name').evaluate((el: any) => el === document.activeElement), true, 'the focus is back on the row');
}

/** The row menu: opens inside the window. */
async function checkRowMenu(page: Page, shot: (page: Page, name: string) => Promise<unknown>): Promise<void> {
  await page.getByRole('button', { name: `Actions for ${LONG}` }).click();
  const menu = page.getByRole('menu');
  await menu.waitFor();
  await assertInView(menu, 'the row menu');
  await assertFits(page, 'the row menu');
  await shot(page, 'row-menu');
  await page.keyboard.press('Escape');
  await menu.waitFor({ state: 'detached' });
}

for (const dialect of BROWSER_DIALECTS) {
  describe(`the phone layout in Chromium [${dialect}]`, () => {
    it(
      'every main screen fits 390 px, with a drawer, rows that keep their actions and details as a sheet',
      { timeout: 180_000 },
      async (t) => {
        const started = await startServer(t, dialect);
        if (!started) return;
        const { browser, app, base } = started;
        const { owner, root, fileLink, folderLink } = await seed(app);
        const shot = screenshots(`phone-${dialect}`);
        const violations: string[] = [];
        const { context, page } = await newPage(browser, violations, { viewport: PHONE });
        t.after(() => context.close());

        await openSignedIn(page, base, owner.token, `/files/${root}`);
        await checkFileList(page, shot);
        await checkDrawer(page, shot);
        await checkDetails(page, shot);
        await checkRowMenu(page, shot);
        await page.getByRole('button', { name: 'Actions for notes.txt' }).click();
        await page.getByRole('menuitem', { name: 'Move to trash' }).click();
        const notice = page.locator('.notice', { hasText: 'notes.txt' });
        await assertInView(notice.getByRole('button', { name: 'Undo' }), 'the Undo of the notice');
        await assertFits(page, 'a notice');
        await shot(page, 'notice');

        await goVia(page, 'Trash');
        const trashed = page.locator(`tr[data-name="Old ${LONG}"]`);
        await assertInView(trashed.getByRole('button', { name: 'Delete forever' }), 'the trash row buttons');
        await assertFits(page, 'the trash');
        await shot(page, 'trash');

        await goVia(page, 'Shared with me');
        const shared = page.locator(`tr[data-name="Shared ${FOLDER}"]`);
        await shared.locator('.item-meta', { hasText: 'Bartholomew Colleague-Longname · Can view, Can download' }).waitFor();
        await assertInView(shared.getByRole('link', { name: 'Open' }), 'the Open link of a shared folder');
        await assertFits(page, 'Shared with me');
        await shot(page, 'shared');

        await goVia(page, 'App passwords');
        await page.getByText('Backup script on the office network storage appliance').waitFor();
        await assertInView(page.getByRole('button', { name: 'Revoke' }), 'the Revoke button');
        await assertFits(page, 'the app passwords');
        await shot(page, 'app-passwords');

        await goVia(page, 'Users');
        const colleague = page.locator('tr', { hasText: 'Bartholomew Colleague-Longname' });
        await assertInView(colleague.getByRole('button', { name: /Reset password for/ }), 'the buttons of a user');
        await assertInView(colleague.getByRole('button', { name: 'Disable' }), 'the Disable button');
        await assertFits(page, 'the users');
        await shot(page, 'users');

        // Signed out: the sign-in page and a public link.
        const visitor = await newPage(browser, violations, { viewport: PHONE });
        t.after(() => visitor.context.close());
        await visitor.page.goto(`${base}/login`);
        await visitor.page.getByRole('button', { name: 'Sign in' }).waitFor();
        await assertFits(visitor.page, 'the sign-in page');
        await shot(visitor.page, 'sign-in');
        await visitor.page.goto(fileLink);
        const title = visitor.page.getByRole('heading', { name: LONG });
        await title.waitFor();
        await assertInView(visitor.page.getByRole('button', { name: /Download/ }), 'the download button of the link');
        assert.deepEqual(await wordsCut(title), [], 'no word of the shared name is cut');
        await assertFits(visitor.page, 'the public link');
        await shot(visitor.page, 'public-link');
        await visitor.page.goto('about:blank'); // the link page reads its key once, on loading
        await visitor.page.goto(folderLink);
        await visitor.page.getByRole('heading', { name: FOLDER }).waitFor();
        await assertInView(
          visitor.page.getByRole('button', { name: `Download Appendix to the ${LONG}` }),
          'the download button of a file of the folder',
        );
        await assertFits(visitor.page, 'the public link of a folder');
        await shot(visitor.page, 'public-folder');
        assert.deepEqual(violations, []);
      },
    );

    it('the desktop keeps its sidebar and header', { timeout: 120_000 }, async (t) => {
      const started = await startServer(t, dialect);
      if (!started) return;
      const { browser, app, base } = started;
      const owner = await signUp(app, 'Ada Administrator');
      const root = await rootFolderId(owner);
      await putFile(app, owner, root, LONG, Buffer.alloc(2048, 'r'));
      const violations: string[] = [];
      const { context, page } = await newPage(browser, violations);
      t.after(() => context.close());
      await openSignedIn(page, base, owner.token, `/files/${root}`);
      await page.locator(`tr[data-name="${LONG}"]`).waitFor();
      await page.locator('.storage').waitFor();
      assert.equal(await page.getByRole('button', { name: 'Menu' }).count(), 0, 'no menu button on a desktop');
      await page.locator('.topbar').getByRole('combobox', { name: 'Language' }).waitFor();
      await page.locator('.topbar').getByRole('button', { name: 'Sign out' }).waitFor();
      await page.locator('nav.sidebar').getByRole('link', { name: 'Trash' }).waitFor();
      await page.locator(`tr[data-name="${LONG}"] .item-name`).click();
      await page.locator('aside.details').getByText('Checksum').waitFor();
      assert.deepEqual(await wordsCut(page.locator(`tr[data-name="${LONG}"] .item-name`)), [], 'no word of the name is cut');
      assert.deepEqual(await wordsCut(page.locator('aside.details h2')), [], 'no word of the title is cut');
      const details = await page.locator('aside.details').boundingBox();
      const list = await page.locator('table.items').boundingBox();
      assert.ok(details && list && details.x >= list.x + list.width, 'the details beside the list');
      await screenshots(`phone-desktop-${dialect}`)(page, 'desktop');
      assert.deepEqual(violations, []);
    });
  });
}
