// A grantee who may not download a file does not get its checksum either (issue 29, item 8): the
// SHA-256 of a plaintext tells whether it is a file one already knows. The field stays, as "".
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS, build, signUp } from '../../helper.js';
import { assertStatus, mkdir } from '../../support/folders.js';
import { putFile } from '../../support/files.js';

for (const dialect of DIALECTS) {
  describe(`checksums and the right to download [${dialect}]`, () => {
    it('details, file lists, versions and shared-with-me carry "" for what the grantee may not download', async (t) => {
      const { app } = await build(t, dialect);
      const [owner, viewer, downloader, editor] = [
        await signUp(app, 'Owner'),
        await signUp(app, 'Viewer'),
        await signUp(app, 'Downloader'),
        await signUp(app, 'Editor'),
      ];
      const shared = await mkdir(owner, 'Shared');
      const target = await mkdir(owner, 'Target', shared);
      await putFile(app, owner, shared, 'f.txt', 'first version');
      const file = await putFile(app, owner, shared, 'f.txt', 'second version');
      const granted = await putFile(app, owner, shared, 'granted.txt', 'granted to the viewer');
      assertStatus(
        await owner.api.post(`/api/folders/share-users/${shared}`, {
          users: [
            { userId: viewer.id, canView: true, canDownload: false },
            { userId: downloader.id, canDownload: true },
            { userId: editor.id, canDownload: false, canEdit: true },
          ],
        }),
        201,
      );
      // A file's own grant adds the download right to the viewer's folder grant, for it alone.
      assertStatus(await owner.api.put(`/api/files/shared/${granted.id}/${viewer.id}`, { canDownload: true }), 201);
      const versions = (await owner.api.get(`/api/files/versions/${file.id}`)).body.data;
      const secrets: string[] = versions.map((v: any) => v.checksum);
      assert.equal(secrets.length, 2);
      for (const checksum of secrets) assert.match(checksum, /^sha256:[0-9a-f]{64}$/);

      // The viewer: the field is there, empty, on every route; the file granted for download keeps it.
      const details = await viewer.api.get(`/api/files/details/${file.id}`);
      assertStatus(details, 200, 'details');
      assert.equal(details.body.checksum, '');
      const listed = await viewer.api.get(`/api/files/list/${shared}`);
      assert.deepEqual(
        listed.body.data.data.map((f: any) => [f.name, f.checksum]),
        [
          ['f.txt', ''],
          ['granted.txt', granted.checksum],
        ],
      );
      const viewerVersions = await viewer.api.get(`/api/files/versions/${file.id}`);
      assert.deepEqual(
        viewerVersions.body.data.map((v: any) => v.checksum),
        ['', ''],
      );
      assert.equal((await viewer.api.get(`/api/files/details/${granted.id}`)).body.checksum, granted.checksum);

      // A file shared on its own for viewing, in shared-with-me.
      const alone = await putFile(app, owner, await mkdir(owner, 'Private'), 'alone.txt', 'alone');
      assertStatus(await owner.api.put(`/api/files/shared/${alone.id}/${viewer.id}`, { canDownload: false }), 201);
      const sharedWithMe = (await viewer.api.get('/api/shared-with-me')).body.data.data;
      assert.equal(sharedWithMe.find((item: any) => item.itemId === alone.id).file.checksum, '');
      assert.equal(sharedWithMe.find((item: any) => item.itemId === granted.id).file.checksum, granted.checksum);

      // An editor without the download right moves and restores versions, and still gets "".
      const moved = await editor.api.post(`/api/files/move/${file.id}`, { targetFolderId: target });
      assertStatus(moved, 200, 'move');
      assert.equal(moved.body.data.checksum, '');
      const restored = await editor.api.post(`/api/files/versions/${file.id}/${versions[1].id}/restore`);
      assertStatus(restored, 200, 'version restore');
      assert.equal(restored.body.data.checksum, '');

      // The downloader and the owner see the checksums.
      assert.equal((await downloader.api.get(`/api/files/details/${file.id}`)).body.checksum, secrets[1]);
      assert.deepEqual(
        (await downloader.api.get(`/api/files/versions/${file.id}`)).body.data.slice(1).map((v: any) => v.checksum),
        secrets,
      );
      assert.equal((await owner.api.get(`/api/files/details/${file.id}`)).body.checksum, secrets[1]);

      for (const [who, res] of [
        ['viewer details', details],
        ['viewer list', listed],
        ['viewer versions', viewerVersions],
        ['editor move', moved],
        ['editor restore', restored],
      ] as const) {
        const text = JSON.stringify(res.body);
        for (const checksum of secrets) assert.ok(!text.includes(checksum.slice('sha256:'.length)), `${who} shows a checksum: ${text}`);
      }
    });
  });
}
