// What a grantee learns of the owner's tree above what is shared with them (issue 29, item 4):
// nothing. Their paths start at the highest folder shared with them, whose parent is not named
// ('' for parentId and parentName, the values of a folder without a parent), and a file shared on
// its own does not name its folder.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS, build, signUp, type ApiResponse, type TestUser } from '../../helper.js';
import { assertStatus, mkdir } from '../../support/folders.js';
import { putFile } from '../../support/files.js';

/** The path fields of a folder detail. */
const place = (detail: any) => ({
  displayPath: detail.displayPath,
  parentName: detail.parentName,
  parentId: detail.parentId,
  isRoot: detail.isRoot,
});

for (const dialect of DIALECTS) {
  describe(`the owner's tree above a grantee's share [${dialect}]`, () => {
    it('folder details: the path starts at the highest folder shared with the grantee, whose parent is not named', async (t) => {
      const { app } = await build(t, dialect);
      const [owner, bob] = [await signUp(app, 'Owner'), await signUp(app, 'Bob')];
      const secret = await mkdir(owner, 'SecretDocs');
      const sub = await mkdir(owner, 'sub', secret);
      const deeper = await mkdir(owner, 'deeper', sub);
      const details = async (user: TestUser, id: string) => place((await user.api.get(`/api/folders/details/${id}`)).body.data);
      const share = async (id: string) =>
        assertStatus(
          await owner.api.post(`/api/folders/share-users/${id}`, { users: [{ userId: bob.id, canDownload: false }] }),
          201,
          'share',
        );

      await share(sub);
      assert.deepEqual(await details(bob, sub), { displayPath: '/sub', parentName: '', parentId: '', isRoot: false });
      assert.deepEqual(await details(bob, deeper), { displayPath: '/sub/deeper', parentName: 'sub', parentId: sub, isRoot: false });
      assert.deepEqual(
        await details(owner, sub),
        { displayPath: '/SecretDocs/sub', parentName: 'SecretDocs', parentId: secret, isRoot: false },
        'the owner sees it all',
      );

      // A second grant lower down changes nothing: the path starts at the highest one.
      await share(deeper);
      assert.deepEqual(await details(bob, deeper), { displayPath: '/sub/deeper', parentName: 'sub', parentId: sub, isRoot: false });
      // A grant higher up shows the tree from there.
      await share(secret);
      assert.deepEqual(await details(bob, sub), {
        displayPath: '/SecretDocs/sub',
        parentName: 'SecretDocs',
        parentId: secret,
        isRoot: false,
      });
    });

    it('no answer a grantee gets names or identifies a folder above what is shared with them', async (t) => {
      const { app } = await build(t, dialect);
      const [owner, bob] = [await signUp(app, 'Owner'), await signUp(app, 'Bob')];
      const secret = await mkdir(owner, 'SecretDocs');
      const sub = await mkdir(owner, 'sub', secret);
      await mkdir(owner, 'child', sub);
      const inSub = await putFile(app, owner, sub, 'in-sub.txt', 'in sub');
      const alone = await putFile(app, owner, secret, 'alone.txt', 'alone');
      assertStatus(await owner.api.post(`/api/folders/share-users/${sub}`, { users: [{ userId: bob.id, canEdit: true }] }), 201);
      assertStatus(await owner.api.put(`/api/files/shared/${alone.id}/${bob.id}`, {}), 201);

      const created = await bob.api.post(`/api/folders/create/${owner.defaultBucketId}`, { name: 'New', parentId: sub });
      assertStatus(created, 201, 'an editor creates a subfolder');
      assert.deepEqual(place(created.body.data), { displayPath: '/sub/New', parentName: 'sub', parentId: sub, isRoot: false });
      const aloneDetails = await bob.api.get(`/api/files/details/${alone.id}`);
      assert.equal(aloneDetails.body.folderId, '', 'a file shared on its own does not name its folder');
      assert.equal((await bob.api.get(`/api/files/details/${inSub.id}`)).body.folderId, sub, 'a folder shared with bob is named');
      assert.equal((await owner.api.get(`/api/files/details/${alone.id}`)).body.folderId, secret, 'the owner sees the folder');
      const shared = (await bob.api.get('/api/shared-with-me')).body.data.data;
      const sharedSub = shared.find((item: any) => item.itemId === sub);
      assert.equal(sharedSub.folder.parentId, '', 'shared-with-me does not name the parent of a shared folder');
      assert.equal(shared.find((item: any) => item.itemId === alone.id).file.folderId, '', 'nor the folder of a shared file');

      const answers: [string, ApiResponse][] = [
        ['folder details', await bob.api.get(`/api/folders/details/${sub}`)],
        ['subfolders', await bob.api.get(`/api/folders/${sub}/subfolders`)],
        ['file list', await bob.api.get(`/api/files/list/${sub}`)],
        ['file details (in sub)', await bob.api.get(`/api/files/details/${inSub.id}`)],
        ['file details (alone)', aloneDetails],
        ['shared with me', await bob.api.get('/api/shared-with-me')],
        ['new subfolder', created],
        ['file moved', await bob.api.post(`/api/files/move/${inSub.id}`, { targetFolderId: created.body.data.id })],
      ];
      for (const [what, res] of answers) {
        assertStatus(res, 200 + (what === 'new subfolder' ? 1 : 0), what);
        const text = JSON.stringify(res.body);
        assert.ok(!text.includes('SecretDocs'), `${what} names SecretDocs: ${text}`);
        assert.ok(!text.includes(secret), `${what} gives the id of SecretDocs: ${text}`);
      }
    });
  });
}
