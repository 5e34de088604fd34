// WebDAV class 2 (RFC 4918 §6–7, §9.10–9.11, §10.4): LOCK and UNLOCK, the If header, what a
// lock keeps others from doing (another user with edit rights on a shared folder included), lock
// timeouts, Depth infinity on folders, locks on unmapped URLs, and locks honoured by a sibling
// instance over the same PostgreSQL schema. litmus' locks suite runs in litmus.test.ts.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS, build, signUp } from '../../helper.js';
import { davClient, lockInfo, type DavClient } from '../../support/dav.js';
import { assertStatus, createFolder } from '../../support/folders.js';
import { siblingApp } from '../../support/sibling.js';

const BASE = '/dav/default';

/** Takes a lock; asserts the status and answers the token (without angle brackets) and the body. */
async function takeLock(
  dav: DavClient,
  url: string,
  status: number,
  headers: Record<string, string> = {},
  scope: 'exclusive' | 'shared' = 'exclusive',
) {
  const res = await dav('LOCK', url, { headers: { 'content-type': 'application/xml', ...headers }, body: lockInfo(scope) });
  assert.equal(res.statusCode, status, `LOCK ${url}: ${res.statusCode} ${res.body}`);
  const token = /^<(urn:uuid:[0-9a-f-]+)>$/.exec(String(res.headers['lock-token'] ?? ''))?.[1];
  if (status < 300) assert.ok(token, `a Lock-Token header: ${res.headers['lock-token']}`);
  return { token: token!, body: res.body };
}

async function put(dav: DavClient, url: string, content: string, headers: Record<string, string> = {}) {
  return dav('PUT', url, { headers: { 'content-type': 'text/plain', ...headers }, body: content });
}

/** Sets a dead property. */
function proppatch(dav: DavClient, url: string, headers: Record<string, string> = {}) {
  const body =
    '<?xml version="1.0"?><d:propertyupdate xmlns:d="DAV:" xmlns:x="urn:test"><d:set><d:prop><x:color>blue</x:color></d:prop></d:set></d:propertyupdate>';
  return dav('PROPPATCH', url, { headers: { 'content-type': 'application/xml', ...headers }, body });
}

/** The lockdiscovery a PROPFIND (Depth 0) shows of a resource. */
async function discovery(dav: DavClient, url: string): Promise<string> {
  const body = '<?xml version="1.0"?><d:propfind xmlns:d="DAV:"><d:prop><d:lockdiscovery/></d:prop></d:propfind>';
  const res = await dav('PROPFIND', url, { headers: { depth: '0', 'content-type': 'application/xml' }, body });
  assert.equal(res.statusCode, 207, res.body);
  return res.body;
}

async function setUp(t: Parameters<typeof build>[0], dialect: (typeof DIALECTS)[number]) {
  const testApp = await build(t, dialect);
  const alice = await signUp(testApp.app, 'Alice');
  return { ...testApp, alice, dav: davClient(testApp.app, alice) };
}

for (const dialect of DIALECTS) {
  describe(`WebDAV locks [${dialect}]`, () => {
    it('an exclusive lock: its XML and Lock-Token, PUT without the token 423, with it 2xx, UNLOCK frees it', async (t) => {
      const { dav } = await setUp(t, dialect);
      assert.equal((await put(dav, `${BASE}/a.txt`, 'one')).statusCode, 201);
      const { token, body } = await takeLock(dav, `${BASE}/a.txt`, 200, { depth: '0', timeout: 'Second-600' });
      assert.match(body, /<d:prop xmlns:d="DAV:"><d:lockdiscovery><d:activelock>/);
      assert.match(body, /<d:lockscope><d:exclusive\/><\/d:lockscope>/);
      assert.match(body, /<d:depth>0<\/d:depth>/);
      assert.match(body, /<d:owner[^>]*>test suite<\/d:owner>/, 'the owner as the client sent it');
      assert.match(body, /<d:timeout>Second-(600|599)<\/d:timeout>/);
      assert.match(body, new RegExp(`<d:locktoken><d:href>${token}</d:href></d:locktoken>`));
      assert.match(body, /<d:lockroot><d:href>\/dav\/default\/a.txt<\/d:href><\/d:lockroot>/);
      assert.match(await discovery(dav, `${BASE}/a.txt`), new RegExp(token), 'PROPFIND shows the lock');

      const refused = await put(dav, `${BASE}/a.txt`, 'two');
      assert.equal(refused.statusCode, 423);
      assert.match(refused.body, /<d:lock-token-submitted\/>/);
      assert.equal((await dav('DELETE', `${BASE}/a.txt`)).statusCode, 423, 'DELETE');
      assert.equal((await proppatch(dav, `${BASE}/a.txt`)).statusCode, 423, 'PROPPATCH');
      assert.equal((await put(dav, `${BASE}/a.txt`, 'two', { if: `(<${token}>)` })).statusCode, 204, 'with the token');
      assert.equal(
        (await put(dav, `${BASE}/a.txt`, 'three', { if: `<http://localhost${BASE}/a.txt> (<${token}>)` })).statusCode,
        204,
        'tagged',
      );
      assert.equal((await dav('GET', `${BASE}/a.txt`)).body, 'three');

      assert.equal((await dav('UNLOCK', `${BASE}/a.txt`, { headers: { 'lock-token': `<${token}>` } })).statusCode, 204);
      assert.doesNotMatch(await discovery(dav, `${BASE}/a.txt`), /activelock/);
      assert.equal((await put(dav, `${BASE}/a.txt`, 'four')).statusCode, 204, 'unlocked');
    });

    it("another user with edit rights is kept out, with the lock owner's token too (423), and may not UNLOCK (403)", async (t) => {
      const { app, alice, dav } = await setUp(t, dialect);
      const bob = await signUp(app, 'Bob');
      const project = await createFolder(alice, 'project');
      assertStatus(
        await alice.api.post(`/api/folders/share-users/${project.id}`, { users: [{ userId: bob.id, canEdit: true }] }),
        201,
        'share',
      );
      const bobDav = davClient(app, bob);
      const bobUrl = `/dav/${encodeURIComponent('Shared with me')}/project/plan.txt`;
      assert.equal((await put(bobDav, bobUrl, 'bob wrote this')).statusCode, 201, 'bob may edit');

      const { token } = await takeLock(dav, `${BASE}/project/plan.txt`, 200);
      assert.equal((await put(bobDav, bobUrl, 'no token')).statusCode, 423);
      assert.equal((await put(bobDav, bobUrl, "alice's token", { if: `(<${token}>)` })).statusCode, 423, "another user's token");
      assert.equal((await takeLock(bobDav, bobUrl, 423)).token, undefined, 'no second exclusive lock');
      const unlock = await bobDav('UNLOCK', bobUrl, { headers: { 'lock-token': `<${token}>` } });
      assert.equal(unlock.statusCode, 403, unlock.body);
      assert.match(await discovery(bobDav, bobUrl), new RegExp(token), 'the lock is seen through the share too');
      assert.equal((await put(dav, `${BASE}/project/plan.txt`, 'alice', { if: `(<${token}>)` })).statusCode, 204, 'the owner writes');
    });

    it('shared locks coexist; an exclusive lock conflicts with them and they with it (423 no-conflicting-lock)', async (t) => {
      const { dav } = await setUp(t, dialect);
      await put(dav, `${BASE}/s.txt`, 'shared');
      await put(dav, `${BASE}/x.txt`, 'exclusive');
      const first = await takeLock(dav, `${BASE}/s.txt`, 200, {}, 'shared');
      const second = await takeLock(dav, `${BASE}/s.txt`, 200, {}, 'shared');
      assert.notEqual(first.token, second.token);
      const conflict = await dav('LOCK', `${BASE}/s.txt`, { body: lockInfo('exclusive') });
      assert.equal(conflict.statusCode, 423);
      assert.match(conflict.body, /<d:no-conflicting-lock\/>/);
      const discovered = await discovery(dav, `${BASE}/s.txt`);
      assert.ok(discovered.includes(first.token) && discovered.includes(second.token), 'both shared locks are listed');
      assert.equal((await put(dav, `${BASE}/s.txt`, 'one of them', { if: `(<${second.token}>)` })).statusCode, 204);

      await takeLock(dav, `${BASE}/x.txt`, 200);
      assert.equal((await dav('LOCK', `${BASE}/x.txt`, { body: lockInfo('shared') })).statusCode, 423);
    });

    it('a lock past its timeout counts for nothing; Infinite is capped at a week', async (t) => {
      const { dav } = await setUp(t, dialect);
      await put(dav, `${BASE}/brief.txt`, 'x');
      await takeLock(dav, `${BASE}/brief.txt`, 200, { timeout: 'Second-1' });
      assert.equal((await put(dav, `${BASE}/brief.txt`, 'y')).statusCode, 423, 'locked at first');
      await new Promise((resolve) => setTimeout(resolve, 1200));
      assert.equal((await put(dav, `${BASE}/brief.txt`, 'z')).statusCode, 204, 'the lock expired');
      assert.doesNotMatch(await discovery(dav, `${BASE}/brief.txt`), /activelock/);
      const long = await takeLock(dav, `${BASE}/brief.txt`, 200, { timeout: 'Infinite, Second-4100000000' });
      assert.match(long.body, /<d:timeout>Second-60480[0-9]<\/d:timeout>/);
    });

    it('a refresh (LOCK without a body, If naming the lock) renews its timeout, also through a member of a locked folder', async (t) => {
      const { dav } = await setUp(t, dialect);
      await dav('MKCOL', `${BASE}/docs`);
      await put(dav, `${BASE}/docs/r.txt`, 'r');
      const { token } = await takeLock(dav, `${BASE}/docs/`, 200, { timeout: 'Second-100' });
      const refreshed = await dav('LOCK', `${BASE}/docs/r.txt`, { headers: { if: `(<${token}>)`, timeout: 'Second-5000' } });
      assert.equal(refreshed.statusCode, 200, refreshed.body);
      assert.match(refreshed.body, /<d:timeout>Second-(5000|4999)<\/d:timeout>/);
      assert.match(refreshed.body, /<d:lockroot><d:href>\/dav\/default\/docs\/<\/d:href>/, 'the root of the lock is the folder');
      assert.equal(
        (await dav('LOCK', `${BASE}/docs/r.txt`, { headers: { if: '(<urn:uuid:00000000-0000-0000-0000-000000000000>)' } })).statusCode,
        412,
      );
      assert.equal((await dav('LOCK', `${BASE}/docs/r.txt`)).statusCode, 400, 'neither a body nor an If header');
    });

    it('Depth infinity on a folder guards its members: PUT of a new one, DELETE and MOVE of one, MKCOL inside (423)', async (t) => {
      const { dav } = await setUp(t, dialect);
      await dav('MKCOL', `${BASE}/tree`);
      await dav('MKCOL', `${BASE}/tree/sub`);
      await put(dav, `${BASE}/tree/sub/old.txt`, 'old');
      const { token, body } = await takeLock(dav, `${BASE}/tree/`, 200);
      assert.match(body, /<d:depth>infinity<\/d:depth>/, 'infinity is the default');
      assert.equal((await put(dav, `${BASE}/tree/sub/new.txt`, 'new')).statusCode, 423, 'PUT of a new member');
      assert.equal((await dav('DELETE', `${BASE}/tree/sub/old.txt`)).statusCode, 423, 'DELETE');
      assert.equal((await dav('MKCOL', `${BASE}/tree/sub/more`)).statusCode, 423, 'MKCOL');
      const move = await dav('MOVE', `${BASE}/tree/sub/old.txt`, { headers: { destination: `${BASE}/moved.txt` } });
      assert.equal(move.statusCode, 423, 'MOVE out');
      assert.equal((await takeLock(dav, `${BASE}/tree/sub/old.txt`, 423)).token, undefined, 'no exclusive lock below');
      const ifHeader = `<http://localhost${BASE}/tree/> (<${token}>)`;
      assert.equal((await put(dav, `${BASE}/tree/sub/new.txt`, 'new', { if: ifHeader })).statusCode, 201, 'with the token');
      assert.equal((await dav('DELETE', `${BASE}/tree/sub/old.txt`, { headers: { if: ifHeader } })).statusCode, 204);

      // A lock below a folder keeps it from being deleted or locked at Depth infinity by anyone without its token.
      await dav('UNLOCK', `${BASE}/tree/`, { headers: { 'lock-token': `<${token}>` } });
      const inner = await takeLock(dav, `${BASE}/tree/sub/new.txt`, 200);
      assert.equal((await dav('LOCK', `${BASE}/tree/`, { body: lockInfo() })).statusCode, 423, 'a lock below conflicts');
      assert.equal((await dav('DELETE', `${BASE}/tree/`)).statusCode, 423, 'DELETE of the folder');
      assert.equal(
        (await dav('DELETE', `${BASE}/tree/`, { headers: { if: `<http://localhost${BASE}/tree/sub/new.txt> (<${inner.token}>)` } }))
          .statusCode,
        204,
      );
      assert.equal((await put(dav, `${BASE}/tree2.txt`, 'free')).statusCode, 201);
    });

    it('a Depth 0 lock on a folder guards its membership, not its members', async (t) => {
      const { dav } = await setUp(t, dialect);
      await dav('MKCOL', `${BASE}/flat`);
      await put(dav, `${BASE}/flat/in.txt`, 'in');
      const { token } = await takeLock(dav, `${BASE}/flat/`, 200, { depth: '0' });
      assert.equal((await put(dav, `${BASE}/flat/in.txt`, 'changed')).statusCode, 204, 'a member changes freely');
      assert.equal((await put(dav, `${BASE}/flat/new.txt`, 'new')).statusCode, 423, 'no new member');
      assert.equal((await dav('DELETE', `${BASE}/flat/in.txt`)).statusCode, 423, 'no member removed');
      assert.equal((await put(dav, `${BASE}/flat/new.txt`, 'new', { if: `<http://localhost${BASE}/flat/> (<${token}>)` })).statusCode, 201);
    });

    it('UNLOCK: a token of no lock of the resource is 409, a malformed header 400; Depth 1 on LOCK is 400', async (t) => {
      const { dav } = await setUp(t, dialect);
      await put(dav, `${BASE}/u.txt`, 'u');
      await put(dav, `${BASE}/v.txt`, 'v');
      const { token } = await takeLock(dav, `${BASE}/u.txt`, 200);
      const wrong = await dav('UNLOCK', `${BASE}/u.txt`, { headers: { 'lock-token': '<urn:uuid:00000000-0000-0000-0000-000000000000>' } });
      assert.equal(wrong.statusCode, 409);
      assert.match(wrong.body, /<d:lock-token-matches-request-uri\/>/);
      assert.equal((await dav('UNLOCK', `${BASE}/v.txt`, { headers: { 'lock-token': `<${token}>` } })).statusCode, 409, 'another resource');
      assert.equal((await dav('UNLOCK', `${BASE}/u.txt`, { headers: { 'lock-token': token } })).statusCode, 400, 'no angle brackets');
      assert.equal((await dav('UNLOCK', `${BASE}/u.txt`)).statusCode, 400, 'no header');
      assert.equal((await dav('LOCK', `${BASE}/v.txt`, { headers: { depth: '1' }, body: lockInfo() })).statusCode, 400);
      assert.equal((await dav('UNLOCK', `${BASE}/u.txt`, { headers: { 'lock-token': `<${token}>` } })).statusCode, 204);
    });

    it('LOCK on an unmapped URL makes an empty file (201); without a parent folder it is 409', async (t) => {
      const { dav } = await setUp(t, dialect);
      const { token } = await takeLock(dav, `${BASE}/fresh.txt`, 201);
      const got = await dav('GET', `${BASE}/fresh.txt`);
      assert.equal(got.statusCode, 200);
      assert.equal(got.body, '');
      assert.equal((await put(dav, `${BASE}/fresh.txt`, 'no token')).statusCode, 423);
      assert.equal((await put(dav, `${BASE}/fresh.txt`, 'content', { if: `(<${token}>)` })).statusCode, 204);
      assert.equal((await dav('LOCK', `${BASE}/nowhere/fresh.txt`, { body: lockInfo() })).statusCode, 409);
    });

    it('the If header is a precondition (412 when no list holds, 400 when malformed); locks go with a moved or deleted item', async (t) => {
      const { dav } = await setUp(t, dialect);
      await put(dav, `${BASE}/c.txt`, 'c');
      const etag = String((await dav('HEAD', `${BASE}/c.txt`)).headers.etag);
      assert.equal((await put(dav, `${BASE}/c.txt`, 'x', { if: '(<urn:uuid:00000000-0000-0000-0000-000000000000>)' })).statusCode, 412);
      assert.equal((await put(dav, `${BASE}/c.txt`, 'x', { if: '(["not-the-etag"])' })).statusCode, 412);
      assert.equal((await put(dav, `${BASE}/c.txt`, 'x', { if: `([${etag}])` })).statusCode, 204, 'the current entity tag');
      assert.equal((await put(dav, `${BASE}/c.txt`, 'y', { if: '(Not <DAV:no-lock>)' })).statusCode, 204);
      assert.equal((await put(dav, `${BASE}/c.txt`, 'z', { if: '(<urn:uuid:1' })).statusCode, 400);

      const { token } = await takeLock(dav, `${BASE}/c.txt`, 200);
      const corrupt = await put(dav, `${BASE}/c.txt`, 'z', { if: `(<${token}x>) (Not <DAV:no-lock>)` });
      assert.equal(corrupt.statusCode, 423, 'the header holds, but submits no token of the lock');
      const moved = await dav('MOVE', `${BASE}/c.txt`, { headers: { destination: `${BASE}/d.txt`, if: `(<${token}>)` } });
      assert.equal(moved.statusCode, 201, moved.body);
      assert.doesNotMatch(await discovery(dav, `${BASE}/d.txt`), /activelock/, 'the lock did not move');
      assert.equal((await put(dav, `${BASE}/d.txt`, 'free')).statusCode, 204);

      const again = await takeLock(dav, `${BASE}/d.txt`, 200);
      assert.equal((await dav('DELETE', `${BASE}/d.txt`, { headers: { if: `(<${again.token}>)` } })).statusCode, 204);
      assert.equal((await takeLock(dav, `${BASE}/d.txt`, 201)).token.length > 0, true, 'a new file there is not locked by the old lock');
    });
  });
}

// The sibling has blob storage of its own: it is asked only what lives in the database (locks, properties, folders).
if (DIALECTS.includes('postgres')) {
  describe('WebDAV locks across instances [postgres]', () => {
    it('a lock taken through one instance is honoured by a sibling over the same schema', async (t) => {
      const { database, alice, dav } = await setUp(t, 'postgres');
      const sibling = davClient(await siblingApp(t, database), alice);
      await put(dav, `${BASE}/shared-state.txt`, 'one');
      const { token } = await takeLock(dav, `${BASE}/shared-state.txt`, 200);
      assert.equal((await proppatch(sibling, `${BASE}/shared-state.txt`)).statusCode, 423, 'the sibling sees the lock');
      assert.equal((await sibling('DELETE', `${BASE}/shared-state.txt`)).statusCode, 423);
      assert.equal((await sibling('LOCK', `${BASE}/shared-state.txt`, { body: lockInfo() })).statusCode, 423);
      assert.equal((await proppatch(sibling, `${BASE}/shared-state.txt`, { if: `(<${token}>)` })).statusCode, 207, 'with the token');
      assert.equal((await sibling('UNLOCK', `${BASE}/shared-state.txt`, { headers: { 'lock-token': `<${token}>` } })).statusCode, 204);
      assert.equal((await put(dav, `${BASE}/shared-state.txt`, 'three')).statusCode, 204, 'the first instance sees the unlock');
    });
  });
}
