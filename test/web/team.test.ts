// Teams from the browser (issue 34), in Chromium against the real server: the first account, an
// administrator, invites a colleague from the Users page; the colleague opens the link in a fresh
// browser, chooses a name and password and lands in their files; the administrator sets a quota,
// disables the account (the colleague's page is signed out at its next request), enables it again
// and hands out a password-reset link the colleague uses.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { signUp } from '../helper.js';
import { BROWSER_DIALECTS, newPage, openSignedIn, screenshots, startServer } from '../support/browser.js';

const COLLEAGUE = 'camille@example.com';

/** Reads the one-time link the Users page just showed. */
async function issuedLink(page: Page): Promise<string> {
  const link = await page.locator('#issued-link').inputValue();
  assert.match(link, /\/invite\/[A-Za-z0-9_-]{43}$/);
  return link;
}

/** Opens an invitation link in `page` and submits the form it shows; waits for the file list. */
async function useLink(page: Page, link: string, fields: { name?: string; password: string }): Promise<void> {
  await page.goto(link);
  if (fields.name !== undefined) {
    await page.getByRole('heading', { name: 'Join Coffre' }).waitFor();
    await page.getByText(`You are invited to join with ${COLLEAGUE}.`).waitFor();
    await page.getByLabel('Name').fill(fields.name);
    await page.getByLabel('Password').fill(fields.password);
    await page.getByRole('button', { name: 'Join' }).click();
  } else {
    await page.getByRole('heading', { name: 'Choose a new password' }).waitFor();
    await page.getByLabel('New password').fill(fields.password);
    await page.getByRole('button', { name: 'Set the password' }).click();
  }
  await page.waitForURL(/\/files\/fld_/);
}

for (const dialect of BROWSER_DIALECTS) {
  describe(`a team grown from the browser [${dialect}]`, () => {
    it(
      'an administrator invites a colleague who joins in a fresh browser; quota, disable, enable, reset',
      { timeout: 240_000 },
      async (t) => {
        const started = await startServer(t, dialect);
        if (!started) return;
        const { browser, app, base } = started;
        const shot = screenshots(`team-${dialect}`);
        const violations: string[] = [];
        const admin = await signUp(app, 'Ada Admin');
        const adminSide = await newPage(browser, violations);
        t.after(() => adminSide.context.close());
        const page = adminSide.page;
        await openSignedIn(page, base, admin.token, `/files`);
        await page.getByRole('link', { name: 'Users' }).click();
        await page.getByRole('heading', { name: 'Users', exact: true }).waitFor();

        // ---- invite ----
        await page.getByLabel('E-mail').fill(COLLEAGUE);
        await page.getByLabel(/Quota in GB/).fill('2');
        await page.getByRole('button', { name: 'Invite', exact: true }).click();
        const invitation = await issuedLink(page);
        assert.ok(invitation.startsWith(`${base}/invite/`), invitation);
        await page.locator(`li[data-email="${COLLEAGUE}"]`).waitFor();
        await shot(page, 'invited');

        // ---- the colleague joins in a browser of their own ----
        const colleagueSide = await newPage(browser, violations);
        t.after(() => colleagueSide.context.close());
        const colleague = colleagueSide.page;
        await useLink(colleague, invitation, { name: 'Camille', password: 'camille password 1' });
        await colleague.locator('.topbar .user', { hasText: 'Camille' }).waitFor();
        assert.equal(await colleague.getByRole('link', { name: 'Users' }).count(), 0, 'no Users page for a member');
        await shot(colleague, 'joined');
        const reused = await newPage(browser, violations);
        t.after(() => reused.context.close());
        await reused.page.goto(invitation);
        await reused.page.getByText('This invitation link was used already').waitFor();

        // ---- quota, then disable: the colleague's next request signs them out ----
        await page.reload();
        const row = page.locator(`tr[data-email="${COLLEAGUE}"]`);
        await row.getByText('0 B of 2 GB').waitFor();
        await row.getByRole('button', { name: 'Quota of Camille' }).click();
        await page
          .locator('dialog#quota')
          .getByLabel(/Quota in GB/)
          .fill('3');
        await page.locator('dialog#quota').getByRole('button', { name: 'Save' }).click();
        await row.getByText('0 B of 3 GB').waitFor();
        await row.getByRole('button', { name: 'Disable' }).click();
        await page.locator('dialog#confirm').getByRole('button', { name: 'Disable' }).click();
        await row.getByText('Disabled').waitFor();
        await shot(page, 'disabled');
        await colleague.getByRole('link', { name: 'Trash' }).click();
        await colleague.waitForURL(/\/login/);
        await colleague.getByLabel('E-mail').fill(COLLEAGUE);
        await colleague.getByLabel('Password').fill('camille password 1');
        await colleague.getByRole('button', { name: 'Sign in' }).click();
        await colleague.getByText('This account is disabled').waitFor();

        // ---- enable, then a password reset link ----
        await row.getByRole('button', { name: 'Enable' }).click();
        await row.getByText('Active').waitFor();
        await row.getByRole('button', { name: 'Reset password for Camille' }).click();
        const reset = await issuedLink(page);
        await useLink(colleague, reset, { password: 'camille password 2' });
        await colleague.locator('.topbar .user', { hasText: 'Camille' }).waitFor();
        const signIn = await app.inject({
          method: 'POST',
          url: '/api/auth/login',
          payload: { email: COLLEAGUE, password: 'camille password 2' },
        });
        assert.equal(signIn.statusCode, 200, signIn.body);
        assert.equal(signIn.json().data.user.quotaBytes, 3 * 1024 ** 3);
        assert.deepEqual(violations, []);
      },
    );
  });
}
