import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { after, describe, it } from 'node:test';
import type { Locator, Page } from 'playwright-core';
import { signUp, type TestUser } from '../helper.js';
import { BROWSER_DIALECTS, newPage, screenshots, startServer } from '../support/browser.js';
import { droppingProxy } from '../support/dropping-proxy.js';
import { rootFolderId } from '../support/files.js';
import { eventually } from '../support/wait.js';

// Browser globals used inside page.evaluate (this file is type-checked with Node's library only).
declare const localStorage: any;

// The web app's uploads go through the tus endpoint (web/src/upload.ts): a 100 MB upload that the
// network drops in the middle goes on by itself once it comes back, and one that a page reload
// stopped goes on from where the server stopped receiving it when the same file is chosen again.

const SIZE = 100 * 1024 * 1024;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'coffre-upload-resume-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

/** The 100 MB file on disk (chosen by path: the browser reads it as a user's file) and its SHA-256. */
const bigFile = (() => {
  const file = path.join(dir, 'big.bin');
  const hash = createHash('sha256');
  const fd = fs.openSync(file, 'w');
  for (let at = 0; at < SIZE; at += 4 * 1024 * 1024) {
    const part = randomBytes(Math.min(4 * 1024 * 1024, SIZE - at));
    hash.update(part);
    fs.writeSync(fd, part);
  }
  fs.closeSync(fd);
  return { file, sha256: hash.digest('hex') };
})();

/** A signed-in page on the user's root folder, the app served from `origin` (the server or a proxy in front of it). */
async function openRoot(page: Page, origin: string, user: TestUser, root: string): Promise<void> {
  await page.goto(`${origin}/login`);
  await page.evaluate((value: string) => localStorage.setItem('coffre.token', value), user.token);
  await page.goto(`${origin}/files/${root}`);
  await page.getByText('This folder is empty').waitFor();
}

/** The SHA-256 of the stored file's content, downloaded through the API. */
async function storedSha256(base: string, user: TestUser, fileId: string): Promise<string> {
  const res = await fetch(`${base}/api/files/download/${fileId}`, { headers: { authorization: `Bearer ${user.token}` } });
  assert.equal(res.status, 200);
  const hash = createHash('sha256');
  for await (const chunk of Readable.fromWeb(res.body as any)) hash.update(chunk);
  return hash.digest('hex');
}

/** The upload finished into the folder as one file with the chosen file's bytes, and nothing is left to resume. */
async function assertStored(page: Page, base: string, user: TestUser): Promise<void> {
  const row = page.locator('tr[data-name="big.bin"]');
  await row.waitFor();
  const fileId = (await row.getAttribute('data-id'))!;
  assert.equal(await storedSha256(base, user, fileId), bigFile.sha256, 'the stored file is the chosen one, byte for byte');
  assert.equal((await user.api.get(`/api/files/versions/${fileId}`)).body.data.length, 1, 'one version');
  assert.deepEqual((await user.api.get('/api/uploads')).body.data.uploads, [], 'no unfinished upload left');
  const stored = await page.evaluate(() => Object.keys(localStorage).filter((k: string) => k.startsWith('tus::')));
  assert.deepEqual(stored, [], 'the finished upload is no longer offered for resuming');
}

/** Waits for the upload row to show `shown` (or to fail, which fails the test at once rather than at the timeout). */
async function expectRow(page: Page, shown: Locator, timeout: number): Promise<void> {
  const failed = page.locator('.upload.failed[data-name="big.bin"]');
  await shown.or(failed).first().waitFor({ timeout });
  assert.equal(
    await failed.count(),
    0,
    `the upload failed: ${await failed
      .first()
      .innerText()
      .catch(() => '')}`,
  );
}

/** The Upload-Offset header of a request head, or NaN. */
function offsetOf(head: string): number {
  return Number(/\r\nupload-offset: *(\d+)/i.exec(head)?.[1]);
}

for (const dialect of BROWSER_DIALECTS) {
  describe(`resumable uploads in Chromium [${dialect}]`, { timeout: 600_000 }, () => {
    it('a 100 MB upload cut by a network drop goes on by itself when the network comes back', async (t) => {
      const started = await startServer(t, dialect);
      if (!started) return;
      const { browser, base, app } = started;
      const user = await signUp(app);
      const root = await rootFolderId(user);
      const screenshot = screenshots(`upload-drop-${dialect}`);
      const violations: string[] = [];

      // The network drops 40 MB into the PATCH bodies: in the middle of the third 16 MiB request.
      const proxy = await droppingProxy(Number(new URL(base).port), /^PATCH \/api\/uploads\//, 40_000_000);
      t.after(() => proxy.close());
      const { context, page } = await newPage(browser, violations);
      t.after(() => context.close());
      await openRoot(page, `http://127.0.0.1:${proxy.port}`, user, root);
      await page.locator('input[type="file"]').setInputFiles(bigFile.file);

      // The row says the upload waits; the browser keeps trying while the network is down.
      const row = page.locator('.upload[data-name="big.bin"]');
      await expectRow(page, row.getByText('Connection lost; the upload will go on by itself'), 120_000);
      await screenshot(page, 'network-down');
      await eventually(() => assert.ok(proxy.refused >= 2, `${proxy.refused} connections refused`), 60_000);
      assert.equal(proxy.drops, 1);
      proxy.restore();
      await expectRow(page, page.locator('.upload.done[data-name="big.bin"]'), 240_000);
      await screenshot(page, 'done');
      await assertStored(page, base, user);

      // One upload created; the PATCH cut in its middle was followed by a HEAD and a PATCH from
      // past its start: the server kept the bytes that arrived before the drop.
      const heads = proxy.heads.map((h) => h.split('\r\n')[0]);
      assert.equal(heads.filter((h) => h.startsWith('POST /api/uploads/')).length, 1, heads.join('\n'));
      const cut = proxy.heads.indexOf(proxy.cut!);
      assert.ok(cut >= 0 && proxy.cut!.startsWith('PATCH /api/uploads/'), String(proxy.cut));
      const afterCut = proxy.heads.slice(cut + 1);
      assert.ok(
        afterCut.some((h) => h.startsWith('HEAD /api/uploads/')),
        'the offset asked after the drop',
      );
      const resumedAt = offsetOf(afterCut.find((h) => h.startsWith('PATCH /api/uploads/'))!);
      assert.ok(resumedAt > offsetOf(proxy.cut!), `resumed at ${resumedAt}, the cut PATCH started at ${offsetOf(proxy.cut!)}`);
      assert.ok(heads.filter((h) => h.startsWith('PATCH ')).length > 1, 'more than one PATCH');
      assert.deepEqual(violations, [], 'no CSP violation or page error');
    });

    it('an upload cut by a page reload resumes from where it stopped when the same file is chosen again', async (t) => {
      const started = await startServer(t, dialect);
      if (!started) return;
      const { browser, base, app } = started;
      const user = await signUp(app);
      const root = await rootFolderId(user);
      const screenshot = screenshots(`upload-reload-${dialect}`);
      const violations: string[] = [];
      const { context, page } = await newPage(browser, violations);
      t.after(() => context.close());
      await openRoot(page, base, user, root);
      const input = page.locator('input[type="file"]');
      await input.setInputFiles(bigFile.file);

      // Reloaded once the server holds part of the file.
      const unfinished = async () => (await user.api.get('/api/uploads')).body.data.uploads;
      const [upload] = await eventually(async () => {
        const list = await unfinished();
        assert.ok(list.length === 1 && list[0].offset > 0, JSON.stringify(list));
        return list;
      }, 120_000);
      assert.equal(upload.length, SIZE);
      await page.reload();
      await page.getByText('This folder is empty').waitFor();
      const stored = await page.evaluate(() => Object.keys(localStorage).filter((k: string) => k.startsWith('tus::')));
      assert.equal(stored.length, 1, 'the browser remembers the unfinished upload');

      // What the server holds before the file is chosen again.
      const head = await fetch(`${base}/api/uploads/${upload.id}`, {
        method: 'HEAD',
        headers: { authorization: `Bearer ${user.token}`, 'tus-resumable': '1.0.0' },
      });
      assert.equal(head.status, 200);
      const held = Number(head.headers.get('upload-offset'));
      assert.ok(held > 0 && held < SIZE, `the server holds ${held} bytes`);

      const requests: { method: string; url: string; offset: number }[] = [];
      page.on('request', (request) => {
        if (request.url().includes('/api/uploads/'))
          requests.push({ method: request.method(), url: request.url(), offset: Number(request.headers()['upload-offset']) });
      });
      await input.setInputFiles(bigFile.file);
      const notice = page.getByText(/^Resuming an earlier upload of big\.bin from \d+ %$/);
      await notice.waitFor();
      await screenshot(page, 'resuming');
      const percent = Number(/from (\d+) %/.exec(await notice.innerText())![1]);
      assert.ok(percent >= Math.floor((held * 100) / SIZE) && percent > 0, `resumed from ${percent} %, the server held ${held}`);
      await expectRow(page, page.locator('.upload.done[data-name="big.bin"]'), 240_000);
      await assertStored(page, base, user);

      // The same upload went on: no new one created, the first PATCH from what the server held on.
      assert.equal(requests.filter((r) => r.method === 'POST').length, 0, JSON.stringify(requests));
      assert.ok(
        requests.every((r) => r.url.endsWith(`/api/uploads/${upload.id}`)),
        JSON.stringify(requests),
      );
      const patches = requests.filter((r) => r.method === 'PATCH');
      assert.ok(patches.length > 0 && patches[0].offset >= held, JSON.stringify(patches));
      assert.deepEqual(violations, [], 'no CSP violation or page error');
    });

    it('signing out forgets the unfinished uploads the browser offered to resume, and nothing else', async (t) => {
      const started = await startServer(t, dialect);
      if (!started) return;
      const { browser, base, app } = started;
      const user = await signUp(app);
      const root = await rootFolderId(user);
      const violations: string[] = [];
      const { context, page } = await newPage(browser, violations);
      t.after(() => context.close());
      await openRoot(page, base, user, root);

      // A real unfinished upload: the browser remembers it once the server holds part of it.
      await page.route('**/api/uploads/*', (route) => (route.request().method() === 'PATCH' ? route.abort() : route.continue()));
      await page.locator('input[type="file"]').setInputFiles(bigFile.file);
      const remembered = () => page.evaluate(() => Object.keys(localStorage).filter((k: string) => k.startsWith('tus::')));
      await eventually(async () => assert.equal((await remembered()).length, 1), 30_000);
      await page.evaluate(() => localStorage.setItem('tus::another-app::1', '{}'));

      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.waitForURL(/\/login$/);
      assert.deepEqual(await remembered(), ['tus::another-app::1'], "Coffre's keys are gone, another app's are not");
      assert.equal(await page.evaluate(() => localStorage.getItem('coffre.token')), null);
      assert.deepEqual(violations, [], 'no CSP violation or page error');
    });
  });
}
