import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import type { BrowserContext, Download, Page } from 'playwright-core';
import { signUp, type TestUser } from '../helper.js';
import { BROWSER_DIALECTS, newPage, screenshots, startServer } from '../support/browser.js';
import { tempDir } from '../support/disk.js';
import { putFile } from '../support/files.js';
import { assertStatus, mkdir } from '../support/folders.js';
import { splitLink } from '../support/links.js';
import { checkedZipFiles } from '../support/zip-tools.js';

// Browser globals used inside page.evaluate and init scripts (this file is type-checked with Node's library only).
declare const window: any, localStorage: any;

// Zip downloads in the web app (issue 33), in Chromium against the real server: a folder link's
// "Download all" builds its zip in the page from the sealed route, so the link key stays there;
// the file list downloads a folder, or the checked rows, as the server's zip. Each archive is
// checked by unzip -t, 7z t and zipdetails, extracted, and compared with what was uploaded.

const SLOW = { timeout: 180_000 };

/** The page saves through a Blob and a download link, as a browser without the File System Access API does. */
async function withoutSavePicker(context: BrowserContext): Promise<void> {
  await context.addInitScript(() => Object.defineProperty(window, 'showSaveFilePicker', { value: undefined, configurable: true }));
}

/**
 * A save dialog that only records what the page writes to the file it "picked" (window.savedBytes()
 * gives it in base64). A string, not a function: the test runner's transpiler would wrap named
 * functions in a helper the page does not have.
 */
const RECORDING_SAVE_PICKER = `
  const written = [];
  window.saved = { name: null, closed: false, aborted: false };
  window.savedBytes = () => {
    let binary = '';
    for (const chunk of written) {
      for (let i = 0; i < chunk.length; i += 0x8000) binary += String.fromCharCode(...chunk.subarray(i, i + 0x8000));
    }
    return btoa(binary);
  };
  Object.defineProperty(window, 'showSaveFilePicker', {
    configurable: true,
    value: async (options) => {
      window.saved.name = options.suggestedName;
      return {
        createWritable: async () => ({
          write: async (chunk) => void written.push(new Uint8Array(chunk)),
          close: async () => void (window.saved.closed = true),
          abort: async () => void (window.saved.aborted = true),
        }),
      };
    },
  });
`;

/** The download `click` starts, saved as `name` in `dir`. */
async function downloadOf(page: Page, click: () => Promise<void>, dir: string): Promise<{ file: string; download: Download }> {
  const [download] = await Promise.all([page.waitForEvent('download', { timeout: 60_000 }), click()]);
  const file = path.join(dir, download.suggestedFilename());
  await download.saveAs(file);
  return { file, download };
}

/** Waits for the link page to say the zip was saved; its error, if it shows one instead, fails the test at once. */
async function assertZipSaved(page: Page, count: number): Promise<void> {
  const saved = page.getByText(`${count} files downloaded and decrypted in your browser, as one zip.`);
  await saved.or(page.locator('.public-card p.error, .public-card .closed')).first().waitFor({ timeout: 60_000 });
  assert.ok(await saved.isVisible(), `the page failed: ${await page.locator('.public-card').innerText()}`);
}

/** Asserts an archive passes the tools and holds exactly `expected` (path → bytes); false when a tool is missing. */
async function assertZipHolds(t: TestContext, file: string, expected: Record<string, Buffer>): Promise<void> {
  const files = await checkedZipFiles(t, file);
  if (!files) return;
  assert.deepEqual([...files.keys()].sort(), Object.keys(expected).sort(), 'the entries of the archive');
  for (const [name, bytes] of Object.entries(expected)) assert.ok(files.get(name)!.equals(bytes), `${name}: the uploaded bytes`);
}

/** The owner signed in on one of their folders, in a page that saves through the fallback. */
async function openAsOwner(context: BrowserContext, page: Page, base: string, user: TestUser, folderId: string): Promise<void> {
  await withoutSavePicker(context);
  await page.goto(`${base}/login`);
  await page.evaluate((value: string) => localStorage.setItem('coffre.token', value), user.token);
  await page.goto(`${base}/files/${folderId}`);
}

for (const dialect of BROWSER_DIALECTS) {
  describe(`zip downloads in Chromium [${dialect}]`, () => {
    it("a folder link's Download all: a zip made in the page, the key never sent, files not counted", SLOW, async (t) => {
      const started = await startServer(t, dialect);
      if (!started) return;
      const { browser, app, base } = started;
      const screenshot = screenshots(`zip-link-${dialect}`);
      const violations: string[] = [];
      const dir = tempDir(t, 'web-zip-link');

      // A shared folder with a UTF-8 name, nested folders, a file of several segments and an empty one.
      const owner = await signUp(app);
      const folderName = 'Été 2026 ✓';
      const shared = await mkdir(owner, folderName);
      const sub = await mkdir(owner, 'Sous-dossier', shared);
      const deeper = await mkdir(owner, 'Deeper', sub);
      const contents: Record<string, Buffer> = {
        'photo.bin': randomBytes(200_000),
        'Sous-dossier/résumé.txt': Buffer.from('un résumé en UTF-8 ✓\n'),
        'Sous-dossier/Deeper/empty.txt': Buffer.alloc(0),
        'Sous-dossier/Deeper/data.bin': randomBytes(70_000),
      };
      const folders: Record<string, string> = { '': shared, 'Sous-dossier': sub, 'Sous-dossier/Deeper': deeper };
      for (const [name, bytes] of Object.entries(contents)) {
        const at = name.lastIndexOf('/');
        await putFile(app, owner, folders[at < 0 ? '' : name.slice(0, at)], name.slice(at + 1), bytes);
      }
      const expected = Object.fromEntries(Object.entries(contents).map(([name, bytes]) => [`${folderName}/${name}`, bytes]));
      const created = await owner.api.post(`/api/folders/share/${shared}`, { password: 'open sesame' });
      assertStatus(created, 201, 'share the folder');
      const shareLink: string = created.body.data.shareLink;
      const { key } = splitLink(shareLink);

      // ---- without the File System Access API: a Blob and a download ----
      const visitor = await newPage(browser, violations);
      t.after(() => visitor.context.close());
      await withoutSavePicker(visitor.context);
      const sent: string[] = [];
      visitor.page.on('request', (request) =>
        sent.push(`${request.url()} ${request.postData() ?? ''} ${JSON.stringify(request.headers())}`),
      );
      const page = visitor.page;
      await page.goto(shareLink);
      await page.getByLabel('Password').fill('open sesame');
      await page.getByRole('button', { name: 'Unlock' }).click();
      await page.getByRole('heading', { name: folderName }).waitFor();
      assert.equal(await page.getByTestId('download-all-partial').count(), 0, 'every file is listed: no note');
      const { file, download } = await downloadOf(page, () => page.getByRole('button', { name: 'Download all' }).click(), dir);
      assert.equal(download.suggestedFilename(), `${folderName}.zip`);
      await assertZipSaved(page, 4);
      await screenshot(page, 'downloaded');
      await assertZipHolds(t, file, expected);

      // The key stayed in the page: no request carried it, none asked for the server's zip of the link.
      const sealed = sent.filter((r) => /\/api\/files\/download\/public\/[^/ ]+\/sealed /.test(r));
      assert.equal(sealed.length, Object.keys(contents).length, 'one sealed download per file');
      for (const request of sent) {
        assert.ok(!request.includes(key), `the link key left the browser: ${request.slice(0, 200)}`);
        assert.ok(!request.includes('encryptionKey'), `a request named encryptionKey: ${request.slice(0, 200)}`);
        assert.doesNotMatch(request, /\/api\/folders\/download\/public\//, 'the page used the server-side zip of the link');
      }
      // Only the folder's open counted as an access, not its files' downloads.
      const links = await owner.api.get(`/api/folders/share/${shared}`);
      assert.equal(links.body.data[0].accessCount, 1);

      // ---- with the File System Access API: the same archive, written to the picked file ----
      const picked = await newPage(browser, violations);
      t.after(() => picked.context.close());
      await picked.context.addInitScript(RECORDING_SAVE_PICKER);
      await picked.page.goto(shareLink);
      await picked.page.getByLabel('Password').fill('open sesame');
      await picked.page.getByRole('button', { name: 'Unlock' }).click();
      await picked.page.getByRole('button', { name: 'Download all' }).click();
      await assertZipSaved(picked.page, 4);
      const saved = await picked.page.evaluate(() => window.saved);
      assert.deepEqual(saved, { name: `${folderName}.zip`, closed: true, aborted: false });
      const streamed = Buffer.from(await picked.page.evaluate(() => window.savedBytes()), 'base64');
      assert.ok(streamed.equals(fs.readFileSync(file)), 'the picked file got the same archive, byte for byte');

      // ---- a folder listed in pages, on a link whose one access the open spends ----
      // Pages of two files here (the page asks for the server's default of 1,000): the rest of
      // the listing and the downloads go on the open's pass, past the spent limit.
      const paged = splitLink((await owner.api.post(`/api/folders/share/${shared}`, { maxAccess: 1 })).body.data.shareLink);
      const more = await newPage(browser, violations);
      t.after(() => more.context.close());
      await withoutSavePicker(more.context);
      await more.page.route('**/api/folders/shared/**', (route) => {
        const asked = new URL(route.request().url());
        asked.searchParams.set('limit', '2');
        return route.continue({ url: asked.toString() });
      });
      await more.page.goto(`${base}/s/${paged.hash}#${paged.key}`);
      await more.page.getByRole('heading', { name: folderName }).waitFor();
      assert.equal(await more.page.locator('table.items tbody tr').count(), 2, 'the first page');
      assert.equal(await more.page.getByText('2 of 4 files listed.').count(), 1);
      const pagedDir = tempDir(t, 'web-zip-link-paged');
      const all = await downloadOf(more.page, () => more.page.getByRole('button', { name: 'Download all' }).click(), pagedDir);
      await assertZipSaved(more.page, 4);
      await assertZipHolds(t, all.file, expected);
      await more.page.getByRole('button', { name: 'More files' }).click();
      await more.page.locator('table.items tbody tr').nth(3).waitFor();
      assert.equal(await more.page.getByRole('button', { name: 'More files' }).count(), 0, 'every file listed');
      const pagedLink = (await owner.api.get(`/api/folders/share/${shared}`)).body.data.find(
        (l: { sharedHash: string }) => l.sharedHash === paged.hash,
      );
      assert.equal(pagedLink.accessCount, 1, 'the open counted once: its pages and downloads went on its pass');
      await more.page.getByLabel('Language').first().selectOption('fr');
      await more.page.getByRole('button', { name: 'Tout télécharger' }).waitFor();
      await screenshot(more.page, 'paged-fr');
      assert.deepEqual(violations, [], 'no CSP violation or page error');
    });

    it("a folder row's Download gives the folder's subtree as a zip, fetched with the bearer token", SLOW, async (t) => {
      const started = await startServer(t, dialect);
      if (!started) return;
      const { browser, base, app } = started;
      const violations: string[] = [];
      const dir = tempDir(t, 'web-zip-folder');
      const owner = await signUp(app);
      const parent = await mkdir(owner, 'Parent');
      const projects = await mkdir(owner, 'Projets été', parent);
      const inner = await mkdir(owner, 'Inner', projects);
      await mkdir(owner, 'Empty', projects);
      const plan = randomBytes(130_000);
      const notes = Buffer.from('notes ✓');
      await putFile(app, owner, projects, 'plan.bin', plan);
      await putFile(app, owner, inner, 'notes.txt', notes);
      await putFile(app, owner, parent, 'outside.txt', 'not in the archive');

      const { context, page } = await newPage(browser, violations);
      t.after(() => context.close());
      await openAsOwner(context, page, base, owner, parent);
      await page.locator('tr[data-name="Projets été"]').waitFor();
      await page.getByRole('button', { name: 'Actions for Projets été' }).click();
      const { file, download } = await downloadOf(page, () => page.getByRole('menuitem', { name: 'Download', exact: true }).click(), dir);
      assert.equal(download.suggestedFilename(), 'Projets été.zip');
      await assertZipHolds(t, file, { 'Projets été/plan.bin': plan, 'Projets été/Inner/notes.txt': notes });
      // The empty folder is an entry of the server's archive.
      const extracted = `${file}.extracted`;
      if (fs.existsSync(extracted)) assert.ok(fs.statSync(path.join(extracted, 'Projets été', 'Empty')).isDirectory());
      assert.deepEqual(violations, [], 'no CSP violation or page error');
    });

    it(
      'checkboxes, shift-click and select all: a zip of exactly the selection, a move that partly fails, all to the trash',
      SLOW,
      async (t) => {
        const started = await startServer(t, dialect);
        if (!started) return;
        const { browser, base, app } = started;
        const screenshot = screenshots(`zip-selection-${dialect}`);
        const violations: string[] = [];
        const dir = tempDir(t, 'web-zip-selection');
        const owner = await signUp(app);
        const work = await mkdir(owner, 'Work');
        const zeta = await mkdir(owner, 'Zeta', work);
        const target = await mkdir(owner, 'Target');
        const bytes: Record<string, Buffer> = {};
        for (const name of ['a.txt', 'b.bin', 'c.txt', 'd.txt']) {
          bytes[name] = name === 'b.bin' ? randomBytes(100_000) : Buffer.from(`content of ${name}`);
          await putFile(app, owner, work, name, bytes[name]);
        }
        const inner = Buffer.from('inside Zeta');
        await putFile(app, owner, zeta, 'inner.txt', inner);
        await putFile(app, owner, target, 'b.bin', 'already there');

        const { context, page } = await newPage(browser, violations);
        t.after(() => context.close());
        await openAsOwner(context, page, base, owner, work);
        // Folders first, then files by name: Zeta, a.txt, b.bin, c.txt, d.txt.
        await page.locator('tr[data-name="d.txt"]').waitFor();
        const box = (name: string) => page.getByRole('checkbox', { name: `Select ${name}` });
        const checkedRows = () => page.locator('tbody tr.checked').evaluateAll((rows) => rows.map((r: any) => r.dataset.name));

        // A click, then a shift-click: the range between them.
        await box('Zeta').click();
        await box('b.bin').click({ modifiers: ['Shift'] });
        assert.deepEqual(await checkedRows(), ['Zeta', 'a.txt', 'b.bin']);
        await page.getByText('3 selected').waitFor();
        await screenshot(page, 'selected');
        const { file, download } = await downloadOf(page, () => page.getByRole('button', { name: 'Download as zip' }).click(), dir);
        assert.equal(download.suggestedFilename(), 'Work.zip');
        await assertZipHolds(t, file, { 'Zeta/inner.txt': inner, 'a.txt': bytes['a.txt'], 'b.bin': bytes['b.bin'] });

        // The keyboard: Escape clears, Shift+↓ extends from the current row, Ctrl+A checks all.
        await box('a.txt').focus();
        await page.keyboard.press('Escape');
        assert.deepEqual(await checkedRows(), []);
        await page.locator('tr[data-name="c.txt"] .item-name').focus();
        await page.keyboard.press('Shift+ArrowDown');
        assert.deepEqual(await checkedRows(), ['c.txt', 'd.txt']);
        await page.keyboard.press('Control+a');
        assert.equal((await checkedRows()).length, 5);
        assert.ok(await page.getByRole('checkbox', { name: 'Select all' }).isChecked());
        await page.keyboard.press('Escape');

        // Move a.txt and b.bin into Target, where a b.bin is already: a.txt moves, b.bin stays checked and is named.
        await box('a.txt').click();
        await box('b.bin').click();
        await page.getByRole('toolbar', { name: 'Selected items' }).getByRole('button', { name: 'Move', exact: true }).click();
        const picker = page.locator('dialog#picker');
        await picker.getByRole('heading', { name: 'Move 2 items to…' }).waitFor();
        await picker.getByRole('button', { name: 'Target' }).click();
        await picker.locator('.picker-path', { hasText: '/Target' }).waitFor();
        await picker.getByRole('button', { name: 'Choose this folder' }).click();
        const failure = page.locator('.bulk-failure [role="alert"]');
        await failure.waitFor();
        assert.equal(
          await failure.innerText(),
          '1 of 2 items were not moved: b.bin (An item with this name already exists here.) They stay selected.',
        );
        await page.locator('tr[data-name="a.txt"]').waitFor({ state: 'detached' });
        assert.deepEqual(await checkedRows(), ['b.bin']);
        await screenshot(page, 'move-partly-failed');
        const moved = await owner.api.get(`/api/files/list/${target}`);
        assert.deepEqual(moved.body.data.data.map((f: any) => f.name).sort(), ['a.txt', 'b.bin']);

        // Select all (the header's checkbox), then Move to trash: the list is empty, the trash has them.
        await page.getByRole('checkbox', { name: 'Select all' }).click();
        assert.equal((await checkedRows()).length, 4);
        await page.getByRole('toolbar', { name: 'Selected items' }).getByRole('button', { name: 'Move to trash' }).click();
        await page.getByText('This folder is empty').waitFor();
        await page.getByText('4 items moved to the trash').waitFor();
        const trash = await owner.api.get('/api/trash/list');
        const trashed = [...trash.body.data.folders, ...trash.body.data.files].map((i: any) => i.name).sort();
        assert.deepEqual(trashed, ['Zeta', 'b.bin', 'c.txt', 'd.txt']);
        assert.deepEqual(violations, [], 'no CSP violation or page error');
      },
    );
  });
}
