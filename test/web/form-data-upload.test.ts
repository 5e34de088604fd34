// A file uploaded through Chromium's own FormData keeps the name it has on disk (issue 34): the
// browser escapes `"` as %22 in the multipart filename, as the HTML standard says, and the server
// undoes it (test/modules/files/form-data-names.test.ts covers the other escapes).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { signUp } from '../helper.js';
import { BROWSER_DIALECTS, newPage, startServer } from '../support/browser.js';
import { rootFolderId } from '../support/files.js';

// Browser globals used inside page.evaluate (this file is type-checked with Node's library only).
declare const FormData: any, File: any, Response: any, fetch: any;

const NAME = 'Rapport "final" d\'été.txt';

for (const dialect of BROWSER_DIALECTS) {
  describe(`multipart uploads from Chromium [${dialect}]`, () => {
    it('a name with quotes is stored as it was on disk', { timeout: 120_000 }, async (t) => {
      const started = await startServer(t, dialect);
      if (!started) return;
      const { browser, app, base } = started;
      const user = await signUp(app);
      const folderId = await rootFolderId(user);
      const violations: string[] = [];
      const { context, page } = await newPage(browser, violations);
      t.after(() => context.close());
      await page.goto(`${base}/login`);
      const answer = await page.evaluate(
        async ({ folderId, token, name }: { folderId: string; token: string; name: string }) => {
          const form = new FormData();
          form.append('file', new File(['bonjour'], name, { type: 'text/plain' }));
          const res = await fetch(`/api/files/upload/${folderId}`, {
            method: 'POST',
            body: form,
            headers: { authorization: `Bearer ${token}` },
          });
          // What the browser's multipart encoder makes of the name (the one fetch just used).
          const encoded = (await new Response(form).text()) as string;
          return { status: res.status as number, body: (await res.json()) as { data: { id: string; name: string }[] }, encoded };
        },
        { folderId, token: user.token, name: NAME },
      );
      assert.equal(answer.status, 201, JSON.stringify(answer.body));
      assert.match(answer.encoded, /filename="Rapport %22final%22 d'été\.txt"/, 'Chromium escapes the quotes in the part');
      assert.equal(answer.body.data[0]!.name, NAME);
      const details = await user.api.get(`/api/files/details/${answer.body.data[0]!.id}`);
      assert.equal(details.body.name, NAME, 'the details, no envelope');
      const download = await app.inject({
        url: `/api/files/download/${answer.body.data[0]!.id}`,
        headers: { authorization: `Bearer ${user.token}` },
      });
      assert.equal(download.body, 'bonjour');
      assert.deepEqual(violations, []);
    });
  });
}
