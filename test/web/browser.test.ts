import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { describe, it } from 'node:test';
import { DIALECTS, build } from '../helper.js';
import { launch, newPage, screenshots, startServer } from '../support/browser.js';
import { cuttingProxy } from '../support/cutting-proxy.js';
import { freePort } from '../support/raw-http.js';

// Browser globals used inside page.evaluate (this file is type-checked with Node's library only).
declare const document: any, DataTransfer: any, DragEvent: any, localStorage: any;

// The web application in a real browser (test/support/browser.ts), against the real server
// listening on a port, on each database dialect. Screenshots go to test-results/.

for (const dialect of DIALECTS) {
  describe(`web application in Chromium [${dialect}]`, () => {
    it('signs up, manages files, shares a link decrypted in the browser, and grants view-only access', async (t) => {
      // A small quota, so that the two uploads leave little room and the storage bar warns.
      const started = await startServer(t, dialect, { defaultQuotaBytes: 160_000 });
      if (!started) return;
      const { browser, base } = started;
      const screenshot = screenshots(`web-${dialect}`);
      const violations: string[] = [];

      // The pages carry a strict policy.
      const home = await fetch(`${base}/`);
      assert.equal(home.status, 200);
      const csp = home.headers.get('content-security-policy') ?? '';
      assert.match(csp, /script-src 'self'/);
      assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
      assert.doesNotMatch(await home.text(), /<script>|<style>|style=/, 'no inline script or style');

      // ---- sign up ----
      const { page } = await newPage(browser, violations);
      await page.goto(`${base}/`);
      await page.waitForURL(/\/login/);
      await screenshot(page, 'sign-in');
      await page.getByRole('link', { name: 'Create an account' }).click();
      await page.getByLabel('Name').fill('Ada Lovelace');
      const adaEmail = `ada-${randomBytes(3).toString('hex')}@example.com`;
      await page.getByLabel('E-mail').fill(adaEmail);
      await page.getByLabel('Password').fill('correct horse battery');
      await page.getByRole('button', { name: 'Create an account' }).click();
      await page.waitForURL(/\/files\/fld_/);
      await page.getByText('This folder is empty').waitFor();

      // ---- create a folder and open it ----
      await page.getByRole('button', { name: '+ New folder' }).click();
      await page.getByLabel('Folder name').fill('Reports');
      await page.locator('dialog#prompt').getByRole('button', { name: 'Create' }).click();
      await page.locator('tr[data-name="Reports"] .item-name').click();
      await page.locator('.breadcrumbs [aria-current="page"]', { hasText: 'Reports' }).waitFor();
      assert.deepEqual(await page.locator('.breadcrumbs li').allInnerTexts(), ['My files', 'Reports']);
      assert.equal(await page.title(), 'Reports · Coffre');

      // ---- upload two files through the file input ----
      const alpha = randomBytes(150_000); // three segments of 64 KiB
      const beta = Buffer.from('beta: a small text file\n');
      await page.locator('input[type="file"]').setInputFiles([
        { name: 'alpha.bin', mimeType: 'application/octet-stream', buffer: alpha },
        { name: 'beta.txt', mimeType: 'text/plain', buffer: beta },
      ]);
      await page.locator('.upload.done[data-name="alpha.bin"]').waitFor();
      await page.locator('.upload.done[data-name="beta.txt"]').waitFor();
      await page.locator('tr[data-name="alpha.bin"]').waitFor();
      await page.locator('tr[data-name="beta.txt"]').waitFor();
      await page.getByText(/Storage is almost full/).waitFor();
      // More than the quota leaves: refused at creation, said in the user's words, not retried.
      await page
        .locator('input[type="file"]')
        .setInputFiles([{ name: 'over.bin', mimeType: 'application/octet-stream', buffer: randomBytes(20_000) }]);
      await page.locator('.upload.failed[data-name="over.bin"]', { hasText: 'Failed: Not enough storage left.' }).waitFor();
      await screenshot(page, 'file-manager');

      // ---- drag and drop, then the keyboard: Delete moves to the trash, which restores ----
      await page.evaluate(() => {
        const data = new DataTransfer();
        data.items.add(new File(['dropped in'], 'dropped.txt', { type: 'text/plain' }));
        const target = document.querySelector('.folder-page')!;
        target.dispatchEvent(new DragEvent('dragover', { dataTransfer: data, bubbles: true, cancelable: true }));
        target.dispatchEvent(new DragEvent('drop', { dataTransfer: data, bubbles: true, cancelable: true }));
      });
      await page.locator('tr[data-name="dropped.txt"]').waitFor();
      await page.locator('tr[data-name="beta.txt"] .item-name').focus();
      await page.keyboard.press('ArrowDown');
      assert.equal(await page.evaluate(() => document.activeElement?.closest('tr')?.dataset.name), 'dropped.txt');
      await page.keyboard.press('Delete');
      await page.locator('tr[data-name="dropped.txt"]').waitFor({ state: 'detached' });
      await page.getByRole('link', { name: 'Trash' }).click();
      await page.locator('tr[data-name="dropped.txt"]').getByRole('button', { name: 'Restore' }).click();
      await page.getByText('The trash is empty.').waitFor();
      await page.goBack();
      await page.locator('tr[data-name="dropped.txt"]').waitFor();

      // ---- rename ----
      await page.getByRole('button', { name: 'Actions for alpha.bin' }).click();
      await page.getByRole('menuitem', { name: 'Rename' }).click();
      await page.getByLabel('New name').fill('report.bin');
      await page.locator('dialog#prompt').getByRole('button', { name: 'Rename' }).click();
      await page.locator('tr[data-name="report.bin"]').waitFor();
      assert.equal(await page.locator('tr[data-name="alpha.bin"]').count(), 0);

      // ---- a link with a password and one access ----
      await page.getByRole('button', { name: 'Actions for report.bin' }).click();
      await page.getByRole('menuitem', { name: 'Share' }).click();
      const share = page.locator('dialog#share');
      await share.locator('form.new-link').getByLabel('Password (optional)').fill('open sesame');
      await share.locator('form.new-link').getByLabel('Unlimited').uncheck();
      await share.locator('form.new-link').getByLabel('Downloads allowed through the link').fill('1');
      await share.getByRole('button', { name: 'Create link' }).click();
      const shareLink = await share.locator('#created-link').inputValue();
      assert.match(shareLink, new RegExp(`^${base}/s/[A-Za-z0-9_-]+#[A-Za-z0-9_-]{43}$`));
      await share.getByText('0 of 1 uses').waitFor();
      await screenshot(page, 'share-dialog');
      await share.getByRole('button', { name: 'Close' }).first().click();
      const linkKey = shareLink.split('#')[1];

      // ---- a well-formed but wrong key: said before any download, so no access is spent ----
      const wrongKey = await newPage(browser, violations);
      await wrongKey.page.goto(`${shareLink.split('#')[0]}#${randomBytes(32).toString('base64url')}`);
      await wrongKey.page.getByLabel('Password').fill('open sesame');
      await wrongKey.page.getByRole('button', { name: 'Unlock' }).click();
      await wrongKey.page.getByText('The key in this link is wrong or missing').waitFor();
      await screenshot(wrongKey.page, 'link-wrong-key');
      await wrongKey.context.close();

      // ---- the link in a fresh browser: password, decrypt in the page, same bytes ----
      const visitor = await newPage(browser, violations);
      const sent: string[] = [];
      visitor.page.on('request', (request) =>
        sent.push(`${request.url()} ${request.postData() ?? ''} ${JSON.stringify(request.headers())}`),
      );
      await visitor.page.goto(shareLink);
      await visitor.page.getByText('This link is protected by a password.').waitFor();
      await screenshot(visitor.page, 'link-password');
      await visitor.page.getByLabel('Password').fill('wrong one');
      await visitor.page.getByRole('button', { name: 'Unlock' }).click();
      await visitor.page.getByText('Wrong password.').waitFor();
      await visitor.page.getByLabel('Password').fill('open sesame');
      await visitor.page.getByRole('button', { name: 'Unlock' }).click();
      await visitor.page.getByRole('heading', { name: /report\.bin/ }).waitFor();
      assert.equal(await visitor.page.getByTestId('remaining').innerText(), '1');
      assert.match(await visitor.page.locator('.shared-file').innerText(), /146\.48 KB/);
      await screenshot(visitor.page, 'link-page');
      const [download] = await Promise.all([
        visitor.page.waitForEvent('download'),
        visitor.page.getByRole('button', { name: 'Download' }).click(),
      ]);
      assert.equal(download.suggestedFilename(), 'report.bin');
      const received = fs.readFileSync((await download.path())!);
      assert.ok(received.equals(alpha), 'the bytes decrypted in the browser are the uploaded ones');
      await visitor.page.getByText('Downloaded and decrypted in your browser').waitFor();
      assert.ok(sent.length > 0);
      for (const request of sent) assert.ok(!request.includes(linkKey), `the link key left the browser: ${request.slice(0, 200)}`);

      // ---- a second try: used up ----
      const late = await newPage(browser, violations);
      await late.page.goto(shareLink);
      await late.page.getByText('This link has been used up').waitFor();
      await screenshot(late.page, 'link-used-up');
      await late.context.close();
      // A link whose key was damaged says so without asking the server anything.
      const bad = await newPage(browser, violations);
      await bad.page.goto(shareLink.replace(/#.*/, '#not-a-key'));
      await bad.page.getByText('The key in this link is wrong or missing').waitFor();
      await bad.context.close();
      await visitor.context.close();

      // The owner sees the use counted.
      await page.getByRole('button', { name: 'Actions for report.bin' }).click();
      await page.getByRole('menuitem', { name: 'Share' }).click();
      await share.getByText('1 of 1 uses').waitFor();

      // ---- view-only access for a second user ----
      const bobEmail = `bob-${randomBytes(3).toString('hex')}@example.com`;
      const reg = await fetch(`${base}/api/auth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: bobEmail, password: 'another long passphrase', name: 'Bob' }),
      });
      assert.equal(reg.status, 201);
      await share.getByRole('button', { name: 'Close' }).first().click();
      await page.getByRole('button', { name: 'Actions for beta.txt' }).click();
      await page.getByRole('menuitem', { name: 'Share' }).click();
      await share.getByLabel('Their e-mail address').fill(bobEmail);
      await share.locator('fieldset.perms').getByLabel('Can download').uncheck();
      await share.getByRole('button', { name: 'Add', exact: true }).click();
      await share.locator('.people-list').getByText(bobEmail).waitFor();
      await screenshot(page, 'share-people');
      await share.getByRole('button', { name: 'Close' }).first().click();

      const bob = await newPage(browser, violations);
      await bob.page.goto(`${base}/login`);
      await bob.page.getByLabel('E-mail').fill(bobEmail);
      await bob.page.getByLabel('Password').fill('another long passphrase');
      await bob.page.getByRole('button', { name: 'Sign in' }).click();
      await bob.page.waitForURL(/\/files\/fld_/);
      await bob.page.getByRole('link', { name: 'Shared with me' }).click();
      const row = bob.page.locator('tr[data-name="beta.txt"]');
      await row.waitFor();
      assert.match(await row.innerText(), /Ada Lovelace/);
      assert.match(await row.innerText(), /Can view/);
      assert.equal(await row.getByRole('button', { name: 'Download' }).count(), 0, 'view-only: no download button');
      await row.getByText('You may view this file but not download it.').waitFor();
      // A file shared on its own "can view": previewed in the viewer, which offers no download.
      await row.getByRole('button', { name: 'Preview beta.txt' }).click();
      const viewer = bob.page.locator('dialog#viewer');
      await viewer.getByRole('heading', { name: 'beta.txt' }).waitFor();
      await viewer.locator('pre', { hasText: beta.toString('utf8').slice(0, 20) }).waitFor();
      assert.equal(await viewer.getByRole('button', { name: 'Download' }).count(), 0, 'view-only: no download in the viewer');
      await bob.page.keyboard.press('Escape');
      await viewer.waitFor({ state: 'detached' });
      await screenshot(bob.page, 'shared-with-me');
      // And the server agrees: the content is refused to Bob.
      const status = await bob.page.evaluate(async () => {
        const auth = { authorization: `Bearer ${localStorage.getItem('coffre.token')}` };
        const list: any = await (await fetch('/api/shared-with-me', { headers: auth })).json();
        const item = list.data.data.find((i: { name: string }) => i.name === 'beta.txt');
        return (await fetch(`/api/files/download/${item.itemId}`, { headers: auth })).status;
      });
      assert.ok(status === 403 || status === 404, `Bob's download answered ${status}`);
      await bob.context.close();

      // ---- the same screen on a phone, and in French ----
      await page.setViewportSize({ width: 390, height: 844 });
      await page.getByLabel('Language').first().selectOption('fr');
      await page.getByRole('button', { name: '+ Nouveau dossier' }).waitFor();
      await screenshot(page, 'phone-fr');

      assert.deepEqual(violations, [], 'no CSP violation or page error');
    });

    it('the link page resumes a download the network broke off', { timeout: 120_000 }, async (t) => {
      const started = await startServer(t, dialect);
      if (!started) return;
      const { browser, base } = started;
      const violations: string[] = [];
      const api = async (method: string, url: string, token: string | null, body?: unknown, raw?: Buffer) => {
        const res = await fetch(`${base}/api${url}`, {
          method,
          headers: {
            ...(token ? { authorization: `Bearer ${token}` } : {}),
            'content-type': raw ? 'application/octet-stream' : 'application/json',
          },
          body: raw ?? (body ? JSON.stringify(body) : undefined),
          signal: AbortSignal.timeout(30_000),
        });
        return { status: res.status, body: (await res.json().catch(() => null)) as any };
      };
      const reg = await api('POST', '/auth/register', null, {
        email: `di-${randomBytes(3).toString('hex')}@example.com`,
        password: 'correct horse battery',
        name: 'Di',
      });
      assert.equal(reg.status, 201);
      const token: string = reg.body.data.accessToken;
      const root = (await api('GET', `/folders/root/subfolders?bucketId=${reg.body.data.user.defaultBucketId}`, token)).body.data
        .parentFolder.id;
      const data = randomBytes(4 * 1024 * 1024);
      const uploaded = await api('PUT', `/files/upload/${root}?name=big.bin`, token, undefined, data);
      assert.equal(uploaded.status, 201);
      const fileId = uploaded.body.data.id;
      const link = await api('POST', `/files/share/${fileId}`, token, { maxAccess: 1 });
      assert.equal(link.status, 201);

      // The page goes through a proxy that breaks the sealed download off at 1 MiB, once.
      const proxy = await cuttingProxy(Number(new URL(base).port), /POST \/api\/files\/download\/public\/[^ ]+\/sealed /, 1024 * 1024);
      t.after(() => proxy.close());
      const viaProxy = link.body.data.shareLink.replace(base, `http://127.0.0.1:${proxy.port}`);
      const { context, page } = await newPage(browser, violations);
      t.after(() => context.close());
      await page.goto(viaProxy, { timeout: 20_000 });
      await page.getByRole('heading', { name: /big\.bin/ }).waitFor({ timeout: 20_000 });
      // The download, or the first error the page shows (so a failure does not wait out the timeout).
      const outcome = Promise.race([
        page.waitForEvent('download', { timeout: 90_000 }),
        page
          .locator('.public-card p.error, .public-card .closed')
          .first()
          .waitFor({ timeout: 90_000 })
          .then(() => null),
      ]);
      outcome.catch(() => {}); // awaited below; kept from counting as unhandled meanwhile
      await page.getByRole('button', { name: 'Download' }).click({ timeout: 20_000 });
      // The proxy stalls after 1 MiB; once the page has read it (a quarter of the bytes), the network drops.
      await page.waitForFunction(() => Number(document.querySelector('.download-progress progress')?.value) >= 20, undefined, {
        timeout: 30_000,
      });
      proxy.drop();
      const download = await outcome;
      assert.ok(download, `the page failed: ${await page.locator('.public-card').innerText({ timeout: 5_000 })}`);
      const saved = fs.readFileSync((await download.path())!);
      assert.equal(proxy.cuts, 1, 'the proxy broke the download off');
      assert.ok(saved.equals(data), 'the saved file is the upload, byte for byte');
      await page.getByText('Downloaded and decrypted in your browser').waitFor({ timeout: 20_000 });
      // The resume asked for the rest only, with the pass of the first response.
      assert.equal(proxy.matched.length, 2);
      assert.match(proxy.matched[1], /\r\nx-coffre-pass: [A-Za-z0-9_-]{20,}\r\n/i);
      assert.match(proxy.matched[1], /\r\nrange: bytes=\d+-\r\n/i);
      const listed = await api('GET', `/files/share/${fileId}`, token);
      assert.equal(listed.body.data[0].accessCount, 1, 'one access in all');
      assert.deepEqual(violations, [], 'no CSP violation or page error');
    });

    it("the API reference renders under the pages' policy, with no violation", async (t) => {
      const browser = await launch(t);
      if (!browser) return;
      const port = await freePort();
      const { app } = await build(t, dialect, { webRoot: null, config: { publicUrl: `http://127.0.0.1:${port}` } });
      await app.listen({ port, host: '127.0.0.1' });
      const violations: string[] = [];
      const { page } = await newPage(browser, violations);
      const res = await page.goto(`http://127.0.0.1:${port}/api/docs`);
      assert.match(res?.headers()['content-security-policy'] ?? '', /frame-ancestors 'none'/);
      await page.locator('.swagger-ui .info .title', { hasText: 'Coffre API' }).waitFor();
      await page.locator('.opblock-tag', { hasText: 'Accounts' }).first().waitFor();
      assert.deepEqual(violations, [], 'no CSP violation or page error');
    });

    it('moves, copies, versions, sets visibility, edits and revokes links, deletes for good and switches buckets', async (t) => {
      const started = await startServer(t, dialect);
      if (!started) return;
      const { browser, base } = started;
      const violations: string[] = [];
      const screenshot = screenshots(`manage-${dialect}`);
      const api = async (method: string, url: string, token: string | null, body?: unknown) => {
        const res = await fetch(`${base}/api${url}`, {
          method,
          headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body ? { 'content-type': 'application/json' } : {}) },
          body: body ? JSON.stringify(body) : undefined,
        });
        return { status: res.status, body: (await res.json().catch(() => null)) as any };
      };
      const reg = await api('POST', '/auth/register', null, {
        email: `cy-${randomBytes(3).toString('hex')}@example.com`,
        password: 'correct horse battery',
        name: 'Cy',
      });
      assert.equal(reg.status, 201);
      const token: string = reg.body.data.accessToken;
      const hub = (await api('GET', '/datahub/list', token)).body.data.data[0];
      const second = await api('POST', `/bucket/create/${hub.id}`, token, { name: 'archive' });
      assert.equal(second.status, 201);

      const { page } = await newPage(browser, violations);
      await page.goto(`${base}/login`);
      await page.evaluate((value: string) => localStorage.setItem('coffre.token', value), token);
      await page.goto(`${base}/files`);
      await page.waitForURL(/\/files\/fld_/);
      await page.getByText('This folder is empty').waitFor();

      // Two folders and a file with two versions.
      for (const name of ['Inbox', 'Archive']) {
        await page.getByRole('button', { name: '+ New folder' }).click();
        await page.getByLabel('Folder name').fill(name);
        await page.locator('dialog#prompt').getByRole('button', { name: 'Create' }).click();
        await page.locator(`tr[data-name="${name}"]`).waitFor();
      }
      const input = page.locator('input[type="file"]');
      await input.setInputFiles([{ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('version one') }]);
      await page.locator('.upload.done[data-name="notes.txt"]').waitFor();
      await input.setInputFiles([{ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('version two, longer') }]);
      await page.locator('.upload.done[data-name="notes.txt"]').nth(1).waitFor();
      // An empty file becomes a file too (whole at its creation: tus-js-client sends it no PATCH).
      await input.setInputFiles([{ name: 'empty.txt', mimeType: 'text/plain', buffer: Buffer.alloc(0) }]);
      await page.locator('.upload.done[data-name="empty.txt"]').waitFor();
      await page.locator('tr[data-name="empty.txt"]').waitFor();

      // An upload created, then held on its way (its PATCH never gets an answer), is cancelled from its
      // row: the server forgets it (tus termination).
      const held = new Promise<void>((resolve) =>
        page.route('**/api/uploads/**', (route) => (route.request().method() === 'PATCH' ? resolve() : route.continue())),
      );
      await input.setInputFiles([{ name: 'held.bin', mimeType: 'application/octet-stream', buffer: randomBytes(4096) }]);
      await held;
      assert.equal((await api('GET', '/uploads', token)).body.data.uploads.length, 1);
      const terminated = page.waitForRequest((request) => request.method() === 'DELETE' && request.url().includes('/api/uploads/'));
      await page.getByRole('button', { name: 'Cancel upload of held.bin' }).click();
      await page.locator('.upload.cancelled[data-name="held.bin"]').waitFor();
      assert.equal((await (await terminated).response())?.status(), 204);
      assert.deepEqual((await api('GET', '/uploads', token)).body.data.uploads, []);
      await page.unrouteAll({ behavior: 'ignoreErrors' });
      await page.getByRole('button', { name: 'Clear finished' }).click();
      assert.equal(await page.locator('tr[data-name="held.bin"]').count(), 0);

      // Versions panel: restore the first version.
      await page.locator('tr[data-name="notes.txt"] td.col-size').click();
      const details = page.locator('aside.details');
      await details.getByRole('heading', { name: 'Versions' }).waitFor();
      await details.locator('.versions li').nth(1).waitFor();
      await details.getByRole('button', { name: 'Restore this version' }).click();
      await details.locator('.versions li').nth(2).waitFor();
      const fileId = (await page.locator('tr[data-name="notes.txt"]').getAttribute('data-id'))!;
      const restored = await fetch(`${base}/api/files/download/${fileId}`, { headers: { authorization: `Bearer ${token}` } });
      assert.equal(await restored.text(), 'version one');

      // Copy into Archive, move into Inbox (the folder picker).
      await page.getByRole('button', { name: 'Actions for notes.txt' }).click();
      await page.getByRole('menuitem', { name: 'Copy' }).click();
      const picker = page.locator('dialog#picker');
      await picker.getByRole('button', { name: 'Archive' }).click();
      await picker.locator('.picker-path', { hasText: '/Archive' }).waitFor();
      await picker.getByRole('button', { name: 'Choose this folder' }).click();
      await page.getByRole('button', { name: 'Actions for notes.txt' }).click();
      await page.getByRole('menuitem', { name: 'Move', exact: true }).click();
      await picker.getByRole('button', { name: 'Inbox' }).click();
      await picker.locator('.picker-path', { hasText: '/Inbox' }).waitFor();
      await picker.getByRole('button', { name: 'Choose this folder' }).click();
      await page.locator('tr[data-name="notes.txt"]').waitFor({ state: 'detached' });
      await page.locator('tr[data-name="Archive"] .item-name').click();
      await page.locator('tr[data-name="notes.txt"]').waitFor();
      await page.locator('.breadcrumbs a').first().click();
      await page.locator('tr[data-name="Inbox"] .item-name').click();
      await page.locator('tr[data-name="notes.txt"]').waitFor();

      // A link edited, then revoked: its page says so.
      await page.getByRole('button', { name: 'Actions for notes.txt' }).click();
      await page.getByRole('menuitem', { name: 'Share' }).click();
      const share = page.locator('dialog#share');
      await share.getByRole('button', { name: 'Create link' }).click();
      const link = await share.locator('#created-link').inputValue();
      await share.getByText('0 uses').waitFor();
      await share.getByRole('button', { name: 'Edit' }).click();
      await share.locator('form.edit-link').getByLabel('Unlimited').uncheck();
      await share.locator('form.edit-link').getByLabel('Downloads allowed through the link').fill('5');
      await share.locator('form.edit-link').getByRole('button', { name: 'Save' }).click();
      await share.getByText('0 of 5 uses').waitFor();
      await share.getByRole('button', { name: 'Revoke' }).click();
      await page.locator('dialog#confirm').getByRole('button', { name: 'Revoke' }).click();
      await share.getByText('No link yet.').waitFor();
      await share.getByRole('button', { name: 'Close' }).first().click();
      const visitor = await newPage(browser, violations);
      await visitor.page.goto(link);
      await visitor.page.getByText('This link was revoked by its owner.').waitFor();
      await visitor.context.close();

      // Delete the copy for good, with a confirmation.
      await page.locator('.breadcrumbs a').first().click();
      await page.locator('tr[data-name="Archive"] .item-name').click();
      await page.getByRole('button', { name: 'Actions for notes.txt' }).click();
      await page.getByRole('menuitem', { name: 'Delete forever' }).click();
      await page.locator('dialog#confirm').getByRole('button', { name: 'Delete forever' }).click();
      await page.getByText('This folder is empty').waitFor();

      // Visibility and retention, on the file moved into Inbox.
      await page.locator('.breadcrumbs a').first().click();
      await page.locator('tr[data-name="Inbox"] .item-name').click();
      await page.locator('tr[data-name="notes.txt"] td.col-size').click();
      await details.getByLabel('Visibility').selectOption('public');
      await details.getByLabel('Retention').selectOption('30d');
      await details.getByRole('button', { name: 'Save' }).click();
      await page.locator('dialog#confirm').getByRole('button', { name: 'Make public' }).click();
      await details.getByText('Kept until').waitFor();
      const publicHref = await details.getByRole('link', { name: /\/api\/files\/public\// }).getAttribute('href');
      assert.equal(await (await fetch(`${base}${publicHref}`)).text(), 'version one');
      await screenshot(page, 'details-panel');

      // The bucket switcher.
      await page.getByLabel('Bucket').selectOption({ label: 'archive' });
      await page.locator('.breadcrumbs [aria-current="page"]', { hasText: 'archive' }).waitFor();
      await page.getByText('This folder is empty').waitFor();
      assert.deepEqual(violations, [], 'no CSP violation or page error');
    });

    it('creates an app password shown once with the WebDAV address and user name; it works as a bearer token until revoked', async (t) => {
      const started = await startServer(t, dialect);
      if (!started) return;
      const { browser, base } = started;
      const violations: string[] = [];
      const screenshot = screenshots(`app-passwords-${dialect}`);
      const email = `dee-${randomBytes(3).toString('hex')}@example.com`;
      const reg = await fetch(`${base}/api/auth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email, password: 'correct horse battery', name: 'Dee' }),
      });
      assert.equal(reg.status, 201);
      const session: string = ((await reg.json()) as any).data.accessToken;
      const me = (token: string) => fetch(`${base}/api/auth/me`, { headers: { authorization: `Bearer ${token}` } });

      const { page } = await newPage(browser, violations);
      await page.goto(`${base}/login`);
      await page.evaluate((value: string) => localStorage.setItem('coffre.token', value), session);
      await page.goto(`${base}/files`);
      await page.waitForURL(/\/files\/fld_/);
      await page.getByRole('link', { name: 'App passwords' }).click();
      await page.waitForURL(/\/app-passwords$/);
      await page.getByText('No app password yet.').waitFor();

      await page.getByLabel('Name (the app or device)').fill('Laptop file manager');
      await page.getByLabel('Expires after (days, empty = never)').fill('30');
      await page.getByRole('button', { name: 'Create app password' }).click();
      await page.getByText('Copy this app password now: it is shown only once.').waitFor();
      const token = await page.locator('#created-app-password').inputValue();
      assert.match(token, /^cof_[A-Za-z0-9_-]{43}$/);
      assert.equal(await page.locator('#webdav-address').innerText(), `${base}/dav/`);
      assert.equal(await page.locator('#webdav-user').innerText(), email);
      const row = page.locator('tr[data-name="Laptop file manager"]');
      await row.waitFor();
      assert.match(await row.innerText(), /not yet/);
      await screenshot(page, 'created');

      // The app password signs in as the account.
      const signedIn = await me(token);
      assert.equal(signedIn.status, 200);
      assert.equal(((await signedIn.json()) as any).data.email, email);

      // Shown once: after a reload the list has it, with its last use, but not the password.
      await page.reload();
      await row.waitFor();
      assert.equal(await page.locator('#created-app-password').count(), 0);
      assert.doesNotMatch(await row.innerText(), /not yet/);
      assert.doesNotMatch(await page.locator('main').innerText(), new RegExp(token));

      // Revoked after a confirmation: refused at once.
      await row.getByRole('button', { name: 'Revoke' }).click();
      const confirm = page.locator('dialog#confirm');
      await confirm.getByText('Revoke the app password “Laptop file manager”?').waitFor();
      await confirm.getByRole('button', { name: 'Revoke' }).click();
      await page.getByText('No app password yet.').waitFor();
      assert.equal((await me(token)).status, 401);
      assert.equal((await me(session)).status, 200, 'the session is not touched');
      assert.deepEqual(violations, [], 'no CSP violation or page error');
    });
  });
}
