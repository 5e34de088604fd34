import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { LogEvent } from 'kysely';
import { ListingCache } from '../../../src/modules/folders/listing.cache.js';
import { DIALECTS, build, client, signUp, type TestUser } from '../../helper.js';
import { siblingApp } from '../../support/sibling.js';

/** A page of subfolders as the API gives it: names in order, and the whole body for comparisons. */
async function listing(user: TestUser, parentId: string, query = '') {
  const res = await user.api.get(`/api/folders/${parentId}/subfolders${query}`);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.data;
}

const names = (page: { data: { name: string }[] }) => page.data.map((item) => item.name);

/** Counts the statements that list children (the page query the cache saves). */
function pageQueries() {
  const counter = { count: 0, onQuery: (event: LogEvent) => void (/order by "name", "id"/.test(event.query.sql) && counter.count++) };
  return counter;
}

for (const dialect of DIALECTS) {
  describe(`folders: pages of subfolders answered from memory [${dialect}]`, () => {
    it('answers a page again without reading it while no child changed, and every change of a child shows at the next request', async (t) => {
      const queries = pageQueries();
      const { app, database } = await build(t, dialect, { onQuery: queries.onQuery });
      const user = await signUp(app);
      const mkdir = async (name: string, parentId?: string) =>
        (await user.api.post(`/api/folders/create/${user.defaultBucketId}`, { name, ...(parentId ? { parentId } : {}) })).body.data;
      const parent = await mkdir('parent');
      const elsewhere = await mkdir('elsewhere');
      const b = await mkdir('b', parent.id);
      const c = await mkdir('c', parent.id);

      const first = await listing(user, parent.id);
      assert.deepEqual(names(first), ['b', 'c']);
      queries.count = 0;
      const again = await listing(user, parent.id);
      assert.equal(queries.count, 0, 'the same page, nothing changed: from memory');
      assert.deepEqual(again.data, first.data);

      // Every kind of change to a child, each followed at once by a listing that must show it.
      const steps: [string, () => Promise<unknown>, string[], (page: any) => void][] = [
        ['create', () => mkdir('a', parent.id), ['a', 'b', 'c'], () => {}],
        ['rename', () => user.api.put(`/api/folders/update/${b.id}`, { name: 'bb' }), ['a', 'bb', 'c'], () => {}],
        [
          'visibility',
          () => user.api.put(`/api/folders/update/${c.id}`, { visibility: 'public' }),
          ['a', 'bb', 'c'],
          (page) => assert.equal(page.data[2].visibility, 'public'),
        ],
        ['trash', () => user.api.delete(`/api/folders/delete/${c.id}`), ['a', 'bb'], () => {}],
        ['restore', () => user.api.post(`/api/folders/restore/${c.id}`), ['a', 'bb', 'c'], () => {}],
        ['move out', () => user.api.post(`/api/folders/move/${b.id}`, { targetParentId: elsewhere.id }), ['a', 'c'], () => {}],
        ['move in', () => user.api.post(`/api/folders/move/${b.id}`, { targetParentId: parent.id }), ['a', 'bb', 'c'], () => {}],
        // Another instance, the command line or an administrator changing the row directly.
        [
          'SQL',
          () => database.db.updateTable('folders').set({ name: 'c by SQL' }).where('id', '=', c.id).execute(),
          ['a', 'bb', 'c by SQL'],
          () => {},
        ],
      ];
      for (const [label, change, expected, check] of steps) {
        await listing(user, parent.id); // kept before the change
        await change();
        const page = await listing(user, parent.id);
        assert.deepEqual(names(page), expected, label);
        check(page);
        assert.equal(page.total, expected.length, `${label}: total`);
      }
      assert.deepEqual(names(await listing(user, elsewhere.id)), [], 'the other parent of the move');
    });

    it('keeps pages and their cursors apart, and a change anywhere in the page sequence shows on every page', async (t) => {
      const { app } = await build(t, dialect);
      const user = await signUp(app);
      const parent = (await user.api.post(`/api/folders/create/${user.defaultBucketId}`, { name: 'parent' })).body.data;
      for (const name of ['a', 'b', 'c', 'd', 'e'])
        await user.api.post(`/api/folders/create/${user.defaultBucketId}`, { name, parentId: parent.id });
      const one = await listing(user, parent.id, '?limit=2');
      const two = await listing(user, parent.id, `?limit=2&cursor=${one.nextCursor}`);
      assert.deepEqual(
        [names(one), names(two)],
        [
          ['a', 'b'],
          ['c', 'd'],
        ],
      );
      assert.deepEqual(names(await listing(user, parent.id, '?limit=3')), ['a', 'b', 'c'], 'another limit is another page');
      const d = two.data[1];
      await user.api.put(`/api/folders/update/${d.id}`, { name: 'aa' });
      const oneAfter = await listing(user, parent.id, '?limit=2');
      assert.deepEqual(names(oneAfter), ['a', 'aa']);
      assert.deepEqual(names(await listing(user, parent.id, `?limit=2&cursor=${oneAfter.nextCursor}`)), ['b', 'c']);
      assert.deepEqual(
        names(await listing(user, parent.id, `?limit=2&cursor=${one.nextCursor}`)),
        ['c', 'e'],
        'an old cursor reads the current data',
      );
    });

    it("an upload into a child leaves its parent's listing version alone (aggregates are not listed)", async (t) => {
      const { app, database } = await build(t, dialect);
      const user = await signUp(app);
      const parent = (await user.api.post(`/api/folders/create/${user.defaultBucketId}`, { name: 'parent' })).body.data;
      const child = (await user.api.post(`/api/folders/create/${user.defaultBucketId}`, { name: 'child', parentId: parent.id })).body.data;
      const version = async () =>
        Number(
          (await database.db.selectFrom('folders').select('listing_version').where('id', '=', parent.id).executeTakeFirstOrThrow())
            .listing_version,
        );
      const before = await version();
      const res = await app.inject({
        method: 'PUT',
        url: `/api/files/upload/${child.id}?name=f.bin`,
        headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/octet-stream' },
        payload: Buffer.alloc(100, 1),
      });
      assert.equal(res.statusCode, 201, res.body);
      assert.equal(await version(), before);
      await user.api.put(`/api/folders/update/${child.id}`, { name: 'renamed' });
      assert.equal(await version(), before + 1);
    });
  });
}

describe('folders: the listing cache itself', () => {
  const key = (version: number, cursor?: string) => ({ parentId: 'fld_1', version, trashBatch: '', limit: 100, cursor });
  it('separates versions and cursors, and drops the least recently used pages beyond its budget', () => {
    const cache = new ListingCache(4096);
    const page = (text: string) => ({ items: Buffer.from(text), nextCursor: null });
    cache.set(key(1), page('x'.repeat(1000)));
    cache.set(key(1, 'c2'), page('y'.repeat(1000)));
    assert.equal(cache.get(key(2)), undefined);
    assert.equal(cache.get(key(1))?.items.toString()[0], 'x');
    assert.equal(cache.get(key(1, 'c2'))?.items.toString()[0], 'y');
    cache.get(key(1)); // now the most recently used
    cache.set(key(3), page('z'.repeat(2400)));
    assert.equal(cache.get(key(1, 'c2')), undefined, 'the least recently used went first');
    assert.ok(cache.get(key(1)) && cache.get(key(3)));
    cache.set(key(4), page('w'.repeat(5000)));
    assert.equal(cache.get(key(4)), undefined, 'a page larger than the budget is not kept');
    assert.equal(cache.size, 2);
  });
});

if (DIALECTS.includes('postgres')) {
  describe('folders: pages of subfolders across instances [postgres]', () => {
    it('a change made through another instance shows at the next listing', async (t) => {
      const { app, database } = await build(t, 'postgres');
      const other = await siblingApp(t, database);
      const user = await signUp(app);
      const elsewhere = { ...user, api: client(other, user.token) };
      const parent = (await user.api.post(`/api/folders/create/${user.defaultBucketId}`, { name: 'parent' })).body.data;
      const child = (await user.api.post(`/api/folders/create/${user.defaultBucketId}`, { name: 'one', parentId: parent.id })).body.data;
      assert.deepEqual(names(await listing(user, parent.id)), ['one']);
      assert.deepEqual(names(await listing(elsewhere, parent.id)), ['one']);
      await elsewhere.api.put(`/api/folders/update/${child.id}`, { name: 'two' });
      assert.deepEqual(names(await listing(user, parent.id)), ['two']);
      await user.api.post(`/api/folders/create/${user.defaultBucketId}`, { name: 'three', parentId: parent.id });
      assert.deepEqual(names(await listing(elsewhere, parent.id)), ['three', 'two']);
    });
  });
}
