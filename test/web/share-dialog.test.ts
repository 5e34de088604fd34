// Sharing made simple (issue 34, item 5), in Chromium against the real server: one form for a new
// link and for an existing one (expiry date or never, access limit or unlimited, a password typed
// or generated, downloads), fields back to their defaults after a link is made, and every link
// copied again later, its address opening the file for someone else; sharing with a person, a
// change of their permissions and their removal each say so.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Locator, Page } from 'playwright-core';
import { signUp } from '../helper.js';
import { BROWSER_DIALECTS, newPage, openSignedIn, screenshots, startWithOwner } from '../support/browser.js';

/** Opens the share dialog of `name` from its row menu. */
async function openShare(page: Page, name: string): Promise<Locator> {
  await page.getByRole('button', { name: `Actions for ${name}` }).click();
  await page.getByRole('menuitem', { name: 'Share', exact: true }).click();
  return page.locator('dialog#share');
}

/** A local date `days` from today as a date input holds it (YYYY-MM-DD). */
function localDate(days: number): string {
  const now = new Date();
  const date = new Date(now.getFullYear(), now.getMonth(), now.getDate() + days);
  return `${date.getFullYear()}-${String(date.getMonth() + 1).padStart(2, '0')}-${String(date.getDate()).padStart(2, '0')}`;
}

/** Asserts the new-link form holds its defaults: a week, unlimited, no password, downloads allowed. */
async function assertDefaults(form: Locator) {
  assert.equal(await form.getByLabel('Never expires').isChecked(), false);
  assert.equal(await form.getByLabel('Expires on').inputValue(), localDate(7));
  assert.equal(await form.getByLabel('Unlimited').isChecked(), true);
  assert.equal(await form.locator('input[name="max-access"]').count(), 0, 'no access count while unlimited');
  assert.equal(await form.getByLabel('Password (optional)').inputValue(), '');
  assert.equal(await form.getByLabel('Can download').isChecked(), true);
}

for (const dialect of BROWSER_DIALECTS) {
  describe(`share dialog in Chromium [${dialect}]`, () => {
    it(
      'makes a link with a date, a limit and a generated password, resets, copies it again and edits it; tells each change of people',
      { timeout: 180_000 },
      async (t) => {
        const started = await startWithOwner(t, dialect, { 'plan.txt': 'the plan' });
        if (!started) return;
        const { browser, base, owner, root, page, violations } = started;
        const screenshot = screenshots(`share-dialog-${dialect}`);
        await openSignedIn(page, base, owner.token, `/files/${root}`);
        await page.locator('tr[data-name="plan.txt"]').waitFor();

        // ---- a new link: plain controls, then the form starts over ----
        let share = await openShare(page, 'plan.txt');
        const form = share.locator('form.new-link');
        await assertDefaults(form);
        await form.getByLabel('Expires on').fill(localDate(3));
        await form.getByLabel('Unlimited').uncheck();
        await form.getByLabel('Downloads allowed through the link').fill('2');
        await form.getByRole('button', { name: 'Generate' }).click();
        const password = await form.getByLabel('Password (optional)').inputValue();
        assert.match(password, /^[A-Za-z2-9]{16}$/, 'a generated password');
        assert.equal(await form.getByLabel('Password (optional)').getAttribute('type'), 'text', 'shown once generated');
        await screenshot(page, 'new-link-filled');
        await form.getByRole('button', { name: 'Create link' }).click();
        const made = await share.locator('#created-link').inputValue();
        assert.match(made, new RegExp(`^${base}/s/[A-Za-z0-9_-]+#[A-Za-z0-9_-]{43}$`));
        assert.equal(await share.locator('#created-link-password').inputValue(), password, 'the password, to send separately');
        const listed = share.locator('.link-list li');
        await listed.getByText('0 of 2 uses').waitFor();
        await listed.getByText(/expires/).waitFor();
        await listed.getByText('password').waitFor();
        await assertDefaults(share.locator('form.new-link'));
        await screenshot(page, 'link-made');
        await share.getByRole('button', { name: 'Close' }).first().click();

        // ---- later: the link copied again gives the same address ----
        share = await openShare(page, 'plan.txt');
        assert.equal(await share.locator('#created-link').count(), 0);
        await share.locator('.link-list li').getByRole('button', { name: 'Copy link' }).click();
        const again = share.locator('.link-list li input[readonly]');
        await again.waitFor();
        assert.equal(await again.inputValue(), made);
        await page.locator('.notices .notice', { hasText: 'Copied' }).first().waitFor();

        // ---- someone else opens it with the password ----
        const visitor = await newPage(browser, violations);
        await visitor.page.goto(await again.inputValue());
        await visitor.page.getByLabel('Password').fill(password);
        await visitor.page.getByRole('button', { name: 'Unlock' }).click();
        await visitor.page.getByText('plan.txt').first().waitFor();
        await visitor.context.close();

        // ---- the same form edits it: never expires, unlimited, the password removed ----
        await share.locator('.link-list li').getByRole('button', { name: 'Edit' }).click();
        const edit = share.locator('form.edit-link');
        assert.equal(await edit.getByLabel('Expires on').inputValue(), localDate(3), 'the link’s own date');
        assert.equal(await edit.getByLabel('Downloads allowed through the link').inputValue(), '2');
        await edit.getByLabel('Never expires').check();
        assert.equal(await edit.getByLabel('Expires on').count(), 0, 'no date for a link that never expires');
        await edit.getByLabel('Unlimited').check();
        await edit.getByLabel('Remove the password').check();
        await edit.getByRole('button', { name: 'Save' }).click();
        await listed.getByText('never expires').waitFor();
        await listed.getByText('0 uses').waitFor();
        assert.equal(await listed.getByText('password').count(), 0, 'no password any more');
        await screenshot(page, 'link-edited');

        // ---- people: each change says so ----
        const colleague = await signUp(started.app, 'Chloé Colleague');
        await share.getByLabel('Their e-mail address').fill(colleague.email);
        await share.getByRole('button', { name: 'Add', exact: true }).click();
        await page.locator('.notices .notice', { hasText: 'Shared with Chloé Colleague' }).waitFor();
        const person = share.locator('.people-list li', { hasText: colleague.email });
        await person.getByLabel('Can edit').check();
        await page.locator('.notices .notice', { hasText: 'Permissions of Chloé Colleague saved' }).waitFor();
        await person.getByRole('button', { name: `Remove ${colleague.email}` }).click();
        await page.locator('.notices .notice', { hasText: 'Chloé Colleague no longer has access' }).waitFor();
        await share.getByText('Not shared with anyone yet.').waitFor();
        assert.deepEqual(violations, []);
      },
    );
  });
}
