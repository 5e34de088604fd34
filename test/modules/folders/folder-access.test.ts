// GET /folders/{folderId}/access (issue 34): what the caller may do in a folder, so that screens
// offer only the actions that will work. Grants reach down from an ancestor; strangers get 404.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DIALECTS, build, signUp } from '../../helper.js';
import { assertError } from '../../support/errors.js';
import { rootFolderId } from '../../support/files.js';
import { assertStatus, mkdir } from '../../support/folders.js';

for (const dialect of DIALECTS) {
  describe(`folder access [${dialect}]`, () => {
    it('the owner everything, a grantee their grants down the tree, a stranger 404', async (t) => {
      const { app } = await build(t, dialect);
      const owner = await signUp(app);
      const viewer = await signUp(app);
      const editor = await signUp(app);
      const stranger = await signUp(app);
      const shared = await mkdir(owner, 'Shared', await rootFolderId(owner));
      const inner = await mkdir(owner, 'Inner', shared);
      const grant = (userId: string, flags: object) =>
        owner.api.post(`/api/folders/share-users/${shared}`, { users: [{ userId, ...flags }] });
      assertStatus(await grant(viewer.id, { canView: true, canDownload: false, canEdit: false }), 201);
      assertStatus(await grant(editor.id, { canView: true, canDownload: true, canEdit: true }), 201);
      const accessOf = async (user: typeof owner, folderId: string) => {
        const res = await user.api.get(`/api/folders/${folderId}/access`);
        assertStatus(res, 200, 'access');
        return res.body.data;
      };
      assert.deepEqual(await accessOf(owner, inner), { isOwner: true, canView: true, canDownload: true, canEdit: true });
      assert.deepEqual(await accessOf(viewer, inner), { isOwner: false, canView: true, canDownload: false, canEdit: false });
      assert.deepEqual(await accessOf(editor, inner), { isOwner: false, canView: true, canDownload: true, canEdit: true });
      assertError(await stranger.api.get(`/api/folders/${inner}/access`), 404, 'FOLDER_NOT_FOUND');
      assertError(await viewer.api.get(`/api/folders/${await rootFolderId(owner)}/access`), 404, 'FOLDER_NOT_FOUND', 'not above the grant');
    });
  });
}
