// Buckets (docs/api.md): create with a root folder and a key of its own, list, rename under the name
// rules, and delete only when empty, on every dialect.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS, build, client, signUp } from '../../helper.js';
import { putFile, unknownId } from '../../support/files.js';
import { assertEnvelope, assertFields, type FieldType } from '../../support/shape.js';
import { assertError } from '../../support/errors.js';

const BUCKET_FIELDS: Record<string, FieldType> = {
  id: 'string',
  name: 'string',
  datahubId: 'string',
  rootFolderId: 'string',
  isDefault: 'boolean',
  createdAt: 'string',
  updatedAt: 'string',
};

const GOOD_NAMES = ['abc', 'a.b-c', '0-9', 'x'.repeat(63), 'photos.2026', 'a--b'];
const BAD_NAMES = ['ab', 'x'.repeat(64), 'Abc', '-abc', 'abc-', '.abc', 'abc.', 'ab_c', 'ab c', 'été-1', '', 'a/b'];

for (const dialect of DIALECTS) {
  describe(`buckets [${dialect}]`, () => {
    it('POST /bucket/create makes a bucket with a root folder and its own key', async (t) => {
      const { app, database } = await build(t, dialect);
      const user = await signUp(app);
      const res = await user.api.post(`/api/bucket/create/${user.defaultDatahubId}`, { name: 'photos' });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      assertEnvelope(res.body, 201);
      const bucket = res.body.data;
      assertFields(bucket, BUCKET_FIELDS, 'bucket');
      assert.match(bucket.id, /^bkt_[0-9a-z]{26}$/);
      assert.equal(bucket.name, 'photos');
      assert.equal(bucket.datahubId, user.defaultDatahubId);
      assert.equal(bucket.isDefault, false);
      const root = (await user.api.get(`/api/folders/details/${bucket.rootFolderId}`)).body.data;
      assert.equal(root.isRoot, true);
      assert.equal(root.name, 'photos');
      assert.equal(root.bucketId, bucket.id);

      // Its own wrapped key, different from the default bucket's; content round-trips through it.
      const keys = await database.db.selectFrom('buckets').select(['id', 'key_wrapped']).where('owner_id', '=', user.id).execute();
      assert.equal(keys.length, 2);
      assert.notEqual(keys[0].key_wrapped, keys[1].key_wrapped);
      const folder = await user.api.post(`/api/folders/create/${bucket.id}`, { name: 'Summer' });
      assert.equal(folder.status, 201);
      const file = await putFile(app, user, folder.body.data.id, 'beach.txt', 'sand and sea');
      assert.equal(file.bucketId, bucket.id);
      const download = await app.inject({
        method: 'GET',
        url: `/api/files/download/${file.id}`,
        headers: { authorization: `Bearer ${user.token}` },
      });
      assert.equal(download.statusCode, 200);
      assert.equal(download.body, 'sand and sea');
    });

    it('bucket names: 3–63 characters of a-z 0-9 . -, alphanumeric at both ends, unique per owner', async (t) => {
      const { app } = await build(t, dialect);
      const ada = await signUp(app);
      const bob = await signUp(app);
      for (const name of GOOD_NAMES) {
        const res = await ada.api.post(`/api/bucket/create/${ada.defaultDatahubId}`, { name });
        assert.equal(res.status, 201, `${name}: ${JSON.stringify(res.body)}`);
      }
      for (const name of BAD_NAMES) {
        const res = await ada.api.post(`/api/bucket/create/${ada.defaultDatahubId}`, { name });
        assertError(res, 400, 'INVALID_NAME');
        assert.equal(res.body.details[0].field, 'name');
      }
      assertError(await ada.api.post(`/api/bucket/create/${ada.defaultDatahubId}`, {}), 400, 'VALIDATION_FAILED');
      assertError(await ada.api.post(`/api/bucket/create/${ada.defaultDatahubId}`, { name: 'abc' }), 409, 'NAME_CONFLICT');
      assertError(await ada.api.post(`/api/bucket/create/${ada.defaultDatahubId}`, { name: 'default' }), 409, 'NAME_CONFLICT');
      // Unique per owner, not across owners.
      assert.equal((await bob.api.post(`/api/bucket/create/${bob.defaultDatahubId}`, { name: 'abc' })).status, 201);
      // Someone else's datahub, unknown and malformed ids.
      assertError(await ada.api.post(`/api/bucket/create/${bob.defaultDatahubId}`, { name: 'mine' }), 404, 'DATAHUB_NOT_FOUND');
      assertError(await ada.api.post(`/api/bucket/create/${unknownId('dhb')}`, { name: 'mine' }), 404, 'DATAHUB_NOT_FOUND');
      assertError(await ada.api.post('/api/bucket/create/dhb_nope', { name: 'mine' }), 400, 'INVALID_ID');
      assertError(await client(app).post(`/api/bucket/create/${ada.defaultDatahubId}`, { name: 'mine' }), 401, 'UNAUTHENTICATED');
      const total = (await ada.api.get('/api/bucket/list')).body.data.total;
      assert.equal(total, 1 + GOOD_NAMES.length);
    });

    it('POST /bucket/update renames the bucket and its root folder; 400, 404 and 409 as documented', async (t) => {
      const { app } = await build(t, dialect);
      const ada = await signUp(app);
      const bob = await signUp(app);
      const bucket = (await ada.api.post(`/api/bucket/create/${ada.defaultDatahubId}`, { name: 'drafts' })).body.data;
      const res = await ada.api.post(`/api/bucket/update/${bucket.id}`, { name: 'final.v2' });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assertEnvelope(res.body, 200);
      assertFields(res.body.data, BUCKET_FIELDS, 'bucket');
      assert.equal(res.body.data.name, 'final.v2');
      assert.equal(res.body.data.id, bucket.id);
      assert.ok(res.body.data.updatedAt >= bucket.updatedAt);
      const root = (await ada.api.get(`/api/folders/details/${bucket.rootFolderId}`)).body.data;
      assert.equal(root.name, 'final.v2');
      // The same name again is fine; the default bucket can be renamed.
      assert.equal((await ada.api.post(`/api/bucket/update/${bucket.id}`, { name: 'final.v2' })).status, 200);
      assert.equal((await ada.api.post(`/api/bucket/update/${ada.defaultBucketId}`, { name: 'home' })).body.data.name, 'home');

      assertError(await ada.api.post(`/api/bucket/update/${bucket.id}`, {}), 400, 'EMPTY_UPDATE');
      for (const name of BAD_NAMES) assertError(await ada.api.post(`/api/bucket/update/${bucket.id}`, { name }), 400, 'INVALID_NAME');
      assertError(await ada.api.post(`/api/bucket/update/${bucket.id}`, { name: { text: 'abc' } }), 400, 'VALIDATION_FAILED');
      assertError(await ada.api.post(`/api/bucket/update/${bucket.id}`, { name: 'home' }), 409, 'NAME_CONFLICT');
      assertError(await ada.api.post(`/api/bucket/update/${unknownId('bkt')}`, { name: 'other' }), 404, 'BUCKET_NOT_FOUND');
      assertError(await ada.api.post(`/api/bucket/update/${bob.defaultBucketId}`, { name: 'other' }), 404, 'BUCKET_NOT_FOUND');
      assertError(await ada.api.post('/api/bucket/update/not-a-bucket', { name: 'other' }), 400, 'INVALID_ID');
      assertError(await client(app).post(`/api/bucket/update/${bucket.id}`, { name: 'other' }), 401, 'UNAUTHENTICATED');
      assert.equal(
        (await ada.api.get(`/api/folders/details/${bucket.rootFolderId}`)).body.data.name,
        'final.v2',
        'refused updates changed nothing',
      );
    });

    it("GET /bucket/list lists the caller's buckets, by datahub or all, paginated", async (t) => {
      const { app } = await build(t, dialect);
      const ada = await signUp(app);
      const bob = await signUp(app);
      const hub = (await ada.api.put('/api/datahub/create', { name: 'Second', locationId: 1 })).body.data;
      const extra = (await ada.api.post(`/api/bucket/create/${hub.id}`, { name: 'extra' })).body.data;
      const all = await ada.api.get('/api/bucket/list');
      assert.equal(all.status, 200);
      assertEnvelope(all.body, 200);
      assert.equal(all.body.data.total, 3);
      assert.equal(all.body.data.nextCursor, null);
      for (const bucket of all.body.data.data) assertFields(bucket, BUCKET_FIELDS, 'bucket');
      assert.deepEqual(
        all.body.data.data.map((b: any) => b.id),
        [ada.defaultBucketId, hub.buckets[0].id, extra.id],
      );
      assert.deepEqual(
        all.body.data.data.map((b: any) => b.isDefault),
        [true, false, false],
      );

      const ofHub = await ada.api.get(`/api/bucket/list?datahubId=${hub.id}`);
      assert.deepEqual(
        ofHub.body.data.data.map((b: any) => b.name),
        ['default-2', 'extra'],
      );
      assert.equal(ofHub.body.data.total, 2);

      const first = (await ada.api.get('/api/bucket/list?limit=2')).body.data;
      assert.equal(first.data.length, 2);
      assert.equal(first.total, 3);
      const rest = (await ada.api.get(`/api/bucket/list?limit=2&cursor=${first.nextCursor}`)).body.data;
      assert.deepEqual(
        rest.data.map((b: any) => b.id),
        [extra.id],
      );
      assert.equal(rest.nextCursor, null);

      assert.deepEqual(
        (await bob.api.get('/api/bucket/list')).body.data.data.map((b: any) => b.id),
        [bob.defaultBucketId],
      );
      assertError(await bob.api.get(`/api/bucket/list?datahubId=${hub.id}`), 404, 'DATAHUB_NOT_FOUND');
      assertError(await ada.api.get('/api/bucket/list?datahubId=dhb_bad'), 400, 'INVALID_ID');
      assertError(await ada.api.get('/api/bucket/list?limit=0'), 400, 'VALIDATION_FAILED');
      assertError(await client(app).get('/api/bucket/list'), 401, 'UNAUTHENTICATED');
    });

    it('DELETE /bucket/delete removes an empty bucket with its root folder', async (t) => {
      const { app, database } = await build(t, dialect);
      const user = await signUp(app);
      const bucket = (await user.api.post(`/api/bucket/create/${user.defaultDatahubId}`, { name: 'scratch' })).body.data;
      const res = await user.api.delete(`/api/bucket/delete/${bucket.id}`);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assertEnvelope(res.body, 200);
      assert.equal(res.body.data, null);
      assertError(await user.api.delete(`/api/bucket/delete/${bucket.id}`), 404, 'BUCKET_NOT_FOUND');
      assertError(await user.api.get(`/api/folders/details/${bucket.rootFolderId}`), 404, 'FOLDER_NOT_FOUND');
      const rows = await database.db.selectFrom('folders').select('id').where('bucket_id', '=', bucket.id).execute();
      assert.deepEqual(rows, []);
      assert.deepEqual(
        (await user.api.get('/api/bucket/list')).body.data.data.map((b: any) => b.id),
        [user.defaultBucketId],
      );
      // The name is free again.
      assert.equal((await user.api.post(`/api/bucket/create/${user.defaultDatahubId}`, { name: 'scratch' })).status, 201);
    });

    it('DELETE /bucket/delete is 409 BUCKET_NOT_EMPTY while any folder or file is there, trash included', async (t) => {
      const { app } = await build(t, dialect);
      const user = await signUp(app);
      const other = await signUp(app);
      const bucket = (await user.api.post(`/api/bucket/create/${user.defaultDatahubId}`, { name: 'busy' })).body.data;
      const refused = async () => assertError(await user.api.delete(`/api/bucket/delete/${bucket.id}`), 409, 'BUCKET_NOT_EMPTY');

      const folder = (await user.api.post(`/api/folders/create/${bucket.id}`, { name: 'Docs' })).body.data;
      await refused();
      assert.equal((await user.api.delete(`/api/folders/delete/${folder.id}?trash=soft`)).status, 200);
      await refused(); // a trashed folder still counts
      assert.equal((await user.api.delete(`/api/folders/delete/${folder.id}?trash=hard`)).status, 200);

      const file = await putFile(app, user, bucket.rootFolderId, 'note.txt', 'note');
      await refused();
      assert.equal((await user.api.delete(`/api/files/delete/${file.id}?trash=soft`)).status, 200);
      await refused(); // a trashed file still counts
      assert.equal((await user.api.delete(`/api/trash/empty?bucketId=${bucket.id}`)).status, 200);

      assertError(await other.api.delete(`/api/bucket/delete/${bucket.id}`), 404, 'BUCKET_NOT_FOUND');
      assertError(await user.api.delete(`/api/bucket/delete/${user.defaultBucketId}`), 409, 'DEFAULT_BUCKET');
      assertError(await user.api.delete('/api/bucket/delete/bkt_x'), 400, 'INVALID_ID');
      assertError(await client(app).delete(`/api/bucket/delete/${bucket.id}`), 401, 'UNAUTHENTICATED');
      assert.equal((await user.api.delete(`/api/bucket/delete/${bucket.id}`)).status, 200);
    });

    it('a bucket being deleted and an upload into it never both win', async (t) => {
      const { app } = await build(t, dialect);
      const user = await signUp(app);
      for (let round = 0; round < 5; round++) {
        const bucket = (await user.api.post(`/api/bucket/create/${user.defaultDatahubId}`, { name: `race-${round}` })).body.data;
        const [upload, removal] = await Promise.all([
          app.inject({
            method: 'PUT',
            url: `/api/files/upload/${bucket.rootFolderId}?name=f.bin`,
            headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/octet-stream' },
            payload: Buffer.alloc(70_000, round),
          }),
          user.api.delete(`/api/bucket/delete/${bucket.id}`),
        ]);
        const uploaded = upload.statusCode === 201;
        const deleted = removal.status === 200;
        assert.ok(uploaded !== deleted, `round ${round}: upload ${upload.statusCode}, delete ${removal.status}`);
        if (uploaded) assert.equal(removal.body.code, 'BUCKET_NOT_EMPTY');
        else assert.equal(upload.json().code, 'FOLDER_NOT_FOUND');
      }
      const status = (await user.api.get('/api/storage/status')).body.data;
      const hubs = (await user.api.get(`/api/datahub/size/${user.defaultDatahubId}`)).body.data;
      assert.equal(status.used_bytes, hubs.totalBytes, 'no bytes are counted for a file that did not survive');
    });
  });
}
