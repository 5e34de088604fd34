// Names of multipart uploads as the person typed them (issue 34): browsers escape `"`, CR and LF
// of a file name as %22, %0D and %0A in multipart/form-data (the HTML standard's form encoding),
// and the server undoes exactly those. test/web/form-data-upload.test.ts sends the same through
// Chromium's own FormData.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DIALECTS, build, signUp, type TestUser } from '../../helper.js';
import { assertError } from '../../support/errors.js';
import { assertStatus } from '../../support/folders.js';
import { rootFolderId } from '../../support/files.js';
import { multipart } from '../../support/multipart.js';

/** The names of the files of a folder. */
async function fileNames(user: TestUser, folderId: string): Promise<string[]> {
  const res = await user.api.get(`/api/files/list/${folderId}?limit=1000`);
  assertStatus(res, 200, 'the file list');
  return res.body.data.data.map((file: { name: string }) => file.name).sort();
}

for (const dialect of DIALECTS) {
  describe(`file names of multipart uploads [${dialect}]`, () => {
    async function setUp(t: Parameters<typeof build>[0]) {
      const { app } = await build(t, dialect);
      const user = await signUp(app);
      const folderId = await rootFolderId(user);
      const upload = (filenames: string[]) => {
        const { body, contentType } = multipart(filenames.map((filename) => ({ filename, data: filename })));
        return app.inject({
          method: 'POST',
          url: `/api/files/upload/${folderId}`,
          headers: { authorization: `Bearer ${user.token}`, 'content-type': contentType },
          payload: body,
        });
      };
      return { user, folderId, upload };
    }

    it("undoes the browsers' %22 escapes, and keeps every other % as typed", async (t) => {
      const { user, folderId, upload } = await setUp(t);
      const res = await upload(["Rapport %22final%22 d'été.txt", '100%.txt', '50%25 off.txt', 'lower %0a %22%22.txt']);
      assert.equal(res.statusCode, 201, res.body);
      const stored = res.json().data.map((file: { name: string }) => file.name);
      const expected = ['Rapport "final" d\'été.txt', '100%.txt', '50%25 off.txt', 'lower %0a "".txt'];
      assert.deepEqual(stored, expected);
      assert.deepEqual(await fileNames(user, folderId), [...expected].sort());
    });

    it('a name that held CR or LF is refused as any control character is, and nothing is stored', async (t) => {
      const { user, folderId, upload } = await setUp(t);
      for (const filename of ['two%0Alines.txt', 'carriage%0Dreturn.txt']) {
        const res = await upload(['fine.txt', filename]);
        assertError({ status: res.statusCode, body: res.json() }, 400, 'INVALID_NAME');
      }
      assert.deepEqual(await fileNames(user, folderId), []);
    });
  });
}
