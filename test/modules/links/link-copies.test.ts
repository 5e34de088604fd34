// Copying a link again (issue 34): its owner gets the full address, key included, from the link
// key kept wrapped by the shared item's own key; nobody else does, and nothing is in clear.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DIALECTS, build, signUp } from '../../helper.js';
import { assertError } from '../../support/errors.js';
import { putFile, rootFolderId } from '../../support/files.js';
import { publicPost, splitLink } from '../../support/links.js';

for (const dialect of DIALECTS) {
  describe(`copying a link again [${dialect}]`, () => {
    async function fixture(t: import('node:test').TestContext) {
      const ctx = await build(t, dialect);
      const owner = await signUp(ctx.app, 'Owner');
      const root = await rootFolderId(owner);
      const file = await putFile(ctx.app, owner, root, 'plan.txt', 'the plan');
      return { ...ctx, owner, root, file };
    }

    it('gives the owner the same address as when the link was made, for a file and a folder', async (t) => {
      const { app, owner, file } = await fixture(t);
      const made = (await owner.api.post(`/api/files/share/${file.id}`, { password: 'pw' })).body.data.shareLink;
      const { hash, key } = splitLink(made);
      const again = await owner.api.get(`/api/files/share/${hash}/address`);
      assert.equal(again.status, 200, JSON.stringify(again.body));
      assert.deepEqual(again.body.data, { shareLink: made });
      const got = await publicPost(app, `/api/files/download/public/${hash}`, { password: 'pw', encryptionKey: key });
      assert.equal(got.raw.toString(), 'the plan');

      // The file moved to another folder keeps its own key, so its links can still be copied.
      const sub = await owner.api.post(`/api/folders/create/${owner.defaultBucketId}`, { name: 'Plans' });
      assert.equal((await owner.api.post(`/api/files/move/${file.id}`, { targetFolderId: sub.body.data.id })).status, 200);
      assert.deepEqual((await owner.api.get(`/api/files/share/${hash}/address`)).body.data, { shareLink: made });

      const folderLink = (await owner.api.post(`/api/folders/share/${sub.body.data.id}`, {})).body.data.shareLink;
      const folderHash = splitLink(folderLink).hash;
      assert.deepEqual((await owner.api.get(`/api/folders/share/${folderHash}/address`)).body.data, { shareLink: folderLink });
      // A hash is asked under its own kind only.
      assertError(await owner.api.get(`/api/files/share/${folderHash}/address`), 404, 'LINK_NOT_FOUND');
    });

    it("is the owner's alone, ends with the link, and says so for a link whose key was never kept", async (t) => {
      const { app, database, owner, root, file } = await fixture(t);
      const other = await signUp(app, 'Other');
      await owner.api.post(`/api/folders/share-users/${root}`, {
        users: [{ userId: other.id, canView: true, canDownload: true, canEdit: true }],
      });
      const { hash } = splitLink((await owner.api.post(`/api/files/share/${file.id}`, {})).body.data.shareLink);
      assertError(await other.api.get(`/api/files/share/${hash}/address`), 404, 'LINK_NOT_FOUND');
      const anonymous = await app.inject({ method: 'GET', url: `/api/files/share/${hash}/address` });
      assertError({ status: anonymous.statusCode, body: anonymous.json() }, 401, 'UNAUTHENTICATED');
      assertError(await owner.api.get(`/api/files/share/${'x'.repeat(22)}/address`), 404, 'LINK_NOT_FOUND');

      // A link made before the key was kept (migration 018 leaves those null).
      const { hash: older } = splitLink((await owner.api.post(`/api/files/share/${file.id}`, {})).body.data.shareLink);
      await database.db.updateTable('share_links').set({ link_key_wrapped: null }).where('shared_hash', '=', older).execute();
      assertError(await owner.api.get(`/api/files/share/${older}/address`), 409, 'LINK_KEY_NOT_KEPT');

      assert.equal((await owner.api.delete(`/api/files/revoke/${hash}`)).status, 200);
      assertError(await owner.api.get(`/api/files/share/${hash}/address`), 404, 'LINK_NOT_FOUND');
    });

    it('keeps the link key only wrapped: the stored wrap differs from the key in every encoding', async (t) => {
      const { database, owner, file } = await fixture(t);
      const { key } = splitLink((await owner.api.post(`/api/files/share/${file.id}`, {})).body.data.shareLink);
      const row = await database.db.selectFrom('share_links').selectAll().executeTakeFirstOrThrow();
      assert.ok(row.link_key_wrapped, 'the key is kept wrapped');
      const raw = Buffer.from(key, 'base64url');
      const dump = JSON.stringify(row);
      for (const encoded of [key, raw.toString('hex'), raw.toString('base64')]) assert.ok(!dump.includes(encoded), 'the key in clear');
      assert.ok(!Buffer.from(row.link_key_wrapped, 'base64url').includes(raw), 'the wrap holds the key in clear');
    });
  });
}
