// Accessibility of every main screen (issue 34, item 9): axe-core, with every standard rule set,
// finds no violation of any impact, in the light and dark themes and in English and French, in
// Chromium against the real server. The screens show realistic content: files and folders, a share
// with a link and a person, a trash, a folder shared by someone else, app passwords, users.
// Left out: the API reference under /docs, which is Swagger UI's page, not ours.
import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { signUp, type TestUser } from '../helper.js';
import { assertNoAxeViolations, axeViolations, describeViolations } from '../support/axe.js';
import { BROWSER_DIALECTS, newPage, openSignedIn, startServer } from '../support/browser.js';
import { putFile, rootFolderId } from '../support/files.js';
import { assertStatus, mkdir } from '../support/folders.js';

// Browser globals used inside page.evaluate (this file is type-checked with Node's library only).
declare const document: any;

/** The labels the visits find controls by, in each language (as web/src/messages-*.ts say them). */
const LABELS = {
  en: {
    signIn: 'Sign in',
    name: 'Name',
    join: 'Join',
    unlock: 'Unlock',
    password: 'Password',
    actionsFor: (name: string) => `Actions for ${name}`,
    share: 'Share',
    move: 'Move',
    deleteForever: 'Delete forever',
    shortcuts: 'Keyboard shortcuts',
    close: 'Close',
    selection: 'Selected items',
    newFolder: 'New folder',
    folderName: 'Folder name',
    create: 'Create',
    trash: 'Trash',
    sharedWithMe: 'Shared with me',
    appPasswords: 'App passwords',
    appPasswordName: 'Name (the app or device)',
    createAppPassword: 'Create app password',
    users: 'Users',
    email: 'E-mail',
    invite: 'Invite',
    quotaOf: (name: string) => `Quota of ${name}`,
  },
  fr: {
    signIn: 'Se connecter',
    name: 'Nom',
    join: 'Rejoindre',
    unlock: 'Déverrouiller',
    password: 'Mot de passe',
    actionsFor: (name: string) => `Actions pour ${name}`,
    share: 'Partager',
    move: 'Déplacer',
    deleteForever: 'Supprimer définitivement',
    shortcuts: 'Raccourcis clavier',
    close: 'Fermer',
    selection: 'Éléments sélectionnés',
    newFolder: 'Nouveau dossier',
    folderName: 'Nom du dossier',
    create: 'Créer',
    trash: 'Corbeille',
    sharedWithMe: 'Partagés avec moi',
    appPasswords: 'Mots de passe d’application',
    appPasswordName: 'Nom (l’application ou l’appareil)',
    createAppPassword: 'Créer un mot de passe d’application',
    users: 'Utilisateurs',
    email: 'Courriel',
    invite: 'Inviter',
    quotaOf: (name: string) => `Quota de ${name}`,
  },
};

/** A theme and a language, as a person's system would set them. */
interface Combination {
  name: string;
  colorScheme: 'light' | 'dark';
  locale: string;
  lang: 'en' | 'fr';
  m: (typeof LABELS)['en'];
}

const COMBINATIONS: Combination[] = [
  { name: 'light-en', colorScheme: 'light', locale: 'en-US', lang: 'en', m: LABELS.en },
  { name: 'dark-en', colorScheme: 'dark', locale: 'en-US', lang: 'en', m: LABELS.en },
  { name: 'light-fr', colorScheme: 'light', locale: 'fr-FR', lang: 'fr', m: LABELS.fr },
  { name: 'dark-fr', colorScheme: 'dark', locale: 'fr-FR', lang: 'fr', m: LABELS.fr },
];

/** What the screens show, stored through the API once per dialect. */
interface World {
  base: string;
  owner: TestUser;
  guest: TestUser;
  root: string;
  fileLink: string;
  folderLink: string;
  invitation: string;
}

async function seed(t: TestContext, dialect: Parameters<typeof startServer>[1]): Promise<{ world: World; browser: Browser } | null> {
  const started = await startServer(t, dialect);
  if (!started) return null;
  const { app, base, browser } = started;
  // The first account is the administrator: the Users page is there.
  const owner = await signUp(app, 'Olivia Owner');
  const guest = await signUp(app, 'Gus Guest');
  const root = await rootFolderId(owner);
  const projects = await mkdir(owner, 'Projects', root);
  const photos = await mkdir(owner, 'Photos', root);
  await putFile(app, owner, projects, 'plan.txt', 'the plan');
  await putFile(app, owner, photos, 'beach.jpg', Buffer.alloc(3000, 7));
  const notes = await putFile(app, owner, root, 'notes.txt', Buffer.alloc(2048, 'n'));
  await putFile(app, owner, root, 'report.pdf', Buffer.alloc(40_000, 'r'));
  const old = await putFile(app, owner, root, 'old.txt', 'old');
  assertStatus(await owner.api.delete(`/api/files/delete/${old.id}?trash=soft`), 200);

  // notes.txt: shared by a link with a password and with one person.
  const link = await owner.api.post(`/api/files/share/${notes.id}`, { password: 'open sesame' });
  assertStatus(link, 201, 'file link');
  const person = { userId: guest.id, canView: true, canDownload: true, canEdit: false };
  assertStatus(await owner.api.post(`/api/files/share-users/${notes.id}`, { users: [person] }), 201, 'share with a person');
  const folderLink = await owner.api.post(`/api/folders/share/${photos}`, {});
  assertStatus(folderLink, 201, 'folder link');

  // A folder the guest shares with the owner, for "Shared with me".
  const guestFolder = await mkdir(guest, 'Guest folder');
  await putFile(app, guest, guestFolder, 'minutes.txt', 'minutes');
  const back = { userId: owner.id, canView: true, canDownload: true, canEdit: false };
  assertStatus(await guest.api.post(`/api/folders/share-users/${guestFolder}`, { users: [back] }), 201, 'share back');

  assertStatus(await owner.api.post('/api/auth/tokens', { name: 'Laptop' }), 201, 'app password');
  const invitation = await owner.api.post('/api/admin/invitations', { email: 'camille@example.com' });
  assertStatus(invitation, 201, 'invitation');
  return {
    browser,
    world: {
      base,
      owner,
      guest,
      root,
      fileLink: link.body.data.shareLink,
      folderLink: folderLink.body.data.shareLink,
      invitation: invitation.body.data.invitationLink,
    },
  };
}

/** Runs axe on the screen as it is and records what it finds under the screen's name. */
function checker(combination: Combination, found: string[]) {
  return async (page: Page, screen: string) => {
    const violations = await axeViolations(page);
    if (violations.length > 0) found.push(`${screen} [${combination.name}]:\n${describeViolations(violations)}`);
  };
}
type Check = ReturnType<typeof checker>;

/** The page is in the theme and the language of the combination: the checks are about the right screens. */
async function assertSetting(page: Page, combination: Combination): Promise<void> {
  const setting = await page.evaluate(() => ({ theme: document.documentElement.dataset.theme, lang: document.documentElement.lang }));
  assert.deepEqual(setting, { theme: combination.colorScheme, lang: combination.lang });
}

/** Sign-in, sign-up, the invitation page, and a file and a folder link, signed out. */
async function signedOutScreens(page: Page, world: World, c: Combination, check: Check): Promise<void> {
  await page.goto(`${world.base}/login`);
  await page.getByRole('button', { name: c.m.signIn }).waitFor();
  await assertSetting(page, c);
  await check(page, 'sign-in');
  await page.goto(`${world.base}/signup`);
  await page.getByLabel(c.m.name).waitFor();
  await check(page, 'sign-up');
  await page.goto(world.invitation);
  await page.getByRole('button', { name: c.m.join }).waitFor();
  await check(page, 'invitation');

  await page.goto(world.fileLink);
  await page.getByRole('button', { name: c.m.unlock }).waitFor();
  await check(page, 'file link: password');
  await page.getByLabel(c.m.password).fill('not the password');
  await page.getByRole('button', { name: c.m.unlock }).click();
  await page.locator('.public-card .error').waitFor();
  await check(page, 'file link: a wrong password');
  await page.getByLabel(c.m.password).fill('open sesame');
  await page.getByRole('button', { name: c.m.unlock }).click();
  await page.getByRole('heading', { name: /notes\.txt/ }).waitFor();
  await check(page, 'file link: unlocked');
  await page.goto(world.folderLink);
  await page.getByRole('heading', { name: 'Photos' }).waitFor();
  await page.getByText('beach.jpg').waitFor();
  await check(page, 'folder link');
}

/** The file list: as it opens, with the details panel, the row menu, the selection bar and the share dialog. */
async function fileListScreens(page: Page, world: World, c: Combination, check: Check): Promise<void> {
  await openSignedIn(page, world.base, world.owner.token, `/files/${world.root}`);
  const notes = page.locator('tr[data-name="notes.txt"]');
  await notes.waitFor();
  await page.locator('tr[data-name="Projects"]').waitFor();
  await assertSetting(page, c);
  await page.getByText(c.m.shortcuts).click();
  await page.locator('#keyboard-help').waitFor();
  await check(page, 'file list');

  await notes.locator('td.col-size').click();
  await page.locator('aside.details').getByRole('heading', { name: 'notes.txt' }).waitFor();
  await check(page, 'file list with the details panel');

  await page.getByRole('button', { name: c.m.actionsFor('notes.txt') }).click();
  await page.getByRole('menuitem', { name: c.m.share }).waitFor();
  await check(page, 'row menu');
  await page.getByRole('menuitem', { name: c.m.move, exact: true }).click();
  await page.locator('dialog#picker').getByRole('button', { name: 'Projects' }).waitFor();
  await check(page, 'move dialog');
  await page.keyboard.press('Escape');
  await page.locator('dialog#picker').waitFor({ state: 'detached' });

  await page.getByRole('button', { name: c.m.actionsFor('notes.txt') }).click();
  await page.getByRole('menuitem', { name: c.m.share }).click();
  const share = page.locator('dialog#share');
  await share.locator('.people-list').getByText(world.guest.email).waitFor();
  await share.getByText(/…\/s\//).waitFor();
  await check(page, 'share dialog');
  await share.getByRole('button', { name: c.m.close }).first().click();
  await share.waitFor({ state: 'detached' });

  await notes.getByRole('checkbox').check();
  await page.getByRole('toolbar', { name: c.m.selection }).waitFor();
  await check(page, 'selection bar');
  await notes.getByRole('checkbox').uncheck();
}

/** The new-folder dialog, the notice its creation shows, and the upload panel after an upload. */
async function creationScreens(page: Page, c: Combination, check: Check): Promise<void> {
  await page.getByRole('button', { name: c.m.newFolder }).click();
  const prompt = page.locator('dialog#prompt');
  await prompt.getByLabel(c.m.folderName).waitFor();
  await check(page, 'new folder dialog');
  await prompt.getByLabel(c.m.folderName).fill(`Folder ${c.name}`);
  await prompt.getByRole('button', { name: c.m.create }).click();
  await page.locator('.notice').first().waitFor();
  await check(page, 'notice');

  const name = `upload-${c.name}.txt`;
  await page.locator('input[type="file"]').setInputFiles([{ name, mimeType: 'text/plain', buffer: Buffer.from('uploaded\n') }]);
  await page.locator(`.upload.done[data-name="${name}"]`).waitFor();
  await page.locator(`tr[data-name="${name}"]`).waitFor();
  await check(page, 'upload panel');
}

/** The other pages of the navigation: trash, shared with me (and the shared folder), app passwords, users. */
async function otherPages(page: Page, world: World, c: Combination, check: Check): Promise<void> {
  await page.getByRole('link', { name: c.m.trash }).click();
  await page.locator('tr[data-name="old.txt"]').waitFor();
  await check(page, 'trash');
  await page.locator('tr[data-name="old.txt"]').getByRole('button', { name: c.m.deleteForever }).click();
  await page.locator('dialog#confirm').waitFor();
  await check(page, 'confirmation dialog');
  await page.keyboard.press('Escape');
  await page.locator('dialog#confirm').waitFor({ state: 'detached' });

  await page.getByRole('link', { name: c.m.sharedWithMe }).click();
  await page.getByText('Guest folder').waitFor();
  await check(page, 'shared with me');
  await page.getByRole('link', { name: 'Guest folder' }).click();
  await page.locator('tr[data-name="minutes.txt"]').waitFor();
  await check(page, 'a folder shared with me');

  await page.getByRole('link', { name: c.m.appPasswords }).click();
  await page.getByText('Laptop').first().waitFor();
  await check(page, 'app passwords');
  await page.getByLabel(c.m.appPasswordName).fill(`Phone ${c.name}`);
  await page.getByRole('button', { name: c.m.createAppPassword }).click();
  await page.locator('#created-app-password').waitFor();
  await check(page, 'app passwords: a new one shown once');

  await page.getByRole('link', { name: c.m.users, exact: true }).click();
  await page.locator(`tr[data-email="${world.guest.email}"]`).waitFor();
  await check(page, 'users');
  await page.getByLabel(c.m.email).fill(`invited-${c.name}@example.com`);
  await page.getByRole('button', { name: c.m.invite, exact: true }).click();
  await page.locator('#issued-link').waitFor();
  await check(page, 'users: an invitation link shown once');
  await page
    .locator(`tr[data-email="${world.guest.email}"]`)
    .getByRole('button', { name: c.m.quotaOf('Gus Guest') })
    .click();
  await page.locator('dialog#quota').waitFor();
  await check(page, 'quota dialog');
}

/** The check can fail: an image without a text alternative and grey on white are caught and named. */
async function deliberateViolations(browser: Browser, world: World, errors: string[]): Promise<void> {
  const { context, page } = await newPage(browser, errors);
  try {
    await page.goto(`${world.base}/login`);
    await page.getByRole('button', { name: LABELS.en.signIn }).waitFor();
    await assertNoAxeViolations(page, 'sign-in');
    await page.evaluate(() => {
      const main = document.querySelector('main');
      main.append(document.createElement('img'));
      const faint = document.createElement('p');
      faint.textContent = 'faint text';
      faint.style.color = '#b0b0b0';
      main.append(faint);
    });
    await assert.rejects(assertNoAxeViolations(page, 'sign-in with two mistakes'), (error: Error) => {
      assert.match(error.message, /axe found violations on sign-in with two mistakes/);
      assert.match(error.message, /image-alt \(critical\): .*\n\s+- #main > img/);
      assert.match(error.message, /color-contrast \(serious\): .*\n\s+- #main > p/);
      return true;
    });
  } finally {
    await context.close();
  }
}

for (const dialect of BROWSER_DIALECTS) {
  describe(`accessibility of the main screens, by axe-core [${dialect}]`, () => {
    it('no violation of any impact, in both themes and both languages', { timeout: 480_000 }, async (t) => {
      const seeded = await seed(t, dialect);
      if (!seeded) return;
      const { world, browser } = seeded;
      const found: string[] = [];
      const errors: string[] = [];
      await t.test('the check catches a deliberate violation', () => deliberateViolations(browser, world, errors));
      for (const c of COMBINATIONS) {
        await t.test(c.name, async () => {
          const check = checker(c, found);
          const { context, page } = await newPage(browser, errors, { colorScheme: c.colorScheme, locale: c.locale });
          try {
            await signedOutScreens(page, world, c, check);
            await fileListScreens(page, world, c, check);
            await creationScreens(page, c, check);
            await otherPages(page, world, c, check);
          } finally {
            await context.close();
          }
        });
      }
      assert.deepEqual(errors, [], 'no page error or policy violation');
      assert.equal(found.length, 0, `axe found violations:\n${found.join('\n')}`);
    });
  });
}
