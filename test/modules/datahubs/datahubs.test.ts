// Datahubs (docs/api.md): create with a first bucket and root folder, list with buckets, and the
// size route of the API contract, checked against real uploads, on every dialect.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import data from '../../../src/db/regions.data.json' with { type: 'json' };
import { DIALECTS, build, client, signUp } from '../../helper.js';
import { putFile, rootFolderId, storeMixedContent, unknownId } from '../../support/files.js';
import { assertEnvelope, assertFields, type FieldType } from '../../support/shape.js';
import { assertError } from '../../support/errors.js';

const SIZE_FIELDS: Record<string, FieldType> = { currentObjectsSize: 'string', versionsObjectsSize: 'string', totalSize: 'string' };
const DATAHUB_FIELDS: Record<string, FieldType> = {
  id: 'string',
  name: 'string',
  locationId: 'integer',
  locationLabel: 'string',
  createdAt: 'string',
  buckets: 'array',
};
const SIZE_STRING = /^\d+(\.\d{1,2})? (B|KB|MB|GB|TB|PB)$/;

const activeRegions = new Set(data.regions.filter((r) => r.isActive).map((r) => r.id));
const activeLocations = data.locations.filter((l) => l.isActive && activeRegions.has(l.regionId));
const inactiveLocations = data.locations.filter((l) => !l.isActive || !activeRegions.has(l.regionId));

for (const dialect of DIALECTS) {
  describe(`datahubs [${dialect}]`, () => {
    it('PUT /datahub/create makes a datahub with a default bucket and its root folder', async (t) => {
      const { app } = await build(t, dialect);
      const user = await signUp(app);
      const location = activeLocations[activeLocations.length - 1];
      const res = await user.api.put('/api/datahub/create', { name: 'Team archive', locationId: location.id });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      assertEnvelope(res.body, 201);
      const hub = res.body.data;
      assertFields(hub, DATAHUB_FIELDS, 'datahub');
      assert.match(hub.id, /^dhb_[0-9a-z]{26}$/);
      assert.equal(hub.name, 'Team archive');
      assert.equal(hub.locationId, location.id);
      assert.equal(hub.locationLabel, `${location.name.en} (${location.regionCode})`);
      assert.equal(hub.isDefault, false);
      assert.equal(hub.buckets.length, 1);
      const [bucket] = hub.buckets;
      assert.equal(bucket.datahubId, hub.id);
      // The account already has a bucket "default": the new one takes the next free name.
      assert.equal(bucket.name, 'default-2');
      assert.equal(bucket.isDefault, false);
      // The root folder is real: it has the bucket's name and location, and takes folders and files.
      const root = await user.api.get(`/api/folders/details/${bucket.rootFolderId}`);
      assert.equal(root.status, 200, JSON.stringify(root.body));
      assert.equal(root.body.data.isRoot, true);
      assert.equal(root.body.data.name, 'default-2');
      assert.equal(root.body.data.locationLabel, hub.locationLabel);
      assert.equal(await rootFolderId(user, bucket.id), bucket.rootFolderId);
      const file = await putFile(app, user, bucket.rootFolderId, 'hello.txt', 'hello datahub');
      const download = await app.inject({
        method: 'GET',
        url: `/api/files/download/${file.id}`,
        headers: { authorization: `Bearer ${user.token}` },
      });
      assert.equal(download.body, 'hello datahub');

      const third = await user.api.put('/api/datahub/create', { name: 'Third', locationId: location.id });
      assert.equal(third.body.data.buckets[0].name, 'default-3');
      const named = await user.api.put('/api/datahub/create', { name: 'Named', locationId: location.id, bucketName: 'photos.2026' });
      assert.equal(named.status, 201);
      assert.equal(named.body.data.buckets[0].name, 'photos.2026');
    });

    it('create refuses bad input: names, locations, bucket names, missing fields, no token', async (t) => {
      const { app } = await build(t, dialect);
      const user = await signUp(app);
      const locationId = activeLocations[0].id;
      assert.ok(inactiveLocations.length > 0, 'the data file has inactive locations to test with');
      for (const location of inactiveLocations) {
        assertError(await user.api.put('/api/datahub/create', { name: 'X', locationId: location.id }), 400, 'LOCATION_INACTIVE');
      }
      const unknownLocation = Math.max(...data.locations.map((l) => l.id)) + 1;
      assertError(await user.api.put('/api/datahub/create', { name: 'X', locationId: unknownLocation }), 404, 'LOCATION_NOT_FOUND');
      assertError(await user.api.put('/api/datahub/create', { name: 'X', locationId: 'paris' }), 400, 'VALIDATION_FAILED');
      assertError(await user.api.put('/api/datahub/create', { name: 'X' }), 400, 'VALIDATION_FAILED');
      assertError(await user.api.put('/api/datahub/create', { locationId }), 400, 'VALIDATION_FAILED');
      for (const name of ['', 'a/b', 'tab\there', '..']) {
        assertError(await user.api.put('/api/datahub/create', { name, locationId }), 400, 'INVALID_NAME');
      }
      assertError(await user.api.put('/api/datahub/create', { name: 'X', locationId, bucketName: 'Not_Valid' }), 400, 'INVALID_NAME');
      assertError(await user.api.put('/api/datahub/create', { name: 'X', locationId, bucketName: 'default' }), 409, 'NAME_CONFLICT');
      assertError(await client(app).put('/api/datahub/create', { name: 'X', locationId }), 401, 'UNAUTHENTICATED');
      // Nothing was created by the refused calls.
      assert.equal((await user.api.get('/api/datahub/list')).body.data.total, 1);
    });

    it("GET /datahub/list gives the caller's datahubs with their buckets, paginated, and no one else's", async (t) => {
      const { app } = await build(t, dialect);
      const ada = await signUp(app);
      const bob = await signUp(app);
      const created = await ada.api.put('/api/datahub/create', { name: 'Second', locationId: activeLocations[1].id });
      const extra = await ada.api.post(`/api/bucket/create/${created.body.data.id}`, { name: 'extra-bucket' });
      assert.equal(extra.status, 201);
      await bob.api.put('/api/datahub/create', { name: 'Bob only', locationId: activeLocations[0].id });

      const res = await ada.api.get('/api/datahub/list');
      assert.equal(res.status, 200);
      assertEnvelope(res.body, 200);
      const page = res.body.data;
      assert.equal(page.total, 2);
      assert.equal(page.nextCursor, null);
      assert.deepEqual(
        page.data.map((d: any) => d.id),
        [ada.defaultDatahubId, created.body.data.id],
      );
      for (const hub of page.data) assertFields(hub, DATAHUB_FIELDS, 'datahub');
      const [first, second] = page.data;
      assert.equal(first.isDefault, true);
      assert.equal(first.name, 'My datahub');
      assert.deepEqual(
        first.buckets.map((b: any) => [b.id, b.isDefault]),
        [[ada.defaultBucketId, true]],
      );
      assert.deepEqual(
        second.buckets.map((b: any) => b.name),
        ['default-2', 'extra-bucket'],
      );
      assert.ok(!JSON.stringify(page).includes('Bob only'));

      const one = await ada.api.get('/api/datahub/list?limit=1');
      assert.equal(one.body.data.data.length, 1);
      assert.equal(one.body.data.total, 2);
      assert.equal(typeof one.body.data.nextCursor, 'string');
      const next = await ada.api.get(`/api/datahub/list?limit=1&cursor=${one.body.data.nextCursor}`);
      assert.deepEqual(
        next.body.data.data.map((d: any) => d.id),
        [created.body.data.id],
      );
      assert.equal(next.body.data.nextCursor, null);
      assertError(await ada.api.get('/api/datahub/list?cursor=nope'), 400, 'INVALID_CURSOR');
      assertError(await client(app).get('/api/datahub/list'), 401, 'UNAUTHENTICATED');
    });

    it("GET /datahub/size has the API contract's fields and counts versions and the trash, not deleted files", async (t) => {
      const { app } = await build(t, dialect);
      const user = await signUp(app);
      const empty = await user.api.get(`/api/datahub/size/${user.defaultDatahubId}`);
      assert.equal(empty.status, 200);
      assertEnvelope(empty.body, 200);
      assert.deepEqual(Object.keys(empty.body).sort(), ['data', 'message', 'status']);
      assertFields(empty.body.data, SIZE_FIELDS, 'size');
      assert.deepEqual(
        [empty.body.data.currentObjectsSize, empty.body.data.versionsObjectsSize, empty.body.data.totalSize],
        ['0 B', '0 B', '0 B'],
      );

      const root = await rootFolderId(user);
      const expected = await storeMixedContent(app, user, root);
      // A file in a trashed folder counts too.
      const folder = await user.api.post(`/api/folders/create/${user.defaultBucketId}`, { name: 'Old' });
      await putFile(app, user, folder.body.data.id, 'inside.bin', Buffer.alloc(1024, 5));
      assert.equal((await user.api.delete(`/api/folders/delete/${folder.body.data.id}`)).status, 200);
      const current = expected.current + 1024;

      const res = await user.api.get(`/api/datahub/size/${user.defaultDatahubId}`);
      assert.equal(res.status, 200);
      assertFields(res.body.data, SIZE_FIELDS, 'size');
      for (const field of Object.keys(SIZE_FIELDS)) assert.match(res.body.data[field], SIZE_STRING);
      assert.equal(res.body.data.currentObjectsBytes, current);
      assert.equal(res.body.data.versionsObjectsBytes, expected.versions);
      assert.equal(res.body.data.totalBytes, current + expected.versions);
      assert.equal(res.body.data.currentObjectsSize, '3 KB'); // 1536 + 512 + 1024
      assert.equal(res.body.data.versionsObjectsSize, '1 KB');
      assert.equal(res.body.data.totalSize, '4 KB');

      // Deleting the old version for good leaves the versions at 0.
      const files = await user.api.get(`/api/files/list/${root}`);
      const versioned = files.body.data.data.find((f: any) => f.name === 'versioned.bin');
      const versions = await user.api.get(`/api/files/versions/${versioned.id}`);
      const old = versions.body.data.find((v: any) => !v.isCurrent);
      assert.equal((await user.api.delete(`/api/files/versions/${versioned.id}/${old.id}`)).status, 200);
      const after = (await user.api.get(`/api/datahub/size/${user.defaultDatahubId}`)).body.data;
      assert.deepEqual([after.currentObjectsSize, after.versionsObjectsSize, after.totalSize], ['3 KB', '0 B', '3 KB']);
    });

    it('sizes are per datahub: every bucket of it counts, other datahubs do not', async (t) => {
      const { app } = await build(t, dialect);
      const user = await signUp(app);
      const other = (await user.api.put('/api/datahub/create', { name: 'Other', locationId: activeLocations[0].id })).body.data;
      const second = (await user.api.post(`/api/bucket/create/${user.defaultDatahubId}`, { name: 'second' })).body.data;
      await putFile(app, user, await rootFolderId(user), 'a.bin', Buffer.alloc(1000));
      await putFile(app, user, second.rootFolderId, 'b.bin', Buffer.alloc(24));
      await putFile(app, user, other.buckets[0].rootFolderId, 'c.bin', Buffer.alloc(1536));
      const mine = (await user.api.get(`/api/datahub/size/${user.defaultDatahubId}`)).body.data;
      assert.equal(mine.currentObjectsBytes, 1024);
      assert.equal(mine.totalSize, '1 KB');
      const theirs = (await user.api.get(`/api/datahub/size/${other.id}`)).body.data;
      assert.equal(theirs.currentObjectsSize, '1.5 KB');
      assert.equal(theirs.versionsObjectsSize, '0 B');
    });

    it("size: a malformed id is 400, an unknown or another user's datahub 404, no token 401", async (t) => {
      const { app } = await build(t, dialect);
      const ada = await signUp(app);
      const bob = await signUp(app);
      for (const bad of ['nope', 'dhb_short', `bkt_${'0'.repeat(26)}`, `dhb_${'u'.repeat(26)}`]) {
        assertError(await ada.api.get(`/api/datahub/size/${bad}`), 400, 'INVALID_ID');
      }
      assertError(await ada.api.get(`/api/datahub/size/${unknownId('dhb')}`), 404, 'DATAHUB_NOT_FOUND');
      assertError(await ada.api.get(`/api/datahub/size/${bob.defaultDatahubId}`), 404, 'DATAHUB_NOT_FOUND');
      assertError(await client(app).get(`/api/datahub/size/${ada.defaultDatahubId}`), 401, 'UNAUTHENTICATED');
    });
  });
}
