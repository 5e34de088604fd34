// WebDAV at /dav/ (issue 31): the tree, the methods over the same use cases as the API, and bad
// input answered with a clear 4xx that changes nothing, on every dialect. Real clients (litmus,
// rclone, cadaver) are driven in the other files of this folder.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { DIALECTS, build, signUp, type TestUser } from '../../helper.js';
import { mkdir } from '../../support/folders.js';
import { basicAuth, davClient, davProp, hrefs, type DavClient } from '../../support/dav.js';
import { listen } from '../../support/raw-http.js';

/** A PUT with the path sent exactly as given (Node's client does not normalize it). */
function rawPut(port: number, path: string, authorization: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: '127.0.0.1',
      port,
      path,
      method: 'PUT',
      headers: { authorization, 'content-length': 1 },
      timeout: 10_000,
    });
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (chunk) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    });
    req.on('timeout', () => req.destroy(new Error('no answer in 10 s')));
    req.on('error', reject);
    req.end('x');
  });
}

const PROPFIND_ALL = '<?xml version="1.0"?><d:propfind xmlns:d="DAV:"><d:allprop/></d:propfind>';

/** The names listed below a collection at Depth 1 (its own href left out). */
async function listing(dav: DavClient, path: string): Promise<string[]> {
  const res = await dav('PROPFIND', path, { headers: { depth: '1' } });
  assert.equal(res.statusCode, 207, res.body);
  return hrefs(res.body)
    .slice(1)
    .map((href) => href.replace(/\/$/, '').split('/').pop()!);
}

async function fileIdOf(user: TestUser, folderId: string, name: string): Promise<string> {
  const res = await user.api.get(`/api/files/list/${folderId}?limit=100`);
  const file = res.body.data.data.find((f: any) => f.name === name);
  assert.ok(file, `${name} is listed in ${folderId}`);
  return file.id;
}

for (const dialect of DIALECTS) {
  describe(`WebDAV tree and methods [${dialect}]`, () => {
    it('signs in with Basic (password or app password) or Bearer; a 401 asks for Basic; OPTIONS advertises class 1 and 2', async (t) => {
      const { app } = await build(t, dialect);
      const user = await signUp(app);
      const options = await app.inject({ method: 'OPTIONS', url: '/dav/' });
      assert.equal(options.statusCode, 200);
      assert.equal(options.headers.dav, '1, 2');
      assert.match(String(options.headers.allow), /PROPFIND.*LOCK.*UNLOCK/);
      const anonymous = await app.inject({ method: 'PROPFIND', url: '/dav/', headers: { depth: '0' } });
      assert.equal(anonymous.statusCode, 401);
      assert.match(String(anonymous.headers['www-authenticate']), /^Basic realm="Coffre"/);
      assert.match(anonymous.body, /<d:error/);
      assert.equal((await davClient(app, user, 'wrong password')('PROPFIND', '', { headers: { depth: '0' } })).statusCode, 401);
      const token = (await user.api.post('/api/auth/tokens', { name: 'laptop' })).body.data.token;
      assert.equal((await davClient(app, user, token)('PROPFIND', '', { headers: { depth: '0' } })).statusCode, 207);
      assert.equal((await davClient(app, user)('PROPFIND', '', { headers: { depth: '0' } })).statusCode, 207);
      const bearer = await app.inject({ method: 'PROPFIND', url: '/dav/', headers: { depth: '0', authorization: `Bearer ${user.token}` } });
      assert.equal(bearer.statusCode, 207);
    });

    it('lists buckets and the shared collection; Depth infinity is refused with propfind-finite-depth', async (t) => {
      const { app } = await build(t, dialect);
      const user = await signUp(app);
      const dav = davClient(app, user);
      assert.deepEqual(await listing(dav, ''), ['default', 'Shared with me']);
      for (const depth of ['infinity', undefined]) {
        const res = await dav('PROPFIND', 'default/', { headers: depth ? { depth } : {} });
        assert.equal(res.statusCode, 403);
        assert.match(res.body, /<d:propfind-finite-depth\/>/);
      }
      const quota = await dav('PROPFIND', 'default/', {
        headers: { depth: '0' },
        body: '<d:propfind xmlns:d="DAV:"><d:prop><d:quota-used-bytes/><d:quota-available-bytes/></d:prop></d:propfind>',
      });
      await dav('PUT', 'default/a.bin', { body: randomBytes(1000) });
      const status = (await user.api.get('/api/storage/status')).body.data;
      const after = await dav('PROPFIND', 'default/', {
        headers: { depth: '0' },
        body: '<d:propfind xmlns:d="DAV:"><d:prop><d:quota-used-bytes/><d:quota-available-bytes/></d:prop></d:propfind>',
      });
      assert.equal(quota.statusCode, 207);
      assert.equal(Number(davProp(after.body, 'quota-used-bytes')), status.used_bytes);
      assert.equal(Number(davProp(after.body, 'quota-available-bytes')), status.remaining_bytes);
      assert.equal(Number(davProp(quota.body, 'quota-used-bytes')), 0);
    });

    it('PUT stores a file, a second PUT makes a new version, GET and HEAD answer ranges and validators', async (t) => {
      const { app } = await build(t, dialect);
      const user = await signUp(app);
      const dav = davClient(app, user);
      const first = randomBytes(200_000);
      const created = await dav('PUT', 'default/report%20%C3%A9t%C3%A9.bin', {
        body: first,
        headers: { 'content-type': 'application/x-test' },
      });
      assert.equal(created.statusCode, 201);
      const second = randomBytes(150_000);
      const replaced = await dav('PUT', 'default/report%20%C3%A9t%C3%A9.bin', { body: second });
      assert.equal(replaced.statusCode, 204);
      assert.notEqual(replaced.headers.etag, created.headers.etag);
      const buckets = (await user.api.get('/api/bucket/list')).body.data;
      const rootId = (Array.isArray(buckets) ? buckets : buckets.data).find((b: any) => b.name === 'default').rootFolderId;
      const fileId = await fileIdOf(user, rootId, 'report été.bin');
      assert.equal((await user.api.get(`/api/files/versions/${fileId}`)).body.data.length, 2);
      const got = await dav('GET', 'default/report%20%C3%A9t%C3%A9.bin');
      assert.equal(got.statusCode, 200);
      assert.ok(got.rawPayload.equals(second));
      assert.equal(got.headers.etag, replaced.headers.etag);
      assert.ok(got.headers['last-modified']);
      const range = await dav('GET', 'default/report%20%C3%A9t%C3%A9.bin', { headers: { range: 'bytes=10-19' } });
      assert.equal(range.statusCode, 206);
      assert.ok(range.rawPayload.equals(second.subarray(10, 20)));
      const fresh = await dav('GET', 'default/report%20%C3%A9t%C3%A9.bin', { headers: { 'if-none-match': String(got.headers.etag) } });
      assert.equal(fresh.statusCode, 304);
      const head = await dav('HEAD', 'default/report%20%C3%A9t%C3%A9.bin');
      assert.equal(head.statusCode, 200);
      assert.equal(Number(head.headers['content-length']), second.length);
      assert.equal(head.rawPayload.length, 0);
      const props = await dav('PROPFIND', 'default/report%20%C3%A9t%C3%A9.bin', { headers: { depth: '0' }, body: PROPFIND_ALL });
      assert.equal(Number(davProp(props.body, 'getcontentlength')), second.length);
      assert.equal(davProp(props.body, 'getetag'), String(got.headers.etag).replaceAll('"', '&#34;'));
    });

    it('honours If-Match and If-None-Match: * on PUT, and answers 409 when the parent is missing', async (t) => {
      const { app } = await build(t, dialect);
      const user = await signUp(app);
      const dav = davClient(app, user);
      assert.equal((await dav('PUT', 'default/x.txt', { body: 'one', headers: { 'if-match': '*' } })).statusCode, 412);
      assert.equal((await dav('PUT', 'default/x.txt', { body: 'one', headers: { 'if-none-match': '*' } })).statusCode, 201);
      assert.equal((await dav('PUT', 'default/x.txt', { body: 'two', headers: { 'if-none-match': '*' } })).statusCode, 412);
      assert.equal((await dav('PUT', 'default/x.txt', { body: 'two', headers: { 'if-match': '"ver_other"' } })).statusCode, 412);
      assert.equal((await dav('GET', 'default/x.txt')).body, 'one');
      assert.equal((await dav('PUT', 'default/no/such/x.txt', { body: 'z' })).statusCode, 409);
      assert.equal((await dav('MKCOL', 'default/no/such')).statusCode, 409);
      assert.equal((await dav('MKCOL', 'brand-new-bucket')).statusCode, 403);
    });

    it('answers 507 over the quota and 413 over the upload limit, and stores nothing', async (t) => {
      const { app } = await build(t, dialect, { config: { defaultQuotaBytes: 300_000, maxUploadBytes: 200_000 } });
      const user = await signUp(app);
      const dav = davClient(app, user);
      assert.equal((await dav('PUT', 'default/big.bin', { body: randomBytes(250_000) })).statusCode, 413);
      assert.equal((await dav('PUT', 'default/a.bin', { body: randomBytes(180_000) })).statusCode, 201);
      const over = await dav('PUT', 'default/b.bin', { body: randomBytes(180_000) });
      assert.equal(over.statusCode, 507);
      assert.match(over.body, /<d:error/);
      assert.deepEqual(await listing(dav, 'default/'), ['a.bin']);
    });

    it('DELETE sends to the trash, where the API restores it; COPY and MOVE rename across folders', async (t) => {
      const { app } = await build(t, dialect);
      const user = await signUp(app);
      const dav = davClient(app, user);
      assert.equal((await dav('MKCOL', 'default/docs')).statusCode, 201);
      assert.equal((await dav('MKCOL', 'default/docs/inner')).statusCode, 201);
      await dav('PUT', 'default/docs/inner/a.txt', { body: 'alpha' });
      const host = { host: 'localhost:80' };
      const copied = await dav('COPY', 'default/docs/', { headers: { ...host, destination: 'http://localhost:80/dav/default/copy/' } });
      assert.equal(copied.statusCode, 201);
      assert.equal((await dav('GET', 'default/copy/inner/a.txt')).body, 'alpha');
      const moved = await dav('MOVE', 'default/docs/inner/a.txt', { headers: { ...host, destination: '/dav/default/copy/b.txt' } });
      assert.equal(moved.statusCode, 201);
      assert.deepEqual(await listing(dav, 'default/copy/'), ['inner', 'b.txt']);
      const refused = await dav('MOVE', 'default/copy/b.txt', {
        headers: { ...host, destination: '/dav/default/copy/inner/a.txt', overwrite: 'F' },
      });
      assert.equal(refused.statusCode, 412);
      const renamed = await dav('MOVE', 'default/copy/', { headers: { ...host, destination: '/dav/default/docs/renamed/' } });
      assert.equal(renamed.statusCode, 201);
      assert.deepEqual(await listing(dav, 'default/docs/'), ['inner', 'renamed']);
      assert.equal((await dav('DELETE', 'default/docs/renamed/b.txt')).statusCode, 204);
      assert.equal((await dav('GET', 'default/docs/renamed/b.txt')).statusCode, 404);
      const trash = (await user.api.get(`/api/trash/list?bucketId=${user.defaultBucketId}`)).body.data;
      const trashed = trash.files.find((f: any) => f.name === 'b.txt');
      assert.ok(trashed, 'the deleted file is in the trash');
      assert.equal((await user.api.post(`/api/files/restore/${trashed.id}`)).status, 200);
      assert.equal((await dav('GET', 'default/docs/renamed/b.txt')).body, 'alpha');
    });

    it('shows what others share under "Shared with me", told apart by owner, with exactly the rights granted', async (t) => {
      const { app } = await build(t, dialect);
      const alice = await signUp(app, 'Alice');
      const bob = await signUp(app, 'Bob');
      const carol = await signUp(app, 'Carol');
      const aliceFolder = await mkdir(alice, 'Projects');
      const bobFolder = await mkdir(bob, 'Projects');
      await davClient(app, alice)('PUT', 'default/Projects/plan.txt', { body: 'alice plan' });
      const grant = (owner: TestUser, folderId: string, flags: object) =>
        owner.api.post(`/api/folders/share-users/${folderId}`, { users: [{ userId: carol.id, ...flags }] });
      assert.ok([200, 201].includes((await grant(alice, aliceFolder, { canView: true, canDownload: false, canEdit: false })).status));
      assert.ok([200, 201].includes((await grant(bob, bobFolder, { canView: true, canDownload: true, canEdit: true })).status));
      const dav = davClient(app, carol);
      assert.deepEqual((await listing(dav, 'Shared%20with%20me/')).sort(), ['Projects (Alice)', 'Projects (Bob)']);
      assert.deepEqual(await listing(dav, 'Shared%20with%20me/Projects%20(Alice)/'), ['plan.txt']);
      assert.equal((await dav('GET', 'Shared%20with%20me/Projects%20(Alice)/plan.txt')).statusCode, 403);
      assert.equal((await dav('PUT', 'Shared%20with%20me/Projects%20(Alice)/new.txt', { body: 'x' })).statusCode, 403);
      assert.equal((await dav('DELETE', 'Shared%20with%20me/Projects%20(Alice)/plan.txt')).statusCode, 403);
      assert.equal((await dav('PUT', 'Shared%20with%20me/Projects%20(Bob)/new.txt', { body: 'from carol' })).statusCode, 201);
      assert.equal((await davClient(app, bob)('GET', 'default/Projects/new.txt')).body, 'from carol');
    });
  });

  describe(`WebDAV bad input [${dialect}]`, () => {
    it('refuses malformed XML, DOCTYPEs and entities (never expanded), and XML bodies over the limit', async (t) => {
      const { app } = await build(t, dialect, { config: { davXmlMaxBytes: 4096 } });
      const user = await signUp(app);
      const dav = davClient(app, user);
      await dav('PUT', 'default/a.txt', { body: 'a' });
      const propfind = (body: string) =>
        dav('PROPFIND', 'default/a.txt', { headers: { depth: '0', 'content-type': 'application/xml' }, body });
      assert.equal((await propfind('<d:propfind xmlns:d="DAV:"><d:prop>')).statusCode, 400);
      assert.equal((await propfind('<d:propfind xmlns:d="DAV:"><d:prop></d:propfind>')).statusCode, 400);
      const bomb =
        '<?xml version="1.0"?><!DOCTYPE d [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;">]><d:propfind xmlns:d="DAV:"><d:prop><x xmlns="urn:x">&b;</x></d:prop></d:propfind>';
      const refused = await propfind(bomb);
      assert.equal(refused.statusCode, 400);
      assert.match(refused.body, /DOCTYPE/);
      const external =
        '<?xml version="1.0"?><!DOCTYPE d SYSTEM "http://127.0.0.1:1/evil.dtd"><d:propfind xmlns:d="DAV:"><d:allprop/></d:propfind>';
      assert.equal((await propfind(external)).statusCode, 400);
      const patch = (value: string) =>
        dav('PROPPATCH', 'default/a.txt', {
          body: `<d:propertyupdate xmlns:d="DAV:"><d:set><d:prop><x:note xmlns:x="urn:x">${value}</x:note></d:prop></d:set></d:propertyupdate>`,
        });
      assert.equal((await patch('y'.repeat(5000))).statusCode, 413);
      assert.equal((await patch('kept')).statusCode, 207);
      const read = await dav('PROPFIND', 'default/a.txt', { headers: { depth: '0' }, body: PROPFIND_ALL });
      assert.match(read.body, /<x:note xmlns:x="urn:x">kept<\/x:note>/);
      assert.equal(
        (await dav('PROPFIND', 'default/a.txt', { headers: { depth: '0' }, body: Buffer.from([0x3c, 0xff, 0xfe]) })).statusCode,
        400,
      );
    });

    it('refuses .., encoded dots and slashes, NUL and control characters in paths', async (t) => {
      const { app } = await build(t, dialect);
      const user = await signUp(app);
      const dav = davClient(app, user);
      // Over a real socket: app.inject would resolve the dots itself before the server saw them.
      const port = await listen(app);
      const paths = [
        'default/../x',
        'default/%2e%2e/x',
        'default/a%2Fb',
        'default/a%00b',
        'default/a%01b',
        'default/%2E',
        'default/a%5Cb',
        'default/%zz',
      ];
      for (const path of paths) {
        const res = await rawPut(port, `/dav/${path}`, basicAuth(user));
        assert.equal(res.status, 400, `${path}: ${res.status} ${res.body}`);
        assert.match(res.body, /<d:error/);
      }
      assert.deepEqual(await listing(dav, 'default/'), []);
    });

    it('answers 502 for a Destination elsewhere, 400 for a malformed one, 409 for a collection into itself', async (t) => {
      const { app } = await build(t, dialect);
      const user = await signUp(app);
      const dav = davClient(app, user);
      await dav('MKCOL', 'default/a');
      await dav('PUT', 'default/a/f.txt', { body: 'f' });
      const move = (destination: string) => dav('MOVE', 'default/a/', { headers: { host: 'localhost:80', destination } });
      assert.equal((await move('http://elsewhere.example/dav/default/b/')).statusCode, 502);
      assert.equal((await move('http://localhost:80/api/files/b')).statusCode, 502);
      assert.equal((await move('http://[bad')).statusCode, 400);
      assert.equal((await dav('MOVE', 'default/a/', { headers: { host: 'localhost:80' } })).statusCode, 400);
      assert.equal((await move('/dav/default/a/inside/')).statusCode, 409);
      assert.equal((await move('/dav/default/x/../a/inside/')).statusCode, 400);
      assert.deepEqual(await listing(dav, 'default/a/'), ['f.txt']);
    });
  });
}
