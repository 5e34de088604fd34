import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { unwrapKey } from '../../../src/crypto/key-wrap.js';
import { keyProofOf } from '../../../src/modules/links/links.key-proof.js';
import { openSealed } from '../../support/sealed.js';
import { DIALECTS, build, client, signUp, type TestUser } from '../../helper.js';
import { putFile, rootFolderId } from '../../support/files.js';
import { assertError } from '../../support/errors.js';
import { splitLink, publicPost } from '../../support/links.js';

async function makeFolder(user: TestUser, name: string, parentId?: string): Promise<string> {
  const res = await user.api.post(`/api/folders/create/${user.defaultBucketId}`, { name, ...(parentId ? { parentId } : {}) });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body.data.id;
}

for (const dialect of DIALECTS) {
  describe(`share links [${dialect}]`, () => {
    async function linksFixture(t: import('node:test').TestContext, logStream?: Writable) {
      const ctx = await build(t, dialect, logStream ? { config: { logLevel: 'trace' } as never, logStream } : {});
      const owner = await signUp(ctx.app, 'Owner');
      const root = await rootFolderId(owner);
      const data = randomBytes(200_000);
      const file = await putFile(ctx.app, owner, root, 'report.bin', data);
      return { ...ctx, owner, root, data, file };
    }

    it('a file link: created once with its key, info and download only with the right key and password', async (t) => {
      const { app, database, owner, data, file } = await linksFixture(t);
      const created = await owner.api.post(`/api/files/share/${file.id}`, { password: 'open sesame', maxAccess: 5 });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const link = created.body.data;
      // COFFRE_PUBLIC_URL unset: the origin the request came to (app.inject's Host is localhost:80).
      assert.ok(link.shareLink.startsWith('http://localhost/s/'), link.shareLink);
      const { hash, key } = splitLink(link.shareLink);
      assert.equal(link.sharedHash, hash);
      assert.deepEqual(
        { ...link, shareLink: undefined },
        {
          shareLink: undefined,
          sharedHash: hash,
          expiresAt: null,
          maxAccess: 5,
          canView: true,
          canDownload: true,
          canEdit: false,
          isPublic: true,
        },
      );

      // The key is nowhere in the database, in any encoding.
      const rows = await database.db.selectFrom('share_links').selectAll().execute();
      const dump = JSON.stringify(rows);
      assert.ok(
        !dump.includes(key) &&
          !dump.includes(Buffer.from(key, 'base64url').toString('hex')) &&
          !dump.includes(Buffer.from(key, 'base64url').toString('base64')),
      );
      assert.ok(!dump.includes('open sesame'));

      const info = `/api/files/shared/${hash}`;
      assertError(await publicPost(app, info, {}), 401, 'PASSWORD_REQUIRED');
      assertError(await publicPost(app, info, { password: 'nope' }), 403, 'INVALID_PASSWORD');
      const ok = await publicPost(app, info, { password: 'open sesame' });
      assert.equal(ok.status, 200);
      assert.equal(ok.body.data.name, 'report.bin');
      assert.equal(ok.body.data.size, data.length);
      assert.equal(ok.body.data.remainingAccess, 5);

      const dl = `/api/files/download/public/${hash}`;
      assertError(await publicPost(app, dl, { password: 'open sesame' }), 403, 'INVALID_ENCRYPTION_KEY');
      assertError(
        await publicPost(app, dl, { password: 'open sesame', encryptionKey: randomBytes(32).toString('base64url') }),
        403,
        'INVALID_ENCRYPTION_KEY',
      );
      assertError(await publicPost(app, dl, { password: 'open sesame', encryptionKey: 'short' }), 403, 'INVALID_ENCRYPTION_KEY');
      assertError(await publicPost(app, dl, { encryptionKey: key }), 401, 'PASSWORD_REQUIRED');
      const got = await publicPost(app, dl, { password: 'open sesame', encryptionKey: key });
      assert.equal(got.status, 200);
      assert.ok(got.raw.equals(data));
      assert.equal(got.headers['x-content-type-options'], 'nosniff');
      assert.match(String(got.headers['content-disposition']), /^attachment/);
      // Failed attempts counted no access; the one success did.
      assert.equal((await publicPost(app, info, { password: 'open sesame' })).body.data.remainingAccess, 4);

      assertError(await publicPost(app, `/api/files/shared/${'x'.repeat(22)}`, {}), 404, 'LINK_NOT_FOUND');
    });

    it('a file link follows new versions, stops after maxAccess, and answers 410 once expired or revoked', async (t) => {
      const { app, database, owner, root, file } = await linksFixture(t);
      const { hash, key } = splitLink((await owner.api.post(`/api/files/share/${file.id}`, { maxAccess: 2 })).body.data.shareLink);
      const dl = `/api/files/download/public/${hash}`;
      const second = Buffer.from('version two');
      await putFile(app, owner, root, 'report.bin', second);
      const got = await publicPost(app, dl, { encryptionKey: key });
      assert.ok(got.raw.equals(second), 'the link serves the current version');
      assert.equal((await publicPost(app, dl, { encryptionKey: key })).status, 200);
      assertError(await publicPost(app, dl, { encryptionKey: key }), 410, 'LINK_EXHAUSTED');

      // Raising the limit reopens it; an expiry in the past closes it; revocation closes it for good.
      assert.equal((await owner.api.patch(`/api/files/share/${hash}`, { maxAccess: 0 })).status, 200);
      assert.equal((await publicPost(app, dl, { encryptionKey: key })).status, 200);
      await database.db
        .updateTable('share_links')
        .set({ expires_at: new Date(Date.now() - 1000).toISOString() })
        .where('shared_hash', '=', hash)
        .execute();
      assertError(await publicPost(app, dl, { encryptionKey: key }), 410, 'LINK_EXPIRED');
      assert.equal((await owner.api.patch(`/api/files/share/${hash}`, { expirationDays: 1 })).status, 200);
      assert.equal((await publicPost(app, dl, { encryptionKey: key })).status, 200);
      assert.equal((await owner.api.delete(`/api/files/revoke/${hash}`)).status, 200);
      assertError(await publicPost(app, dl, { encryptionKey: key }), 410, 'LINK_REVOKED');
      assertError(await publicPost(app, `/api/files/shared/${hash}`, {}), 410, 'LINK_REVOKED');
    });

    it('the owner manages links; others cannot see, change or revoke them', async (t) => {
      const { app, owner, file } = await linksFixture(t);
      const other = await signUp(app, 'Other');
      const { hash, key } = splitLink(
        (await owner.api.post(`/api/files/share/${file.id}`, { password: 'pw one', canDownload: false })).body.data.shareLink,
      );
      const listed = await owner.api.get(`/api/files/share/${file.id}`);
      assert.equal(listed.status, 200);
      assert.equal(listed.body.data.length, 1);
      assert.equal(listed.body.data[0].hasPassword, true);
      assert.ok(!JSON.stringify(listed.body).includes(key));
      assert.equal((await other.api.get(`/api/files/share/${file.id}`)).status, 404);
      assertError(await other.api.patch(`/api/files/share/${hash}`, { maxAccess: 1 }), 404, 'LINK_NOT_FOUND');
      assertError(await other.api.delete(`/api/files/revoke/${hash}`), 404, 'LINK_NOT_FOUND');
      assertError(await other.api.post(`/api/files/share/${file.id}`, {}), 404, 'FILE_NOT_FOUND');
      assertError(await owner.api.patch(`/api/files/share/${hash}`, {}), 400, 'EMPTY_UPDATE');

      const dl = `/api/files/download/public/${hash}`;
      assertError(await publicPost(app, dl, { password: 'pw one', encryptionKey: key }), 403, 'DOWNLOAD_NOT_ALLOWED');
      const patched = await owner.api.patch(`/api/files/share/${hash}`, { password: '', canDownload: true });
      assert.equal(patched.body.data.hasPassword, false);
      assert.equal((await publicPost(app, dl, { encryptionKey: key })).status, 200, 'no password needed any more');

      // A non-public link needs a signed-in visitor (any user).
      const { hash: privateHash, key: privateKey } = splitLink(
        (await owner.api.post(`/api/files/share/${file.id}`, { isPublic: false })).body.data.shareLink,
      );
      assertError(
        await publicPost(app, `/api/files/download/public/${privateHash}`, { encryptionKey: privateKey }),
        401,
        'UNAUTHENTICATED',
      );
      assert.equal(
        (await publicPost(app, `/api/files/download/public/${privateHash}`, { encryptionKey: privateKey }, { token: other.token })).status,
        200,
      );
    });

    it('200 simultaneous downloads on a link with maxAccess 10: exactly 10 succeed, 190 are LINK_EXHAUSTED', async (t) => {
      const { app, owner, file, data } = await linksFixture(t);
      const { hash, key } = splitLink((await owner.api.post(`/api/files/share/${file.id}`, { maxAccess: 10 })).body.data.shareLink);
      const results = await Promise.all(
        Array.from({ length: 200 }, (_, i) =>
          publicPost(app, `/api/files/download/public/${hash}`, { encryptionKey: key }, { address: `10.0.${i >> 8}.${i & 255}` }),
        ),
      );
      const ok = results.filter((r) => r.status === 200);
      assert.equal(ok.length, 10);
      for (const r of ok) assert.ok(r.raw.equals(data));
      const refused = results.filter((r) => r.status === 410);
      assert.equal(refused.length, 190);
      for (const r of refused) assert.equal(r.body.code, 'LINK_EXHAUSTED');
    });

    it('wrong passwords and keys are throttled per link and address, without locking out other addresses', async (t) => {
      const { app, owner, file } = await linksFixture(t);
      const { hash, key } = splitLink((await owner.api.post(`/api/files/share/${file.id}`, { password: 'right one' })).body.data.shareLink);
      const info = `/api/files/shared/${hash}`;
      for (let i = 0; i < 10; i++)
        assertError(await publicPost(app, info, { password: `guess ${i}` }, { address: '192.0.2.1' }), 403, 'INVALID_PASSWORD');
      const blocked = await publicPost(app, info, { password: 'right one' }, { address: '192.0.2.1' });
      assertError(blocked, 429, 'RATE_LIMITED');
      assert.ok(Number(blocked.headers['retry-after']) > 0);
      // Another visitor of the same link is not affected.
      assert.equal((await publicPost(app, info, { password: 'right one' }, { address: '192.0.2.2' })).status, 200);
      // Wrong keys count too.
      const dl = `/api/files/download/public/${hash}`;
      for (let i = 0; i < 10; i++)
        assertError(
          await publicPost(
            app,
            dl,
            { password: 'right one', encryptionKey: randomBytes(32).toString('base64url') },
            { address: '192.0.2.3' },
          ),
          403,
          'INVALID_ENCRYPTION_KEY',
        );
      assertError(await publicPost(app, dl, { password: 'right one', encryptionKey: key }, { address: '192.0.2.3' }), 429, 'RATE_LIMITED');
      assert.equal((await publicPost(app, dl, { password: 'right one', encryptionKey: key }, { address: '192.0.2.4' })).status, 200);
    });

    it('a folder link opens its tree (counting opens) and downloads its files by hashName, nothing outside', async (t) => {
      const { app, owner, root, file: outside } = await linksFixture(t);
      const shared = await makeFolder(owner, 'Shared');
      const sub = await makeFolder(owner, 'Inner', shared);
      const top = await putFile(app, owner, shared, 'top.txt', 'top file');
      const deep = await putFile(app, owner, sub, 'deep.txt', 'deep file');
      assertError(await owner.api.post(`/api/folders/share/${root}`, {}), 400, 'ROOT_FOLDER_READONLY');
      const created = await owner.api.post(`/api/folders/share/${shared}`, { maxAccess: 2 });
      assert.equal(created.status, 201);
      const { hash, key } = splitLink(created.body.data.shareLink);

      const opened = await publicPost(app, `/api/folders/shared/${hash}`, {});
      assert.equal(opened.status, 200, JSON.stringify(opened.body));
      const content = opened.body.data;
      assert.equal(content.folder.name, 'Shared');
      assert.equal(content.totalFiles, 2);
      assert.equal(content.totalSizeByte, 'top file'.length + 'deep file'.length);
      assert.equal(typeof content.totalSizeReadable, 'string');
      const byName = Object.fromEntries(content.files.map((f: any) => [f.name, f]));
      assert.equal(byName['top.txt'].hashName, top.hashName);
      assert.equal(byName['deep.txt'].path, '/Inner');

      const dl = `/api/files/download/public/${hash}`;
      assert.equal((await publicPost(app, dl, { encryptionKey: key, hashName: deep.hashName })).raw.toString(), 'deep file');
      assert.equal((await publicPost(app, dl, { encryptionKey: key, hashName: top.hashName })).raw.toString(), 'top file');
      assertError(await publicPost(app, dl, { encryptionKey: key, hashName: outside.hashName }), 404, 'FILE_NOT_FOUND');
      assertError(await publicPost(app, dl, { encryptionKey: key }), 400, 'VALIDATION_FAILED');
      assertError(
        await publicPost(app, dl, { encryptionKey: randomBytes(32).toString('base64url'), hashName: top.hashName }),
        403,
        'INVALID_ENCRYPTION_KEY',
      );
      // Downloads did not count; opens do.
      assert.equal((await publicPost(app, `/api/folders/shared/${hash}`, {})).status, 200);
      assertError(await publicPost(app, `/api/folders/shared/${hash}`, {}), 410, 'LINK_EXHAUSTED');
      // A folder link is not a file link.
      assertError(await publicPost(app, `/api/files/shared/${hash}`, {}), 404, 'LINK_NOT_FOUND');
    });

    it("a folder link lists its files page by page on the open's pass, which also downloads them once the limit is spent", async (t) => {
      const { app, owner } = await linksFixture(t);
      const shared = await makeFolder(owner, 'Shared');
      const inner = await makeFolder(owner, 'Inner', shared);
      for (const name of ['c.txt', 'a.txt', 'b.txt']) await putFile(app, owner, shared, name, `top ${name}`);
      for (const name of ['y.txt', 'x.txt']) await putFile(app, owner, inner, name, `inner ${name}`);
      const { hash, key } = splitLink((await owner.api.post(`/api/folders/share/${shared}`, { maxAccess: 1 })).body.data.shareLink);
      const open = `/api/folders/shared/${hash}`;

      const first = await publicPost(app, `${open}?limit=2`, {});
      assert.equal(first.status, 200, JSON.stringify(first.body));
      const pass = String(first.headers['x-coffre-pass']);
      assert.match(pass, /^[A-Za-z0-9_-]{32}$/);
      assert.ok(Date.parse(String(first.headers['x-coffre-pass-expires'])) > Date.now());
      const seen = [...first.body.data.files];
      let cursor = first.body.data.nextCursor;
      while (cursor) {
        const page = await publicPost(
          app,
          `${open}?limit=2&cursor=${encodeURIComponent(cursor)}`,
          {},
          { headers: { 'x-coffre-pass': pass } },
        );
        assert.equal(page.status, 200, JSON.stringify(page.body));
        assert.equal(page.body.data.totalFiles, 5);
        seen.push(...page.body.data.files);
        cursor = page.body.data.nextCursor;
      }
      assert.deepEqual(
        seen.map((f: { path: string; name: string }) => `${f.path} ${f.name}`),
        ['/ a.txt', '/ b.txt', '/ c.txt', '/Inner x.txt', '/Inner y.txt'],
      );
      assert.equal((await publicPost(app, `${open}?limit=2`, {})).status, 410, 'the one access is spent: a new open is refused');

      // The pass downloads a file past the spent limit; without it, the link is closed.
      const dl = `/api/files/download/public/${hash}`;
      const x = seen.find((f: { name: string }) => f.name === 'x.txt');
      const got = await publicPost(app, dl, { encryptionKey: key, hashName: x.hashName }, { headers: { 'x-coffre-pass': pass } });
      assert.equal(got.status, 200);
      assert.equal(got.raw.toString(), 'inner x.txt');
      assertError(await publicPost(app, dl, { encryptionKey: key, hashName: x.hashName }), 410, 'LINK_EXHAUSTED');
      assertError(
        await publicPost(app, open, {}, { headers: { 'x-coffre-pass': 'not-a-pass-of-this-link-0123456789' } }),
        410,
        'LINK_EXHAUSTED',
      );

      // A cursor that is not one: 400, before anything is counted or listed.
      assertError(
        await publicPost(app, `${open}?cursor=bm90IGEgY3Vyc29y`, {}, { headers: { 'x-coffre-pass': pass } }),
        400,
        'INVALID_CURSOR',
      );
      assertError(await publicPost(app, `${open}?limit=0`, {}, { headers: { 'x-coffre-pass': pass } }), 400, 'VALIDATION_FAILED');
    });

    it('a folder link counts an open without its pass, even one that continues a listing', async (t) => {
      const { app, owner } = await linksFixture(t);
      const shared = await makeFolder(owner, 'Shared');
      for (const name of ['a.txt', 'b.txt']) await putFile(app, owner, shared, name, name);
      const { hash } = splitLink((await owner.api.post(`/api/folders/share/${shared}`, { maxAccess: 2 })).body.data.shareLink);
      const open = `/api/folders/shared/${hash}`;
      const first = await publicPost(app, `${open}?limit=1`, {});
      assert.equal(first.body.data.files[0].name, 'a.txt');
      const next = await publicPost(app, `${open}?limit=1&cursor=${encodeURIComponent(first.body.data.nextCursor)}`, {});
      assert.equal(next.status, 200);
      assert.deepEqual(
        next.body.data.files.map((f: { name: string }) => f.name),
        ['b.txt'],
      );
      assert.equal(next.body.data.nextCursor, null);
      assertError(await publicPost(app, open, {}), 410, 'LINK_EXHAUSTED');
    });

    it('the sealed route returns the ciphertext and a key chain that opens only with the link key', async (t) => {
      const { app, owner, data, file } = await linksFixture(t);
      const shared = await makeFolder(owner, 'Box');
      const sub = await makeFolder(owner, 'Sub', shared);
      const inner = await putFile(app, owner, sub, 'inner.bin', data);
      for (const [kind, id, hashName, expectedWraps] of [
        ['files', file.id, undefined, 2],
        ['folders', shared, inner.hashName, 4],
      ] as const) {
        const { hash, key } = splitLink((await owner.api.post(`/api/${kind}/share/${id}`, {})).body.data.shareLink);
        const keyProof = keyProofOf(Buffer.from(key, 'base64url'));
        const res = await publicPost(app, `/api/files/download/public/${hash}/sealed`, hashName ? { hashName, keyProof } : { keyProof });
        assert.equal(res.status, 200);
        const wraps = String(res.headers['x-coffre-key-chain']).split(',');
        const ids = String(res.headers['x-coffre-key-ids']).split(',');
        assert.equal(wraps.length, expectedWraps);
        assert.equal(ids.length, wraps.length);
        assert.ok(!res.raw.includes(data.subarray(0, 64)), 'the body is ciphertext');
        let k: Buffer = Buffer.from(key, 'base64url');
        for (let i = 0; i < wraps.length; i++) k = unwrapKey(k, wraps[i], ids[i]);
        assert.ok(openSealed(k, res.raw).equals(data));
        assert.throws(() => unwrapKey(randomBytes(32), wraps[0], ids[0]));
      }
    });

    it('no link key, password or token appears in any log line of a full run', async (t) => {
      const lines: string[] = [];
      const logStream = new Writable({
        write(chunk, _e, cb) {
          lines.push(String(chunk));
          cb();
        },
      });
      const { app, owner, file } = await linksFixture(t, logStream);
      const secrets: string[] = [owner.token, 'correct horse battery'];
      const created = await owner.api.post(`/api/files/share/${file.id}`, { password: 'log secret pw' });
      const { hash, key } = splitLink(created.body.data.shareLink);
      secrets.push(key, 'log secret pw');
      assert.equal((await client(app, owner.token).get(`/api/files/share/${hash}/address`)).status, 200, 'the link copied again');
      await publicPost(app, `/api/files/shared/${hash}`, { password: 'log secret pw' });
      await publicPost(app, `/api/files/download/public/${hash}`, { password: 'log secret pw', encryptionKey: key });
      await publicPost(app, `/api/files/download/public/${hash}`, { password: 'wrong secret pw', encryptionKey: key });
      secrets.push('wrong secret pw');
      await client(app, owner.token).patch(`/api/files/share/${hash}`, { password: 'next secret pw' });
      secrets.push('next secret pw');
      const login = await client(app).post('/api/auth/login', { email: owner.email, password: 'correct horse battery' });
      secrets.push(login.body.data.accessToken);
      assert.ok(lines.length > 10, 'the run was logged');
      const all = lines.join('\n');
      for (const secret of secrets) assert.ok(!all.includes(secret), `a log line holds the secret ${secret.slice(0, 6)}…`);
    });
  });
}
