// Share links that work for others (issue 34): with COFFRE_PUBLIC_URL unset, a link made from the
// browser starts with the address the page was opened by; the share dialog warns when that
// address is one only this computer can open.
import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import type { Page } from 'playwright-core';
import type { DialectName } from '../../src/db/database.js';
import { BROWSER_DIALECTS, openSignedIn, screenshots, startWithOwner } from '../support/browser.js';

const SLOW = { timeout: 120_000 };

/** Signs the page in, opens the share dialog of `name` and creates a link; the dialog's link. */
async function createLinkFromTheDialog(page: Page, base: string, token: string, folderId: string, name: string) {
  await openSignedIn(page, base, token, `/files/${folderId}`);
  await page.getByRole('button', { name: `Actions for ${name}` }).click();
  await page.getByRole('menuitem', { name: 'Share' }).click();
  const share = page.locator('dialog#share');
  await share.getByRole('heading', { name: 'Links', exact: true }).waitFor();
  const warnedBefore = await share.getByTestId('local-address-warning').count();
  await share.getByRole('button', { name: 'Create link' }).click();
  const link = await share.locator('#created-link').inputValue();
  const warning = share.getByTestId('local-address-warning');
  return { link, warnedBefore, warning: (await warning.count()) > 0 ? await warning.innerText() : null };
}

/** A server without COFFRE_PUBLIC_URL, its owner with plan.txt, and a page; null without a browser. */
async function setUp(t: TestContext, dialect: DialectName, hostName?: string) {
  const started = await startWithOwner(t, dialect, { 'plan.txt': 'the plan' }, { config: { publicUrl: null }, hostName });
  if (!started) return null;
  const { base, owner, root, page, violations } = started;
  const made = await createLinkFromTheDialog(page, base, owner.token, root, 'plan.txt');
  return { base, page, made, violations };
}

for (const dialect of BROWSER_DIALECTS) {
  describe(`share link addresses in Chromium [${dialect}]`, () => {
    it('a page opened by a network name makes links with that name, and no warning', SLOW, async (t) => {
      const opened = await setUp(t, dialect, 'coffre.lan');
      if (!opened) return;
      const { base, made, violations } = opened;
      assert.match(base, /^http:\/\/coffre\.lan:\d+$/);
      assert.match(made.link, new RegExp(`^${base}/s/[A-Za-z0-9_-]+#[A-Za-z0-9_-]{43}$`));
      assert.deepEqual([made.warnedBefore, made.warning], [0, null]);
      assert.deepEqual(violations, []);
    });

    it('a page opened by 127.0.0.1 is warned that its links open on this computer only', SLOW, async (t) => {
      const opened = await setUp(t, dialect);
      if (!opened) return;
      const { base, page, made, violations } = opened;
      assert.ok(made.link.startsWith(`${base}/s/`), made.link);
      assert.equal(made.warnedBefore, 1, 'warned before a link is made');
      await screenshots(`link-address-local-${dialect}`)(page, 'share');
      assert.match(made.warning ?? '', new RegExp(`start with ${base.replace(/\./g, '\\.')}, which only this computer can open`));
      assert.deepEqual(violations, []);
    });

    it("with COFFRE_PUBLIC_URL set, links and the details panel's public address both start with it", SLOW, async (t) => {
      const publicUrl = 'https://files.example.org';
      const started = await startWithOwner(t, dialect, { 'plan.txt': 'the plan' }, { config: { publicUrl } });
      if (!started) return;
      const { base, owner, root, page, violations } = started;
      const plan = started.files['plan.txt'];
      assert.equal((await owner.api.put(`/api/files/update/${plan.id}`, { name: 'plan.txt', visibility: 'public' })).status, 200);
      const made = await createLinkFromTheDialog(page, base, owner.token, root, 'plan.txt');
      assert.ok(made.link.startsWith(`${publicUrl}/s/`), made.link);
      assert.equal(made.warning, null, "no warning: the links do not start with this computer's address");
      await page.locator('dialog#share').getByRole('button', { name: 'Close' }).first().click();
      await page.locator('tr[data-name="plan.txt"] td.col-size').click();
      const address = page.locator('aside.details').getByRole('link', { name: /\/api\/files\/public\// });
      await address.waitFor();
      assert.equal(await address.innerText(), `${publicUrl}/api/files/public/${plan.hashName}`);
      assert.deepEqual(violations, []);
    });
  });
}
