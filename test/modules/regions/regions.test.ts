// Regions and locations (API contract: Region, Region location; docs/api.md), on every
// dialect of the run. The expected values come from the data file the project ships.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import data from '../../../src/db/regions.data.json' with { type: 'json' };
import { DIALECTS, build, client, signUp } from '../../helper.js';
import { assertEnvelope, assertFields, type FieldType } from '../../support/shape.js';
import { assertError } from '../../support/errors.js';

const REGION_FIELDS: Record<string, FieldType> = { id: 'integer', slug: 'string', name: 'localized', isActive: 'boolean' };
const LOCATION_FIELDS: Record<string, FieldType> = {
  id: 'integer',
  regionId: 'integer',
  regionCode: 'string',
  countryCode: 'string',
  name: 'localized',
  isActive: 'boolean',
};

for (const dialect of DIALECTS) {
  describe(`regions [${dialect}]`, () => {
    it('GET /regions/list answers the envelope with every region of the data file', async (t) => {
      const { app } = await build(t, dialect);
      const user = await signUp(app);
      const res = await user.api.get('/api/regions/list');
      assert.equal(res.status, 200);
      assertEnvelope(res.body, 200);
      assert.ok(Array.isArray(res.body.data));
      assert.ok(res.body.data.length >= 2, 'several regions');
      for (const region of res.body.data) {
        assertFields(region, REGION_FIELDS, 'region');
        assert.deepEqual(Object.keys(region).sort(), Object.keys(REGION_FIELDS).sort(), 'exactly the fields of the table');
      }
      assert.deepEqual(res.body.data, data.regions);
      // The data file has an inactive region; it is listed, marked inactive.
      assert.ok(res.body.data.some((r: any) => r.isActive === false));
      assert.ok(
        res.body.data.some((r: any) => r.name.fr !== r.name.en),
        'French names are the French ones',
      );
    });

    it("GET /regions/{regionId} answers a bare array of the region's locations", async (t) => {
      const { app } = await build(t, dialect);
      const user = await signUp(app);
      for (const region of data.regions) {
        const res = await user.api.get(`/api/regions/${region.id}`);
        assert.equal(res.status, 200, JSON.stringify(res.body));
        assert.ok(Array.isArray(res.body), 'a bare JSON array, no envelope');
        const expected = data.locations.filter((l) => l.regionId === region.id);
        assert.deepEqual(res.body, expected);
        for (const location of res.body) {
          assertFields(location, LOCATION_FIELDS, 'location');
          assert.deepEqual(Object.keys(location).sort(), Object.keys(LOCATION_FIELDS).sort());
          assert.equal(location.regionId, region.id);
          assert.match(location.countryCode, /^[a-z]{2}$/);
        }
      }
      const paris = (await user.api.get('/api/regions/1')).body.find((l: any) => l.regionCode === 'fr-par');
      assert.deepEqual(paris?.name, { en: 'Paris', fr: 'Paris' });
    });

    it('an unknown region is 404 REGION_NOT_FOUND, a non-integer id 400', async (t) => {
      const { app } = await build(t, dialect);
      const user = await signUp(app);
      const unknown = Math.max(...data.regions.map((r) => r.id)) + 1;
      assertError(await user.api.get(`/api/regions/${unknown}`), 404, 'REGION_NOT_FOUND');
      for (const integer of ['0', '-1', '2147483647']) assertError(await user.api.get(`/api/regions/${integer}`), 404, 'REGION_NOT_FOUND');
      for (const bad of ['abc', '1.5', '1e0', '0x1', '+1', 'true', '99999999999999999999', '%20', '1%20']) {
        const res = await user.api.get(`/api/regions/${bad}`);
        assert.equal(res.status, 400, `${bad}: ${res.status} ${JSON.stringify(res.body)}`);
        assert.equal(res.body.data, null);
        assert.equal(typeof res.body.code, 'string');
      }
    });

    it('needs a bearer token like every non-public operation', async (t) => {
      const { app } = await build(t, dialect);
      assertError(await client(app).get('/api/regions/list'), 401, 'UNAUTHENTICATED');
      assertError(await client(app).get('/api/regions/1'), 401, 'UNAUTHENTICATED');
    });
  });
}
